"""Format tokens read by its real consumers: `datasets.load_dataset` reads the `tokens` config with the
features the card declares (from JSON lines, and from the Arrow files when the build wrote them), and a `rollout_func` built from the token rows feeds TRL's GRPOTrainer one
step with a tiny model built here (its vocabulary covers the stand-in's o200k ids). The rows come from
`ehrgym eval --capture tokens` against the stand-in teacher; nothing is downloaded."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any, Dict, List

import pytest

from conftest import CLI, ROOT, ChildServer

EHR = ["--synthetic", "--seed", "3", "--patients", "8"]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("tokens")
    tasks = tmp / "tasks.jsonl"
    subprocess.run(CLI + ["tasks", "generate", "--suite", "mab-v1", "--per-type", "1", "--ehr-seed", "3", "--patients", "8", "--out", str(tasks)], cwd=ROOT, check=True, capture_output=True, text=True)
    teacher = ChildServer(["teacher", "serve", "--port", "0", "--tasks", str(tasks), "--seed", "2"])
    rows = tmp / "rows.jsonl"
    try:
        subprocess.run(
            CLI + ["eval", "--policy", "openai", "--model", "ehrgym-stand-in", "--base-url", teacher.url, "--tasks", str(tasks), *EHR, "--types", "task1,task2", "--samples", "2", "--capture", "tokens", "--out", str(rows), "--no-progress"],
            cwd=ROOT, check=True, capture_output=True, text=True,
        )
    finally:
        teacher.stop()
    for name, formats in (("ds", "trl,tokens"), ("ds-arrow", "trl,arrow,tokens")):
        subprocess.run(CLI + ["dataset", "build", "--from", str(rows), "--out", str(tmp / name), "--keep", "all", "--format", formats, "--splits", "train", "--split-fractions", "1"], cwd=ROOT, check=True, capture_output=True, text=True)
    return tmp / "ds"


def token_rows(ds: Path) -> List[Dict[str, Any]]:
    return [json.loads(line) for path in sorted((ds / "tokens").glob("train-*.jsonl")) for line in path.read_text().splitlines() if line]


@pytest.mark.parametrize("folder", ["ds", "ds-arrow"])
def test_load_dataset_reads_the_tokens_config_with_its_features(built: Path, folder: str) -> None:
    from datasets import Json, List as DList, Value, load_dataset

    ds = built.parent / folder
    assert sorted(p.suffix for p in (ds / "tokens").iterdir()) == ([".jsonl"] if folder == "ds" else [".arrow", ".jsonl"])
    data = load_dataset(str(ds), "tokens", split="train")
    assert data.features["prompt_ids"] == DList(Value("int64"))
    assert data.features["completion_ids"] == DList(Value("int64"))
    assert data.features["logprobs"] == DList(Value("float64"))
    assert data.features["env_mask"] == DList(Value("int64"))
    assert data.features["prompt"] == DList(Json())
    expected = token_rows(ds)
    assert len(data) == len(expected) > 0
    for got, want in zip(data, expected):
        for key in ("id", "prompt_ids", "completion_ids", "logprobs", "env_mask", "reward", "prompt"):
            assert got[key] == want[key], (want["id"], key)
        assert len(got["completion_ids"]) == len(got["logprobs"]) == len(got["env_mask"])
        assert 1 in got["env_mask"]
    # The default config is still the SFT rows.
    assert "messages" in load_dataset(str(ds), split="train").column_names


def test_rollout_func_from_token_rows_feeds_grpo_one_step(built: Path, tmp_path: Path) -> None:
    os.environ["TRL_EXPERIMENTAL_SILENCE"] = "1"
    from datasets import Dataset
    from transformers import PreTrainedTokenizerFast
    from trl import GRPOTrainer
    from trl.chat_template_utils import qwen3_chat_template

    from tiny_lm import tiny_grpo_config, tiny_model

    rows = token_rows(built)
    by_prompt: Dict[str, List[Dict[str, Any]]] = {}
    for row in rows:
        by_prompt.setdefault(json.dumps(row["prompt"], sort_keys=True), []).append(row)
    # GRPO compares samples of one prompt: the prompts with two token rows, those whose rewards differ
    # (a non-zero advantage) first, then the shortest.
    pairs = sorted((v[:2] for v in by_prompt.values() if len(v) >= 2), key=lambda v: (v[0]["reward"] == v[1]["reward"], sum(len(r["completion_ids"]) for r in v)))
    assert pairs, "no task with two token rows"
    prompts = [pairs[0][0]["prompt"]]

    tokenizer_file = tmp_path / "tokenizer.json"
    subprocess.run(CLI + ["teacher", "tokenizer", "--out", str(tokenizer_file)], cwd=ROOT, check=True, capture_output=True, text=True)
    tokenizer = PreTrainedTokenizerFast(tokenizer_file=str(tokenizer_file), eos_token="<|im_end|>", pad_token="<|endoftext|>", padding_side="left")
    tokenizer.chat_template = qwen3_chat_template
    vocab = max(max(r["prompt_ids"] + r["completion_ids"]) for r in rows) + 1
    model = tiny_model(max(vocab, len(tokenizer)), seed=0)

    served: List[str] = []
    taken: Dict[str, int] = {}

    def rollout_func(batch: List[Any], trainer: Any) -> Dict[str, List[Any]]:
        out: Dict[str, List[Any]] = {"prompt_ids": [], "completion_ids": [], "logprobs": [], "env_mask": [], "reward": []}
        for prompt in batch:
            key = json.dumps(prompt, sort_keys=True)
            i = taken.get(key, 0)
            taken[key] = i + 1
            row = by_prompt[key][i % len(by_prompt[key])]
            served.append(row["id"])
            for k in out:
                out[k].append(row[k])
        return out

    def row_reward(completions: List[Any], reward: List[float], **_: Any) -> List[float]:
        return list(reward)

    args = tiny_grpo_config(tmp_path / "out", max_completion_length=max(len(r["completion_ids"]) for r in pairs[0]), max_steps=1)
    trainer = GRPOTrainer(
        model=model,
        processing_class=tokenizer,
        reward_funcs=[row_reward],
        train_dataset=Dataset.from_list([{"prompt": p} for p in prompts]),
        rollout_func=rollout_func,
        args=args,
    )
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    result = trainer.train()
    assert result.global_step == 1
    assert sorted(served) == sorted(r["id"] for r in pairs[0][:2])
    # Rewards the rows carry reached the trainer, and the step moved the weights.
    logged = [h for h in trainer.state.log_history if "reward" in h]
    assert logged and logged[0]["reward"] == pytest.approx(sum(r["reward"] for r in pairs[0][:2]) / 2)
    if pairs[0][0]["reward"] != pairs[0][1]["reward"]:
        assert any(not p.detach().equal(before[n]) for n, p in model.named_parameters())
