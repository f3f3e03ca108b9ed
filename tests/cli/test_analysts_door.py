"""`contexts db serve` after the embedded server was started by another command on its
socket only (`contexts serve`, `make run`): it listens itself and relays, with TLS (here
with a certificate of one's own: --tls-cert, --tls-key), so an analyst connects with the
URL `contexts analyst create` printed, and the superuser, trusted on the socket, is
refused over TCP."""

from __future__ import annotations

import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict

from tests.security.test_door import START_TIMEOUT_S, free_port

pytestmark = pytest.mark.db  # starts a PostgreSQL server of its own

ROOT = Path(__file__).resolve().parents[2]
HOLDER = """
import sys, time
from app.db.database import resolve_database_url
from app.settings import Settings
resolve_database_url(Settings.from_env())
print("up", flush=True)
sys.stdin.read()
"""


def first_line(process: subprocess.Popen, timeout: float) -> str | None:
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: lines.put(process.stdout.readline() if process.stdout else ""), daemon=True).start()
    try:
        return lines.get(timeout=timeout) or None
    except queue.Empty:
        return None


def door_env(home: Path, port: int) -> dict[str, str]:
    """The environment of a user with this home and door port, nothing else of ours."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CONTEXTS_", "PG"))}
    return env | {"CONTEXTS_HOME": str(home), "CONTEXTS_DB_PORT": str(port)}


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=180
    )


def spawn(env: dict[str, str], *argv: str, stdin: bool = False) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, *argv],
        cwd=ROOT,
        env=env,
        stdin=subprocess.PIPE if stdin else None,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def stop(*processes: subprocess.Popen | None) -> None:
    """Each ends as it would for a user: the holder at the end of its input, the door on
    SIGTERM (a service manager's stop; Ctrl-C's SIGINT is ignored by processes started under
    pytest-xdist's workers); the last user of the server stops it."""
    for process in processes:
        if process is not None:
            if process.stdin is not None:
                process.stdin.close()
            else:
                process.send_signal(signal.SIGTERM)
            try:
                process.wait(60)
            except subprocess.TimeoutExpired:
                process.kill()


def test_db_serve_started_after_the_service_relays_and_refuses_the_superuser():
    home = Path(tempfile.mkdtemp(prefix="contexts-door-order-"))
    port = free_port()
    env = door_env(home, port)
    holder = spawn(env, "-c", HOLDER, stdin=True)
    door = None
    try:
        assert first_line(holder, START_TIMEOUT_S) == "up\n", holder.stderr.read() if holder.stderr else ""
        from app.cli.db_relay import self_signed_certificate

        own = self_signed_certificate(home / "own", "127.0.0.1")  # as if from one's own authority
        serve = ["db", "serve", "--tls-cert", str(own.cert), "--tls-key", str(own.key)]
        door = spawn(env, "-m", "app.cli", *serve)
        announced = first_line(door, START_TIMEOUT_S)
        if announced is None or door.poll() is not None:
            door.kill()
            pytest.fail(f"db serve did not start: {door.stderr.read() if door.stderr else ''}")
        assert announced.strip() == f"postgresql://127.0.0.1:{port}/contexts?sslmode=require"
        assert not (home / "tls").exists()  # no self-signed one made

        assert cli(env, "org", "create", "acme").returncode == 0
        made = cli(env, "analyst", "create", "acme", "ana", "--grant", "org", "--grant", "audit")
        assert made.returncode == 0, made.stderr
        url = made.stdout.strip().splitlines()[-1]
        assert conninfo_to_dict(url)["port"] == str(port)
        assert conninfo_to_dict(url)["sslmode"] == "require"
        with psycopg.connect(url, sslmode="verify-ca", sslrootcert=str(own.cert), connect_timeout=10) as conn:
            assert conn.pgconn.ssl_in_use
            assert conn.execute("select current_user, (select principal_id from api.whoami())").fetchone() == (
                "ana",
                "ana",
            )
        with pytest.raises(psycopg.OperationalError, match="only over the server's Unix socket"):
            psycopg.connect(host="127.0.0.1", port=port, dbname="contexts", user="postgres", connect_timeout=10)
        with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
            psycopg.connect(
                host="127.0.0.1", port=port, dbname="contexts", user="ana", password="wrong", connect_timeout=10
            )
    finally:
        stop(door, holder)
        shutil.rmtree(home, ignore_errors=True)


def test_db_serve_started_first_then_the_service_both_serve():
    """The other order: the door starts the embedded server itself; a command of the
    service started afterwards joins that server, and an analyst still connects through
    the door with the printed self-signed certificate."""
    home = Path(tempfile.mkdtemp(prefix="contexts-door-first-"))
    port = free_port()
    env = door_env(home, port)
    door = spawn(env, "-m", "app.cli", "db", "serve")
    holder = None
    try:
        announced = first_line(door, START_TIMEOUT_S)
        if announced is None or door.poll() is not None:
            door.kill()
            pytest.fail(f"db serve did not start: {door.stderr.read() if door.stderr else ''}")
        assert announced.strip() == f"postgresql://127.0.0.1:{port}/contexts?sslmode=require"
        holder = spawn(env, "-c", HOLDER, stdin=True)
        assert first_line(holder, START_TIMEOUT_S) == "up\n", holder.stderr.read() if holder.stderr else ""
        assert holder.poll() is None  # the service's side runs beside the door
        assert cli(env, "org", "create", "acme").returncode == 0
        made = cli(env, "analyst", "create", "acme", "ana", "--grant", "org")
        assert made.returncode == 0, made.stderr
        url = made.stdout.strip().splitlines()[-1]
        root = home / "tls" / "server.crt"
        with psycopg.connect(url, sslmode="verify-ca", sslrootcert=str(root), connect_timeout=10) as conn:
            assert conn.pgconn.ssl_in_use
            assert conn.execute("select current_user").fetchone() == ("ana",)
    finally:
        stop(holder, door)
        shutil.rmtree(home, ignore_errors=True)
