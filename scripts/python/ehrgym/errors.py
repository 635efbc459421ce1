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


def error_for(status: int, body: Any, retry_after: Optional[str] = None) -> EhrGymError:
    """The exception for a reply of this status and decoded body."""
    cls = _BY_STATUS.get(status, ServerError)
    if isinstance(body, dict) and "error" in body:
        message, field, code = str(body["error"]), body.get("field"), body.get("code")
    else:
        message, field, code = (body.decode("utf-8", "replace") if isinstance(body, bytes) else str(body)), None, None
    after: Optional[float] = None
    if retry_after:
        try:
            after = float(retry_after)
        except ValueError:
            after = None
    return cls(status, message, field=field if isinstance(field, str) else None, code=code if isinstance(code, str) else None, retry_after=after)
