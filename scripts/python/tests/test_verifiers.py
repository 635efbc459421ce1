"""verifiers: `vf-eval ehrgym-verifiers` (the v1 API's eval command, through the README's snippet) plays ehrgym episodes with the
stand-in teacher as the model; the rewards it reports equal /v1/score of the same transcripts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator, List

import pytest

from conftest import TOKEN, ChildServer, start
from ehrgym import Client


@pytest.fixture(scope="module")
def teacher(server: ChildServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChildServer]:
    """The stand-in model, recognising the server's task1 tasks (half its episodes go wrong)."""
    with Client(server.url, token=TOKEN) as client:
        tasks = client.tasks(type="task1").tasks
    path = tmp_path_factory.mktemp("teacher") / "tasks.jsonl"
    path.write_text("".join(json.dumps(t.raw) + "\n" for t in tasks))
    child = start(["teacher", "serve", "--port", "0", "--tasks", str(path), "--error-rate", "0.5", "--seed", "3"])
    yield child
    child.stop()


def test_vf_eval_rewards_equal_score(server: ChildServer, teacher: ChildServer, client: Client, tmp_path: Path) -> None:
    # The README's snippet, scripts/python/examples/verifiers_eval.sh, with this venv's vf-eval.
    script = Path(__file__).resolve().parents[1] / "examples" / "verifiers_eval.sh"
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}", "EHRGYM_TOKEN": TOKEN,
           "EHRGYM_URL": server.url, "MODEL_URL": teacher.url, "MODEL": "ehrgym-stand-in", "MODEL_API_KEY": "unused"}
    run = subprocess.run(
        ["bash", str(script), "--env.taskset.type", "task1", "-n", "4", "-r", "1", "-o", str(tmp_path)],
        cwd=tmp_path, env=env, capture_output=True, text=True,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    [traces_file] = list(tmp_path.glob("*/traces.jsonl"))
    episodes = [json.loads(line) for line in traces_file.read_text().splitlines()]
    assert len(episodes) == 4
    rewards: List[float] = []
    for episode in episodes:
        [trace] = episode["traces"]
        assert trace["ok"] and not trace["errors"], trace["errors"]
        reward = trace["rewards"]["ehrgym_reward"]["score"]
        messages: List[Any] = [node["message"] for node in trace["nodes"]]
        assert [m["role"] for m in messages[:2]] == ["user", "assistant"]
        scored = client.score(messages, task_id=episode["task"]["data"]["task_id"], protocol="text")
        assert scored.reward == reward
        rewards.append(reward)
    assert set(rewards) == {0.0, 1.0}  # the stand-in (error rate 0.5) gets some right, some wrong
    assert client.health().episodes_open == 0


def test_load_environment_returns_the_verifiers_env(server: ChildServer) -> None:
    import verifiers.v1 as vf

    from ehrgym.verifiers import EhrGymEnv, load_environment

    env = load_environment(server.url, token=TOKEN, type="task1", limit=2)
    assert isinstance(env, EhrGymEnv) and isinstance(env, vf.Env)
