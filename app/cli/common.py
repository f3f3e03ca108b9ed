"""What every command group shares: the error type, the stderr console, the settings
the root group built, and opening (and migrating) the database."""

from __future__ import annotations

from typing import IO, TYPE_CHECKING, Any

import click
from rich.console import Console

from app.settings import Settings

if TYPE_CHECKING:
    import psycopg

console = Console(stderr=True, soft_wrap=True)
"""Messages, progress and summaries go to stderr; stdout carries results (JSON, keys)."""


class CliError(click.ClickException):
    def show(self, file: IO[Any] | None = None) -> None:  # rich, on stderr
        console.print(f"[bold red]error:[/] {self.message}")


def database_error(exc: psycopg.Error, hint: bool = False) -> CliError:
    """A psycopg error as a CLI error: the server's primary message (and, with `hint`,
    its detail and hint), no traceback."""
    parts = [exc.diag.message_primary or str(exc)]
    if hint:
        parts += [p for p in (exc.diag.message_detail, exc.diag.message_hint) if p]
    return CliError("\n".join(parts))


def context_settings(ctx: click.Context) -> Settings:
    """The settings the root group built from its options and the environment."""
    return ctx.obj["settings"]


def open_database(settings: Settings, force_reapply: bool = False) -> str:
    """The database URL (the embedded server unless one is configured), migrated to head
    (functions, views, policies and grants re-applied when changed, or when forced)."""
    from app.db.database import resolve_database_url
    from app.db.migrate import migrate

    dsn = resolve_database_url(settings)
    migrate(dsn, force=force_reapply)
    return dsn
