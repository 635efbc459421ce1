"""`dataset build --reasoning keep` read back with `datasets` and rendered by the Qwen3 chat templates TRL
ships: rows of `ehrgym eval` against the stand-in thinking inline (`teacher serve --reasoning think`)
carry each assistant turn's reasoning in `reasoning_content`, which the templates render as the turn's
`<think>` block before its action (the original template for turns after the last user message, TRL's
training template for every turn), never doubling it."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from conftest import CLI, ROOT, ChildServer
from tiny_lm import tiny_tokenizer

EHR = ["--synthetic", "--seed", "3", "--patients", "8"]


def test_kept_reasoning_renders_where_qwen3_templates_read_it(tmp_path: Path) -> None:
    from datasets import load_dataset
    from trl.chat_template_utils import qwen3_chat_template, qwen3_training_chat_template

    tasks = tmp_path / "tasks.jsonl"
    subprocess.run(CLI + ["tasks", "generate", "--suite", "mab-v1", "--per-type", "1", "--ehr-seed", "3", "--patients", "8", "--out", str(tasks)], cwd=ROOT, check=True, capture_output=True, text=True)
    teacher = ChildServer(["teacher", "serve", "--port", "0", "--tasks", str(tasks), "--error-rate", "0", "--reasoning", "think"])
    try:
        rows = tmp_path / "rows.jsonl"
        subprocess.run(CLI + ["eval", "--policy", "openai", "--model", "ehrgym-stand-in", "--base-url", teacher.url, "--tasks", str(tasks), *EHR, "--out", str(rows), "--no-progress"], cwd=ROOT, check=True, capture_output=True, text=True)
    finally:
        teacher.stop()
    ds = tmp_path / "ds"
    subprocess.run(CLI + ["dataset", "build", "--from", str(rows), "--out", str(ds), "--reasoning", "keep", "--splits", "train", "--split-fractions", "1"], cwd=ROOT, check=True, capture_output=True, text=True)
    data: Any = load_dataset(str(ds), split="train")
    assert len(data) > 0
    tokenizer = tiny_tokenizer()
    for row in data:
        turns = [m for m in row["messages"] if m["role"] == "assistant"]
        assert turns and all(m["reasoning_content"] and "<think>" not in (m["content"] or "") for m in turns)
        everywhere = tokenizer.apply_chat_template(row["messages"], chat_template=qwen3_training_chat_template, tokenize=False)
        for m in turns:
            assert f"<think>\n{m['reasoning_content'].strip()}\n</think>\n\n{m['content']}" in everywhere
        assert everywhere.count("<think>") == len(turns)
        # The original template keeps only the reasoning after the last user message (Qwen3's practice).
        last = tokenizer.apply_chat_template(row["messages"], chat_template=qwen3_chat_template, tokenize=False)
        assert f"<think>\n{turns[-1]['reasoning_content'].strip()}\n</think>\n\n{turns[-1]['content']}" in last
