"""`contexts analyst create | list | password | revoke`: SQL logins for analysts, each
mapped to a principal whose grants row-level security applies to everything it reads
(run as the migrator; the SQL is in sql/functions/13_logins.sql)."""

from __future__ import annotations

import click
from rich.console import Console
from rich.markup import escape

from app.cli.admin import admin_connection
from app.cli.common import CliError, console, context_settings
from app.settings import Settings

GRANT_FORMS = "org, audit, repo:ID, persona:ID or session:ID"


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
    from app.db.database import embedded_server, resolve_database_url
    from app.db.logins import connection_url

    url = connection_url(resolve_database_url(settings), login, password, door_address(settings))
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
@click.pass_context
def analyst_create(
    ctx: click.Context, org_id: str, name: str, grants: tuple[str, ...], login: str | None, display_name: str
) -> None:
    """Create the login NAME (password generated, printed once), its principal NAME in
    ORG_ID mapped to it, and its read grants, in one step; print its connection URL. An
    existing login (made by a DBA) is mapped as it is."""
    from app.db.logins import create_analyst

    settings = context_settings(ctx)
    login = login or name
    with admin_connection(settings, hints=True) as conn:
        password = create_analyst(conn, org_id, name, login, list(grants), display_name)
    reads = ", ".join(grants) or "nothing yet (add grants with `contexts grant add`)"
    made = "created (in contexts_analyst)" if password is not None else "(existing) mapped"
    print_login(settings, login, password, f"login {login} {made} for principal {org_id}/{name}, reading {reads}")


@analyst.command("list")
@click.argument("org_id", required=False)
@click.pass_context
def analyst_list(ctx: click.Context, org_id: str | None) -> None:
    """Principals mapped to a login (of ORG_ID, or of every org)."""
    from rich.table import Column, Table

    with admin_connection(context_settings(ctx)) as conn:
        rows = conn.execute("select * from api.list_analysts(%s)", (org_id,)).fetchall()
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
    Console(soft_wrap=True).print(table)


@analyst.command("password")
@click.argument("org_id")
@click.argument("name")
@click.pass_context
def analyst_password(ctx: click.Context, org_id: str, name: str) -> None:
    """Give the login of principal NAME a new generated password (printed once, in its
    URL); the old one stops working for new connections."""
    from app.db.logins import rotate_password

    settings = context_settings(ctx)
    with admin_connection(settings, hints=True) as conn:
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
    with admin_connection(context_settings(ctx), hints=True) as conn:
        login = conn.execute("select api.revoke_analyst(%s, %s)", (org_id, name)).fetchone()
    if login is None:
        raise CliError(f"principal {name} of org {org_id} has no login")
    console.print(f"login {escape(login[0])} may no longer connect; principal {escape(org_id)}/{escape(name)} disabled")


COMMANDS = (analyst,)
