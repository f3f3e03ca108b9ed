"""`contexts analyst create | list | password | revoke`: SQL logins for analysts, each
mapped to a principal whose grants row-level security applies to everything it reads
(run as the migrator; the SQL is in sql/functions/13_logins.sql)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click
from rich.markup import escape

from app.cli.admin import SCOPE_TABLES, admin_connection, require_known_scope, require_org
from app.cli.common import CliError, console, context_settings, result_console
from app.settings import Settings

if TYPE_CHECKING:
    import psycopg

GRANT_FORMS = "org, audit, repo:ID, persona:ID or session:ID"
STATEMENT_TIMEOUT = "5min"
"""What a new analyst login's statements may run for, by default (`--statement-timeout`)."""
CONNECTION_LIMIT = 5
"""How many sessions a new analyst login may hold at once, by default (`--connection-limit`)."""
USAGE_VIEWS = "api.retrievals_per_day, api.fragment_retrievals and the other usage views"


def statement_timeout(value: str) -> str:
    """A PostgreSQL duration: a whole number with ms, s, min, h or d (0: no limit)."""
    import re

    text = value.strip()
    match = re.fullmatch(r"(\d{1,9})\s*(ms|s|min|h|d)?", text)
    if match is None:
        raise click.BadParameter(f"{value!r} is no duration (a whole number with ms, s, min, h or d; 0: no limit)")
    number, unit = match.groups()
    milliseconds = int(number) * {"ms": 1, "s": 1000, "min": 60_000, "h": 3_600_000, "d": 86_400_000}[unit or "ms"]
    if milliseconds > 2_147_483_647:
        raise click.BadParameter(f"{value!r} is longer than PostgreSQL allows (about 24 days)")
    return f"{number}{unit or 'ms'}"


def limit_login(conn: psycopg.Connection, login: str, timeout: str | None, connections: int | None) -> None:
    """Set the login's statement_timeout (its sessions' default) and connection limit."""
    from psycopg import sql

    if timeout is not None:
        conn.execute(sql.SQL("alter role {} set statement_timeout = {}").format(sql.Identifier(login), timeout))
    if connections is not None:
        conn.execute(sql.SQL("alter role {} connection limit {}").format(sql.Identifier(login), connections))


def door_address(settings: Settings) -> tuple[str, int] | None:
    """Where SQL clients reach the embedded server over TCP: where it listens now, else
    where `contexts db serve` would open it. None for a configured database URL."""
    from app.db.database import embedded_server

    if settings.database_url:
        return None
    server = embedded_server(settings)
    listening = server.tcp_address if server is not None else None
    return listening or (settings.db_host, settings.db_port)


def print_login(settings: Settings, login: str, password: str | None, what: str) -> None:
    """Say what was done on stderr and print the login's connection URL on stdout (with
    its password, when one was made: shown this once)."""
    from psycopg.conninfo import make_conninfo

    from app.db.database import embedded_server, resolve_database_url
    from app.db.logins import connection_url

    address = door_address(settings)
    dsn = resolve_database_url(settings)
    if address is not None:  # the embedded server's door speaks TLS only (`contexts db serve`)
        dsn = make_conninfo(dsn, sslmode="require")
    url = connection_url(dsn, login, password, address)
    if password is not None:
        console.print(f"{escape(what)}; its password, shown this once (store it now): {password}\nits URL:")
    else:
        console.print(f"{escape(what)}; its password is the one its owner or DBA set:")
    click.echo(url)
    server = embedded_server(settings)
    if server is not None and server.tcp_address is None:
        host, port = door_address(settings) or ("", 0)
        console.print(
            f"(the embedded server is open to SQL clients over TCP only while `contexts db serve` runs, "
            f"on {escape(host)}:{port}; meanwhile `contexts psql --as {escape(login)}` connects through its socket)"
        )


@click.group()
def analyst() -> None:
    """SQL logins for analysts: a login, its principal and its read grants."""


