"""Every error leaves as an RFC 9457 problem-details body; database text never leaks
out of a 5xx. Which status an error gets is app.operations.errors' (the SQLSTATEs our SQL
functions raise included), shared with MCP; Litestar's own exceptions map here."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import psycopg
from litestar import Request, Response
from litestar.exceptions import HTTPException, InternalServerException, NotFoundException, ValidationException
from litestar.types import ExceptionHandlersMap
from litestar.utils.scope.state import ScopeState
from psycopg_pool import PoolTimeout

from app.db.availability import DatabaseUnavailable
from app.ingest.normalize import RejectedDocument
from app.ingest.pipeline import DuplicatePaths
from app.operations.errors import TITLES, Failure, Refused, failure_of
from app.operations.runtime import WriteBusy
from app.wire.pattern_words import in_words

PROBLEM_JSON = "application/problem+json"
RETRY_AFTER_SECONDS = "1"


def problem(
    status: int, detail: str, request: Request | None = None, *, headers: dict[str, str] | None = None, **extra: object
) -> Response:
    body: dict[str, object] = {
        "type": "about:blank",
        "title": TITLES.get(status, "Error"),
        "status": status,
        "detail": detail,
    }
    if request is not None:
        body["instance"] = path_of(request)
    body.update({k: v for k, v in extra.items() if v is not None})
    headers = dict(headers or {})
    if status == 401:
        headers["WWW-Authenticate"] = 'Bearer realm="contexts"'
    if status == 503:
        headers.setdefault("Retry-After", RETRY_AFTER_SECONDS)
    return Response(body, status_code=status, media_type=PROBLEM_JSON, headers=headers or None)


def http_failure(exc: HTTPException, body: object = None) -> Failure:
    """Litestar's own exceptions (validation, 404 of an unknown route, 405, 413, ...) as
    a Failure; every other one goes through the operations' mapping (failure_of). `body`:
    the request's body when it was read (it tells a cut body from a lone surrogate)."""
    errors = exc.extra if isinstance(exc, ValidationException) and exc.extra else None
    if isinstance(errors, list):  # msgspec's messages quote patterns: add the rule in words
        errors = [
            {**error, "message": in_words(error["message"])}
            if isinstance(error, dict) and isinstance(error.get("message"), str)
            else error
            for error in errors
        ]
    if client_gone(exc):
        return Failure(CLIENT_GONE, "the client closed the connection before its request was read")
    if exc.status_code >= 500:
        return Failure(exc.status_code, "internal error")
    detail = exc.detail
    if exc.status_code == 400 and detail == TRUNCATED:
        detail = truncated_detail(body)
    # The exception's own headers stay: `Allow` on a 405 (RFC 9110 requires it).
    return Failure(exc.status_code, detail, dict(exc.headers or {}), errors)  # type: ignore[arg-type]


CLIENT_GONE = 499
"""What the log and the metrics say of a request whose client left before its body was
read (nginx's "client closed request"): Litestar raises a 500 for it, which is no
server error and which nobody receives (a malformed chunked body, a client that hung up)."""


def client_gone(exc: BaseException) -> bool:
    return isinstance(exc, InternalServerException) and exc.detail == "client disconnected prematurely"


def logged_status(exc: BaseException) -> int:
    """The status a request that raised `exc` is answered (and logged) with."""
    if client_gone(exc):
        return CLIENT_GONE
    return exc.status_code if isinstance(exc, HTTPException) else 500


TRUNCATED = "Input data was truncated"
"""msgspec's error for a body that ends inside a JSON value, and also for a `\\ud800`
escape without its low half near the end of one."""
LONE_SURROGATE = (
    "a string holds a lone UTF-16 surrogate "
    "(an escape from \\ud800 to \\udbff without the \\udc00 to \\udfff that must follow it)"
)
TRUNCATED_DETAIL = f"JSON is malformed: the body ends inside a value, or {LONE_SURROGATE}"
"""Said when the body cannot be read back (the MCP mount): either may be the cause."""
CUT_DETAIL = "JSON is malformed: the body ends inside a value (it was cut short)"
SURROGATE_DETAIL = f"JSON is malformed: {LONE_SURROGATE}"
LONE_HIGH_SURROGATE = re.compile(rb"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})")


