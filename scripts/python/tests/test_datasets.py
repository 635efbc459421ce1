"""A dataset built by `ehrgym dataset build`, read by its real consumers: `datasets.load_dataset`
(its one config, every split, the card's features, the JSONL's rows exactly) and chat templates rendered with transformers'
`apply_chat_template`: Qwen2.5, Qwen3, Llama 3.1 and TRL's training variants of them, then every
template shipped in the installed `trl` package that renders tool calls. No download: the rows come
from the scripted expert on a small synthetic EHR, the tokenizer is made here."""

from __future__ import annotations

import json
import math
import re
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest

from conftest import build_expert_dataset
from datasets import Json, List, load_dataset
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast

@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_expert_dataset(tmp_path_factory.mktemp("ds"), ["text", "tools"], "--split-fractions", "0.5,0.5", "--splits", "train,test")


def same(a: Any, b: Any) -> bool:
    """Equal, floats to the last binary digit: `datasets` decodes Json features with pandas' ujson,
    whose fast float parser can miss the nearest double (1.36 -> 1.3599999999999999)."""
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool) and not isinstance(b, bool):
        return math.isclose(a, b, rel_tol=4e-16, abs_tol=0.0)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def jsonl_rows(ds: Path, split: str) -> list[dict[str, Any]]:
    return [json.loads(line) for path in sorted((ds / "data").glob(f"{split}-*.jsonl")) for line in path.read_text().splitlines() if line]


def test_load_dataset_reads_the_rows_exactly_with_the_cards_features(built: Path) -> None:
    for loaded in (load_dataset(str(built)), load_dataset(str(built), "default", download_mode="force_redownload")):
        assert sorted(loaded.keys()) == ["test", "train"]
        for split, data in loaded.items():
            assert data.features["messages"] == List(Json())
            assert data.features["tools"] == Json()
            expected = jsonl_rows(built, split)
            assert len(data) == len(expected) > 0
            for got, want in zip(data, expected):
                assert same(got, want), got["id"]
                for message in got["messages"]:
                    # absent keys stay absent: Llama 3.x templates test `'tool_calls' in message`
                    assert None not in (message.get("tool_calls", 0), message.get("tool_call_id", 0), message.get("name", 0))
                    for call in message.get("tool_calls", []):
                        assert isinstance(call["function"]["arguments"], dict)


def tiny_tokenizer(template: str) -> PreTrainedTokenizerFast:
    words = Tokenizer(models.WordLevel({"[UNK]": 0, "<|endoftext|>": 1}, unk_token="[UNK]"))
    words.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(tokenizer_object=words, eos_token="<|endoftext|>", unk_token="[UNK]", chat_template=template)


TEMPLATES = ["qwen2_5.jinja", "qwen2_5_training.jinja", "qwen3.jinja", "qwen3_training.jinja", "llama3_1.jinja"]


def shipped(name: str) -> str:
    return (files("trl") / "chat_templates" / name).read_text()


@pytest.mark.parametrize("name", TEMPLATES)
def test_every_row_renders_and_every_tool_call_is_a_json_object(built: Path, name: str) -> None:
    tokenizer = tiny_tokenizer(shipped(name))
    rows = jsonl_rows(built, "train") + jsonl_rows(built, "test")
    calls = 0
    for row in rows:
        several = any(len(m.get("tool_calls", [])) > 1 for m in row["messages"])
        if name.startswith("llama3") and several:
            # Llama 3.1's own template takes one tool call per turn and says so; the row is not broken
            with pytest.raises(Exception, match="single tool-calls"):
                tokenizer.apply_chat_template(row["messages"], tools=row["tools"], tokenize=False)
            continue
        text = tokenizer.apply_chat_template(row["messages"], tools=row["tools"], tokenize=False)
        for message in row["messages"]:
            for call in message.get("tool_calls", []):
                calls += 1
                args = call["function"]["arguments"]
                # `tojson` of a dict prints the object; a JSON string would come out quoted ("{\"...)
                assert json.dumps(args, ensure_ascii=False) in text, (name, row["id"], args)
                assert json.dumps(json.dumps(args, ensure_ascii=False)) not in text
    if not name.startswith("llama3"):
        assert calls > 10


# trl's chat_templates/README.md: the R1-distill template drops `tool_calls` whenever `content` is set,
# "so the template does not support tool calling".
NO_TOOL_CALLING = {"deepseek_r1_distill.jinja", "deepseek_r1_distill_training.jinja"}


