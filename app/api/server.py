"""The HTTP server `contexts serve` runs: uvicorn on a socket bound before anything else
happens, with bounded waits on clients.

- Request headers must be complete within `header_timeout_s` of connecting (or of the
  first byte of the next request on a kept-alive connection): uvicorn's protocols have no
  such deadline, so a client sending headers byte by byte held its connection forever.
- A request head (request line and headers) over `max_header_bytes` is answered 431; one
  with both Content-Length and Transfer-Encoding (a request-smuggling shape, RFC 9112
  6.3) 400, at once (h11 waited for chunks the client never meant to send, until the body
  deadline). Both are problem details, and the connection is closed gracefully: what the
  client still sends is read and dropped for a moment, so that it reads the answer instead
  of a reset.
- A request body must arrive in full within `body_timeout_s` of the application's first
  read (`BodyDeadline`); otherwise the application answers 408 (it sees `BodyTimeout`
  raised by its read, so its request log and metrics say 408), or, when the response has
  begun, the connection is closed.
- At most `max_connections` connections are open. One more first takes the place of the
  oldest connection of another address still without a whole request after
  `silent_after_s` (a client that connects and says nothing, or dribbles its headers,
  holds no one else's place for long: a hundred such sockets shut every other client out
  until their header deadline, and again once their owner reconnected); when there is
  none, it is answered 503 and closed gracefully, like the refusals above.
"""

from __future__ import annotations

import asyncio
import errno
import json
import socket
from collections.abc import Callable
from typing import Any, ClassVar

import anyio
import h11
import httpx
import uvicorn
from litestar import Litestar
from litestar.exceptions import ClientException
from litestar.routes import HTTPRoute
from uvicorn.protocols.http.h11_impl import H11Protocol

from app.api.request_log import logging_config
from app.settings import Settings

BACKLOG = 128
"""Kernel queue of connections not yet accepted (the event loop accepts them at once)."""
PROBE_TIMEOUT_S = 2.0
"""How long to wait for /health of whatever already holds the port."""
PROBLEM_JSON = "application/problem+json"  # as app.api.errors answers
LINGER_S = 2.0
"""How long a connection refused before its request was read keeps reading (and dropping)
what the client still sends, after the answer, before it is closed."""


def _problem(status: int, title: str, detail: str) -> bytes:
    return json.dumps({"type": "about:blank", "title": title, "status": status, "detail": detail}).encode()


