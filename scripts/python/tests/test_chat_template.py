"""`dataset validate --chat-template`: ehrgym renders a model's chat template (@huggingface/jinja) as
transformers does (Jinja2), on the conversations ehrgym's episodes hold (both protocols, tool calls,
FHIR replies, reasoning on some turns), for the templates TRL ships for the models people train on
MedAgentBench-style tasks."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any, Dict, List, Optional


from conftest import CLI, ROOT, ChildServer, ts_batch

BATCH = ROOT / "test" / "datasets" / "chat-template-render.ts"
# Not gemma3.jinja (no tool calling): it iterates a tool-call turn's missing content, which Jinja2's
# Undefined allows and @huggingface/jinja refuses.
TEMPLATES = ["qwen3.jinja", "qwen3_instruct_2507.jinja", "qwen2_5.jinja", "qwen3_6.jinja", "llama3_1.jinja", "gptoss.jinja", "phi3.jinja", "lfm2.jinja", "deepseekv3.jinja"]
SPECIALS = {"bos_token": "<s>", "eos_token": "</s>"}


def trl_templates() -> Path:
    import trl

    return Path(trl.__file__).parent / "chat_templates"


def episodes(tmp: Path) -> List[Dict[str, Any]]:
    rows = []
    for protocol in ("text", "tools"):
        out = tmp / f"{protocol}.jsonl"
        subprocess.run(CLI + ["eval", "--policy", "expert", "--synthetic", "--seed", "3", "--patients", "8", "--per-type", "1", "--protocol", protocol,
                              "--out", str(out), "--no-progress"], cwd=ROOT, check=True, capture_output=True, text=True)
        rows += [json.loads(line) for line in out.read_text().splitlines() if line]
    # Reasoning on every other assistant turn, with the newlines models leave around it, told apart by turn.
    for i, row in enumerate(rows):
        for j, m in enumerate(row["messages"]):
            if m["role"] == "assistant" and (i + j) % 2:
                m["reasoning_content"] = f"\nThought {j}: the chart first; then the answer.\n"
    return rows


def as_vllm_renders(messages: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """vLLM hands a Hugging Face template tool-call arguments as objects (json.loads of the string), through
    apply_chat_template, which leaves out keys whose value is None."""
    out = []
    for m in messages:
        m = {k: v for k, v in m.items() if v is not None}
        if m.get("tool_calls"):
            calls = []
            for c in m["tool_calls"]:
                try:
                    args = json.loads(c["function"]["arguments"])
                except ValueError:
                    args = None
                calls.append({**c, "function": {**c["function"], "arguments": args}} if isinstance(args, dict) else c)
            m["tool_calls"] = calls
        out.append(m)
    return out


def transformers_render(template: str, messages: List[Dict[str, Any]], tools: Optional[List[Any]]) -> Dict[str, Any]:
    from transformers.utils.chat_template_utils import render_jinja_template

    try:
        rendered, _ = render_jinja_template(conversations=[as_vllm_renders(messages)], tools=tools or None, chat_template=template, add_generation_prompt=False, **SPECIALS)
    except Exception as e:  # noqa: BLE001 - a template's own raise_exception, or a role it cannot render
        return {"ok": False, "error": str(e)}
    return {"ok": True, "text": rendered[0]}


def test_templates_render_as_transformers_renders_them(tmp_path: Path) -> None:
    folder = trl_templates()
    rows = episodes(tmp_path)
    assert rows and any(r.get("tools") for r in rows)
    requests = []
    expected = []
    for name in TEMPLATES:
        text = (folder / name).read_text()
        # The template both as a .jinja file and inside a tokenizer_config.json (with its special tokens).
        config = tmp_path / f"{name}.tokenizer_config.json"
        config.write_text(json.dumps({"chat_template": text, **SPECIALS}))
        for row in rows:
            messages = row["messages"]
            last = max(i for i, m in enumerate(messages) if m["role"] == "assistant")
            conversation = messages[: last + 1]
            expected.append((name, row["task_id"], row["protocol"], transformers_render(text, conversation, row.get("tools"))))
            requests.append({"template": str(config), "messages": conversation, "tools": row.get("tools")})
    answers = ts_batch(BATCH, requests)
    # What transformers renders, ehrgym renders the same. Where transformers refuses (deepseekv3 and lfm2
    # on tool-call turns: `str + dict` arguments, tojson of the missing content), a server would refuse the
    # request too, and @huggingface/jinja, laxer with undefined values, may render something.
    rendered = 0
    for (name, task, protocol, want), got in zip(expected, answers):
        if want["ok"]:
            rendered += 1
            assert got["ok"], (name, task, protocol, got["error"])
            assert got["text"] == want["text"], (name, task, protocol)
    assert rendered >= len(rows) * (len(TEMPLATES) - 2), rendered


def test_the_stand_in_shows_earlier_reasoning_where_qwen3s_template_does(tmp_path: Path) -> None:
    """The stand-in's ChatML keeps an earlier turn's reasoning exactly where Qwen3's own template does:
    after the last user message (in the text protocol the environment's replies are user messages)."""
    qwen3 = (trl_templates() / "qwen3.jinja").read_text()
    rows = [r for r in episodes(tmp_path) if sum(m["role"] == "assistant" for m in r["messages"]) >= 2]
    assert {r["protocol"] for r in rows} == {"text", "tools"}
    conversations = [r["messages"][: max(i for i, m in enumerate(r["messages"]) if m["role"] == "assistant") + 1] for r in rows]
    ours = ts_batch(BATCH, [{"messages": c, "tools": r.get("tools")} for c, r in zip(conversations, rows)])
    shown_somewhere = 0
    for conversation, row, mine in zip(conversations, rows, ours):
        theirs = transformers_render(qwen3, conversation, row.get("tools"))
        assert theirs["ok"] and mine["ok"], (theirs, mine)
        thoughts = lambda text: sorted(re.findall(r"Thought (\d+):", text))  # noqa: E731
        assert thoughts(mine["text"]) == thoughts(theirs["text"]), (row["task_id"], row["protocol"])
        shown_somewhere += len(thoughts(mine["text"])) > 1
    assert shown_somewhere > 0  # earlier turns' reasoning is kept somewhere (the tools protocol)


def test_validate_reports_rows_the_models_template_renders_differently(tmp_path: Path) -> None:
    """Token rows sampled from the stand-in (ChatML) checked against Qwen3's template: they differ where
    Qwen3 renders its tools block; against no template (ChatML, the stand-in's own rendering) none do."""
    tasks = tmp_path / "tasks.jsonl"
    subprocess.run(CLI + ["tasks", "generate", "--suite", "mab-v2", "--per-type", "1", "--ehr-seed", "3", "--patients", "8", "--out", str(tasks)], cwd=ROOT, check=True, capture_output=True)
    teacher = ChildServer(["teacher", "serve", "--port", "0", "--tasks", str(tasks), "--seed", "4"])
    out = tmp_path / "rows.jsonl"
    try:
        subprocess.run(CLI + ["rollout", "--model", "ehrgym-stand-in", "--base-url", teacher.url, "--tasks", str(tasks), "--synthetic", "--seed", "3", "--patients", "8",
                              "--protocol", "tools", "--capture", "tokens", "--out", str(out), "--no-progress"], cwd=ROOT, check=True, capture_output=True)
    finally:
        teacher.stop()
    ds = tmp_path / "ds"
    subprocess.run(CLI + ["dataset", "build", "--from", str(out), "--out", str(ds), "--keep", "all", "--format", "trl,tokens", "--splits", "train", "--split-fractions", "1"], cwd=ROOT, check=True, capture_output=True)
    tokenizer = tmp_path / "tokenizer.json"
    subprocess.run(CLI + ["teacher", "tokenizer", "--out", str(tokenizer)], cwd=ROOT, check=True, capture_output=True)

    def validate(*extra: str) -> str:
        done = subprocess.run(CLI + ["dataset", "validate", str(ds), "--tokenizer", str(tokenizer), *extra], cwd=ROOT, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout

    chatml = validate()
    assert re.search(r"tokens: (\d+) rows; 0 of \1 re-tokenise to different ids .* \(as ChatML\)", chatml), chatml
    qwen3 = validate("--chat-template", str(trl_templates() / "qwen3.jinja"))
    m = re.search(r"tokens: (\d+) rows; (\d+) of \1 re-tokenise to different ids .* \(with .*qwen3\.jinja\) \(first: .*from id (\d+) of", qwen3)
    assert m and int(m.group(2)) == int(m.group(1)) > 0, qwen3
    # Both start with the same `<|im_start|>system\n`, then ChatML's "# Tools" and Qwen3's system text part.
    assert int(m.group(3)) > 0, qwen3

    refused = subprocess.run(CLI + ["dataset", "validate", str(ds), "--chat-template", str(trl_templates() / "qwen3.jinja")], cwd=ROOT, capture_output=True, text=True)
    assert refused.returncode == 2 and "--tokenizer" in refused.stderr, refused.stderr
    broken = tmp_path / "broken.jinja"
    broken.write_text("{% for m in messages %}{{ m.content }")
    bad = subprocess.run(CLI + ["dataset", "validate", str(ds), "--tokenizer", str(tokenizer), "--chat-template", str(broken)], cwd=ROOT, capture_output=True, text=True)
    assert bad.returncode == 2 and "the template does not parse" in bad.stderr, bad.stderr
