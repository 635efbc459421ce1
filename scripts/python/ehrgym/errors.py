"""One exception type per class of error the reward server replies with ({error, field?})."""

from __future__ import annotations

from typing import Any, Dict, Optional, Type


class EhrGymError(Exception):
    """A non-2xx reply. `status`: HTTP status; `message`: the server's `error` text (it names the
    field and the value given); `field`: the request field the server blamed, when it named one."""

    def __init__(self, status: int, message: str, field: Optional[str] = None, code: Optional[str] = None, retry_after: Optional[float] = None):
        named = f" [{field}]" if field else ""
        super().__init__(f"HTTP {status}{named}: {message}")
        self.status = status
        self.message = message
        self.field = field
        self.code = code
        self.retry_after = retry_after


class BadRequestError(EhrGymError):
    """400: an invalid body or query (the field and value are named) or an undecodable body."""


class UnauthorizedError(EhrGymError):
    """401: missing or wrong bearer token."""


class NotFoundError(EhrGymError):
    """404: unknown, deleted or evicted episode (or one of another replica), or unknown route."""


class EpisodeLostError(NotFoundError):
    """The episode named by `episode_id` is gone: the replica the request reached does not hold it
    (404 unknown_episode: deleted, evicted, or its replica was replaced), or no replica answered for it
    (a load balancer's 502, 503 or 504, or a connection that failed or broke; `status` 0 when there
    was no reply at all). `client.episode(..., reopen=True)` opens it again and replays its turns."""

    def __init__(self, episode_id: Optional[str], status: int, message: str, code: Optional[str] = None):
        super().__init__(status, message, field="episode_id", code=code)
        self.episode_id = episode_id
        if not status:
            self.args = (f"no reply [episode_id]: {message}",)


class MethodNotAllowedError(EhrGymError):
    """405: the route exists but not with this method."""


class EpisodeFinishedError(EhrGymError):
    """409: stepping an episode that has already ended."""


class PayloadTooLargeError(EhrGymError):
    """413: the body is over the server's --max-body."""


class UnsupportedMediaTypeError(EhrGymError):
    """415: a content type other than JSON or MessagePack."""


class ServerBusyError(EhrGymError):
    """503: --max-episodes are open; `retry_after` is the server's Retry-After in seconds."""


class ServerError(EhrGymError):
    """Any other status (5xx): a server fault."""


_BY_STATUS: Dict[int, Type[EhrGymError]] = {
    400: BadRequestError,
    401: UnauthorizedError,
    404: NotFoundError,
    405: MethodNotAllowedError,
    409: EpisodeFinishedError,
    413: PayloadTooLargeError,
    415: UnsupportedMediaTypeError,
    503: ServerBusyError,
}


# What a load balancer answers when no replica answered: the replica is down, died mid-request or is too slow.
GATEWAY_STATUSES = (502, 503, 504)


def error_for(status: int, body: Any, retry_after: Optional[str] = None, episode_id: Optional[str] = None, reason: str = "") -> EhrGymError:
    """The exception for a reply of this status and decoded body (`episode_id`: the episode the
    request was about; `reason`: the status line's phrase). A body that is not the server's
    {error, field?, code?} came from something in front of it (a proxy's HTML page): the message
    then says so and the page is not repeated."""
    cls = _BY_STATUS.get(status, ServerError)
    if isinstance(body, dict) and "error" in body:
        message, field, code = str(body["error"]), body.get("field"), body.get("code")
        if code == "unknown_episode":
            return EpisodeLostError(episode_id, status, message, code=code)
    else:
        answered = f"{status} {reason}".strip()
        if status in GATEWAY_STATUSES:
            if episode_id is not None:
                return EpisodeLostError(episode_id, status, f"episode {episode_id} is lost: the load balancer answered {answered}, no replica answered for it (the one holding it is down or died mid-request)")
            return ServerError(status, f"the load balancer answered {answered}, no replica answered")
        message, field, code = f"{answered} (not a reply of the ehrgym server: something in front of it answered)", None, None
    after: Optional[float] = None
    if retry_after:
        try:
            after = float(retry_after)
        except ValueError:
            after = None
    return cls(status, message, field=field if isinstance(field, str) else None, code=code if isinstance(code, str) else None, retry_after=after)
