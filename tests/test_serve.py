"""`contexts serve` against slow clients: headers and bodies have deadlines, open
connections a cap."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time

import httpx

from app.settings import Settings

MARGIN_S = 3.0
"""Slack on every timing assertion: two shared cores, other tests running beside."""


async def echo_app(scope, receive, send) -> None:
    """Reads the whole body and says how long it was; /early answers without reading it."""
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    size = 0
    if scope["path"] != "/early":
        while True:
            message = await receive()
            size += len(message.get("body", b""))
            if not message.get("more_body"):
                break
    body = b"got %d bytes" % size
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"text/plain"), (b"content-length", b"%d" % len(body))]})
    await send({"type": "http.response.body", "body": body})


def read_response(sock: socket.socket) -> bytes:
    """One whole response of echo_app (it always says how long its body is)."""
    sock.settimeout(5)
    data = b""
    while not data.endswith(b" bytes"):
        chunk = sock.recv(65536)
        assert chunk, data
        data += chunk
    return data


@contextlib.contextmanager
def running(**changes: object):
    """The server `contexts serve` runs, around echo_app, in a thread on a free port."""
    from app.api.server import build_server

    settings = Settings(**{"header_timeout_s": 0.5, "body_timeout_s": 0.5, **changes})  # type: ignore[arg-type]
    sock = socket.create_server(("127.0.0.1", 0))
    started = threading.Event()
    server = build_server(echo_app, settings, on_started=started.set)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        assert started.wait(10)
        yield sock.getsockname()[1], settings
    finally:
        server.should_exit = True
        thread.join(10)
        assert not thread.is_alive()


def read_until_closed(sock: socket.socket, limit_s: float) -> tuple[bytes, float | None]:
    """Everything the server sends until it closes; None as the time when it did not
    close within limit_s."""
    started = time.monotonic()
    data = b""
    while (left := limit_s - (time.monotonic() - started)) > 0:
        sock.settimeout(left)
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            break
        except ConnectionResetError:
            return data, time.monotonic() - started
        if not chunk:
            return data, time.monotonic() - started
        data += chunk
    return data, None


def test_partial_headers_are_cut_off_after_the_header_timeout():
    with running() as (port, settings), socket.create_connection(("127.0.0.1", port)) as slow:
        slow.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        data, closed_after = read_until_closed(slow, settings.header_timeout_s + MARGIN_S)
    assert closed_after is not None and closed_after >= settings.header_timeout_s * 0.8
    assert data.startswith(b"HTTP/1.1 408 ") and b"connection: close" in data.lower()


def test_a_silent_connection_is_closed_after_the_header_timeout():
    with running() as (port, settings), socket.create_connection(("127.0.0.1", port)) as silent:
        data, closed_after = read_until_closed(silent, settings.header_timeout_s + MARGIN_S)
    assert closed_after is not None and data == b""


def test_a_kept_alive_connection_gets_the_same_deadline_for_its_next_request():
    with running() as (port, settings), socket.create_connection(("127.0.0.1", port)) as conn:
        conn.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        assert read_response(conn).startswith(b"HTTP/1.1 200 ")
        conn.sendall(b"GET / HTTP/1.1\r\nHo")
        data, closed_after = read_until_closed(conn, settings.header_timeout_s + MARGIN_S)
    assert closed_after is not None and data.startswith(b"HTTP/1.1 408 ")


def test_a_body_shorter_than_its_content_length_gets_408():
    with running() as (port, settings), socket.create_connection(("127.0.0.1", port)) as short:
        short.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789")
        data, closed_after = read_until_closed(short, settings.body_timeout_s + MARGIN_S)
    assert closed_after is not None and closed_after >= settings.body_timeout_s * 0.8
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408 ") and b"application/problem+json" in head
    assert json.loads(body)["status"] == 408


@contextlib.contextmanager
def dribbling(sock: socket.socket):
    """Send one byte every 0.1 s from a thread until the block ends or the server closes."""
    stop = threading.Event()

    def dribble() -> None:
        with contextlib.suppress(OSError):
            while not stop.wait(0.1):
                sock.sendall(b"x")

    thread = threading.Thread(target=dribble, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(5)


def test_a_body_dripping_in_is_cut_off_at_the_body_deadline():
    with running(body_timeout_s=1.0) as (port, settings), socket.create_connection(("127.0.0.1", port)) as drip:
        drip.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n")
        with dribbling(drip):  # never idle, never done
            data, closed_after = read_until_closed(drip, settings.body_timeout_s + MARGIN_S)
    # Closing with unread bytes may reset the connection before the 408 is read.
    assert closed_after is not None and closed_after >= settings.body_timeout_s * 0.8
    assert data == b"" or data.startswith(b"HTTP/1.1 408 ")


def test_a_body_still_arriving_after_the_response_is_cut_off():
    with running() as (port, settings), socket.create_connection(("127.0.0.1", port)) as late:
        late.sendall(b"POST /early HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n")
        assert read_response(late).startswith(b"HTTP/1.1 200 ")
        with dribbling(late):
            _, closed_after = read_until_closed(late, settings.header_timeout_s + MARGIN_S)
    assert closed_after is not None


def test_normal_requests_still_work_and_connections_are_capped():
    with running(max_connections=2, header_timeout_s=5.0) as (port, _), httpx.Client(trust_env=False) as http:
        base = f"http://127.0.0.1:{port}"
        assert http.post(f"{base}/", content=b"x" * 300_000, timeout=10).text == "got 300000 bytes"
        assert http.post(f"{base}/", content=b"y" * 10, timeout=10).text == "got 10 bytes"  # kept alive
        with socket.create_connection(("127.0.0.1", port)) as idle:
            time.sleep(0.2)  # the server has accepted it: two connections now
            with socket.create_connection(("127.0.0.1", port)) as third:
                data, closed_after = read_until_closed(third, MARGIN_S)
            assert data.startswith(b"HTTP/1.1 503 ") and closed_after is not None
            idle.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            assert read_response(idle).startswith(b"HTTP/1.1 200 ")
