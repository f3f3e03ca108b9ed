"""The embedded server is started again when its postmaster dies (killed, out of
memory): before, every request of a running service was a 503 until it was restarted.
A real server in a private home, killed with SIGKILL."""

from __future__ import annotations

import os
import shutil
import signal
import time

import psycopg
import pytest

from app.db.availability import DatabaseMonitor
from app.db.database import embedded_server_at, resolve_database_url
from app.settings import Settings
from tests.conftest import private_folder

REVIVED_WITHIN_S = 60.0


@pytest.fixture
def home():
    root = private_folder("contexts-test-revive-")
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_a_killed_embedded_server_is_started_again_and_the_service_reconnects(home):
    settings = Settings(home=home)
    dsn = resolve_database_url(settings)
    # What `contexts serve` hands its application is the URL: the server is found by it.
    server = embedded_server_at(dsn)
    assert server is not None and embedded_server_at(dsn + "x") is None
    monitor = DatabaseMonitor(dsn, interval_s=0.05, revive=server.revive).start()
    try:
        first = server.pid
        assert first is not None and server.revive() is False  # running: nothing to do
        os.kill(first, signal.SIGKILL)
        deadline = time.monotonic() + 5
        while monitor.available and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not monitor.available
        deadline = time.monotonic() + REVIVED_WITHIN_S
        while not monitor.available and time.monotonic() < deadline:
            time.sleep(0.1)
        assert monitor.available, server.log_tail()
        assert server.is_running() and server.pid != first
        with psycopg.connect(dsn) as conn:
            assert conn.execute("select 1").fetchone() == (1,)
    finally:
        monitor.close()
        server.stop()


def test_nothing_is_revived_where_the_database_is_not_embedded(pg_server):
    assert embedded_server_at(pg_server.url("postgres")) is None


def test_the_server_stops_with_its_last_handle_though_a_killed_process_stayed_listed(home):
    """A command killed without running its exit hooks (SIGKILL, or SIGTERM with no
    handler) stays in the server's list of handles; the server then outlived the last
    live one (`make run` stopped, its PostgreSQL kept running)."""
    import json
    import subprocess
    import sys

    import psutil

    from app.db.embedded import EmbeddedPostgres

    server = EmbeddedPostgres(home / "pgdata")
    postmaster = server.pid
    assert postmaster is not None
    killed = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    handles = home / "pgdata" / ".handle_pids.json"
    handles.write_text(json.dumps([*json.loads(handles.read_text()), int(killed.stdout)]))
    server.stop()

    def running() -> bool:
        try:
            return psutil.Process(postmaster).status() != psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess:
            return False

    deadline = time.monotonic() + 10
    while running() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not running()
