"""`workflows` chart reviews through a real `ehrgym serve`: an episode that places all of the scripted
expert's orders but one passes every checkpoint but that order's, so its reward is 0 while the
`partial_credit` the Python adapters expose (ehrgym.reward_of, the TRL environment class, the TRL
/v1/score reward function) is the passed fraction of its checkpoints, as the checks name them."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple

import pytest

from conftest import CLI, ROOT, TOKEN, ChildServer, start
from ehrgym import Client
from ehrgym.results import reward_of
from ehrgym.trl import environment, score_reward

# One synthetic population for the task generator, the expert's eval and the server.
POPULATION = ["--patients", "20", "--seed", "7"]
ORDER_CALLS = ("fhir_service_request_create", "fhir_medication_request_create")

Row = Dict[str, Any]


@pytest.fixture(scope="module")
def reviews(tmp_path_factory: pytest.TempPathFactory) -> Tuple[Path, Dict[str, Dict[str, Row]]]:
    """Six generated reviews, and the scripted expert's eval rows of them per protocol (task id -> row)."""
    tmp = tmp_path_factory.mktemp("workflows")
    tasks = tmp / "reviews.jsonl"
    subprocess.run(CLI + ["tasks", "generate", "--suite", "workflows", "--per-type", "6", "--patients", "20", "--ehr-seed", "7", "--seed", "3", "--out", str(tasks)], cwd=ROOT, check=True, capture_output=True, text=True)
    rows: Dict[str, Dict[str, Row]] = {}
    for protocol in ("text", "tools"):
        out = tmp / f"expert-{protocol}.jsonl"
        subprocess.run(CLI + ["eval", "--policy", "expert", "--tasks", str(tasks), *POPULATION, "--protocol", protocol, "--out", str(out), "--no-progress"], cwd=ROOT, check=True, capture_output=True, text=True)
        rows[protocol] = {r["task_id"]: r for r in (json.loads(line) for line in out.read_text().splitlines() if line.strip())}
        assert len(rows[protocol]) == 6 and all(r["reward"] == 1 for r in rows[protocol].values())
    return tasks, rows


@pytest.fixture(scope="module")
def wf_server(reviews: Tuple[Path, Dict[str, Dict[str, Row]]]) -> Iterator[ChildServer]:
    child = start(["serve", "--port", "0", "--token", TOKEN, "--tasks", str(reviews[0]), *POPULATION])
    yield child
    child.stop()


def passed_fraction(task: Row, info: Dict[str, Any]) -> Tuple[float, List[str]]:
    """From the checks alone: a review's checkpoint passes when every check named `<rule>: ...` passes.
    Returns the passed fraction and the failed rules."""
    rules: List[str] = task["rules"]
    failed = [rule for rule in rules if not all(c["ok"] for c in info["checks"] if c["name"].startswith(f"{rule}: "))]
    for rule in rules:
        assert any(c["name"].startswith(f"{rule}: ") for c in info["checks"]), f"no check names the checkpoint {rule}"
    return (len(rules) - len(failed)) / len(rules), failed


def a_review_with_orders(rows: Dict[str, Row], count_orders: Any) -> Row:
    """The expert's row of the review (fewest checkpoints first, then id) that places the most orders."""
    return max(sorted(rows.values(), key=lambda r: (len(r["checkpoints"]), r["task_id"])), key=count_orders)


def test_text_episode_missing_one_order_earns_partial_credit(wf_server: ChildServer, reviews: Tuple[Path, Dict[str, Dict[str, Row]]]) -> None:
    expert = a_review_with_orders(reviews[1]["text"], lambda r: sum(1 for m in r["messages"] if m["role"] == "assistant" and m["content"].startswith("POST ")))
    turns = [m["content"] for m in expert["messages"] if m["role"] == "assistant"]
    dropped = next(i for i, t in enumerate(turns) if t.startswith("POST "))
    played = turns[:dropped] + turns[dropped + 1 :]
    with Client(wf_server.url, token=TOKEN) as client:
        task = next(t.raw for t in client.tasks(suite="workflows", type="review").tasks if t.id == expert["task_id"])
        with client.episode(task_id=task["id"]) as ep:
            prompt = list(ep.messages)
            results = [ep.step(turn) for turn in played]
            transcript = list(ep.messages)
        last = results[-1]
        assert (last.terminated, last.info["status"]) == (True, "completed")
        assert all(r.reward == 0.0 and not r.done for r in results[:-1])
        fraction, failed = passed_fraction(task, last.info)
        credit = reward_of(last.reward, last.info, "partial_credit")
        assert last.reward == 0.0 and reward_of(last.reward, last.info) == 0.0
        assert 0.0 < credit < 1.0
        assert credit == pytest.approx(fraction)
        assert len(failed) == 1  # the dropped order's checkpoint, and no other
        assert [c["rule"] for c in last.info["checkpoints"] if not c["ok"]] == failed
        # The TRL reward function replays the same transcript through /v1/score.
        completion = transcript[len(prompt) :]
        assert score_reward(wf_server.url, token=TOKEN, protocol="text", reward="partial_credit")([prompt], [completion], [task["id"]]) == [pytest.approx(fraction)]
        assert score_reward(wf_server.url, token=TOKEN, protocol="text")([prompt], [completion], [task["id"]]) == [0.0]
        # The whole expert transcript earns both rewards in full.
        full = expert["messages"][len(prompt) :]
        assert score_reward(wf_server.url, token=TOKEN, protocol="text", reward="partial_credit")([prompt], [full], [task["id"]]) == [1.0]


def test_tool_environment_missing_one_order_earns_partial_credit(wf_server: ChildServer, reviews: Tuple[Path, Dict[str, Dict[str, Row]]]) -> None:
    def calls(row: Row) -> List[Dict[str, Any]]:
        return [c["function"] for m in row["messages"] if m["role"] == "assistant" for c in m.get("tool_calls") or []]

    expert = a_review_with_orders(reviews[1]["tools"], lambda r: sum(1 for c in calls(r) if c["name"] in ORDER_CALLS))
    every = calls(expert)
    dropped = next(i for i, c in enumerate(every) if c["name"] in ORDER_CALLS)
    played = every[:dropped] + every[dropped + 1 :]
    assert played[-1]["name"] == "finish"

    # What the server says of that episode (checks and checkpoints), one tool call per assistant turn.
    with Client(wf_server.url, token=TOKEN) as client:
        task = next(t.raw for t in client.tasks(suite="workflows", type="review").tasks if t.id == expert["task_id"])
        with client.episode(task_id=task["id"], protocol="tools") as ep:
            prompt = list(ep.messages)
            for i, call in enumerate(played):
                last = ep.step({"role": "assistant", "content": None, "tool_calls": [{"id": f"c{i}", "type": "function", "function": call}]})
            transcript = list(ep.messages)
    assert last.done and last.reward == 0.0
    fraction, failed = passed_fraction(task, last.info)
    assert 0.0 < fraction < 1.0 and len(failed) == 1

    # The TRL environment_factory class plays the same calls as its tool methods.
    for kind, want in (("partial_credit", fraction), ("binary", 0.0)):
        env = environment(wf_server.url, token=TOKEN, reward=kind)()
        env.reset(task_id=task["id"], prompt=[])
        for call in played:
            getattr(env, call["name"])(**json.loads(call["arguments"]))
        assert env.done
        assert env.get_reward() == pytest.approx(want)
    assert score_reward(wf_server.url, token=TOKEN, protocol="tools", reward="partial_credit")([prompt], [transcript[len(prompt) :]], [task["id"]]) == [pytest.approx(fraction)]
