"""The one request path shared by the sync and asyncio clients: building a request, reading a reply."""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Literal, Mapping, Optional

import httpx
import msgpack

from .errors import EpisodeLostError, error_for

JSON_TYPE = "application/json"
MSGPACK_TYPE = "application/msgpack"
Format = Literal["json", "msgpack"]
EPISODE_HEADER = "X-Episode-Id"
REPLICA_HEADER = "X-Ehrgym-Replica"


class Wire:
    """Base URL, token, body format and timeouts of one client."""

    def __init__(self, base_url: str, token: Optional[str], format: Format, timeout: float, retries: int):
        url = httpx.URL(base_url)
        if url.scheme not in ("http", "https") or not url.host:
            raise ValueError(f"base_url: expected http(s)://host:port, got {base_url!r}")
        if format not in ("json", "msgpack"):
            raise ValueError(f"format: expected 'json' or 'msgpack', got {format!r}")
        if retries < 0:
            raise ValueError(f"retries: expected >= 0, got {retries!r}")
        self.base_url = str(url).rstrip("/")
        self.token = token if token is not None else os.environ.get("EHRGYM_TOKEN")
        self.format: Format = format
        self.timeout = timeout
        self.retries = retries

    def headers(self) -> Dict[str, str]:
        wire = MSGPACK_TYPE if self.format == "msgpack" else JSON_TYPE
        headers = {"Accept": wire}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        return headers

    def build(self, client: httpx.Client | httpx.AsyncClient, method: str, path: str, body: Any = None, query: Optional[Mapping[str, Any]] = None, episode_id: Optional[str] = None) -> httpx.Request:
        params = {k: v for k, v in (query or {}).items() if v is not None}
        content: Optional[bytes] = None
        # The load balancer's routing key: every request about an episode names it.
        headers: Dict[str, str] = {EPISODE_HEADER: episode_id} if episode_id is not None else {}
        if body is not None:
            if self.format == "msgpack":
                content = msgpack.packb(body, use_bin_type=True)
                headers["Content-Type"] = MSGPACK_TYPE
            else:
                content = json.dumps(body).encode("utf-8")
                headers["Content-Type"] = JSON_TYPE
        return client.build_request(method, path, params=params or None, content=content, headers=headers)

    @staticmethod
    def parse(response: httpx.Response) -> Any:
        """The decoded reply, or raises the EhrGymError subclass for its status."""
        kind = response.headers.get("content-type", "")
        data = response.content
        value: Any
        if kind.startswith(MSGPACK_TYPE):
            value = msgpack.unpackb(data, raw=False)
        elif kind.startswith(JSON_TYPE):
            value = json.loads(data) if data else None
        else:
            value = data.decode("utf-8", "replace")
        if response.status_code >= 400:
            episode_id = response.request.headers.get(EPISODE_HEADER)
            raise error_for(response.status_code, value, response.headers.get("retry-after"), episode_id, response.reason_phrase)
        return value

    def lost(self, episode_id: str, error: httpx.TransportError) -> EpisodeLostError:
        """A request about an episode that got no answer: to the caller, the episode is lost."""
        return EpisodeLostError(episode_id, 0, f"episode {episode_id} is lost: no answer from {self.base_url} ({type(error).__name__}: {error or 'connection closed'})")

    @staticmethod
    def may_retry(method: str, error: Exception) -> bool:
        """A request that never reached the server (connect failed) is safe to send again; one whose
        connection broke later only when it is idempotent (a POST step may have been applied)."""
        if isinstance(error, (httpx.ConnectError, httpx.ConnectTimeout)):
            return True
        return method in ("GET", "DELETE") and isinstance(error, (httpx.RemoteProtocolError, httpx.ReadError))
