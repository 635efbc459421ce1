"""The sync and asyncio clients against a real `ehrgym serve` (JSON and MessagePack bodies)."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Dict, List

import httpx
import pytest

from conftest import TOKEN, ChildServer
from ehrgym import (
    AsyncClient,
    BadRequestError,
    Client,
    EpisodeFinishedError,
    EpisodeLostError,
    NotFoundError,
    ServerBusyError,
    ServerError,
    UnauthorizedError,
)
from ehrgym.errors import error_for


def task1(client: Client) -> Dict[str, Any]:
    """A task1 (MRN lookup) task whose answer is a found patient's MRN."""
    for task in client.tasks(type="task1").tasks:
        if task.raw.get("branch") == "found":
            return task.raw
    raise AssertionError("the server has no task1 task with a found patient")


@pytest.mark.parametrize("fmt", ["json", "msgpack"])
def test_episode_text_protocol_rewards(server: ChildServer, fmt: str) -> None:
    with Client(server.url, token=TOKEN, format=fmt) as client:
        assert client.health().tasks == server.hello["tasks"]
        task = task1(client)
        mrn = task["sol"][0]
        for answer, reward in ((task["sol"], 1.0), (["S0000000"], 0.0)):
            with client.episode(task_id=task["id"]) as ep:
                assert ep.observation[-1]["role"] == "user"
                first = ep.step(f"GET http://localhost:8080/fhir/Patient?identifier={mrn}")
                assert not first.done and mrn in ep.messages[-1]["content"]
                last = ep.step(f"FINISH({json.dumps(answer)})")
                assert (last.reward, last.terminated, last.info["status"]) == (reward, True, "completed")
                state = client.get_episode(ep.id)
                assert (state.done, state.steps, state.task_id) == (True, 2, task["id"])
            with pytest.raises(NotFoundError) as gone:
                client.get_episode(ep.id)
            assert gone.value.field == "episode_id"
        assert client.health().episodes_open == 0


def test_episode_closes_when_the_block_raises(client: Client) -> None:
    task = task1(client)
    with pytest.raises(RuntimeError):
        with client.episode(task_id=task["id"], protocol="tools") as ep:
            assert [t["function"]["name"] for t in ep.tools or []][-1] == "finish"
            raise RuntimeError("trainer crashed")
    with pytest.raises(NotFoundError):
        client.get_episode(ep.id)


def test_tool_protocol_and_score_agree(client: Client) -> None:
    task = task1(client)
    call = {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "finish", "arguments": json.dumps({"value": task["sol"]})}}]}
    with client.episode(task_id=task["id"], protocol="tools") as ep:
        result = ep.step(call)
        transcript = ep.messages
    assert result.reward == 1.0 and result.done
    scored = client.score(transcript, task_id=task["id"], protocol="tools")
    assert (scored.reward, scored.replayed_turns, scored.terminated) == (1.0, 1, True)


def test_each_error_class_names_the_field(client: Client) -> None:
    task = task1(client)
    cases: List[Any] = [
        (NotFoundError, "episode_id", lambda: client.step("r0-doesnotexist", "FINISH([])")),
        (BadRequestError, "task_id", lambda: client.create_episode(task_id="no-such-task")),
        (BadRequestError, "protocol", lambda: client.create_episode(task_id=task["id"], protocol="smoke-signals")),
    ]
    for cls, field, call in cases:
        with pytest.raises(cls) as err:
            call()
        assert err.value.field == field, err.value
        assert field in str(err.value)
    with client.episode(task_id=task["id"]) as ep:
        with pytest.raises(BadRequestError) as bad:
            client.request("POST", f"/v1/episodes/{ep.id}/step", {"act": "x"})
        assert bad.value.field == "act"
        ep.step("FINISH([])")
        with pytest.raises(EpisodeFinishedError) as finished:
            ep.step("FINISH([])")
        assert (finished.value.status, finished.value.field) == (409, "episode_id")


