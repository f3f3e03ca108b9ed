"""What every command group shares: the error type, the stderr console, the settings
the root group built, opening (and migrating) the database, a transaction on it as
--principal, printing a result as JSON, and calling the service through --url."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Sequence
from typing import IO, TYPE_CHECKING, Any, TypeVar

import click
from rich.console import Console
from rich.markup import escape

from app.settings import Settings

if TYPE_CHECKING:
    import psycopg
    from rich.text import Text

    from app.client import Client
    from app.ingest.normalize import RejectedDocument

T = TypeVar("T")

MAX_ID = 2**63 - 1
ID = click.IntRange(1, MAX_ID)
"""An id argument: a positive bigint (a larger number reached SQL as a numeric, and the
refusal named a function signature)."""

PIPED_WIDTH = 400
"""Columns of a result table written to a pipe or a file, where rich would assume 80
and cut every cell to fit ("princ…"); a terminal's own width is kept."""


def result_console() -> Console:
    """The console for stdout's tables: a terminal's width, or wide enough for whole rows
    when piped (COLUMNS, when set, still wins)."""
    piped = not sys.stdout.isatty() and "COLUMNS" not in os.environ
    return SafeConsole(soft_wrap=True, highlight=False, width=PIPED_WIDTH if piped else None)


TERMINAL_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""Characters a terminal acts on (an escape sequence can clear the screen or retitle the
window) other than tab and newline: shown as escapes when a message quotes user input."""


def shown(text: str) -> str:
    """`text` safe to print on a terminal: control characters as \\x escapes."""
    return TERMINAL_CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


class SafeConsole(Console):
    """A rich console whose text has its control characters shown as escapes (`shown`):
    tables and lines quote stored data (a pin's reason, a document's path), which another
    writer of the org chose; rich's own styling is added after, so it still shows."""

    def render_str(self, text: str, *args: Any, **kwargs: Any) -> Text:
        return super().render_str(shown(text), *args, **kwargs)


console = SafeConsole(stderr=True, soft_wrap=True)
"""Messages, progress and summaries go to stderr; stdout carries results (JSON, keys)."""


def echo(message: str = "") -> None:
    """click.echo of text that may quote stored data, its control characters shown as
    escapes (a fragment's or document's text, a listing's line)."""
    click.echo(shown(message))


class CliError(click.ClickException):
    def show(self, file: IO[Any] | None = None) -> None:  # rich, on stderr
        # The message is text, never markup: "contexts[e5]" or a path "a[1].md" stays as written;
        # an argument quoted in it may hold escape sequences, shown (by SafeConsole), not run.
        console.print(f"[bold red]error:[/] {escape(self.message)}")


