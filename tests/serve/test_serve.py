"""`contexts serve`: the port is taken before anything else happens (a busy port changes
nothing), the demo key survives restarts, and slow clients cannot hold connections."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import psycopg
import pytest
from click.testing import CliRunner

from app.cli import main
from app.cli.serve import DEMO_AGENT, DEMO_ORG
from app.settings import Settings

pytestmark = pytest.mark.e2e  # starts servers or builds a model of its own: not the unit tier

ROOT = Path(__file__).resolve().parents[2]
MARGIN_S = 3.0
"""Slack on every timing assertion: two shared cores, other tests running beside."""


def cli(db_url: str, *args: str):
    return CliRunner().invoke(main, ["--db-url", db_url, *args])


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def live_demo_keys(db_url: str) -> list[str]:
    with psycopg.connect(db_url) as conn:
        return [
            r[0]
            for r in conn.execute(
                "select key_id from service.list_api_keys(%s) where principal_id = %s and revoked_at is null",
                (DEMO_ORG, DEMO_AGENT),
            )
        ]


def authenticates(db_url: str, token: str) -> bool:
    with psycopg.connect(db_url) as conn:
        try:
            conn.execute("select service.authenticate(%s)", (token,))
        except psycopg.errors.InvalidAuthorizationSpecification:
            return False
        return True


# --- a busy port ------------------------------------------------------------------------


def test_busy_port_exits_before_ingesting_or_touching_keys(db_url, tmp_path, monkeypatch):
    monkeypatch.setenv("CONTEXTS_HOME", str(tmp_path))
    assert cli(db_url, "org", "create", DEMO_ORG).exit_code == 0
    assert cli(db_url, "principal", "create", DEMO_ORG, DEMO_AGENT).exit_code == 0
    token = cli(db_url, "key", "create", DEMO_ORG, DEMO_AGENT).output.strip().splitlines()[-1]

    with socket.socket() as other:  # another program: accepts connections, never answers
        other.bind(("127.0.0.1", 0))
        other.listen()
        port = other.getsockname()[1]
        started = time.monotonic()
        result = cli(db_url, "serve", "--demo", "--port", str(port))
        elapsed = time.monotonic() - started

    assert result.exit_code != 0
    assert f"port {port} on 127.0.0.1 is in use by another program" in result.output
    assert f"(pid {os.getpid()});" in result.output or f"(pid {os.getpid()}) (" in result.output  # named: this test
    assert "serving on" not in result.output
    assert elapsed < 10, elapsed
    with psycopg.connect(db_url) as conn:
        assert conn.execute("select count(*) from data.documents").fetchone() == (0,)
        assert conn.execute("select count(*) from data.api_keys").fetchone() == (1,)
    assert authenticates(db_url, token)  # the running server's clients keep their key
    assert not (tmp_path / "demo-key").exists()


def test_a_bound_port_is_listened_on_at_once_so_a_second_server_cannot_take_it():
    import errno

    from app.api.server import bind

    with bind("127.0.0.1", 0) as first, pytest.raises(OSError) as taken:
        bind("127.0.0.1", first.getsockname()[1])
    assert taken.value.errno == errno.EADDRINUSE


class FakeContexts(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802
        body = json.dumps({"status": "ok", "database": "ok", "version": "9.9.9"}).encode()
        self.send_response(200 if self.path == "/health" else 404)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_busy_port_names_the_contexts_server_already_there(db_url, tmp_path, monkeypatch):
    monkeypatch.setenv("CONTEXTS_HOME", str(tmp_path))
    fake = ThreadingHTTPServer(("127.0.0.1", 0), FakeContexts)
    thread = threading.Thread(target=fake.serve_forever, daemon=True)
    thread.start()
    try:
        port = fake.server_address[1]
        result = cli(db_url, "serve", "--demo", "--port", str(port))
    finally:
        fake.shutdown()
        fake.server_close()
        thread.join(5)
    assert result.exit_code != 0
    assert f"a Contexts server (version 9.9.9) is already serving on http://127.0.0.1:{port}" in result.output
    assert "serving on http" not in result.output.replace("already serving on http", "")
    with psycopg.connect(db_url) as conn:
        assert conn.execute("select count(*) from data.api_keys").fetchone() == (0,)


# --- the demo key -------------------------------------------------------------------------


def test_demo_key_is_kept_while_valid_and_replaced_when_not(db_url, tmp_path):
    from app.cli.serve import _demo_key

    assert cli(db_url, "org", "create", DEMO_ORG).exit_code == 0
    first = _demo_key(db_url, tmp_path)
    assert _demo_key(db_url, tmp_path) == first
    stored = tmp_path / "demo-key"
    assert stored.read_text().strip() == first
    assert stored.stat().st_mode & 0o777 == 0o600
    assert authenticates(db_url, first)
    assert live_demo_keys(db_url) == [first.split("_")[1]]

    assert cli(db_url, "key", "revoke", first.split("_")[1]).exit_code == 0
    second = _demo_key(db_url, tmp_path)  # revoked: a new one
    assert second != first and authenticates(db_url, second)

    stored.unlink()
    third = _demo_key(db_url, tmp_path)  # lost: a new one, and the stale one is revoked
    assert third != second and not authenticates(db_url, second)
    assert live_demo_keys(db_url) == [third.split("_")[1]]

    stored.write_text("ctx_000000000000_not-a-key\n")
    fourth = _demo_key(db_url, tmp_path)  # unknown to this database: a new one
    assert fourth not in (third, "ctx_000000000000_not-a-key") and live_demo_keys(db_url) == [fourth.split("_")[1]]


# --- the whole command, as `make run` starts it --------------------------------------------

# The demo corpus is this repository; its ingestion has its own tests, so these starts skip it.
NO_INGEST = (
    "import sys, app.cli, app.cli.serve as s; s.ingest_paths = lambda *a, **k: (1, 0, 0, []); sys.exit(app.cli.main())"
)
"""`serve --demo` with an ingestion that writes nothing yet says one document changed (so
the demo's authority refresh runs): fast, and the same database for every start."""


KEY_LINE = re.compile(r"^export CONTEXTS_KEY=(\S+)\n", re.MULTILINE)
"""The banner's key line, whole (the log is read while the server writes it)."""


@contextlib.contextmanager
def serve_demo(db_url: str, port: int, env: dict[str, str], log: Path):
    """`contexts serve --demo` in a subprocess; yields (demo key, log text) once it says
    it is serving; always stopped (SIGTERM, then SIGKILL)."""
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-c", NO_INGEST, "--db-url", db_url, "serve", "--demo", "--port", str(port)],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 120
        # The banner prints the key a few lines after "serving on": wait for its whole line.
        while "serving on" not in (text := log.read_text()) or not KEY_LINE.search(text):
            assert proc.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        key = KEY_LINE.search(text).group(1)  # type: ignore[union-attr]
        yield key, text
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def test_serve_demo_twice_keeps_its_key_and_a_second_server_is_refused(db_url, tmp_path):
    assert cli(db_url, "org", "create", DEMO_ORG).exit_code == 0
    port = free_port()
    env = {
        **os.environ,
        "CONTEXTS_HOME": str(tmp_path),
        "CONTEXTS_HEADER_TIMEOUT_S": "1",
        "CONTEXTS_BODY_TIMEOUT_S": "1",
    }
    base = f"http://127.0.0.1:{port}"
    retrieve = {"query": "anything", "scope": {"org_id": DEMO_ORG}, "budget_tokens": 200}
    with serve_demo(db_url, port, env, tmp_path / "first.log") as (key, _), httpx.Client(trust_env=False) as http:
        assert http.get(f"{base}/health", timeout=10).json()["status"] == "ok"  # serving means bound and ready
        auth = {"Authorization": f"Bearer {key}"}
        assert http.post(f"{base}/contexts/retrieve", json=retrieve, headers=auth, timeout=30).status_code == 200
        with psycopg.connect(db_url) as conn:  # the demo's ingestion is followed by a refresh
            assert conn.execute("select count(*) from data.authority_refreshes").fetchone()[0] >= 1

        again = subprocess.run(
            [sys.executable, "-c", NO_INGEST, "--db-url", db_url, "serve", "--demo", "--port", str(port)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert again.returncode != 0
        assert f"is already serving on {base}" in again.stderr and "a Contexts server (version" in again.stderr
        assert http.post(f"{base}/contexts/retrieve", json=retrieve, headers=auth, timeout=30).status_code == 200

        # Slow clients of the real server are cut off (CONTEXTS_*_TIMEOUT_S=1 above).
        with socket.create_connection(("127.0.0.1", port)) as slow:
            slow.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")
            data, closed_after = read_until_closed(slow, 1 + MARGIN_S)
            assert closed_after is not None and data.startswith(b"HTTP/1.1 408")
        with socket.create_connection(("127.0.0.1", port)) as short:
            short.sendall(
                b"POST /contexts/retrieve HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                + key.encode()
                + b'\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"query"'
            )
            data, closed_after = read_until_closed(short, 1 + MARGIN_S)
            assert closed_after is not None and data.startswith(b"HTTP/1.1 408"), data
            assert b"application/problem+json" in data
        assert http.get(f"{base}/health", timeout=10).status_code == 200

    with serve_demo(db_url, port, env, tmp_path / "second.log") as (key_again, _):
        assert key_again == key
    assert live_demo_keys(db_url) == [key.split("_")[1]]


# --- slow clients, on a trivial application -----------------------------------------------


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
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", b"text/plain"), (b"content-length", b"%d" % len(body))],
        }
    )
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
def in_thread(app, settings: Settings, start_s: float):
    """The server `contexts serve` runs, around `app`, in a thread on a free port; yields
    the port once it listens, and stops it on exit."""
    from app.api.server import bind, build_server

    sock = bind("127.0.0.1", 0)
    started = threading.Event()
    server = build_server(app, settings, on_started=started.set)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        assert started.wait(start_s)
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(10)
        assert not thread.is_alive()


@contextlib.contextmanager
def running(**changes: object):
    """The server `contexts serve` runs, around echo_app, in a thread on a free port."""
    settings = Settings(**{"header_timeout_s": 0.5, "body_timeout_s": 0.5, **changes})  # type: ignore[arg-type]
    with in_thread(echo_app, settings, 10) as port:
        yield port, settings


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


@pytest.mark.parametrize(
    "request_line",
    [b"GET /he\x00alth HTTP/1.1", b"GET /a b HTTP/1.1", b"GET /\xff HTTP/1.1", b"GET\t/ HTTP/1.1", b"GET / HTTP/9"],
)
def test_a_request_h11_cannot_parse_is_a_400_problem(request_line):
    """Below the application: uvicorn answered these with a text/plain 400."""
    with running() as (port, settings), socket.create_connection(("127.0.0.1", port)) as conn:
        conn.sendall(request_line + b"\r\nHost: x\r\n\r\n")
        data, closed_after = read_until_closed(conn, 5)
    head, _, body = data.partition(b"\r\n\r\n")
    assert closed_after is not None and head.startswith(b"HTTP/1.1 400 "), data
    assert b"application/problem+json" in head and json.loads(body)["status"] == 400


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
    """Over the cap, a new connection takes the place of one of another address that has
    sent no whole request for a while (silent sockets shut everyone else out; their owner's
    reconnects must not take each other's places); otherwise, a burst included, it gets a
    503 it can read although its request arrives after the answer, not a reset."""
    get = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"

    def connect(port: int, source: str = "127.0.0.1") -> socket.socket:
        return socket.create_connection(("127.0.0.1", port), source_address=(source, 0))

    def refused(port: int, source: str = "127.0.0.1") -> bytes:
        with connect(port, source) as late:
            time.sleep(0.3)
            late.sendall(get)
            time.sleep(0.3)
            data, closed_after = read_until_closed(late, MARGIN_S)
        assert data.startswith(b"HTTP/1.1 503 ") and closed_after is not None, data
        assert b"retry-after: 1" in data.lower() and b"too many open connections" in data
        return data

    with running(max_connections=2, header_timeout_s=5.0) as (port, _):
        with httpx.Client(trust_env=False) as http:
            base = f"http://127.0.0.1:{port}"
            assert http.post(f"{base}/", content=b"x" * 300_000, timeout=10).text == "got 300000 bytes"
            assert http.post(f"{base}/", content=b"y" * 10, timeout=10).text == "got 10 bytes"  # kept alive
        time.sleep(0.2)  # that connection is closed now
        with connect(port) as a, connect(port, "127.0.0.2") as b:
            time.sleep(0.2)  # both accepted, too young to give way (their requests may be on the way)
            refused(port)
            a.sendall(get)
            assert read_response(a).startswith(b"HTTP/1.1 200 ")  # a: a kept-alive client now
            b.sendall(b"GET / HTTP/1.1\r\n")  # b: part of a head, no whole request
            time.sleep(1.2)  # past silent_after_s
            refused(port, "127.0.0.2")  # b's own address does not take its place
            with connect(port) as c:
                c.sendall(get)
                assert read_response(c).startswith(b"HTTP/1.1 200 ")  # another address does
                assert read_until_closed(b, MARGIN_S)[1] is not None, "the silent connection was not closed"
                refused(port)  # a and c hold clients
            a.sendall(get)
            assert read_response(a).startswith(b"HTTP/1.1 200 ")


# --- request heads refused before they are read ---------------------------------------------


def test_a_head_over_the_limit_gets_431_whole_or_in_pieces():
    """A 100 KB Authorization header: 431 problem details, readable by the client (the
    connection is not reset under it), whether the head arrives at once or in pieces."""
    with running(max_header_bytes=16 * 1024) as (port, _):
        for pieces in (1, 25):
            head = b"GET / HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + b"k" * 100_000 + b"\r\n\r\n"
            with socket.create_connection(("127.0.0.1", port)) as big:
                size = len(head) // pieces + 1
                with contextlib.suppress(OSError):  # the server may stop reading before the end
                    for start in range(0, len(head), size):
                        big.sendall(head[start : start + size])
                        time.sleep(0.01 if pieces > 1 else 0)
                data, closed_after = read_until_closed(big, MARGIN_S)
            status, _, rest = data.partition(b"\r\n")
            assert status == b"HTTP/1.1 431 Request Header Fields Too Large", data[:200]
            assert b"application/problem+json" in rest and closed_after is not None
            body = json.loads(rest.partition(b"\r\n\r\n")[2])
            assert body["status"] == 431 and "16384 bytes" in body["detail"]
        # A head within the limit is served.
        with socket.create_connection(("127.0.0.1", port)) as fine:
            fine.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + b"k" * 8_000 + b"\r\n\r\n")
            assert read_response(fine).startswith(b"HTTP/1.1 200 ")