@analyst.command("create")
@click.argument("org_id")
@click.argument("name")
@click.option(
    "--grant",
    "grants",
    multiple=True,
    metavar="GRANT",
    help=f"Read grant of the principal (repeatable): {GRANT_FORMS}.",
)
@click.option("--login", default=None, help="Database login name (default: NAME; logins are cluster-wide).")
@click.option("--display-name", default="", help="Shown in `analyst list` and the principal's row.")
@click.option("--new", "create", is_flag=True, help="Create the repos and personas of --grant the org lacks.")
@click.option(
    "--statement-timeout",
    "timeout",
    default=None,
    metavar="DURATION",
    help=f"Longest a statement of the login may run, e.g. 30s, 5min, 0 (no limit). Default for a new login: "
    f"{STATEMENT_TIMEOUT}; an existing login keeps its own unless given.",
)
@click.option(
    "--connection-limit",
    "connections",
    default=None,
    type=click.IntRange(-1, 10_000),
    help=f"Sessions the login may hold at once (-1: no limit). Default for a new login: {CONNECTION_LIMIT}; "
    "an existing login keeps its own unless given.",
)
@click.pass_context
def analyst_create(
    ctx: click.Context,
    org_id: str,
    name: str,
    grants: tuple[str, ...],
    login: str | None,
    display_name: str,
    create: bool,
    timeout: str | None,
    connections: int | None,
) -> None:
    """Create the login NAME (password generated, printed once), its principal NAME in
    ORG_ID mapped to it, and its read grants, in one step; print its connection URL. A new
    login gets a statement timeout and a connection limit (defaults above). An existing
    login (made by a DBA) is mapped as it is."""
    from app.db.logins import create_analyst

    settings = context_settings(ctx)
    login = login or name
    if timeout is not None:
        try:
            timeout = statement_timeout(timeout)
        except click.BadParameter as exc:
            raise CliError(f"--statement-timeout: {exc.message}") from exc
    with admin_connection(settings, details=True) as conn:
        for kind, _, scope_id in (g.partition(":") for g in grants):
            if kind in SCOPE_TABLES and scope_id and not create:  # most often a typo
                require_known_scope(conn, org_id, kind, scope_id)
        password = create_analyst(conn, org_id, name, login, list(grants), display_name)
        if password is not None:  # made here: its limits default
            timeout = timeout or STATEMENT_TIMEOUT
            connections = CONNECTION_LIMIT if connections is None else connections
        limit_login(conn, login, timeout, connections)
    reads = ", ".join(grants) or "nothing yet (add grants with `contexts grant add`)"
    made = "created (in contexts_analyst)" if password is not None else "(existing) mapped"
    limits = []
    if timeout is not None:
        limits.append(f"statements stop after {timeout}" if timeout not in ("0ms", "0") else "no statement timeout")
    if connections is not None:
        limits.append(f"at most {connections} sessions" if connections >= 0 else "no session limit")
    what = f"login {login} {made} for principal {org_id}/{name}, reading {reads}"
    print_login(settings, login, password, what + (f" ({', '.join(limits)})" if limits else ""))
    if "audit" not in grants:
        console.print(
            f"note: without `--grant audit`, {USAGE_VIEWS} show only the retrievals this principal made itself "
            f"(none yet): to read the org's, add it (`contexts grant add {escape(org_id)} {escape(name)} --audit`)"
        )


@analyst.command("list")
@click.argument("org_id", required=False)
@click.pass_context
def analyst_list(ctx: click.Context, org_id: str | None) -> None:
    """Principals mapped to a login (of ORG_ID, or of every org)."""
    from rich.table import Column, Table

    with admin_connection(context_settings(ctx)) as conn:
        if org_id is not None:
            require_org(conn, org_id)
        rows = conn.execute("select * from service.list_analysts(%s)", (org_id,)).fetchall()
    headers = ("org", "principal", "login", "may connect", "member of", "disabled", "grants")
    table = Table(*(Column(h, overflow="fold") for h in headers))
    for org, principal_id, login, can_login, member_of, disabled_at, grants in rows:
        table.add_row(
            org,
            principal_id,
            login,
            "yes" if can_login and disabled_at is None else "no",
            ", ".join(member_of) or "-",
            f"{disabled_at:%Y-%m-%d %H:%M}" if disabled_at else "",
            ", ".join(grants) or "-",
        )
    result_console().print(table)


@analyst.command("password")
@click.argument("org_id")
@click.argument("name")
@click.pass_context
def analyst_password(ctx: click.Context, org_id: str, name: str) -> None:
    """Give the login of principal NAME a new generated password (printed once, in its
    URL); the old one stops working for new connections."""
    from app.db.logins import rotate_password

    settings = context_settings(ctx)
    with admin_connection(settings, details=True) as conn:
        login, password = rotate_password(conn, org_id, name)
    print_login(settings, login, password, f"new password for login {login}")


@analyst.command("revoke")
@click.argument("org_id")
@click.argument("name")
@click.pass_context
def analyst_revoke(ctx: click.Context, org_id: str, name: str) -> None:
    """End the access of principal NAME's login (it may no longer connect; its open
    sessions end) and disable the principal. Its grants, traces and the role itself stay,
    so the audit trail still names it."""
    with admin_connection(context_settings(ctx), details=True) as conn:
        login = conn.execute("select service.revoke_analyst(%s, %s)", (org_id, name)).fetchone()
    if login is None:
        raise CliError(f"principal {name} of org {org_id} has no login")
    console.print(f"login {escape(login[0])} may no longer connect; principal {escape(org_id)}/{escape(name)} disabled")


COMMANDS = (analyst,)
