"""A real OpenAI-compatible model server in ehrgym's loop (issue 39 item 6): `transformers serve` (PyPI's
transformers with its `serving` extra, on CPU, offline) serves tiny models built here (tiny_lm, each a
folder written by save_pretrained, loaded by the server on its first request), and the real CLI drives
them over loopback: `ehrgym eval --policy openai` in both protocols and `ehrgym rollout`, then `dataset
build` and `dataset validate` of what the rollouts wrote.

The models: `garbage`, a random tiny Qwen3 sampling bytes (markers such as `<think>` included); scripted
ones answering every prompt the same way: one `patient_search` tool call (parsed by the server's own
Qwen `<tool_call>` parser), `finish(["Patient not found"])`, a text-protocol GET, and tool-call markup
that is not JSON, which the server cannot parse (it answers HTTP 500).

Whatever the model emits, the run does not crash, every row has the fields of the row schema, and its
status is the one the turns it played make it (`played_status`)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional

import pytest

from conftest import CLI, ROOT, stop_group
from tiny_lm import save_pair, scripted_pair, scripted_text_pair, tiny_pair

# The EHR and its tasks: a small synthetic population (every task type), generated once into ehrgym's cache.
EHR = ["--synthetic", "--seed", "3", "--patients", "8", "--per-type", "1"]
STATUSES = {"completed", "invalid_action", "limit_reached", "context_limit", "model_error", "error"}
ROW_FIELDS = {"task_id", "suite", "type", "kind", "sample", "protocol", "reward", "status", "rounds", "checks", "messages", "policy", "started_at", "wall_ms", "ehrgym_version"}
SEARCH_ARGS = {"birthdate": None, "family": "Smith", "given": None, "identifier": None}
TEXT_GET = "GET http://localhost:8080/fhir/Patient?family=Smith"


class ModelServer:
    """`transformers serve` as a child process on a loopback port the OS picks (`--port 0`; uvicorn logs the
    port it bound). No model is pinned: each request's `model` names a local folder, loaded once."""

    def __init__(self, home: Path):
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_HOME": str(home), "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
        command = [str(ROOT / ".venv" / "bin" / "transformers"), "serve", "--device", "cpu", "--host", "127.0.0.1", "--port", "0", "--default-seed", "0"]
        self.stdout = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=self.stdout, stderr=subprocess.PIPE, text=True, start_new_session=True)
        assert self.proc.stderr is not None
        self.log: List[str] = []
        port: Optional[str] = None
        # Its log until it says where it listens; EOF means it exited first.
        for line in self.proc.stderr:
            self.log.append(line)
            found = re.search(r"Uvicorn running on http://127\.0\.0\.1:(\d+)", line)
            if found:
                port = found.group(1)
                break
        if port is None:
            self.proc.wait()
            raise RuntimeError(f"transformers serve exited ({self.proc.returncode}) before listening:\n{''.join(self.log)}")
        # drained as it comes (a request logs a line), so the child never blocks on a full pipe
        threading.Thread(target=lambda err: self.log.extend(err), args=(self.proc.stderr,), daemon=True).start()
        self.host = f"127.0.0.1:{port}"
        self.url = f"http://{self.host}/v1"
        self._wait_healthy()

    def _wait_healthy(self) -> None:
        """Polls GET /health until it answers 200, or fails with the server's log once the process has exited."""
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        while True:
            try:
                with opener.open(f"http://{self.host}/health") as reply:
                    if reply.status == 200 and json.loads(reply.read())["status"] == "ok":
                        return
            except OSError:
                pass
            if self.proc.poll() is not None:
                raise RuntimeError(f"transformers serve exited ({self.proc.returncode}) before /health answered:\n{''.join(self.log)}")
            time.sleep(0.2)

    def stop(self) -> None:
        stop_group(self.proc)


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, str]:
    root = tmp_path_factory.mktemp("models")
    pairs = {
        "garbage": tiny_pair(seed=0),
        "search": scripted_pair({"name": "patient_search", "arguments": SEARCH_ARGS}),
        "finish": scripted_pair({"name": "finish", "arguments": {"value": ["Patient not found"]}}),
        "text_get": scripted_text_pair([TEXT_GET]),
        "malformed": scripted_text_pair(["<tool_call>", "not json", "</tool_call>"]),
    }
    return {name: str(save_pair(tok, model, root / name)) for name, (tok, model) in pairs.items()}