@pytest.mark.parametrize(
    "framing",
    [
        b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n",
        b"transfer-encoding: chunked\r\ncontent-length: 5\r\n",
        b"Content-Length: 5\r\nTransfer-Encoding: identity\r\n",
    ],
)
def test_content_length_with_transfer_encoding_is_400_at_once(framing):
    with running(body_timeout_s=5.0) as (port, _), socket.create_connection(("127.0.0.1", port)) as both:
        started = time.monotonic()
        both.sendall(b"POST / HTTP/1.1\r\nHost: x\r\n" + framing + b"\r\nhello")
        data, closed_after = read_until_closed(both, 2)
    assert time.monotonic() - started < 2 and closed_after is not None, "it waited for the body deadline"
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400 Bad Request") and b"application/problem+json" in head
    assert "Content-Length and Transfer-Encoding" in json.loads(body)["detail"]


# --- the body deadline, as the application answers it ------------------------------------------


@pytest.fixture
def served_app(settings, models, db_url, logins):
    """The real application (services as tests/conftest.py's `serving` builds them) behind
    the server `contexts serve` runs, in a thread on a free port; yields (port, token, app)."""
    from app.access import create_api_key, ensure_admin_principal
    from app.serve.app import build_services, create_app
    from tests.conftest import login_url

    local = settings.with_(
        database_url=db_url, service_database_url=login_url(db_url, logins["service"]), body_timeout_s=1.0
    )
    services = build_services(local, db_url)
    with psycopg.connect(db_url) as conn:
        conn.execute("select service.create_org('acme')")
        ensure_admin_principal(conn, "acme", "admin")
        token = create_api_key(conn, "acme", "admin").token
    app = create_app(local, services=services)
    try:
        with in_thread(app, local, 30) as port:
            yield port, token, app
    finally:
        services.close()


