"""The one mapping from errors (SQLSTATEs included) to the statuses every door reports:
HTTP renders a `Failure` as problem details (app.api.errors), MCP as a tool error
(app.mcp). Database text never leaves with a 5xx. SQLSTATE codes raised by our SQL
functions map to statuses here.

Operations refuse a request with a `Refused` (or one of its kinds below): door-neutral,
with the status and the message any door answers."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg_pool import PoolTimeout

from app.db.availability import DatabaseUnavailable, is_connection_failure
from app.db.duplicates import duplicate_detail
from app.ingest.normalize import RejectedDocument
from app.ingest.pipeline import DuplicatePaths
from app.operations.runtime import WriteBusy
from app.scope import constraint_rule

log = logging.getLogger("contexts.api")

SQLSTATE_STATUS = {
    "28000": 401,  # invalid_authorization_specification: unknown or revoked API key
    "P0002": 404,  # no_data_found: unknown org, fragment, trace (or one you may not read)
    "22023": 400,  # invalid_parameter_value
    "22P02": 400,  # invalid_text_representation (e.g. a malformed uuid)
    "22001": 400,  # string_data_right_truncation
    "22003": 400,  # numeric_value_out_of_range (an id beyond bigint)
    "22P05": 400,  # untranslatable_character (e.g. \u0000 inside JSON)
    "23505": 409,  # unique_violation
    "42501": 403,  # insufficient_privilege
    "55000": 409,  # object_not_in_prerequisite_state (e.g. model mismatch)
    # Transient: the same request may succeed when retried (503 with Retry-After).
    "40001": 503,  # serialization_failure
    "40P01": 503,  # deadlock_detected
    "55P03": 503,  # lock_not_available
    "57014": 503,  # query_canceled (a statement timeout)
    # The database cannot do it now, whoever asks: 503, and the operator is told (logged).
    "25006": 503,  # read_only_sql_transaction (a standby, or a primary demoted by a failover)
    "53100": 503,  # disk_full
    "53200": 503,  # out_of_memory
    "53400": 503,  # configuration_limit_exceeded
}
OPERATOR_STATES = frozenset({"25006", "53100", "53200", "53400"})
"""States an operator must act on: logged as errors, though the caller gets a 503."""
TITLES = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    406: "Not Acceptable",
    408: "Request Timeout",
    409: "Conflict",
    413: "Content Too Large",
    415: "Unsupported Media Type",
    422: "Unprocessable Content",
    429: "Too Many Requests",
    431: "Request Header Fields Too Large",
    499: "Client Closed Request",
    500: "Internal Server Error",
    503: "Service Unavailable",
}


GENERIC_DETAIL = {
    "23505": "the write conflicts with a concurrent or existing one; retry it",
    "40001": "the request conflicted with a concurrent one; retry it",
    "40P01": "the request conflicted with a concurrent one; retry it",
    "55P03": "the database is busy; retry the request",
    "57014": "the database cancelled the request; retry it",
    "25006": "the database is read-only (a standby, or in recovery): nothing was stored; retry when it is primary",
    "53100": "the database has no disk space left: nothing was stored; retry once its operator has freed space",
    "53200": "the database ran out of memory; retry the request",
    "53400": "the database reached a configured limit; retry the request",
}
"""Messages PostgreSQL writes for these name internal objects (constraints, indexes)."""


class Refused(Exception):
    """A request an operation refuses: the status every door reports it under, and a
    message safe to show the caller."""

    status = 400

    def __init__(self, detail: str, *, status: int | None = None, headers: dict[str, str] | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        if status is not None:
            self.status = status
        self.headers = headers


class Invalid(Refused):
    """400: a value the request may not hold."""

    status = 400


class Unauthorized(Refused):
    """401: no key, or one that is malformed, unknown or revoked."""

    status = 401


class NotFound(Refused):
    """404: nothing the caller may read by that name."""

    status = 404


class Conflict(Refused):
    """409: the request cannot be served in the present state."""

    status = 409


class Unprocessable(Refused):
    """422: well formed, but not what the request may do."""

    status = 422


@dataclass(frozen=True, slots=True)
class Failure:
    """An error as every door reports it (HTTP problem details, MCP tool errors): a
    status, a message safe to show the caller, and what goes with them."""

    status: int
    detail: str
    headers: dict[str, str] | None = None
    errors: list[dict[str, Any]] | None = None
    sqlstate: str | None = None
    hint: str | None = None
    """What to do instead, where the SQL that refused says it (`raise ... using hint`)."""

    @property
    def title(self) -> str:
        return TITLES.get(self.status, "Error")


def failure_of(exc: BaseException, where: str) -> Failure:
    """The one mapping from exceptions (SQLSTATEs included) to statuses; `where` names
    the request or tool in the log. Database text never leaves with a 5xx. (A door's own
    exceptions, Litestar's over HTTP, are mapped by that door before it calls this.)"""
    if isinstance(exc, Refused):
        if exc.status >= 500:
            return Failure(exc.status, "internal error")
        return Failure(exc.status, exc.detail, dict(exc.headers or {}))
    if isinstance(exc, PoolTimeout):
        log.error("no database connection within the pool timeout on %s", where)
        return Failure(503, "database unavailable")
    if isinstance(exc, DatabaseUnavailable):
        return Failure(503, "database unavailable")
    if isinstance(exc, WriteBusy):
        return Failure(503, str(exc), {"Retry-After": str(exc.retry_after_s)})
    if isinstance(exc, psycopg.Error):
        return _database_failure(exc, where)
    if isinstance(exc, RejectedDocument):
        return Failure(422, str(exc))
    if isinstance(exc, DuplicatePaths):
        return Failure(400, str(exc))
    if isinstance(exc, RecursionError):
        return Failure(400, "request body is nested too deeply")
    log.exception("unhandled error on %s", where, exc_info=exc)
    return Failure(500, "internal error")


def _database_failure(exc: psycopg.Error, where: str) -> Failure:
    state = exc.sqlstate or ""
    if is_connection_failure(exc) or isinstance(exc, psycopg.InterfaceError):
        log.error("database unreachable on %s: %s", where, exc)
        return Failure(503, "database unavailable")
    if isinstance(exc, psycopg.DataError) and not state:
        # Raised by the driver before sending, e.g. a NUL character in a text value.
        return Failure(400, f"invalid value: {exc}")
    status = SQLSTATE_STATUS.get(state)
    if status is None:
        log.exception("database error %s on %s", state, where, exc_info=exc)
        return Failure(500, "internal error")
    if state in OPERATOR_STATES:
        log.error("database refused %s (%s): %s", where, state, exc.diag.message_primary or exc)
    message = constraint_rule(exc.diag.constraint_name) or duplicate_detail(exc) or GENERIC_DETAIL.get(state)
    if message is not None or status >= 500:
        return Failure(status, message or "invalid request", sqlstate=state)
    # Our SQL's own words, and its hint where it wrote one (what to do instead).
    return Failure(status, exc.diag.message_primary or "invalid request", sqlstate=state, hint=exc.diag.message_hint)