def tool_templates() -> list[str]:
    """Every template shipped in trl that renders `tool_calls` (the others drop them: no tool rows)."""
    root = files("trl") / "chat_templates"
    return sorted(p.name for p in root.iterdir() if p.name.endswith(".jinja") and "tool_calls" in p.read_text() and p.name not in NO_TOOL_CALLING)


# DeepSeek-V3's template joins `arguments` to text with `+` (trl's training variant applies `tojson`
# first, as transformers documents arguments to be a dict) and tests `message['content'] is none`,
# which fails on a tool-call turn once transformers has dropped its None content: such templates get
# the turn's content as "" and, when they join raw text, OpenAI's string form of the arguments.
JOINS_TEXT = re.compile(r"\+ *tool\['function'\]\['arguments'\] *\+")
CONTENT_IS_NONE = "['content'] is none"


def adapted(messages: list[dict[str, Any]], joins_text: bool) -> list[dict[str, Any]]:
    out = []
    for m in messages:
        m = dict(m)
        if "tool_calls" in m:
            assert m["content"] == "" or m["content"]  # the build writes "" where a tool-call turn has no text
            if joins_text:
                m["tool_calls"] = [{**c, "function": {**c["function"], "arguments": json.dumps(c["function"]["arguments"])}} for c in m["tool_calls"]]
        out.append(m)
    return out


@pytest.mark.parametrize("name", tool_templates())
def test_every_tool_template_in_trl_renders_every_row_with_its_arguments(built: Path, name: str) -> None:
    template = shipped(name)
    tokenizer = tiny_tokenizer(template)
    joins_text = bool(JOINS_TEXT.search(template))
    rendered = 0
    for row in jsonl_rows(built, "train") + jsonl_rows(built, "test"):
        messages = adapted(row["messages"], joins_text) if CONTENT_IS_NONE in template else row["messages"]
        try:
            text = tokenizer.apply_chat_template(messages, tools=row["tools"], tokenize=False)
        except Exception as err:
            # Llama 3.1/3.2 take one tool call per turn and say so; nothing else may fail
            assert "single tool-calls" in str(err) and any(len(m.get("tool_calls", [])) > 1 for m in row["messages"]), (name, row["id"], err)
            continue
        rendered += 1
        for message in row["messages"]:
            for call in message.get("tool_calls", []):
                args = call["function"]["arguments"]
                assert isinstance(args, dict)
                if joins_text:
                    assert json.dumps(args) in text, (name, row["id"])
                    continue
                # the arguments as one JSON object (tojson), or parameter by parameter (the
                # template's own syntax), never as a quoted JSON string
                assert json.dumps(args, ensure_ascii=False) in text or all(key in text for key in args), (name, row["id"], args)
                assert json.dumps(json.dumps(args, ensure_ascii=False)) not in text and json.dumps(json.dumps(args)) not in text
    assert rendered > 10


def test_openai_format_keeps_string_arguments(built: Path) -> None:
    for line in (built / "openai" / "train.jsonl").read_text().splitlines():
        record = json.loads(line)
        for message in record["messages"]:
            for call in message.get("tool_calls", []):
                assert isinstance(json.loads(call["function"]["arguments"]), dict)
        assert ("parallel_tool_calls" in record) == ("tools" in record)
        assert re.search(r'"weight": ?1', line)


# Templates that render every row only because tool-call turns carry content "" (null fails in them).
NEEDS_EMPTY_CONTENT = ["deepseekv3_training.jinja", "lfm2.jinja", "lfm2_training.jinja", "phi3.jinja", "phi3_5.jinja"]


@pytest.mark.parametrize("name", NEEDS_EMPTY_CONTENT)
def test_templates_that_fail_on_null_content_render_every_row_as_built(built: Path, name: str) -> None:
    tokenizer = tiny_tokenizer(shipped(name))
    rows = jsonl_rows(built, "train") + jsonl_rows(built, "test")
    calls = [m for row in rows for m in row["messages"] if "tool_calls" in m]
    assert calls and all(m["content"] == "" or m["content"] for m in calls)
    for row in rows:
        tokenizer.apply_chat_template(row["messages"], tools=row["tools"], tokenize=False)
    with pytest.raises(Exception):
        broken = [{**m, "content": None} if "tool_calls" in m else m for m in next(r for r in rows if any("tool_calls" in m for m in r["messages"]))["messages"]]
        tokenizer.apply_chat_template(broken, tools=rows[0]["tools"], tokenize=False)
