"""The README's "Train in Python" snippets are the files of scripts/python/examples/, and run."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, TOKEN, ChildServer
from ehrgym import Client
from tiny_lm import tiny_pair

EXAMPLES = ROOT / "scripts" / "python" / "examples"


def test_readme_snippets_are_the_example_files() -> None:
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## Train in Python") :]
    section = section[: section.index("\n## ", 1)]
    files = sorted(p.name for p in EXAMPLES.iterdir() if p.suffix in (".py", ".sh"))
    assert files == ["openenv_episode.py", "trl_grpo.py", "verifiers_eval.sh"]
    for name in files:
        assert (EXAMPLES / name).read_text().rstrip() + "\n```" in section, name


def test_openenv_example_gets_the_servers_reward(server: ChildServer, client: Client) -> None:
    task = next(t.raw for t in client.tasks(type="task1").tasks if t.raw.get("branch") == "found")
    turns = [f"GET http://localhost:8080/fhir/Patient?identifier={task['sol'][0]}", f"FINISH({json.dumps(task['sol'])})"]
    env = {**os.environ, "EHRGYM_URL": server.url, "EHRGYM_TOKEN": TOKEN, "TASK_ID": task["id"], "TURNS": json.dumps(turns)}
    run = subprocess.run([sys.executable, str(EXAMPLES / "openenv_episode.py")], env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    printed = json.loads(run.stdout.strip().splitlines()[-1])
    with client.episode(task_id=task["id"]) as ep:
        for turn in turns:
            ep.step(turn)
    assert printed == {"reward": ep.reward, "done": True, "status": "completed"} and ep.reward == 1.0


def test_trl_example_trains_a_step(server: ChildServer, client: Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EHRGYM_URL", server.url)
    monkeypatch.setenv("EHRGYM_TOKEN", TOKEN)
    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    spec = importlib.util.spec_from_file_location("trl_grpo_example", EXAMPLES / "trl_grpo.py")
    assert spec and spec.loader
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    from trl import GRPOConfig

    tokenizer, model = tiny_pair(seed=1)
    args = GRPOConfig(output_dir=str(tmp_path), per_device_train_batch_size=2, num_generations=2, max_completion_length=16, max_steps=1, logging_steps=1, save_strategy="no", report_to=[], use_cpu=True, seed=0)
    trainer = example.train(model, tokenizer, args, suite="mab-v2")
    [logged] = [h for h in trainer.state.log_history if "rewards/EhrGymEnv/mean" in h]
    assert logged["rewards/ehrgym_score/mean"] == logged["rewards/EhrGymEnv/mean"]
    assert client.health().episodes_open == 0


def test_package_readme_snippet_scores_one(server: ChildServer) -> None:
    """scripts/python/README.md's client snippet, run as written against the server: reward 1."""
    readme = (ROOT / "scripts" / "python" / "README.md").read_text()
    snippet = readme[readme.index("```python\n") + len("```python\n") :]
    snippet = snippet[: snippet.index("```")]
    env = {**os.environ, "EHRGYM_URL": server.url, "EHRGYM_TOKEN": TOKEN}
    run = subprocess.run([sys.executable, "-c", snippet], env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "1.0 completed"
