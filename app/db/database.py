"""Which PostgreSQL to use: the configured URL, or the embedded server."""

from __future__ import annotations

from pathlib import Path

from app.db.embedded import EmbeddedPostgres, embedded_database_url
from app.private import stored_secret
from app.settings import Settings

# Servers started by this process; the embedded library stops each one cleanly when
# the last process using it exits.
_started: dict[Path, EmbeddedPostgres] = {}
# The URLs handed out for them, and the CONTEXTS_HOME each one lives under.
_homes: dict[str, Path] = {}

SERVICE_PASSWORD_FILE = "service-password"
"""Under CONTEXTS_HOME: the password of the `contexts_api` login on the embedded server."""


def resolve_database_url(settings: Settings, listen: tuple[str, int] | None = None) -> str:
    """The configured URL, or the embedded server's (started, or joined, under
    settings.home; `listen` opens TCP when this call starts it)."""
    if settings.database_url:
        return settings.database_url
    server, url = embedded_database_url(settings.home, listen=listen)
    _started[settings.home] = server
    _homes[url] = settings.home
    return url


def embedded_server(settings: Settings) -> EmbeddedPostgres | None:
    """The embedded server this process uses for settings.home (None: a configured URL,
    or not started yet)."""
    return None if settings.database_url else _started.get(settings.home)


def service_password(settings: Settings, dsn: str) -> str | None:
    """The password of the service's `contexts_api` login: the configured one; for the
    embedded server (which trusts no login but the superuser's socket) one generated
    once and kept under its home, mode 0600; otherwise none."""
    if settings.service_password:
        return settings.service_password
    home = _homes.get(dsn)
    return None if home is None else stored_secret(home / SERVICE_PASSWORD_FILE)
