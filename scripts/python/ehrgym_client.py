#!/usr/bin/env python3
"""Client for the ehrgym reward server (`ehrgym serve`).

Standard library only; MessagePack is used when the `msgpack` package is installed
(pass use_msgpack=False to force JSON). One client may be shared by threads: each
thread keeps its own keep-alive connection.

    from ehrgym_client import EhrGymClient
    client = EhrGymClient("http://127.0.0.1:8000")
    task = client.tasks(limit=1)["tasks"][0]
    with client.episode(task_id=task["id"]) as ep:
        print(ep.observation[0]["content"])           # the first prompt
        result = ep.step("GET http://localhost:8080/fhir/Patient?name=Peter")
        result = ep.step("FINISH([\"S6534835\"])")
        print(result["reward"], result["info"]["status"])

Command line (used by CI):
    python3 ehrgym_client.py --url URL [--token T] [--format json|msgpack] health|tasks|run|score ...
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import sys
import threading
import urllib.parse
from typing import Any, Dict, Iterable, List, Optional

try:  # optional
    import msgpack  # type: ignore
except ImportError:  # pragma: no cover - depends on the machine
    msgpack = None

JSON_TYPE = "application/json"
MSGPACK_TYPE = "application/msgpack"

__all__ = ["EhrGymClient", "EhrGymError", "Episode", "HAVE_MSGPACK"]
HAVE_MSGPACK = msgpack is not None


class EhrGymError(Exception):
    """A non-2xx reply: `status` is the HTTP status, `field` the request field the server blamed."""

    def __init__(self, status: int, message: str, field: Optional[str] = None):
        super().__init__(f"HTTP {status}: {message}")
        self.status = status
        self.message = message
        self.field = field


class EhrGymClient:
    def __init__(
        self,
        base_url: str = "http://127.0.0.1:8000",
        token: Optional[str] = None,
        use_msgpack: Optional[bool] = None,
        timeout: float = 120.0,
    ):
        parsed = urllib.parse.urlsplit(base_url)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ValueError(f"base_url: expected http(s)://host:port, got {base_url!r}")
        self._scheme = parsed.scheme
        self._host = parsed.hostname
        self._port = parsed.port or (443 if parsed.scheme == "https" else 80)
        self._prefix = parsed.path.rstrip("/")
        self.token = token if token is not None else os.environ.get("EHRGYM_TOKEN")
        if use_msgpack and msgpack is None:
            raise RuntimeError("use_msgpack=True but the msgpack package is not installed")
        self.use_msgpack = HAVE_MSGPACK if use_msgpack is None else use_msgpack
        self.timeout = timeout
        self._local = threading.local()

    # -- transport ---------------------------------------------------------------------------

    def _connection(self) -> http.client.HTTPConnection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            cls = http.client.HTTPSConnection if self._scheme == "https" else http.client.HTTPConnection
            conn = cls(self._host, self._port, timeout=self.timeout)
            self._local.conn = conn
        return conn

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def _encode(self, body: Any) -> bytes:
        if self.use_msgpack:
            return msgpack.packb(body, use_bin_type=True)
        return json.dumps(body).encode("utf-8")

    def _decode(self, data: bytes, content_type: str) -> Any:
        if content_type.startswith(MSGPACK_TYPE):
            if msgpack is None:
                raise RuntimeError("the server replied with MessagePack but msgpack is not installed")
            return msgpack.unpackb(data, raw=False)
        if content_type.startswith(JSON_TYPE):
            return json.loads(data.decode("utf-8")) if data else None
        return data.decode("utf-8")

    def request(self, method: str, path: str, body: Any = None, query: Optional[Dict[str, Any]] = None) -> Any:
        """Send one request; returns the decoded reply or raises EhrGymError."""
        url = self._prefix + path
        if query:
            clean = {k: v for k, v in query.items() if v is not None}
            if clean:
                url += "?" + urllib.parse.urlencode(clean)
        wire = MSGPACK_TYPE if self.use_msgpack else JSON_TYPE
        headers = {"Accept": wire}
        payload = None
        if body is not None:
            payload = self._encode(body)
            headers["Content-Type"] = wire
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        for attempt in (0, 1):
            conn = self._connection()
            try:
                conn.request(method, url, body=payload, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
                break
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                # The server closed an idle keep-alive connection before reading the request:
                # it was not processed, so sending it again on a fresh connection is safe.
                self.close()
                if attempt == 1:
                    raise
        if resp.getheader("Connection", "").lower() == "close":
            self.close()
        value = self._decode(data, resp.getheader("Content-Type", ""))
        if resp.status >= 400:
            if isinstance(value, dict) and "error" in value:
                raise EhrGymError(resp.status, str(value["error"]), value.get("field"))
            raise EhrGymError(resp.status, str(value))
        return value

    # -- API ---------------------------------------------------------------------------------

    def health(self) -> Dict[str, Any]:
        return self.request("GET", "/healthz")

    def metrics(self) -> str:
        return self.request("GET", "/metrics")

    def schema(self) -> Dict[str, Any]:
        return self.request("GET", "/v1/schema")

    def tasks(self, suite: Optional[str] = None, type: Optional[str] = None, offset: int = 0, limit: Optional[int] = None) -> Dict[str, Any]:
        return self.request("GET", "/v1/tasks", query={"suite": suite, "type": type, "offset": offset or None, "limit": limit})

    def create_episode(
        self,
        task_id: Optional[str] = None,
        task: Optional[Dict[str, Any]] = None,
        protocol: str = "text",
        max_rounds: int = 8,
        writes: Optional[str] = None,
    ) -> Dict[str, Any]:
        """Open an episode: {episode_id, observation: [messages], tools?, info}."""
        body: Dict[str, Any] = {"protocol": protocol, "max_rounds": max_rounds}
        if task_id is not None:
            body["task_id"] = task_id
        if task is not None:
            body["task"] = task
        if writes is not None:
            body["writes"] = writes
        return self.request("POST", "/v1/episodes", body)

    def step(self, episode_id: str, action: Optional[str] = None, message: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        """One agent turn: `action` (text protocol) or `message` (assistant message with tool_calls).
        Returns {observation: [new messages], reward, terminated, truncated, info}."""
        body: Dict[str, Any] = {}
        if action is not None:
            body["action"] = action
        if message is not None:
            body["message"] = message
        return self.request("POST", f"/v1/episodes/{urllib.parse.quote(episode_id, safe='')}/step", body)

    def get_episode(self, episode_id: str, messages: bool = False) -> Dict[str, Any]:
        return self.request("GET", f"/v1/episodes/{urllib.parse.quote(episode_id, safe='')}", query={"messages": 1 if messages else None})

    def delete_episode(self, episode_id: str) -> Dict[str, Any]:
        return self.request("DELETE", f"/v1/episodes/{urllib.parse.quote(episode_id, safe='')}")

    def score(
        self,
        messages: List[Dict[str, Any]],
        task_id: Optional[str] = None,
        task: Optional[Dict[str, Any]] = None,
        protocol: str = "text",
        max_rounds: int = 8,
        return_messages: bool = False,
    ) -> Dict[str, Any]:
        """Replay a whole transcript (its assistant turns) in a fresh episode and grade it."""
        body: Dict[str, Any] = {"messages": messages, "protocol": protocol, "max_rounds": max_rounds, "return_messages": return_messages}
        if task_id is not None:
            body["task_id"] = task_id
        if task is not None:
            body["task"] = task
        return self.request("POST", "/v1/score", body)

    def episode(self, **kwargs: Any) -> "Episode":
        """An episode as a context manager (deleted on exit)."""
        return Episode(self, self.create_episode(**kwargs))

    # OpenEnv-style surface
    def openenv_reset(self, **body: Any) -> Dict[str, Any]:
        return self.request("POST", "/reset", body)

    def openenv_step(self, action: Any, episode_id: Optional[str] = None) -> Dict[str, Any]:
        body: Dict[str, Any] = {"action": action}
        if episode_id is not None:
            body["episode_id"] = episode_id
        return self.request("POST", "/step", body)

    def openenv_state(self, episode_id: Optional[str] = None) -> Dict[str, Any]:
        return self.request("GET", "/state", query={"episode_id": episode_id})


class Episode:
    """One open episode; keeps the chat transcript (prompt, turns, environment replies)."""

    def __init__(self, client: EhrGymClient, created: Dict[str, Any]):
        self.client = client
        self.id: str = created["episode_id"]
        self.observation: List[Dict[str, Any]] = created["observation"]
        self.tools: Optional[List[Any]] = created.get("tools")
        self.info: Dict[str, Any] = created["info"]
        self.messages: List[Dict[str, Any]] = list(self.observation)
        self.reward: float = 0.0
        self.done = False

    def step(self, action: Any) -> Dict[str, Any]:
        """`action`: the turn text, or an assistant message dict (tool protocol)."""
        if isinstance(action, str):
            result = self.client.step(self.id, action=action)
            self.messages.append({"role": "assistant", "content": action})
        else:
            result = self.client.step(self.id, message=action)
            self.messages.append(action)
        self.observation = result["observation"]
        self.messages.extend(self.observation)
        self.reward = result["reward"]
        self.info = result["info"]
        self.done = bool(result["terminated"] or result["truncated"])
        return result

    def close(self) -> None:
        try:
            self.client.delete_episode(self.id)
        except EhrGymError as err:
            if err.status != 404:
                raise

    def __enter__(self) -> "Episode":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


# -- command line -------------------------------------------------------------------------------


def _print(value: Any) -> None:
    sys.stdout.write(json.dumps(value, sort_keys=True) + "\n")
    sys.stdout.flush()


def _cmd_run(client: EhrGymClient, args: argparse.Namespace) -> int:
    """Play the given turns for each episode in a JSON file [{task_id, protocol, turns: [...]}, ...];
    prints one JSON line per episode with the reward, status and the new-message counts."""
    with open(args.episodes, "r", encoding="utf-8") as fh:
        episodes = json.load(fh)
    for spec in episodes:
        with client.episode(task_id=spec["task_id"], protocol=spec.get("protocol", "text"), max_rounds=spec.get("max_rounds", 8)) as ep:
            result: Dict[str, Any] = {}
            for turn in spec["turns"]:
                result = ep.step(turn)
                if ep.done:
                    break
            state = client.get_episode(ep.id)
            _print(
                {
                    "task_id": spec["task_id"],
                    "episode_id": ep.id,
                    "reward": ep.reward,
                    "status": ep.info["status"],
                    "done": ep.done,
                    "state_done": state["done"],
                    "steps": state["steps"],
                    "messages": len(ep.messages),
                    "terminated": result.get("terminated"),
                    "transcript": ep.messages if args.transcripts else None,
                }
            )
    return 0


def _cmd_errors(client: EhrGymClient, args: argparse.Namespace) -> int:
    """Exercise the error replies; prints {case: status or field}."""
    out: Dict[str, Any] = {}

    def expect(name: str, fn: Any) -> None:
        try:
            fn()
            out[name] = "no error"
        except EhrGymError as err:
            out[name] = {"status": err.status, "field": err.field}

    expect("unknown_episode", lambda: client.step("r0-doesnotexist", action="FINISH([])"))
    expect("unknown_task", lambda: client.create_episode(task_id="no-such-task"))
    expect("bad_protocol", lambda: client.create_episode(task_id=args.task_id, protocol="smoke-signals"))
    ep = client.create_episode(task_id=args.task_id)
    expect("bad_step_body", lambda: client.request("POST", f"/v1/episodes/{ep['episode_id']}/step", {"act": "x"}))
    client.step(ep["episode_id"], action="FINISH([])")
    expect("finished_episode", lambda: client.step(ep["episode_id"], action="FINISH([])"))
    client.delete_episode(ep["episode_id"])
    expect("deleted_episode", lambda: client.get_episode(ep["episode_id"]))
    _print(out)
    return 0


def main(argv: Optional[Iterable[str]] = None) -> int:
    parser = argparse.ArgumentParser(description="ehrgym reward server client")
    parser.add_argument("--url", default=os.environ.get("EHRGYM_URL", "http://127.0.0.1:8000"))
    parser.add_argument("--token", default=None, help="bearer token (default: $EHRGYM_TOKEN)")
    parser.add_argument("--format", choices=["auto", "json", "msgpack"], default="auto")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("health")
    p_tasks = sub.add_parser("tasks")
    p_tasks.add_argument("--suite")
    p_tasks.add_argument("--type")
    p_tasks.add_argument("--limit", type=int)
    p_run = sub.add_parser("run", help="play scripted turns from a JSON file")
    p_run.add_argument("episodes")
    p_run.add_argument("--transcripts", action="store_true")
    p_score = sub.add_parser("score", help="score transcripts from a JSON file [{task_id, protocol, messages}]")
    p_score.add_argument("transcripts")
    p_err = sub.add_parser("errors", help="check the error replies")
    p_err.add_argument("--task-id", required=True)
    args = parser.parse_args(list(argv) if argv is not None else None)

    use_msgpack = None if args.format == "auto" else args.format == "msgpack"
    client = EhrGymClient(args.url, token=args.token, use_msgpack=use_msgpack)
    try:
        if args.command == "health":
            _print({**client.health(), "client_format": "msgpack" if client.use_msgpack else "json"})
        elif args.command == "tasks":
            _print(client.tasks(suite=args.suite, type=args.type, limit=args.limit))
        elif args.command == "run":
            return _cmd_run(client, args)
        elif args.command == "score":
            with open(args.transcripts, "r", encoding="utf-8") as fh:
                for spec in json.load(fh):
                    r = client.score(spec["messages"], task_id=spec["task_id"], protocol=spec.get("protocol", "text"))
                    _print({"task_id": spec["task_id"], "reward": r["reward"], "status": r["info"]["status"], "replayed_turns": r["replayed_turns"]})
        elif args.command == "errors":
            return _cmd_errors(client, args)
    except EhrGymError as err:
        sys.stderr.write(f"ehrgym_client: {err}\n")
        return 1
    finally:
        client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
