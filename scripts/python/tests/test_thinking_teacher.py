"""A thinking teacher's rollout into every dataset config (issue 39, done when): `ehrgym rollout
--capture tokens` in both protocols against the stand-in thinking inline (`teacher serve --reasoning
think`; the tools protocol's run sends earlier reasoning back), built with `--format trl,arrow,dpo,kto,tokens --reasoning keep`, validates (the token rows
re-tokenised with the stand-in's own tokenizer file) and loads in `datasets`: the SFT rows with each
turn's reasoning apart from its action, the preference pairs and labelled rows, the token rows."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

from conftest import CLI, ROOT, ChildServer

EHR = ["--synthetic", "--seed", "3", "--patients", "8"]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(CLI + list(args), cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done


def test_a_thinking_teacher_rollout_yields_every_config(tmp_path: Path) -> None:
    from datasets import load_dataset

    tasks = tmp_path / "tasks.jsonl"
    run("tasks", "generate", "--suite", "mab-v1,mab-v2", "--per-type", "1", "--ehr-seed", "3", "--patients", "8", "--out", str(tasks))
    teacher = ChildServer(["teacher", "serve", "--port", "0", "--tasks", str(tasks), "--reasoning", "think", "--seed", "4"])
    rows = [tmp_path / f"{protocol}.jsonl" for protocol in ("text", "tools")]
    try:
        # The tools protocol sends earlier reasoning back, which the stand-in renders as Qwen3's template does
        # (after the last user message): its multi-turn episodes become token rows.
        for protocol, out in zip(("text", "tools"), rows):
            history = ["--reasoning-history", "keep"] if protocol == "tools" else []
            run("rollout", "--model", "ehrgym-stand-in", "--base-url", teacher.url, "--tasks", str(tasks), *EHR, "--protocol", protocol,
                "--samples", "3", "--capture", "tokens", *history, "--out", str(out), "--no-progress")
    finally:
        teacher.stop()
    episodes = [json.loads(line) for out in rows for line in out.read_text().splitlines() if line]
    # Reasoning kept apart from the action in every assistant turn; the actions after it were executed.
    turns = [m for e in episodes for m in e["messages"] if m["role"] == "assistant"]
    assert turns and all(m.get("reasoning_content") and "<think>" not in (m.get("content") or "") for m in turns)
    assert {e["reward"] for e in episodes} == {0, 1}

    ds = tmp_path / "ds"
    built = run("dataset", "build", *[a for out in rows for a in ("--from", str(out))], "--out", str(ds),
                "--format", "trl,arrow,dpo,kto,tokens", "--reasoning", "keep", "--splits", "train", "--split-fractions", "1")
    summary = built.stdout + built.stderr
    tokenizer = tmp_path / "tokenizer.json"
    run("teacher", "tokenizer", "--out", str(tokenizer))
    validated = run("dataset", "validate", str(ds), "--tokenizer", str(tokenizer))
    # The chat rendered again gives the very ids the teacher sampled: its think blocks and tool calls
    # are rendered as Qwen3's template renders them.
    assert re.search(r"tokens: (\d+) rows; 0 of \1 re-tokenise to different ids", validated.stdout + validated.stderr), validated.stdout + validated.stderr

    sft: Any = load_dataset(str(ds), split="train")
    assert len(sft) > 0, summary
    for row in sft:
        assistant = [m for m in row["messages"] if m["role"] == "assistant"]
        assert assistant and all(m["reasoning_content"] for m in assistant)
    for config, columns in (("dpo", {"prompt", "chosen", "rejected", "tools"}), ("kto", {"prompt", "completion", "label", "tools"}),
                            ("tokens", {"prompt_ids", "completion_ids", "logprobs", "env_mask", "reward"})):
        data: Any = load_dataset(str(ds), config, split="train")
        assert len(data) > 0 and columns <= set(data.column_names), (config, summary)
    kto: Any = load_dataset(str(ds), "kto", split="train")
    assert set(kto["label"]) == {True, False}
    turns = []
    for row in load_dataset(str(ds), "tokens", split="train"):
        assert len(row["completion_ids"]) == len(row["logprobs"]) == len(row["env_mask"]) and 1 in row["env_mask"]
        mask = "".join(str(m) for m in row["env_mask"])
        turns.append(len(re.findall("1+", mask)))
    assert max(turns) > 1, turns  # thinking episodes of several turns, environment tokens between them
