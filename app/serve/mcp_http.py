"""The MCP door's Streamable HTTP transport, mounted at /mcp in the Litestar app
(app.serve.app): the MCP server of app.mcp behind the HTTP door's key check and body
limits, its failures answered as problem details like every endpoint's."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import msgspec
from litestar import Litestar, Request
from litestar.exceptions import ClientException
from litestar.handlers import asgi
from litestar.types import HTTPRequestEvent, Receive, ReceiveMessage, Scope, Send
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from app.api.errors import failure_for, problem
from app.api.request_checks import UTF8_CHARSETS, content_type_charset
from app.mcp import MOUNT_PATH, build_server
from app.operations.auth import token_from_header
from app.operations.services import Services


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


@asgi(MOUNT_PATH, is_mount=True, copy_scope=True)
async def mcp_endpoint(scope: Scope, receive: Receive, send: Send) -> None:
    """Streamable HTTP. The key is checked before the request reaches the MCP session
    manager: a missing, unknown or revoked key is a 401 problem, as on every endpoint."""
    app = Litestar.from_scope(scope)
    services: Services = app.state.services
    headers = dict(scope["headers"])
    header = headers.get(b"authorization")
    try:
        token = token_from_header(header.decode("latin-1") if header is not None else None)
        await services.runtime.read(services.auth.authenticate, token)
        if scope.get("method") == "POST":
            charset = content_type_charset(headers.get(b"content-type", b"").decode("latin-1").partition(";")[2])
            if charset is not None and charset.lower() not in UTF8_CHARSETS:
                raise ClientException(
                    status_code=415, detail=f"a JSON body is read as UTF-8 only (RFC 8259), not charset={charset}"
                )
            receive = await read_body(receive, services.settings.max_body_bytes)
    except Exception as exc:
        failure = failure_for(exc, MOUNT_PATH)
        response = problem(
            failure.status, failure.detail, headers=failure.headers, sqlstate=failure.sqlstate, instance=MOUNT_PATH
        )
        await response.to_asgi_response(None, Request(scope, receive, send))(scope, receive, send)
        return
    await app.state.mcp.handle_request(scope, receive, send)


async def read_body(receive: Receive, limit: int) -> Receive:
    """The whole body, read here and handed on as one message: what reading it raises (the
    server's 408 deadline, app.api.server.BodyTimeout) becomes this door's problem details,
    where the MCP SDK would turn it into a 500. Over `limit` bytes: 413. JSON nested past
    what a Python parser can recurse into: 400 (the SDK's own parser answered it with a 500)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return receive  # the client left: the SDK sees it as before
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise ClientException(status_code=413, detail=f"request body over {limit} bytes")
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    body = b"".join(chunks)
    try:
        envelope = msgspec.json.decode(body)
    except RecursionError:
        # The SDK's parser hits Python's recursion limit too, and answers a 500.
        raise ClientException(status_code=400, detail="request body is nested too deeply") from None
    except msgspec.DecodeError as exc:
        if "out of range" in str(exc):  # an integer past 64 bits: Python's parser fails past 4,300 digits
            raise ClientException(status_code=400, detail=f"request body holds a number out of range ({exc})") from None
        lax_json_problem(body)  # what the SDK's parser would take, or answer with a 500
    else:
        id_problem(envelope)
    whole: list[HTTPRequestEvent] = [{"type": "http.request", "body": body, "more_body": False}]

    async def replay() -> ReceiveMessage:
        return whole.pop() if whole else await receive()

    return replay


def lax_json_problem(body: bytes) -> None:
    """Raise a 400 for a body the SDK would take though it is not JSON, or answer with a
    500: bytes that are not UTF-8 (a 500), and NaN, Infinity or a lone UTF-16 surrogate
    (Python's parser takes them; no tool can use them). JSON that is malformed outright is
    left to the SDK, which answers JSON-RPC's parse error (-32700)."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ClientException(
            status_code=400, detail=f"request body is not UTF-8 (byte {exc.object[exc.start]:#04x} at {exc.start})"
        ) from None
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return
    raise ClientException(
        status_code=400,
        detail="request body is not standard JSON: it holds NaN, Infinity or a lone UTF-16 surrogate (\\ud800)",
    )


def id_problem(envelope: object) -> None:
    """Raise a 400 for a JSON-RPC id that is neither a string, an integer that fits in 64
    bits, nor null (JSON-RPC 2.0, 4): an object was accepted silently, and an integer of
    thousands of digits was a 500 (Python refuses to convert it)."""
    for message in envelope if isinstance(envelope, list) else [envelope]:
        if not isinstance(message, dict) or "id" not in message:
            continue
        ident = message["id"]
        if ident is None or isinstance(ident, str) or (type(ident) is int and -(2**63) <= ident < 2**63):
            continue
        raise ClientException(
            status_code=400, detail="a JSON-RPC id must be a string, an integer within 64 bits, or null"
        )
