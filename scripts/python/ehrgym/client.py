"""Sync and asyncio clients of the ehrgym reward server (`ehrgym serve`)."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any, Dict, List, Mapping, Optional, Union
from urllib.parse import quote

import httpx

from .errors import EhrGymError, EpisodeLostError, NotFoundError
from .results import EpisodeState, Health, Message, Reset, ScoreResult, StepResult, TaskPage
from .wire import Format, Wire

Action = Union[str, Message]
"""A turn: its text (text protocol) or an assistant message with tool_calls (tool protocol)."""


def _episode_path(episode_id: str, *rest: str) -> str:
    return "/".join(["/v1/episodes", quote(episode_id, safe=""), *rest])


def new_episode_id() -> str:
    """A fresh id the client chooses, so a load balancer can route the episode before it exists."""
    return f"ep-{uuid.uuid4().hex}"


def _create_body(task_id: Optional[str], task: Optional[Dict[str, Any]], protocol: str, max_rounds: Optional[int], writes: Optional[str], episode_id: Optional[str] = None) -> Dict[str, Any]:
    if (task_id is None) == (task is None):
        raise ValueError("pass exactly one of task_id and task")
    body: Dict[str, Any] = {"protocol": protocol, "episode_id": episode_id or new_episode_id()}
    if task_id is not None:
        body["task_id"] = task_id
    if task is not None:
        body["task"] = task
    if max_rounds is not None:
        body["max_rounds"] = max_rounds
    if writes is not None:
        body["writes"] = writes
    return body


def _step_body(action: Action) -> Dict[str, Any]:
    return {"action": action} if isinstance(action, str) else {"message": action}


def _score_body(messages: List[Message], task_id: Optional[str], task: Optional[Dict[str, Any]], protocol: str, max_rounds: Optional[int], return_messages: bool) -> Dict[str, Any]:
    body = _create_body(task_id, task, protocol, max_rounds, None)
    del body["episode_id"]
    body["messages"] = messages
    if return_messages:
        body["return_messages"] = True
    return body


class Client:
    """Blocking client; one keep-alive connection pool, safe to share between threads.

    `format`: "msgpack" (default) or "json" bodies; `retries`: attempts again after a connection
    error (only requests that cannot have been applied twice); `token`: bearer token (default
    $EHRGYM_TOKEN)."""

    def __init__(self, base_url: str = "http://127.0.0.1:8000", token: Optional[str] = None, format: Format = "msgpack", timeout: float = 120.0, retries: int = 3):
        self._wire = Wire(base_url, token, format, timeout, retries)
        self._http = httpx.Client(base_url=self._wire.base_url, headers=self._wire.headers(), timeout=timeout)

    @property
    def base_url(self) -> str:
        return self._wire.base_url

    def request(self, method: str, path: str, body: Any = None, query: Optional[Mapping[str, Any]] = None, episode_id: Optional[str] = None) -> Any:
        """Send one request (`episode_id`: the episode it is about, sent as X-Episode-Id); returns the
        decoded reply or raises an EhrGymError subclass. About an episode, no answer (a load balancer's
        502/503/504 page, a failed or broken connection) raises EpisodeLostError naming it; about none,
        a connection error is httpx's."""
        request = self._wire.build(self._http, method, path, body, query, episode_id)
        for attempt in range(self._wire.retries + 1):
            try:
                return self._wire.parse(self._http.send(request))
            except httpx.TransportError as err:
                if attempt == self._wire.retries or not Wire.may_retry(method, err):
                    if episode_id is None:
                        raise
                    raise self._wire.lost(episode_id, err) from err
                time.sleep(min(0.05 * 2**attempt, 1.0))
        raise AssertionError("unreachable")

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def health(self) -> Health:
        return Health.parse(self.request("GET", "/healthz"))

    def tasks(self, suite: Optional[str] = None, type: Optional[str] = None, offset: int = 0, limit: Optional[int] = None) -> TaskPage:
        return TaskPage.parse(self.request("GET", "/v1/tasks", query={"suite": suite, "type": type, "offset": offset or None, "limit": limit}))

    def schema(self) -> Dict[str, Any]:
        return self.request("GET", "/v1/schema")

    def metrics(self) -> str:
        return self.request("GET", "/metrics")

    def create_episode(self, task_id: Optional[str] = None, task: Optional[Dict[str, Any]] = None, protocol: str = "text", max_rounds: Optional[int] = None, writes: Optional[str] = None, episode_id: Optional[str] = None) -> Reset:
        """`episode_id`: the id to open it under (default: a fresh `ep-<uuid>`, so a proxy can route it)."""
        body = _create_body(task_id, task, protocol, max_rounds, writes, episode_id)
        return Reset.parse(self.request("POST", "/v1/episodes", body, episode_id=body["episode_id"]))

    def step(self, episode_id: str, action: Action) -> StepResult:
        return StepResult.parse(self.request("POST", _episode_path(episode_id, "step"), _step_body(action), episode_id=episode_id))

    def get_episode(self, episode_id: str, messages: bool = False) -> EpisodeState:
        return EpisodeState.parse(self.request("GET", _episode_path(episode_id), query={"messages": 1 if messages else None}, episode_id=episode_id))

    def delete_episode(self, episode_id: str) -> None:
        self.request("DELETE", _episode_path(episode_id), episode_id=episode_id)

    def score(self, messages: List[Message], task_id: Optional[str] = None, task: Optional[Dict[str, Any]] = None, protocol: str = "text", max_rounds: Optional[int] = None, return_messages: bool = False) -> ScoreResult:
        """Replays a transcript's assistant turns in a fresh episode and grades it."""
        return ScoreResult.parse(self.request("POST", "/v1/score", _score_body(messages, task_id, task, protocol, max_rounds, return_messages)))

    def episode(self, task_id: Optional[str] = None, task: Optional[Dict[str, Any]] = None, protocol: str = "text", max_rounds: Optional[int] = None, writes: Optional[str] = None, episode_id: Optional[str] = None, reopen: bool = False) -> "Episode":
        """Opens an episode; use it in a `with` block, which always deletes it on the server.
        `reopen`: when its replica loses it (EpisodeLostError: unknown_episode, a load balancer's 502/503/504
        or no answer), open the task again under the same id and replay the turns so far, then retry the
        step (the env is deterministic). Without it, a step of a lost episode raises EpisodeLostError."""
        body = _create_body(task_id, task, protocol, max_rounds, writes, episode_id)
        return Episode(self, Reset.parse(self.request("POST", "/v1/episodes", body, episode_id=body["episode_id"])), body, reopen)