class ContextsGroup(click.Group):
    """The root group: a configured PostgreSQL that cannot serve (the preflight's
    DatabaseUnusable, from whichever command connected), an embedded server that cannot
    start where CONTEXTS_HOME says, or a configured model whose package is not installed,
    is one line and a non-zero exit, never a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        from app.db.embedded import ServerUnavailable
        from app.db.preflight import DatabaseUnusable
        from app.text.e5_small_q4 import PackagedModelMissing

        try:
            return super().invoke(ctx)
        except (DatabaseUnusable, PackagedModelMissing, ServerUnavailable) as exc:
            raise CliError(str(exc)) from exc
        except click.ClickException as exc:
            # An org this database lacks is most often one made in another database (a
            # `make run` with its own CONTEXTS_HOME): say which database was asked.
            settings = (ctx.obj or {}).get("settings")
            if exc.message.startswith("unknown org") and isinstance(settings, Settings) and "(in " not in exc.message:
                where = (
                    "the database of --db-url / CONTEXTS_DATABASE_URL"
                    if settings.database_url
                    else f"the embedded database of CONTEXTS_HOME={settings.home}"
                )
                raise CliError(f"{exc.message} (in {where})") from exc
            raise


def database_error(exc: psycopg.Error, detail: bool = False) -> CliError:
    """A psycopg error as a CLI error: the server's primary message and, where our SQL
    wrote one, its hint (what to do instead); with `detail`, its detail too. No traceback."""
    from app.db.duplicates import duplicate_detail  # psycopg is imported only where a database is used
    from app.scope import constraint_rule

    known = constraint_rule(exc.diag.constraint_name) or duplicate_detail(exc)
    parts = [known or exc.diag.message_primary or str(exc)]
    if detail and exc.diag.message_detail:
        parts.append(exc.diag.message_detail)
    if not known and exc.diag.message_hint:
        parts.append(exc.diag.message_hint)
    return CliError("\n".join(parts))


def git_identity() -> str | None:
    """git's user.name: the default author and owner of what `ingest` and `sync` write."""
    import subprocess

    try:
        out = subprocess.run(["git", "config", "user.name"], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


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


def remote_options(command: Callable) -> Callable:
    """--url and --key (CONTEXTS_URL, CONTEXTS_KEY): talk to a running service instead
    of the database."""
    command = click.option("--key", envvar="CONTEXTS_KEY", default=None, help="API key for --url (env CONTEXTS_KEY).")(
        command
    )
    return click.option(
        "--url",
        envvar="CONTEXTS_URL",
        default=None,
        help="A running Contexts service, e.g. http://127.0.0.1:8000 (env CONTEXTS_URL); with --key.",
    )(command)


def validated(payload: dict, into: type[T]) -> T:
    """`payload` as the request type the API takes, checked the way the API checks it
    (its ValidationError is the CLI error, with msgspec's path to the bad field)."""
    import msgspec

    try:
        return msgspec.convert(payload, into)
    except msgspec.ValidationError as exc:
        from app.wire.pattern_words import in_words

        raise CliError(with_option(in_words(str(exc)))) from exc


def with_option(message: str) -> str:
    """msgspec names the request's field (`$.budget_tokens`); a CLI user typed an option
    (`--budget`): the message names it too, when the current command has one for it."""
    field = re.search(r"- at `\$(?:\.\w+|\[\d+\])*\.(\w+)(?:\[\d+\])?`$", message)
    ctx = click.get_current_context(silent=True)
    if field is None or ctx is None:
        return message
    for param in ctx.command.params:
        if isinstance(param, click.Option) and param.name == field.group(1):
            return f"{message} (option {max(param.opts, key=len)})"
    return message


def remote(url: str, key: str | None, call: Callable[[Client], T]) -> T:
    """One call through the Python client; a refusal is a CLI error with the service's
    status and message (non-zero exit)."""
    from app.client import Client, ContextsError

    if not key:
        raise CliError("--url needs --key (or CONTEXTS_KEY): the service acts for the key's principal")
    try:
        with Client(url, key) as client:
            return call(client)
    except ContextsError as exc:
        raise CliError(str(exc)) from exc


def print_json(value: object) -> None:
    """A result (a wire body) as one line of JSON on stdout."""
    import msgspec

    click.echo(msgspec.json.encode(value).decode())


BINARY_SHOWN = 3
"""Binary files named in the summary of a walk that skipped them; the rest are counted."""


def print_skipped(refused: Sequence[RejectedDocument]) -> None:
    """What a walk of directories did not ingest: each refusal on a line of its own, but
    binary and non-UTF-8 files (UnreadableContent: a package's .pyc, images) as one line
    that counts them and names the first few: in a tree they are expected, not news."""
    from app.ingest.normalize import UnreadableContent

    binary = [exc.path for exc in refused if isinstance(exc, UnreadableContent)]
    for exc in refused:
        if not isinstance(exc, UnreadableContent):
            console.print(f"[yellow]skipped:[/] {escape(str(exc))}")
    if binary:
        named = ", ".join(binary[:BINARY_SHOWN])
        more = f" and {len(binary) - BINARY_SHOWN} more" if len(binary) > BINARY_SHOWN else ""
        console.print(f"[yellow]skipped:[/] {len(binary)} binary or non-UTF-8 file(s): {escape(named)}{more}")


def required_org(org_id: str | None) -> str:
    """--org, which a command on the database needs (through --url, the key's org serves)."""
    if not org_id:
        raise CliError("--org is required without --url (the principal's org)")
    return org_id


def as_principal(settings: Settings, org_id: str, run: Callable[[psycopg.Connection], T]) -> T:
    """One transaction on the database as --principal (row-level security applies)."""
    import psycopg

    from app.access import act_as

    dsn = open_database(settings)
    try:
        with psycopg.connect(dsn) as conn:
            act_as(conn, org_id, settings.principal)
            return run(conn)
    except psycopg.Error as exc:
        raise database_error(exc) from exc
