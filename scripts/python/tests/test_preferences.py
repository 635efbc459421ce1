"""The preference configs of a dataset built by `ehrgym dataset build --format trl,arrow,dpo,kto`, read
by their real consumers: `datasets.load_dataset` (each config with the card's features, the JSONL's
rows exactly), TRL's DPOTrainer and KTOTrainer (their tokenization through the Qwen3 template with
tools, then one training step of a tiny model on CPU). No download: the rows come from the scripted
expert on a small synthetic EHR, with failed copies made here; tokenizer and model are built in memory."""

from __future__ import annotations

import copy
import json
import math
import subprocess
from pathlib import Path
from typing import Any, Dict, List

import pytest

from conftest import CLI, ROOT
from test_datasets import same
from tiny_lm import tiny_model, tiny_pair


def failed_copy(row: Dict[str, Any], how: str, sample: int) -> Dict[str, Any]:
    """The row as a model that went wrong at its last turn leaves it: a wrong FINISH, or no action."""
    r = copy.deepcopy(row)
    last = max(i for i, m in enumerate(r["messages"]) if m["role"] == "assistant")
    messages = r["messages"][:last]
    if how == "invalid":
        messages.append({"role": "assistant", "content": "I believe the answer is 424242."})
    elif r["protocol"] == "text":
        messages.append({"role": "assistant", "content": "FINISH([424242])"})
    else:
        messages.append({"role": "assistant", "content": None, "tool_calls": [{"id": "call_99", "type": "function", "function": {"name": "finish", "arguments": '{"value":[424242]}'}}]})
    return {**r, "messages": messages, "sample": sample, "reward": 0, "status": "completed" if how == "wrong" else "invalid_action"}


def expert_rows(tmp: Path) -> List[Dict[str, Any]]:
    rows: List[Dict[str, Any]] = []
    for protocol in ("text", "tools"):
        out = tmp / f"{protocol}.jsonl"
        subprocess.run(CLI + ["eval", "--policy", "expert", "--synthetic", "--seed", "3", "--patients", "8", "--per-type", "1", "--protocol", protocol, "--out", str(out), "--no-progress"], cwd=ROOT, check=True, capture_output=True, text=True)
        rows += [json.loads(line) for line in out.read_text().splitlines() if line]
    return rows


def build(tmp: Path, rows: List[Dict[str, Any]], name: str, *args: str) -> Path:
    src = tmp / f"{name}.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    ds = tmp / name
    subprocess.run(CLI + ["dataset", "build", "--from", str(src), "--out", str(ds), "--force", *args], cwd=ROOT, check=True, capture_output=True, text=True)
    return ds


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> List[Dict[str, Any]]:
    good = expert_rows(tmp_path_factory.mktemp("rows"))
    return good + [failed_copy(r, how, 10 + k) for i, r in enumerate(good) if i % 2 == 0 for k, how in enumerate(("wrong", "invalid"))]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, source: List[Dict[str, Any]]) -> Path:
    return build(tmp_path_factory.mktemp("prefs"), source, "ds", "--format", "trl,arrow,dpo,kto", "--split-fractions", "0.5,0.5", "--splits", "train,test")


def jsonl(ds: Path, folder: str, split: str) -> List[Dict[str, Any]]:
    return [json.loads(line) for path in sorted((ds / folder).glob(f"{split}-*.jsonl")) for line in path.read_text().splitlines() if line]


@pytest.mark.parametrize("config", ["dpo", "kto"])
def test_load_dataset_reads_each_config_with_its_features(built: Path, config: str) -> None:
    from datasets import Json, List as HfList, Value, load_dataset

    loaded = load_dataset(str(built), config)
    assert sorted(loaded.keys()) == ["test", "train"]
    for split, data in loaded.items():
        messages = ["prompt", "chosen", "rejected"] if config == "dpo" else ["prompt", "completion"]
        for column in messages:
            assert data.features[column] == HfList(Json())
        assert data.features["tools"] == Json()
        if config == "kto":
            assert data.features["label"] == Value("bool")
        expected = jsonl(built, config, split)
        assert len(data) == len(expected) > 0
        for got, want in zip(data, expected):
            assert same(got, want), got["id"]


