"""Which PostgreSQL to use: the configured URL, or the embedded server."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from app.db.embedded import EmbeddedPostgres, embedded_database_url
from app.private import stored_secret
from app.settings import Settings, _default_home

if TYPE_CHECKING:
    import psycopg

# Servers started by this process; the embedded library stops each one cleanly when
# the last process using it exits.
_started: dict[Path, EmbeddedPostgres] = {}
# The URLs handed out for them, and the CONTEXTS_HOME each one lives under.
_homes: dict[str, Path] = {}
# The configured URLs that passed the preflight in this process.
_checked: set[str] = set()

SERVICE_PASSWORD_FILE = "service-password"
"""Under CONTEXTS_HOME: the password of the `contexts_api` login on the embedded server."""


def resolve_database_url(settings: Settings, listen: tuple[str, int] | None = None) -> str:
    """The configured URL, or the embedded server's (started, or joined, under
    settings.home; `listen` opens TCP when this call starts it). A configured URL is
    checked once per process (app.db.preflight: DatabaseUnusable when it cannot serve);
    a new embedded server is announced on stderr, with where its data lives."""
    if settings.database_url:
        if settings.database_url not in _checked:
            from app.db.preflight import preflight

            preflight(settings.database_url)
            _checked.add(settings.database_url)
        return settings.database_url
    pgdata = settings.home / "pgdata"
    new = not (pgdata / "PG_VERSION").exists()
    server, url = embedded_database_url(settings.home, listen=listen)
    if new:
        print(new_database_notice(settings.home), file=sys.stderr, flush=True)
    _started[settings.home] = server
    _homes[url] = settings.home
    return url


def new_database_notice(home: Path) -> str:
    """The line a command prints when it has just created the embedded server's data."""
    where = home / "pgdata"
    if home == _default_home():
        return (
            f"contexts: created a new, empty database in {where} (CONTEXTS_HOME is not set, so the default "
            "home); set CONTEXTS_HOME or CONTEXTS_DATABASE_URL to use an existing one"
        )
    return f"contexts: created a new, empty database in {where} (CONTEXTS_HOME={home})"


def holds_no_org(conn: psycopg.Connection) -> bool:
    """Whether the migrated database holds no org at all (a new, empty one), read from
    the catalog (each org has its own partitions), so row-level security hides nothing."""
    row = conn.execute(
        "select not exists (select 1 from pg_inherits where inhparent = 'data.fragments'::regclass)"
    ).fetchone()
    return bool(row and row[0])


def describe_database(settings: Settings) -> str:
    """Where the settings' database is, for messages (never a password)."""
    if settings.database_url:
        from app.db.preflight import where

        return f"at {where(settings.database_url)}"
    return f"in {settings.home / 'pgdata'}"


def embedded_server(settings: Settings) -> EmbeddedPostgres | None:
    """The embedded server this process uses for settings.home (None: a configured URL,
    or not started yet)."""
    return None if settings.database_url else _started.get(settings.home)


def embedded_server_at(dsn: str) -> EmbeddedPostgres | None:
    """The embedded server this process started (or joined) whose URL is `dsn` (None:
    another database). `contexts serve` hands its application the URL, not the home."""
    home = _homes.get(dsn)
    return None if home is None else _started.get(home)


def service_password(settings: Settings, dsn: str) -> str | None:
    """The password of the service's `contexts_api` login: the configured one; for the
    embedded server (which trusts no login but the superuser's socket) one generated
    once and kept under its home, mode 0600; otherwise none."""
    if settings.service_password:
        return settings.service_password
    home = _homes.get(dsn)
    return None if home is None else stored_secret(home / SERVICE_PASSWORD_FILE)