def truncated_detail(body: object) -> str:
    """Which of its two causes msgspec's "truncated" had, told from the body read (a cut
    body was told it might hold a surrogate, which sent its sender looking for one);
    both when the body is not at hand."""
    if not isinstance(body, bytes):
        return TRUNCATED_DETAIL
    return SURROGATE_DETAIL if LONE_HIGH_SURROGATE.search(body) else CUT_DETAIL


def failure_for(exc: BaseException, where: str, body: object = None) -> Failure:
    """The HTTP door's mapping (endpoints and the /mcp mount alike): Litestar's own
    exceptions here, every other one through the operations' (failure_of)."""
    return http_failure(exc, body) if isinstance(exc, HTTPException) else failure_of(exc, where)


def path_of(request: Request) -> str:
    """The request's path as the server read it: `request.url` parses the Host header
    too, and raises on one such as `x: y` (a port that is not a number), which turned
    the 400 for that header into a 500."""
    scope = request.scope
    path = str(scope.get("path") or "/")
    handler = scope.get("route_handler")
    if getattr(handler, "is_mount", False):  # a mount sees the path below it (`/` at `/mcp`)
        mount = min(handler.paths).rstrip("/")
        return mount + (path if path != "/" else "")
    return path


MISSING_FIELD = re.compile(r"^Object missing required field `([^`]+)`$")


def wire_keys(errors: list[dict[str, Any]], request: Request) -> list[dict[str, Any]]:
    """Each error's `key` as the client wrote it: Litestar names a query parameter by
    its Python name (`subscription_state` for `?state=`), a body's missing field by the
    object holding it (`data` for the body itself, `scope` for `scope.org_id`)."""
    try:
        parameters = request.route_handler.parsed_fn_signature.parameters
    except AttributeError:  # no route matched
        parameters = {}
    out = []
    for error in errors:
        if not isinstance(error, dict) or not isinstance(error.get("key"), str):
            out.append(error)
            continue
        key, source = error["key"], error.get("source")
        if source in ("query", "header", "cookie") and key in parameters:
            given = parameters[key].kwarg_definition
            # Parameter(query="x") keeps the name under its source; QueryParameter(name="x") under `name`.
            alias = getattr(given, source, None) or getattr(given, "name", None)
            key = alias if isinstance(alias, str) and alias else key
        elif source == "body":
            inside = "" if key == "data" else key
            missing = MISSING_FIELD.match(str(error.get("message", "")))
            key = ".".join(p for p in (inside, missing.group(1) if missing else "") if p) or "body"
        out.append({**error, "key": key})
    return out


ENCODED_SLASH = re.compile(rb"%2f", re.IGNORECASE)


def slash_in_id_hint(request: Request, exc: Exception) -> str | None:
    """A 404 of no route for a path holding `%2F`: the server decodes it into `/` before
    routing, so an id with a slash (`acme/payments`) is no one segment of a path."""
    if not (type(exc) is NotFoundException and ENCODED_SLASH.search(request.scope.get("raw_path") or b"")):
        return None
    return (
        "The path holds %2F, which is decoded into '/' before routing: an id containing '/' "
        "cannot be named in a URL path. Name it where a query parameter or the body takes it "
        "(GET /documents?repo_id=..., GET /sync?repo_id=..., MCP's tools), or use ids without '/' for repos, sessions "
        "and orgs you address by path."
    )


def on_error(request: Request, exc: Exception) -> Response:
    # The body the request read, which Litestar keeps in the scope's state.
    failure = failure_for(exc, path_of(request), ScopeState.from_scope(request.scope).body)
    if failure.hint is None and (hint := slash_in_id_hint(request, exc)) is not None:
        failure = dataclasses.replace(failure, hint=hint)
    return problem(
        failure.status,
        failure.detail,
        request,
        headers=failure.headers,
        errors=wire_keys(failure.errors, request) if failure.errors else None,
        sqlstate=failure.sqlstate,
        hint=failure.hint,
    )


EXCEPTION_HANDLERS: ExceptionHandlersMap = {
    # One handler; the keys keep Litestar from preferring its own for these types.
    kind: on_error
    for kind in (
        HTTPException,
        Refused,
        psycopg.Error,
        PoolTimeout,
        DatabaseUnavailable,
        WriteBusy,
        RejectedDocument,
        DuplicatePaths,
        RecursionError,
        Exception,
    )
}
