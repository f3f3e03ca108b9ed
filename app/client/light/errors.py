"""Every failure of a call is a `ContextsError`: the service's refusal (its RFC 9457
problem details), no answer at all, an answer that is not what the API promises, or a
call the client could not send as written. Catch `ContextsError` for all of them, or a
subclass for one kind."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = [
    "BadRequest",
    "BadResponse",
    "Conflict",
    "ContextsError",
    "Forbidden",
    "InvalidCall",
    "NotFound",
    "RateLimited",
    "ServerError",
    "ServiceError",
    "TimedOut",
    "Unauthorized",
    "Unreachable",
]


class ContextsError(Exception):
    """A call that failed. `status` is the HTTP status the service answered, or 0 when
    there was no answer (the call was refused by the client, or the service could not
    be reached); `title` and `detail` are the problem's, and `problem` its whole body
    (at least `status`, `title` and `detail`; `hint`, where the service says what to do
    instead, ends the message)."""

    def __init__(self, status: int, title: str, detail: str, body: Mapping[str, Any] | None = None) -> None:
        self.status = status
        self.title = title
        self.detail = detail
        self.problem: dict[str, Any] = {"status": status, "title": title, "detail": detail} | dict(body or {})
        said = f"{title} ({status}): {detail}" if status else f"{title}: {detail}" if title else detail
        hint = self.problem.get("hint")
        super().__init__("; ".join([said, *self.errors, *([hint] if isinstance(hint, str) and hint else [])]))

    @property
    def errors(self) -> list[str]:
        """What the service said of each invalid field (a validation problem's `errors`)."""
        found = self.problem.get("errors")
        if not isinstance(found, list):
            return []
        return [
            " ".join(str(e[k]) for k in ("key", "message") if e.get(k)) if isinstance(e, dict) else str(e)
            for e in found
        ]

    @property
    def body(self) -> dict[str, Any]:
        """The problem details (the name earlier releases used)."""
        return self.problem


class InvalidCall(ContextsError, TypeError):
    """A call the client refused before sending anything: a missing, extra, swapped or
    wrong-typed argument (also a TypeError). `status` is 0."""

    def __init__(self, detail: str) -> None:
        super().__init__(0, "Invalid call", detail)


class Unreachable(ContextsError):
    """No answer: the connection was refused or dropped, or the name did not resolve. `status` is 0."""

    def __init__(self, detail: str) -> None:
        super().__init__(0, "Service unreachable", detail)


class TimedOut(Unreachable):
    """No answer within the client's timeout. `status` is 0."""


class BadResponse(ContextsError):
    """The service answered a success whose body is not the JSON the API promises (a proxy's
    page, a truncated body, a service of another version)."""


class ServiceError(ContextsError):
    """The service refused the call or failed: an HTTP status of 400 or more, with its
    problem details. `retry_after`: the service's Retry-After in seconds (429, 503), if given."""

    retry_after: float | None = None


class BadRequest(ServiceError):
    """400 or 422: the request is invalid (the detail names the field)."""


class Unauthorized(ServiceError):
    """401: no key, or a key the service does not know (revoked, expired, mistyped)."""


class Forbidden(ServiceError):
    """403: the key's principal may not do this (e.g. a read-only key writing)."""


class NotFound(ServiceError):
    """404: no such document, fragment, trace, session, pin, repo... that you may read."""


class Conflict(ServiceError):
    """409: the call conflicts with what exists (a duplicate, a changed version)."""


class RateLimited(ServiceError):
    """429: too many calls; `retry_after` says when to try again, if the service said."""


class ServerError(ServiceError):
    """5xx: the service failed (its details never echo database text)."""


_BY_STATUS: dict[int, type[ServiceError]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    422: BadRequest,
    429: RateLimited,
}


def service_error(status: int, title: str, detail: str, body: Mapping[str, Any] | None) -> ServiceError:
    """The subclass for an HTTP status of 400 or more."""
    kind = _BY_STATUS.get(status, ServerError if status >= 500 else ServiceError)
    return kind(status, title, detail, body)
