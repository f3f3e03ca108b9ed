"""The MCP door's Streamable HTTP transport, mounted at /mcp in the Litestar app
(app.serve.app): the MCP server of app.mcp behind the HTTP door's key check and body
limits, its failures answered as problem details like every endpoint's."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, cast

from litestar import Litestar, Request, Response
from litestar.exceptions import ClientException, MethodNotAllowedException, NotFoundException
from litestar.handlers import asgi
from litestar.types import HTTPRequestEvent, Message, Receive, ReceiveMessage, Scope, Send
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from app.api.errors import failure_for, problem
from app.api.request_checks import (
    QUERY_NAMES,
    encoding_problem,
    host_problem,
    json_body_problem,
    repeated_header_problem,
    unknown_query_problem,
)
from app.mcp import MOUNT_PATH, EnvelopeError, UnknownMethod, build_server, json_rpc_error, read_envelope
from app.operations.auth import token_from_header
from app.operations.log_fields import note
from app.operations.services import Services
from app.settings import allowed_origins, origin_of


@asynccontextmanager
async def http_lifespan(app: Litestar) -> AsyncIterator[None]:
    """Runs the MCP session manager for as long as the app runs (a manager runs once:
    each start of the app makes its own)."""
    manager = StreamableHTTPSessionManager(
        build_server(lambda: app.state.services),
        # Every call is authenticated on its own, so no state is kept between requests:
        # any worker can answer any request, and responses are plain JSON.
        stateless=True,
        json_response=True,
        max_request_body_size=app.state.services.settings.max_body_bytes,
    )
    async with manager.run():
        app.state.mcp = manager
        yield


@asgi(MOUNT_PATH, is_mount=True, copy_scope=True, opt={QUERY_NAMES: frozenset()})
async def mcp_endpoint(scope: Scope, receive: Receive, send: Send) -> None:
    """Streamable HTTP. The key is checked before the request reaches the MCP session
    manager: a missing, unknown or revoked key is a 401 problem, as on every endpoint.
    Before it, the request checks every endpoint's request gets (app.api.request_checks:
    a mount is not a route handler, so Litestar runs none of them here)."""
    app = Litestar.from_scope(scope)
    request: Request[Any, Any, Any] = Request(scope, receive, send)  # problems name /mcp (errors.path_of)
    checked = (
        mount_path_problem(scope)
        or host_problem(request)
        or origin_problem(request, app.state.services.settings.mcp_allowed_origins)
        or repeated_header_problem(request)
        or encoding_problem(request)
        or unknown_query_problem(request)
    )
    if checked is not None:
        await checked.to_asgi_response(None, request)(scope, receive, send)
        return
    services: Services = app.state.services
    headers = dict(scope["headers"])
    header = headers.get(b"authorization")
    try:
        token = token_from_header(header.decode("latin-1") if header is not None else None)
        await services.runtime.read(services.auth.authenticate, token)
        if scope.get("method") != "POST":
            # Stateless: no stream for the server to send on later (a GET held one open,
            # pinging, forever) and no session to end (DELETE). MCP's answer is a 405.
            raise MethodNotAllowedException(
                detail="MCP over HTTP here is one POST per JSON-RPC message", headers={"Allow": "POST"}
            )
        refused = json_body_problem(headers.get(b"content-type", b"").decode("latin-1"))
        if refused is not None:
            raise ClientException(status_code=415, detail=refused)
        receive = await read_body(receive, services.settings.max_body_bytes)
    except ClientLeft:
        note(status=CLIENT_LEFT)  # the request log's line, as proxies log it; nothing to send
        return
    except UnknownMethod as exc:  # JSON-RPC's own answer, in a 200 as the SDK answers its errors
        answer = Response(json_rpc_error(exc.ident, exc.code, str(exc)), media_type="application/json")
        await answer.to_asgi_response(None, Request(scope, receive, send))(scope, receive, send)
        return
    except Exception as exc:
        failure = failure_for(exc, MOUNT_PATH)
        response = problem(
            failure.status, failure.detail, headers=failure.headers, sqlstate=failure.sqlstate, instance=MOUNT_PATH
        )
        await response.to_asgi_response(None, Request(scope, receive, send))(scope, receive, send)
        return
    await app.state.mcp.handle_request(with_accept(scope), receive, problems_for(scope, receive, send))


CLIENT_LEFT = 499
"""The status logged for a request whose client left before it was answered (nginx's)."""

ANSWERS = b"application/json, text/event-stream"
"""The Accept the SDK requires of every request (MCP: clients list both)."""


def with_accept(scope: Scope) -> Scope:
    """`scope` with an Accept the SDK takes, where the client's accepts the JSON this door
    answers (none, `*/*`, `application/*` or `application/json`): HTTP reads each of them
    as accepting it, and the SDK refused them with a 406."""
    accept = next((value for name, value in scope["headers"] if name == b"accept"), b"").lower()
    if b"application/json" in accept and b"text/event-stream" in accept:
        return scope
    if accept.strip() and not any(kind in accept for kind in (b"*/*", b"application/*", b"application/json")):
        return scope  # the SDK's 406 stands: the client takes nothing this door answers
    headers = [(name, value) for name, value in scope["headers"] if name != b"accept"]
    return cast("Scope", {**scope, "headers": [*headers, (b"accept", ANSWERS)]})


def origin_problem(request: Request[Any, Any, Any], allowed: str) -> Response[Any] | None:
    """A browser page of another origin calling /mcp (a site the user visits, reaching a
    local server through DNS rebinding) is refused, as MCP requires: the Origin header
    must be this server's own or one of CONTEXTS_MCP_ALLOWED_ORIGINS. Clients that are not
    browsers send none."""
    origin = request.headers.get("origin")
    if origin is None:
        return None
    own = origin_of(f"{request.scope.get('scheme', 'http')}://{request.headers.get('host', '')}")
    found = origin_of(origin)
    if found is not None and (found == own or found in allowed_origins(allowed)):
        return None
    return problem(
        403,
        f"requests from pages of another origin ({origin[:200]!r}) are refused at /mcp; "
        "CONTEXTS_MCP_ALLOWED_ORIGINS lists the origins allowed",
        request,
    )


def mount_path_problem(scope: Scope) -> Response[Any] | None:
    """A mount answers every path under it, and Litestar matched `/mcpx` to it too: only
    /mcp itself (a trailing slash allowed) is the MCP door; any other path is the 404 an
    unknown route gets."""
    raw = scope.get("raw_path") or (scope.get("root_path", "") + scope.get("path", "")).encode("utf-8", "replace")
    if raw.split(b"?", 1)[0] in (MOUNT_PATH.encode(), MOUNT_PATH.encode() + b"/"):
        return None
    return problem(404, NotFoundException().detail, instance=raw.decode("latin-1")[:200])


def problems_for(scope: Scope, receive: Receive, send: Send) -> Send:
    """`send` with the SDK's own HTTP errors (406 without an Accept it serves, a message
    its validation refuses, ...) turned into this door's problem details: it answered
    them as JSON-RPC bodies whose message quoted the request back with pydantic's report
    and its version. A 2xx, tool errors included, passes as it is."""
    held: dict[str, Any] = {}

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start" and message["status"] >= 400:
            held["start"] = message
            held["body"] = b""
            return
        if "start" not in held:
            await send(message)
            return
        held["body"] += message.get("body", b"")
        if message.get("more_body", False):
            return
        start = held["start"]
        kept = {
            name.decode("latin-1"): value.decode("latin-1")
            for name, value in start.get("headers", [])
            if name.lower() in (b"allow", b"retry-after")
        }
        response = problem(start["status"], _sdk_detail(held["body"]), headers=kept, instance=MOUNT_PATH)
        await response.to_asgi_response(None, Request(scope, receive, send))(scope, receive, send)

    return sending


def _sdk_detail(body: bytes) -> str:
    """The first line of the SDK's error message, without pydantic's report."""
    try:
        message = json.loads(body)["error"]["message"]
    except (ValueError, KeyError, TypeError):
        return "not a JSON-RPC 2.0 message this server accepts"
    first = str(message).split("\n", 1)[0].split(" For further information", 1)[0].strip()
    if first.startswith("Validation error"):
        return (
            "not a JSON-RPC 2.0 message this server accepts "
            '(a request: jsonrpc "2.0", an id, a method, params an object)'
        )
    return first[:300] or "not a JSON-RPC 2.0 message this server accepts"


class ClientLeft(Exception):
    """The client disconnected before its body was read (it gave up waiting): there is no
    one to answer. The SDK, reading the body itself, logged a ClientDisconnect traceback
    and a 500 for it."""


async def read_body(receive: Receive, limit: int) -> Receive:
    """The whole body, read here and handed on as one message: what reading it raises (the
    server's 408 deadline, app.api.server.BodyTimeout) becomes this door's problem details,
    where the MCP SDK would turn it into a 500. Over `limit` bytes: 413. A message the SDK
    would misread or refuse (app.mcp.read_envelope: malformed JSON, nested past what its
    parser recurses into, not UTF-8, NaN, a lone surrogate, an id that is not one): 400. A request for a method MCP
    does not have: UnknownMethod, answered as JSON-RPC's -32601 by the caller."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            raise ClientLeft
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise ClientException(status_code=413, detail=f"request body over {limit} bytes")
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    body = b"".join(chunks)
    try:
        read_envelope(body)
    except UnknownMethod:
        raise
    except EnvelopeError as exc:
        raise ClientException(status_code=400, detail=f"request body: {exc}") from None
    whole: list[HTTPRequestEvent] = [{"type": "http.request", "body": body, "more_body": False}]

    async def replay() -> ReceiveMessage:
        return whole.pop() if whole else await receive()

    return replay