def test_a_body_timeout_is_answered_logged_and_counted_as_408(served_app, caplog, monkeypatch):
    """It was answered 408 by the server while the application, cancelled, logged a 500
    and counted nothing: now the application answers it, so its log line and
    /metrics say 408 (MCP included)."""
    import logging

    from prometheus_client.exposition import generate_latest

    from app.api.request_log import JsonFormatter

    port, token, app = served_app
    monkeypatch.setattr(logging.getLogger("contexts.request"), "propagate", True)
    with caplog.at_level(logging.INFO, logger="contexts.request"):
        for path in ("/contexts/retrieve", "/mcp"):
            with socket.create_connection(("127.0.0.1", port)) as short:
                short.sendall(
                    f"POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
                    "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
                    'Content-Length: 100\r\n\r\n{"query"'.encode()
                )
                data, closed_after = read_until_closed(short, 1 + MARGIN_S)
            head, _, body = data.partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 408 ") and b"application/problem+json" in head, data
            assert json.loads(body)["status"] == 408 and closed_after is not None
    lines = [json.loads(JsonFormatter().format(r)) for r in caplog.records if r.name == "contexts.request"]
    assert [line["status"] for line in lines] == [408, 408] and lines[0]["path"] == "/contexts/retrieve"
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], "a timeout logged as an error"
    metrics = generate_latest(app.state.metrics.registry).decode()
    assert 'contexts_http_requests_total{method="POST",route="/contexts/retrieve",status="408"} 1.0' in metrics
    assert 'status="500"' not in metrics


def test_an_mcp_client_that_leaves_before_its_body_is_logged_499_without_a_traceback(served_app, caplog, monkeypatch):
    """A client that gave up (a frozen database held its key check) left before its body
    was read: the MCP SDK read the body itself, logged a ClientDisconnect traceback at
    ERROR and the request as a 500. No one is left to answer; the line says 499."""
    import logging

    from app.api.request_log import JsonFormatter

    port, token, _ = served_app
    monkeypatch.setattr(logging.getLogger("contexts.request"), "propagate", True)
    with caplog.at_level(logging.INFO):
        with socket.create_connection(("127.0.0.1", port)) as leaving:
            leaving.sendall(
                f"POST /mcp HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
                "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
                'Content-Length: 100\r\n\r\n{"jsonrpc"'.encode()
            )
            time.sleep(0.1)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not [r for r in caplog.records if r.name == "contexts.request"]:
            time.sleep(0.05)
    lines = [json.loads(JsonFormatter().format(r)) for r in caplog.records if r.name == "contexts.request"]
    assert [(line["path"], line["status"]) for line in lines] == [("/mcp", 499)], lines
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], "a client leaving logged as an error"