class _EpisodeState:
    """What an open episode keeps: its transcript, last reward and whether it ended."""

    def __init__(self, created: Reset, body: Dict[str, Any], reopen: bool):
        self._body = body
        self._reopen = reopen
        self._actions: List[Action] = []
        self.reopened = 0
        self.id = created.episode_id
        self.tools = created.tools
        self.info = created.info
        self.observation: List[Message] = created.observation
        self.messages: List[Message] = list(created.observation)
        self.reward = 0.0
        self.done = False
        self.closed = False

    def _record(self, action: Action, result: StepResult) -> StepResult:
        self._actions.append(action)
        self.messages.append({"role": "assistant", "content": action} if isinstance(action, str) else action)
        self.observation = result.observation
        self.messages.extend(result.observation)
        self.reward = result.reward
        self.info = result.info
        self.done = result.done
        return result


class Episode(_EpisodeState):
    """One open episode of a Client."""

    def __init__(self, client: Client, created: Reset, body: Dict[str, Any], reopen: bool = False):
        super().__init__(created, body, reopen)
        self.client = client

    def step(self, action: Action) -> StepResult:
        try:
            return self._record(action, self.client.step(self.id, action))
        except EpisodeLostError:
            if not self._reopen:
                raise
        self.reopened += 1
        try:  # a broken connection may have left it open on a live replica
            self.client.delete_episode(self.id)
        except EhrGymError:
            pass
        self.client.request("POST", "/v1/episodes", self._body, episode_id=self.id)
        for past in self._actions:
            self.client.step(self.id, past)
        return self._record(action, self.client.step(self.id, action))

    def close(self) -> None:
        """Deletes the episode on the server (once; an episode already gone is not an error)."""
        if self.closed:
            return
        self.closed = True
        try:
            self.client.delete_episode(self.id)
        except NotFoundError:
            pass

    def __enter__(self) -> "Episode":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class AsyncClient:
    """asyncio client with the same methods as Client (awaitable)."""

    def __init__(self, base_url: str = "http://127.0.0.1:8000", token: Optional[str] = None, format: Format = "msgpack", timeout: float = 120.0, retries: int = 3):
        self._wire = Wire(base_url, token, format, timeout, retries)
        self._http = httpx.AsyncClient(base_url=self._wire.base_url, headers=self._wire.headers(), timeout=timeout)

    @property
    def base_url(self) -> str:
        return self._wire.base_url

    async def request(self, method: str, path: str, body: Any = None, query: Optional[Mapping[str, Any]] = None, episode_id: Optional[str] = None) -> Any:
        request = self._wire.build(self._http, method, path, body, query, episode_id)
        for attempt in range(self._wire.retries + 1):
            try:
                return self._wire.parse(await self._http.send(request))
            except httpx.TransportError as err:
                if attempt == self._wire.retries or not Wire.may_retry(method, err):
                    if episode_id is None:
                        raise
                    raise self._wire.lost(episode_id, err) from err
                await asyncio.sleep(min(0.05 * 2**attempt, 1.0))
        raise AssertionError("unreachable")

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    async def health(self) -> Health:
        return Health.parse(await self.request("GET", "/healthz"))

    async def tasks(self, suite: Optional[str] = None, type: Optional[str] = None, offset: int = 0, limit: Optional[int] = None) -> TaskPage:
        return TaskPage.parse(await self.request("GET", "/v1/tasks", query={"suite": suite, "type": type, "offset": offset or None, "limit": limit}))

    async def create_episode(self, task_id: Optional[str] = None, task: Optional[Dict[str, Any]] = None, protocol: str = "text", max_rounds: Optional[int] = None, writes: Optional[str] = None, episode_id: Optional[str] = None) -> Reset:
        """`episode_id`: the id to open it under (default: a fresh `ep-<uuid>`, so a proxy can route it)."""
        body = _create_body(task_id, task, protocol, max_rounds, writes, episode_id)
        return Reset.parse(await self.request("POST", "/v1/episodes", body, episode_id=body["episode_id"]))

    async def step(self, episode_id: str, action: Action) -> StepResult:
        return StepResult.parse(await self.request("POST", _episode_path(episode_id, "step"), _step_body(action), episode_id=episode_id))

    async def get_episode(self, episode_id: str, messages: bool = False) -> EpisodeState:
        return EpisodeState.parse(await self.request("GET", _episode_path(episode_id), query={"messages": 1 if messages else None}, episode_id=episode_id))

    async def delete_episode(self, episode_id: str) -> None:
        await self.request("DELETE", _episode_path(episode_id), episode_id=episode_id)

    async def score(self, messages: List[Message], task_id: Optional[str] = None, task: Optional[Dict[str, Any]] = None, protocol: str = "text", max_rounds: Optional[int] = None, return_messages: bool = False) -> ScoreResult:
        return ScoreResult.parse(await self.request("POST", "/v1/score", _score_body(messages, task_id, task, protocol, max_rounds, return_messages)))

    def episode(self, task_id: Optional[str] = None, task: Optional[Dict[str, Any]] = None, protocol: str = "text", max_rounds: Optional[int] = None, writes: Optional[str] = None, episode_id: Optional[str] = None, reopen: bool = False) -> "AsyncEpisode":
        """`async with client.episode(...) as ep:` opens the episode and always deletes it (`reopen`: as Client.episode)."""
        return AsyncEpisode(self, _create_body(task_id, task, protocol, max_rounds, writes, episode_id), reopen)


class AsyncEpisode(_EpisodeState):
    """One episode of an AsyncClient, opened by `async with`."""

    def __init__(self, client: AsyncClient, body: Dict[str, Any], reopen: bool = False):
        self.client = client
        self._body = body
        self._reopen = reopen

    async def __aenter__(self) -> "AsyncEpisode":
        created = Reset.parse(await self.client.request("POST", "/v1/episodes", self._body, episode_id=self._body["episode_id"]))
        super().__init__(created, self._body, self._reopen)
        return self

    async def step(self, action: Action) -> StepResult:
        try:
            return self._record(action, await self.client.step(self.id, action))
        except EpisodeLostError:
            if not self._reopen:
                raise
        self.reopened += 1
        try:  # a broken connection may have left it open on a live replica
            await self.client.delete_episode(self.id)
        except EhrGymError:
            pass
        await self.client.request("POST", "/v1/episodes", self._body, episode_id=self.id)
        for past in self._actions:
            await self.client.step(self.id, past)
        return self._record(action, await self.client.step(self.id, action))

    async def aclose(self) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            await self.client.delete_episode(self.id)
        except NotFoundError:
            pass

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()