def _problem_bytes(status: int, reason: str, detail: str, extra_headers: str = "") -> bytes:
    """A complete HTTP/1.1 response that closes the connection, written straight to the
    transport (there is no request to answer through h11 yet)."""
    body = _problem(status, reason, detail)
    head = (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: {PROBLEM_JSON}\r\ncontent-length: {len(body)}\r\n"
        f"{extra_headers}connection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline on request headers and a cap on open
    connections. `protocol_class(settings)` makes one with the configured numbers."""

    header_timeout_s: ClassVar[float] = 10.0
    max_connections: ClassVar[int] = 100
    silent_after_s: ClassVar[float] = 1.0
    """A connection open this long without a whole request may give its place to a new
    one. Younger ones may hold a request the server has not read yet (a burst of
    connections is accepted before their bytes are): closing one reset a client that had
    sent its request at once."""
    max_header_bytes: ClassVar[int] = 16 * 1024

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.read_deadline: asyncio.TimerHandle | None = None
        self.lingering: asyncio.TimerHandle | None = None
        """Set once the connection was refused: what arrives is dropped until it closes."""
        self.opened_at = 0.0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        if len(self.connections) >= self.max_connections and not self._make_room(_host(transport)):
            self.transport = transport
            self._refuse(503, "Service Unavailable", "too many open connections; retry shortly", "retry-after: 1\r\n")
            return
        super().connection_made(transport)
        self.opened_at = self.loop.time()
        self._arm_read_deadline()

    def _silent(self, now: float) -> bool:
        """Connected for a while, but no whole request head yet: nothing of it reached the
        application."""
        return (
            now - self.opened_at >= self.silent_after_s
            and self.cycle is None
            and self.lingering is None
            and self.conn.their_state is h11.IDLE
        )

    def _make_room(self, host: str | None) -> bool:
        """Close the oldest silent connection of another address than `host`, the new
        one's, to serve it; False when there is none. Never one of its own address: a client
        holding silent sockets reconnected each one closed, and each reconnect took the place
        of its next silent socket, until all were younger than `silent_after_s` and no one
        else could come in."""
        if host is None:
            return False
        now = self.loop.time()
        waiting = [
            c
            for c in self.connections
            if isinstance(c, GuardedH11Protocol)
            and c._silent(now)
            and not c.transport.is_closing()
            and _host(c.transport) not in (None, host)
        ]
        if not waiting:
            return False
        oldest = min(waiting, key=lambda c: c.opened_at)
        self.logger.info("closed a connection that had sent no whole request, to serve a new one")
        oldest._cancel_read_deadline()
        oldest.transport.close()
        self.connections.discard(oldest)
        return True

    def data_received(self, data: bytes) -> None:
        if self.flow is None or self.lingering is not None:  # refused
            return
        if self.conn.their_state is h11.IDLE and self._refuse_head(self.conn.trailing_data[0] + data):
            return
        super().data_received(data)
        if self.transport.is_closing() or not self._client_unwatched():
            self._cancel_read_deadline()
        else:
            self._arm_read_deadline()

    def eof_received(self) -> None:
        if self.lingering is not None:
            self.transport.close()
            return
        super().eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_read_deadline()
        if self.lingering is not None:
            self.lingering.cancel()
        super().connection_lost(exc)

    def send_400_response(self, msg: str) -> None:
        """What h11 could not parse (a NUL or a space in the request line, a header
        without a colon, ...): a problem like every other 400, not uvicorn's text/plain."""
        self.logger.info("refused a request h11 could not parse: %s", msg)
        self.transport.write(
            _problem_bytes(
                400,
                "Bad Request",
                "the request line or headers are not valid HTTP/1.1 (RFC 9112): "
                "check the method, the target (percent-encode spaces and control characters) and each header",
            )
        )
        self.transport.close()

    def _refuse_head(self, head: bytes) -> bool:
        """Answer and close when the request head waiting for parsing (`head`: the bytes
        h11 holds and those just received) is too long or frames its body twice; True when
        it did. h11 accepts a head of any size that arrives whole, and takes
        Transfer-Encoding over Content-Length."""
        end = head.find(b"\r\n\r\n")
        if (end + 4 if end >= 0 else len(head)) > self.max_header_bytes:
            self._refuse(
                431,
                "Request Header Fields Too Large",
                f"the request line and headers exceed {self.max_header_bytes} bytes",
            )
            return True
        if end >= 0:
            names = {line.split(b":", 1)[0].strip().lower() for line in head[:end].split(b"\r\n")[1:]}
            if {b"content-length", b"transfer-encoding"} <= names:
                self._refuse(
                    400,
                    "Bad Request",
                    "a request may not carry both Content-Length and Transfer-Encoding: send one of them",
                )
                return True
        return False

    def _refuse(self, status: int, reason: str, detail: str, extra_headers: str = "") -> None:
        """The answer, then a graceful close: the write side is shut at once, and what the
        client still sends is dropped for LINGER_S (closing with unread bytes would reset
        the connection, and the client could lose the answer)."""
        self._cancel_read_deadline()
        self.logger.info("refused a request before reading it: %d %s", status, detail)
        self.transport.write(_problem_bytes(status, reason, detail, extra_headers))
        self.lingering = self.loop.call_later(LINGER_S, self.transport.close)
        if self.transport.can_write_eof():
            self.transport.write_eof()

    def _client_unwatched(self) -> bool:
        """The client owes bytes that no application waits for under its own deadline:
        the headers of a request, or a body still arriving after the response was sent."""
        state = self.conn.their_state
        if state is h11.IDLE:
            return True
        return state is h11.SEND_BODY and (self.cycle is None or self.cycle.response_complete)

    def _arm_read_deadline(self) -> None:
        if self.read_deadline is None:  # a deadline, not an idle timer: bytes do not extend it
            self.read_deadline = self.loop.call_later(self.header_timeout_s, self._read_deadline_passed)

    def _cancel_read_deadline(self) -> None:
        if self.read_deadline is not None:
            self.read_deadline.cancel()
            self.read_deadline = None

    def _read_deadline_passed(self) -> None:
        self.read_deadline = None
        if self.transport.is_closing() or self.lingering is not None:
            return
        if self.conn.their_state is h11.IDLE and self.conn.trailing_data[0]:  # part of a request came
            self.transport.write(
                _problem_bytes(
                    408, "Request Timeout", f"request headers did not arrive within {self.header_timeout_s:g} s"
                )
            )
        self.logger.debug("closing a connection that sent no complete request in %g s", self.header_timeout_s)
        self.transport.close()


def _host(transport: asyncio.BaseTransport) -> str | None:
    """The peer's address without its port (None on a Unix socket)."""
    peer = transport.get_extra_info("peername")
    return str(peer[0]) if isinstance(peer, tuple) and peer else None


def protocol_class(settings: Settings) -> type[GuardedH11Protocol]:
    class Configured(GuardedH11Protocol):
        header_timeout_s = settings.header_timeout_s
        max_connections = settings.max_connections
        max_header_bytes = settings.max_header_bytes

    return Configured


class BodyTimeout(ClientException):
    """What the application's read raises when the body did not arrive in time: the
    application answers it (Litestar: app.api.errors, 408 problem details, counted and
    logged as such) and the connection is closed after the answer."""

    status_code = 408


class BodyDeadline:
    """ASGI middleware: the request body must arrive in full within `timeout_s` of the
    application's first read. Then that read raises BodyTimeout (408, `Connection:
    close`), which the application answers like any error; should it let the exception
    out without answering, the client gets 408 problem details from here. When the
    response has begun, the application is cancelled and the connection closed."""

    def __init__(self, app: Any, timeout_s: float) -> None:
        self.app = app
        self.timeout_s = timeout_s

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        deadline: float | None = None
        body_done = response_started = timed_out = cut_off = False
        detail = f"the request body did not arrive within {self.timeout_s:g} s"

        async def guarded_send(message: dict) -> None:
            nonlocal response_started
            if cut_off:
                return
            if message["type"] == "http.response.start":
                response_started = True
            await send(message)

        async def guarded_receive() -> dict:
            nonlocal deadline, body_done, timed_out, cut_off
            if timed_out:  # the body will not be read any further
                return {"type": "http.disconnect"}
            if body_done:  # waiting for a disconnect is not reading the body
                return await receive()
            if deadline is None:
                deadline = anyio.current_time() + self.timeout_s
            with anyio.move_on_after(deadline - anyio.current_time()):
                message = await receive()
                body_done = message["type"] != "http.request" or not message.get("more_body", False)
                return message
            timed_out = True
            if not response_started:
                raise BodyTimeout(detail=detail, headers={"Connection": "close"})
            cut_off = True
            cancel.cancel()
            await anyio.lowlevel.checkpoint()  # the cancellation lands here, in the application
            return {"type": "http.disconnect"}

        with anyio.CancelScope() as cancel:
            try:
                await self.app(scope, guarded_receive, guarded_send)
            except BodyTimeout:
                pass  # answered below
        if timed_out and not response_started:
            body = _problem(408, "Request Timeout", detail)
            await send(
                {
                    "type": "http.response.start",
                    "status": 408,
                    "headers": [
                        (b"content-type", PROBLEM_JSON.encode()),
                        (b"content-length", str(len(body)).encode()),
                        (b"connection", b"close"),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})


def allow_every_method(app: Litestar) -> None:
    """Make each path's `OPTIONS` answer list every method the path serves. Litestar
    (2.25) creates a path's OPTIONS handler with the path's first handler and, when a
    controller adds another method to the path, reuses it: its `Allow` named the first
    method only (`OPTIONS /documents` said `OPTIONS, POST` of a path that also serves
    GET). The handler reads its route's methods when it answers, so it is pointed at the
    route that holds them all. tests/api/test_openapi_conformance.py checks every path."""
    for route in app.routes:
        if not isinstance(route, HTTPRoute) or "OPTIONS" not in route.route_handler_map:
            continue
        fn: Any = route.route_handler_map["OPTIONS"][0].fn
        if getattr(fn, "__name__", None) == "options_handler" and fn.__code__.co_freevars == ("self",):
            fn.__closure__[0].cell_contents = route  # Litestar's own handler, not one the app declares


class _Server(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, on_started: Callable[[], None] | None) -> None:
        super().__init__(config)
        self.on_started = on_started

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)  # the application's start-up, then listening
        if self.started and self.on_started is not None:
            self.on_started()


def trusted_forwarders(settings: Settings) -> list[str]:
    """The peers whose forwarding headers are believed (settings.forwarded_allow_ips)."""
    return [item.strip() for item in settings.forwarded_allow_ips.split(",") if item.strip()]


def build_server(app: Any, settings: Settings, on_started: Callable[[], None] | None = None) -> uvicorn.Server:
    """uvicorn around `app` with the deadlines and the connection cap of `settings`; call
    `.run(sockets=[bind(...)])`. `on_started` runs once the application has started and
    the socket listens."""
    config = uvicorn.Config(
        BodyDeadline(app, settings.body_timeout_s),
        host=settings.host,
        port=settings.port,
        http=protocol_class(settings),
        # h11 must not refuse a head before GuardedH11Protocol answers it with 431.
        h11_max_incomplete_event_size=settings.max_header_bytes + 1,
        ws="none",
        lifespan="on",
        backlog=BACKLOG,
        log_level=settings.log_level,
        log_config=logging_config(settings.log_level),
        access_log=False,
        # The client's address and scheme from X-Forwarded-For/-Proto, for trusted peers only.
        proxy_headers=bool(trusted_forwarders(settings)),
        forwarded_allow_ips=trusted_forwarders(settings) or None,
    )
    return _Server(config, on_started)


def bind(host: str, port: int) -> socket.socket:
    """A socket listening on host:port from now on (port 0: any free one); connections
    wait in its queue until the server starts. OSError (errno EADDRINUSE) when something
    holds the port."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        # SO_REUSEADDR skips connections of an earlier run in TIME_WAIT; listening at
        # once keeps a second server from binding the same port while this one starts.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(BACKLOG)
    except OSError:
        sock.close()
        raise
    return sock


def base_url(host: str, port: int) -> str:
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def why_unavailable(host: str, port: int, exc: OSError) -> str:
    """Say what holds host:port (a Contexts server answers /health with its version)."""
    if exc.errno != errno.EADDRINUSE:
        return f"cannot listen on {host}:{port}: {exc.strerror or exc}"
    local = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(host, host)
    url = base_url(host, port)
    version = silent = None
    try:
        with httpx.Client(trust_env=False, timeout=PROBE_TIMEOUT_S) as client:
            body = client.get(f"{base_url(local, port)}/health").json()
        if isinstance(body, dict) and body.get("status") == "ok" and isinstance(body.get("version"), str):
            version = body["version"]
    except httpx.ReadTimeout:
        silent = " (it does not answer HTTP; a Contexts server still starting looks the same)"
    except (httpx.HTTPError, ValueError):
        pass
    advice = "stop it or choose another port (--port or CONTEXTS_PORT)"
    if version is not None:
        return f"a Contexts server (version {version}) is already serving on {url}; {advice}"
    holder = listening_process(port)
    program = f"another program, {holder}" if holder else "another program"
    return f"port {port} on {host} is in use by {program}{silent or ''}; {advice}"


def listening_process(port: int) -> str | None:
    """The process listening on `port` on this machine, as `name (pid N)`; None when the
    system does not say (another user's process without privileges, macOS without root,
    a container's port mapping)."""
    import psutil

    try:
        for conn in psutil.net_connections(kind="inet"):
            if conn.status == psutil.CONN_LISTEN and conn.laddr and conn.laddr.port == port and conn.pid:
                try:
                    return f"{psutil.Process(conn.pid).name()} (pid {conn.pid})"
                except psutil.Error:
                    return f"pid {conn.pid}"
    except (psutil.Error, OSError):
        return None
    return None
