"""Which PostgreSQL to use: the configured URL, or the embedded server."""

from __future__ import annotations

from pathlib import Path

from app.db.embedded import EmbeddedPostgres, embedded_database_url
from app.settings import Settings

# Servers started by this process; the embedded library stops each one cleanly when
# the last process using it exits.
_started: dict[Path, EmbeddedPostgres] = {}


def resolve_database_url(settings: Settings) -> str:
    if settings.database_url:
        return settings.database_url
    server, url = embedded_database_url(settings.home)
    _started[settings.home] = server
    return url