@pytest.fixture(scope="module")
def model_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModelServer]:
    server = ModelServer(tmp_path_factory.mktemp("serve-home"))
    yield server
    server.stop()


def ehrgym(*args: str, code: int = 0) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(CLI + list(args), cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == code, f"ehrgym {' '.join(args[:2])} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done


def drive(command: str, server: ModelServer, model: str, protocol: str, out: Path, *more: str) -> List[Dict[str, Any]]:
    """`ehrgym eval --policy openai` or `ehrgym rollout` against the server, one episode at a time (the
    server's sampling then follows one seeded sequence), returning the rows it wrote."""
    policy = ["--policy", "openai"] if command == "eval" else []
    ehrgym(command, *policy, *EHR, "--base-url", server.url, "--model", model, "--protocol", protocol, "--concurrency", "1", "--max-retries", "1", "--no-progress", "--out", str(out), *more)
    return [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []


def played_status(row: Dict[str, Any], max_rounds: int) -> str:
    """The status the turns of the transcript make: the last assistant turn's action, else the round limit."""
    last = [m for m in row["messages"] if m["role"] == "assistant"][-1]
    if row["protocol"] == "tools":
        calls = last.get("tool_calls") or []
        if not calls:
            return "invalid_action"
        if any(c["function"]["name"] == "finish" for c in calls):
            return "completed"
    else:
        text = (last.get("content") or "").strip()
        if text.startswith("FINISH("):
            return "completed"
        if not re.match(r"(GET|POST) ", text):
            return "invalid_action"
    assert row["rounds"] == max_rounds, row["rounds"]
    return "limit_reached"


def check_row(row: Dict[str, Any], server: ModelServer, model: str, protocol: str, max_rounds: int, max_tokens: Optional[int] = None) -> None:
    """The row's fields and their agreement with each other and with what the server answered."""
    assert ROW_FIELDS <= row.keys(), ROW_FIELDS - row.keys()
    assert row["protocol"] == protocol and row["status"] in STATUSES and row["kind"] in ("query", "action")
    # the text protocol grades FINISHed episodes only; the tool protocol every one (the answer "[]" when none came)
    assert row["reward"] in (0, 1) and (row["reward"] == 0 or row["status"] == "completed" or protocol == "tools")
    assert row["checks"] and (row["reward"] == 0 or all(c["ok"] for c in row["checks"]))
    assert row["policy"]["kind"] == "openai" and row["policy"]["model"] == model and row["policy"]["base_url_host"] == server.host
    assert row["status"] == played_status(row, max_rounds), (row["status"], row.get("error"))
    messages = row["messages"]
    assert all(m["role"] in ("system", "user", "assistant", "tool") for m in messages)
    assistants = [m for m in messages if m["role"] == "assistant"]
    assert row["rounds"] == len(assistants) >= 1
    # one model call per assistant turn, each as the server reported it
    turns = row["turns"]
    assert len(turns) == len(assistants)
    for turn in turns:
        assert turn["finish_reason"] in ("stop", "length", "tool_calls") and turn["attempts"] == 1
        assert re.fullmatch(r"[0-9a-f-]{36}", turn["request_id"]), turn["request_id"]  # the server's X-Request-Id
        usage = turn["usage"]
        assert usage["prompt_tokens"] > 0 and usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
        assert max_tokens is None or usage["completion_tokens"] <= max_tokens
    assert row["usage"] == {k: sum(t["usage"][k] for t in turns) for k in ("prompt_tokens", "completion_tokens", "total_tokens")}
    # every action got the environment's reply, but the one that ended the episode before the round limit
    for i, m in enumerate(messages[:-1]):
        if m["role"] != "assistant" or m is assistants[-1] and row["status"] != "limit_reached":
            continue
        if protocol == "tools":
            replies = [r["tool_call_id"] for r in messages[i + 1 :] if r["role"] == "tool"]
            assert [c["id"] for c in m["tool_calls"]] == replies[: len(m["tool_calls"])]
        else:
            assert messages[i + 1]["role"] == "user"
    if protocol == "tools":
        assert row["tools"] and all(t["type"] == "function" for t in row["tools"])
        for m, turn in zip(assistants, turns):
            # the call ids are the server's: its request id and the call's index
            assert [c["id"] for c in m.get("tool_calls") or []] == [f"{turn['request_id']}_tool_call_{i}" for i in range(len(m.get("tool_calls") or []))]


def test_garbage_from_a_random_model_ends_each_episode_as_an_invalid_action(model_server: ModelServer, models: Dict[str, str], tmp_path: Path) -> None:
    rows = drive("eval", model_server, models["garbage"], "tools", tmp_path / "eval.jsonl", "--limit", "4", "--temperature", "1", "--sampling-seed", "11", "--max-tokens", "24")
    assert len(rows) == 4
    for row in rows:
        check_row(row, model_server, models["garbage"], "tools", max_rounds=8, max_tokens=24)
        assert row["status"] == "invalid_action" and row["rounds"] == 1
        assert row["error"] == "a turn without tool calls ends the run (graded with the answer [])"
    # the model did emit something: bytes, and reasoning the server's Qwen parser split off at `</think>`
    emitted = [m for row in rows for m in row["messages"] if m["role"] == "assistant"]
    assert any(m.get("content") or m.get("reasoning_content") for m in emitted)


def test_a_tool_call_parsed_by_the_server_is_executed(model_server: ModelServer, models: Dict[str, str], tmp_path: Path) -> None:
    rows = drive("eval", model_server, models["search"], "tools", tmp_path / "eval.jsonl", "--types", "task1", "--max-rounds", "2", "--temperature", "0")
    assert sorted(r["suite"] for r in rows) == ["mab-v1", "mab-v2"]
    for row in rows:
        check_row(row, model_server, models["search"], "tools", max_rounds=2)
        assert row["status"] == "limit_reached"
        assert [t["finish_reason"] for t in row["turns"]] == ["tool_calls", "tool_calls"]
        for m in (m for m in row["messages"] if m["role"] == "assistant"):
            # as ehrgym stores a tool-call turn: content "" (never null), the server's call as it came
            assert m["content"] == "" and len(m["tool_calls"]) == 1
            assert m["tool_calls"][0]["function"]["name"] == "patient_search"
            assert json.loads(m["tool_calls"][0]["function"]["arguments"]) == SEARCH_ARGS
        replies = [m["content"] for m in row["messages"] if m["role"] == "tool"]
        assert len(replies) == 2 and all(r.startswith("{'resourceType': 'Bundle'") and "Patient?family=Smith" in r for r in replies)


def test_text_protocol_actions_and_tool_calls_it_does_not_read(model_server: ModelServer, models: Dict[str, str], tmp_path: Path) -> None:
    rows = drive("eval", model_server, models["text_get"], "text", tmp_path / "get.jsonl", "--types", "task1", "--max-rounds", "2", "--temperature", "0")
    assert len(rows) == 2
    for row in rows:
        check_row(row, model_server, models["text_get"], "text", max_rounds=2)
        assert row["status"] == "limit_reached"
        assert [m["content"] for m in row["messages"] if m["role"] == "assistant"] == [TEXT_GET, TEXT_GET]
        assert all(m["content"].startswith("Here is the response from the GET request:") for m in row["messages"][2::2])
    # transformers serve parses `<tool_call>` markup even when no tools were offered: the turn's text is empty
    rows = drive("eval", model_server, models["search"], "text", tmp_path / "calls.jsonl", "--limit", "1", "--temperature", "0")
    check_row(rows[0], model_server, models["search"], "text", max_rounds=8)
    assert rows[0]["status"] == "invalid_action"
    assert rows[0]["error"] == "round 1: the model answered with tool calls (patient_search), which the text protocol does not read"


def test_what_the_server_refuses_stops_the_run_with_its_own_message(model_server: ModelServer, models: Dict[str, str], tmp_path: Path) -> None:
    # Tool-call markup that is not JSON: the server's parser raises, it answers 500 to every attempt.
    # Nothing was ever answered, so the run stops at once rather than write a model_error row per task.
    out = tmp_path / "malformed.jsonl"
    done = ehrgym("eval", "--policy", "openai", *EHR, "--base-url", model_server.url, "--model", models["malformed"], "--protocol", "tools", "--limit", "2", "--concurrency", "1", "--max-retries", "1", "--no-progress", "--out", str(out), code=1)
    assert "the model endpoint failed every request so far: HTTP 500: 500 Internal Server Error (after 2 attempts)" in done.stderr
    assert not out.exists() or out.read_text() == ""
    # vLLM's token fields, which transformers serve refuses (422 with FastAPI's {"detail": ...}): its message is named
    out = tmp_path / "tokens.jsonl"
    done = ehrgym("eval", "--policy", "openai", *EHR, "--base-url", model_server.url, "--model", models["garbage"], "--protocol", "tools", "--limit", "1", "--capture", "tokens", "--no-progress", "--out", str(out), code=1)
    assert "HTTP 422: 422 Unexpected fields in the request: {'return_token_ids'}" in done.stderr


def test_rollouts_make_a_dataset_that_validates(model_server: ModelServer, models: Dict[str, str], tmp_path: Path) -> None:
    tools_rows = drive("rollout", model_server, models["finish"], "tools", tmp_path / "tools.jsonl", "--types", "task1", "--samples", "2", "--max-rounds", "2", "--sampling-seed", "5")
    assert len(tools_rows) == 4 and sorted({r["sample"] for r in tools_rows}) == [0, 1]
    for row in tools_rows:
        check_row(row, model_server, models["finish"], "tools", max_rounds=2)
        assert row["status"] == "completed" and row["rounds"] == 1 and row["result"] == '["Patient not found"]'
    # graded as the answer deserves: the same in both samples of a task, wrong for a patient who exists
    rewards = {(r["task_id"], r["sample"]): r["reward"] for r in tools_rows}
    assert all(rewards[(task, 0)] == rewards[(task, 1)] for task, _ in rewards)
    assert all(r["reward"] == 0 for r in tools_rows if r["type"] == "task1" and r.get("branch") == "found")
    # garbage in the text protocol: an invalid action at once (what the official harness does with it)
    text_rows = drive("rollout", model_server, models["garbage"], "text", tmp_path / "text.jsonl", "--limit", "3", "--sampling-seed", "7", "--max-tokens", "16")
    assert len(text_rows) == 3
    for row in text_rows:
        check_row(row, model_server, models["garbage"], "text", max_rounds=8, max_tokens=16)
        assert row["status"] == "invalid_action" and row["rounds"] == 1 and row["reward"] == 0
    built = ehrgym("dataset", "build", "--from", str(tmp_path / "tools.jsonl"), str(tmp_path / "text.jsonl"), "--out", str(tmp_path / "ds"), "--keep", "all")
    # every row read as a valid episode row, garbage included
    assert "read 7, invalid 0," in built.stdout + built.stderr, built.stdout + built.stderr
    validated = ehrgym("dataset", "validate", str(tmp_path / "ds"))
    assert re.search(r": valid \(\d+ rows", validated.stdout + validated.stderr), validated.stdout + validated.stderr
