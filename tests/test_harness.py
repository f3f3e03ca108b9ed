"""The test harness itself: runs side by side do not break each other's server, and a
dead server ends a run within seconds instead of hanging it."""

from __future__ import annotations

import getpass
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psycopg
import pytest

pytestmark = pytest.mark.db  # starts PostgreSQL servers of its own: not the unit tier

ROOT = Path(__file__).resolve().parents[1]


def test_server_lives_outside_pytest_base_temp(pg_server, tmp_path_factory):
    base = tmp_path_factory.getbasetemp().resolve()
    assert base not in pg_server.pgdata.resolve().parents


def test_a_second_run_locking_pytest_temp_root_does_not_break_the_server(pg_server):
    # What another pytest of the same OS user does at start: mode 0700 on its temp root.
    root = Path(tempfile.gettempdir()) / f"pytest-of-{getpass.getuser()}"
    root.mkdir(mode=0o700, exist_ok=True)
    root.chmod(0o700)
    with psycopg.connect(pg_server.url(), autocommit=True) as conn:
        conn.execute("checkpoint")  # writes global/pg_control
        assert conn.execute("select count(*) > 0 from pg_class").fetchone()[0]
    assert pg_server.is_running()


def test_a_dead_server_ends_the_run_within_seconds():
    started = time.monotonic()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/harness/kill_server_case.py"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    elapsed = time.monotonic() - started
    out = run.stdout + run.stderr
    assert run.returncode != 0, out
    assert "test PostgreSQL server is unusable" in out, out
    assert "must not run" not in out, out
    # Start-up (initdb, migrate the template) included; no 60 s connection retries.
    assert elapsed < 90, f"{elapsed:.0f}s\n{out}"
