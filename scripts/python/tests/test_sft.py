"""TRL's SFT preprocessing on a dataset built by `ehrgym dataset build`: SFTTrainer tokenizes the
rows with their tools through a tool-capable chat template (the tiny tokenizer of tiny_lm.py),
masks the loss to the assistant's tokens, and trains a step on CPU."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from conftest import build_expert_dataset
from tiny_lm import tiny_pair

@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_expert_dataset(tmp_path_factory.mktemp("sft"), ["tools"])


def test_sft_trainer_masks_the_loss_to_assistant_turns(built: Path, tmp_path: Path) -> None:
    from datasets import load_dataset
    from trl import SFTConfig, SFTTrainer

    data: Any = load_dataset(str(built), split="train")
    data = data.select(range(min(4, len(data))))
    tokenizer, model = tiny_pair(seed=0)
    args = SFTConfig(output_dir=str(tmp_path), assistant_only_loss=True, max_steps=1, per_device_train_batch_size=1, use_cpu=True, report_to=[], save_strategy="no", max_length=None, seed=0)
    trainer = SFTTrainer(model=model, args=args, train_dataset=data, processing_class=tokenizer)
    for example, row in zip(trainer.train_dataset, data):
        # TRL turns the template's assistant mask into labels: -100 (no loss) outside assistant turns.
        ids, labels = example["input_ids"], example["labels"]
        taught = tokenizer.decode([t for t, label in zip(ids, labels) if label != -100])
        rest = tokenizer.decode([t for t, label in zip(ids, labels) if label == -100])
        calls = [c["function"]["name"] for m in row["messages"] if m["role"] == "assistant" for c in m.get("tool_calls") or []]
        assert calls and all(name in taught for name in calls)  # every tool call is learned ...
        for m in row["messages"]:
            # (a short reply such as finish's "[]" also occurs inside the taught call's arguments)
            if m["role"] in ("system", "user", "tool") and len(m.get("content") or "") >= 20:
                assert m["content"] not in taught and m["content"][:200] in rest  # ... no prompt or tool reply is
        for tool in row["tools"]:
            assert tool["function"]["name"] in rest  # the tools are rendered into the prompt
    result = trainer.train()
    assert math.isfinite(result.training_loss) and result.training_loss > 0
