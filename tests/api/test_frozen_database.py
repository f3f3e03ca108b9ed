"""A database that stops answering without closing its connections (a stopped process, a
frozen host): the monitor's ping hangs with it, and a ping out past its deadline counts
as the database being unavailable. Requests then fail at once with 503 and /health says
so, instead of every request waiting as long as the database stays frozen."""

from __future__ import annotations

import asyncio
import os
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import parse_qs, quote, urlsplit

import pytest
from litestar.testing import TestClient

from app.db.availability import DatabaseMonitor, DatabaseUnavailable
from app.serve.app import build_services, create_app
from tests.api.test_api import problem

pytestmark = pytest.mark.db


class FreezableRelay:
    """A Unix-socket relay in front of the test server that can stop passing bytes while
    keeping every connection open: to a client, a database that froze."""

    def __init__(self, target: str, folder: Path, port: int) -> None:
        self.target = target
        self.path = folder / f".s.PGSQL.{port}"
        self.flowing = threading.Event()
        self.flowing.set()
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(str(self.path))
        self.listener.listen(16)
        self.sockets: list[socket.socket] = [self.listener]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            upstream.connect(self.target)
            self.sockets += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while chunk := source.recv(65536):
                self.flowing.wait()
                sink.sendall(chunk)
        except OSError:
            pass

    def close(self) -> None:
        self.flowing.set()
        for s in self.sockets:
            s.close()


@contextmanager
def relayed(db_url: str) -> Iterator[tuple[str, FreezableRelay]]:
    parts = urlsplit(db_url)
    query = parse_qs(parts.query)
    host, port = query["host"][0], int(query.get("port", ["5432"])[0])
    with tempfile.TemporaryDirectory(prefix="ctx-relay-") as folder:
        relay = FreezableRelay(os.path.join(host, f".s.PGSQL.{port}"), Path(folder), port)
        try:
            yield db_url.replace(f"host={quote(host, safe='/')}", f"host={quote(folder, safe='/')}"), relay
        finally:
            relay.close()


def wait_until(condition, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


def test_a_frozen_database_is_unavailable_within_the_ping_deadline(db_url):
    with relayed(db_url) as (url, relay):
        monitor = DatabaseMonitor(url, interval_s=0.05, ping_deadline_s=0.5).start()
        try:
            assert wait_until(lambda: monitor.available)
            monitor.require()
            relay.flowing.clear()  # frozen: every connection stays open, nothing answers
            frozen_at = time.monotonic()
            assert wait_until(lambda: not monitor.available, 5.0), "a frozen database was never noticed"
            assert time.monotonic() - frozen_at < 3.0
            with pytest.raises(DatabaseUnavailable, match="not answering"):
                monitor.require()
            relay.flowing.set()
            assert wait_until(lambda: monitor.available, 5.0), "the database thawed but stayed unavailable"
            monitor.require()
        finally:
            relay.flowing.set()
            monitor.close()


def test_requests_and_health_answer_503_at_once_while_the_database_is_frozen(settings, models, db_url):
    """The service's pool and its monitor both reach the database through the relay."""
    with relayed(db_url) as (url, relay):
        services = build_services(settings.with_(database_url=url), url)
        services.runtime.monitor.ping_deadline_s = 0.5
        try:
            with TestClient(app=create_app(settings, services=services)) as client:
                assert client.get("/health").status_code == 200
                relay.flowing.clear()
                assert wait_until(lambda: not services.runtime.monitor.available, 5.0)
                started = time.monotonic()
                problem(client.get("/health"), 503)
                refused = client.post(
                    "/contexts/retrieve",
                    json={"query": "q", "scope": {"org_id": "acme"}},
                    headers={"Authorization": "Bearer ctx_x"},
                )
                assert problem(refused, 503)["detail"] and refused.headers["retry-after"]
                assert time.monotonic() - started < 2.0, "a request waited on the frozen database"
                relay.flowing.set()
                assert wait_until(lambda: client.get("/health").status_code == 200, 10.0)
        finally:
            relay.flowing.set()
            services.close()


def test_requests_caught_by_the_freeze_do_not_hold_back_the_503_of_those_after(settings, models, db_url):
    """Requests in flight when the database froze hold every read thread until it thaws;
    a request after them is told 503 at once, not queued behind them for a thread."""
    with relayed(db_url) as (url, relay):
        services = build_services(settings.with_(database_url=url), url)
        runtime = services.runtime
        runtime.monitor.ping_deadline_s = 2.0

        def query(seconds: float = 0.0) -> None:
            with runtime.transaction() as conn:
                conn.execute("select pg_sleep(%s)", (seconds,))

        async def scenario() -> None:
            threads = runtime.read_executor._max_workers
            await asyncio.gather(*(runtime.read(query, 0.3) for _ in range(threads)))  # a connection each
            relay.flowing.clear()
            caught = [asyncio.ensure_future(runtime.read(query)) for _ in range(threads)]
            await asyncio.sleep(0.3)  # each holds a read thread, waiting on the frozen database
            deadline = time.monotonic() + 10
            while runtime.monitor.available and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            assert not runtime.monitor.available
            with pytest.raises(DatabaseUnavailable):
                await asyncio.wait_for(runtime.read(query), 2.0)  # a TimeoutError: queued for a thread
            relay.flowing.set()
            await asyncio.wait_for(asyncio.gather(*caught), 30)

        try:
            asyncio.run(scenario())
        finally:
            relay.flowing.set()
            services.close()