def test_a_rebuild_is_never_read_from_a_stale_cache(tmp_path: Path, source: List[Dict[str, Any]]) -> None:
    """Rows that differ only in same-length text give files of the same sizes; `datasets` must still read the new ones."""
    from datasets import load_dataset

    first = build(tmp_path, source, "same", "--format", "trl,arrow,kto", "--splits", "train")
    before = load_dataset(str(first), "kto", split="train")
    changed = json.loads(json.dumps(source).replace("424242", "424243"))
    second = build(tmp_path, changed, "same", "--format", "trl,arrow,kto", "--splits", "train")
    assert sorted(p.stat().st_size for p in (second / "kto").iterdir()) == sorted(p.stat().st_size for p in (tmp_path / "same" / "kto").iterdir())
    after = load_dataset(str(second), "kto", split="train")
    assert "424242" in json.dumps([r["completion"] for r in before]) and "424242" not in json.dumps([r["completion"] for r in after])
    assert "424243" in json.dumps([r["completion"] for r in after])


def test_dpo_trainer_tokenizes_the_pairs_with_their_tools_and_trains_a_step(built: Path, tmp_path: Path) -> None:
    from datasets import load_dataset
    from trl import DPOConfig, DPOTrainer

    data: Any = load_dataset(str(built), "dpo", split="train")
    data = data.select(range(min(4, len(data))))
    tokenizer, model = tiny_pair(seed=0)
    args = DPOConfig(output_dir=str(tmp_path), max_steps=1, per_device_train_batch_size=2, use_cpu=True, report_to=[], save_strategy="no", max_length=1024, truncation_mode="keep_end", seed=0)
    trainer = DPOTrainer(model=model, ref_model=tiny_model(len(tokenizer), seed=0), args=args, train_dataset=data, processing_class=tokenizer)
    for example, row in zip(trainer.train_dataset, data):
        prompt = tokenizer.decode(example["prompt_ids"])
        chosen = tokenizer.decode(example["chosen_ids"])
        rejected = tokenizer.decode(example["rejected_ids"])
        assert row["prompt"][0]["content"][:200] in prompt
        if row["tools"]:
            assert all(t["function"]["name"] in prompt for t in row["tools"])  # the tools are rendered into the prompt
        for side, text in (("chosen", chosen), ("rejected", rejected)):
            for m in row[side]:
                for call in m.get("tool_calls") or []:
                    assert call["function"]["name"] in text
                if m["role"] == "assistant" and m.get("content"):
                    assert m["content"].strip()[:100] in text
        assert chosen != rejected
    result = trainer.train()
    assert math.isfinite(result.training_loss)


def test_kto_trainer_tokenizes_the_labelled_rows_and_trains_a_step(built: Path, tmp_path: Path) -> None:
    from datasets import load_dataset
    from trl import KTOConfig, KTOTrainer

    data: Any = load_dataset(str(built), "kto", split="train")
    # the shortest rows, so that the right-truncation at max_length keeps completion tokens
    order = sorted(range(len(data)), key=lambda i: len(json.dumps(data[i]["prompt"] + data[i]["completion"])))
    good = [i for i in order if data[i]["label"]][:2]
    bad = [i for i in order if not data[i]["label"]][:2]
    assert good and bad
    data = data.select(good + bad)
    tokenizer, model = tiny_pair(seed=0)
    args = KTOConfig(output_dir=str(tmp_path), max_steps=1, per_device_train_batch_size=4, use_cpu=True, report_to=[], save_strategy="no", max_length=4096, seed=0)
    trainer = KTOTrainer(model=model, ref_model=tiny_model(len(tokenizer), seed=0), args=args, train_dataset=data, processing_class=tokenizer)
    for example, row in zip(trainer.train_dataset, data):
        completion = tokenizer.decode(example["completion_ids"])
        assert example["label"] == row["label"]
        for m in row["completion"]:
            for call in m.get("tool_calls") or []:
                assert call["function"]["name"] in completion
    result = trainer.train()
    assert math.isfinite(result.training_loss)