def test_wrong_token_is_unauthorized(server: ChildServer) -> None:
    with Client(server.url, token="nope") as client:
        with pytest.raises(UnauthorizedError) as err:
            client.tasks()
        assert err.value.status == 401
        assert client.health().ok  # /healthz needs no token


def test_connection_errors_are_retried(server: ChildServer) -> None:
    # A port nothing listens on: the client tries 1 + retries times, then raises the connect error.
    sent: List[str] = []
    with Client("http://127.0.0.1:9", retries=2, timeout=5) as client:
        client._http.event_hooks["request"].append(lambda req: sent.append(str(req.url)))
        with pytest.raises(httpx.ConnectError):
            client.health()
    assert len(sent) == 3


def test_no_answer_about_an_episode_is_a_lost_episode(server: ChildServer) -> None:
    # Nothing listens on the port: after its retries, a request about an episode names the episode.
    with Client("http://127.0.0.1:9", retries=1, timeout=5) as client:
        with pytest.raises(EpisodeLostError) as lost:
            client.step("ep-gone", "FINISH([])")
    assert (lost.value.status, lost.value.episode_id) == (0, "ep-gone")
    assert str(lost.value).startswith("no reply [episode_id]: episode ep-gone is lost: no answer from http://127.0.0.1:9 (ConnectError")
    assert isinstance(lost.value.__cause__, httpx.ConnectError)

    async def play() -> None:
        async with AsyncClient("http://127.0.0.1:9", retries=0, timeout=5) as client:
            with pytest.raises(EpisodeLostError) as lost:
                await client.get_episode("ep-gone")
            assert lost.value.episode_id == "ep-gone"

    asyncio.run(play())


NGINX_PAGE = b"<html>\r\n<head><title>%d %s</title></head>\r\n<body>\r\n<center><h1>%d %s</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"


@pytest.mark.parametrize("status,reason", [(502, "Bad Gateway"), (503, "Service Temporarily Unavailable"), (504, "Gateway Time-out")])
def test_a_load_balancers_error_page_is_a_lost_episode(status: int, reason: str) -> None:
    page = NGINX_PAGE % (status, reason.encode(), status, reason.encode())
    lost = error_for(status, page.decode(), None, "ep-7", reason)
    assert isinstance(lost, EpisodeLostError) and (lost.status, lost.episode_id) == (status, "ep-7")
    assert str(lost) == f"HTTP {status} [episode_id]: episode ep-7 is lost: the load balancer answered {status} {reason}, no replica answered for it (the one holding it is down or died mid-request)"
    # About no episode: a server error that says who answered, without the page either.
    other = error_for(status, page.decode(), None, None, reason)
    assert type(other) is ServerError and "<" not in str(other) and "load balancer" in str(other)
    # A replica's own 503 (its --max-episodes are open) is not a lost episode.
    busy = error_for(503, {"error": "too many open episodes (limit 4); DELETE finished ones or raise --max-episodes"}, "2", "ep-7")
    assert type(busy) is ServerBusyError and busy.retry_after == 2.0


def test_async_client_runs_a_group_concurrently(server: ChildServer) -> None:
    async def play() -> List[float]:
        async with AsyncClient(server.url, token=TOKEN) as client:
            page = await client.tasks(type="task1")
            task = next(t.raw for t in page.tasks if t.raw.get("branch") == "found")

            async def one(answer: List[str]) -> float:
                async with client.episode(task_id=task["id"]) as ep:
                    result = await ep.step(f"FINISH({json.dumps(answer)})")
                    return result.reward

            rewards = await asyncio.gather(*(one(task["sol"] if i % 2 == 0 else ["nobody"]) for i in range(4)))
            assert (await client.health()).episodes_open == 0
            return list(rewards)

    assert asyncio.run(play()) == [1.0, 0.0, 1.0, 0.0]
