"""`contexts mcp`: the MCP server over stdio, for an MCP client that starts it, acting
as the principal of the API key in CONTEXTS_KEY (the same keys as the HTTP API)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import click

from app.cli.common import CliError, console, context_settings, database_error, open_database

if TYPE_CHECKING:
    import psycopg

    from app.settings import Settings

KEY_VARIABLE = "CONTEXTS_KEY"


@click.command("mcp")
@click.pass_context
def mcp(ctx: click.Context) -> None:
    """Serve MCP (Model Context Protocol) on stdin/stdout as the principal of the API key
    in CONTEXTS_KEY; its grants bound every tool call. The key is checked at start (an
    unknown or revoked key stops the server) and again on every call (a key revoked
    while the server runs fails each later call with an authentication error).

    It opens the database of CONTEXTS_HOME or CONTEXTS_DATABASE_URL (or --db-url): set the
    same one as the server that made the key, in the MCP client's env; without either it
    opens the default embedded database, where the key is unknown."""
    import anyio
    import psycopg

    from app.access import authenticate
    from app.mcp import serve_stdio
    from app.operations.build import build_services

    settings = context_settings(ctx)
    key = os.environ.get(KEY_VARIABLE, "").strip()
    if not key:
        raise CliError(
            f"set {KEY_VARIABLE} to an API key (`contexts key create ORG PRINCIPAL`): "
            "`contexts mcp` acts as that key's principal"
        )
    dsn = open_database(settings)
    # Before loading any model: a bad key fails in a second, not after the start-up.
    with psycopg.connect(dsn) as conn:
        try:
            org_id, principal_id = authenticate(conn, key)
        except psycopg.errors.InvalidAuthorizationSpecification as exc:
            conn.rollback()
            raise CliError(refused_key_message(conn, settings)) from exc
        except psycopg.Error as exc:
            raise database_error(exc) from exc
        conn.rollback()
    services = build_services(settings.with_(database_url=dsn), dsn)
    console.print(f"contexts mcp: serving MCP on stdio as principal {principal_id} of org {org_id}")
    try:
        anyio.run(serve_stdio, services, key)
    finally:
        services.close()


def refused_key_message(conn: psycopg.Connection, settings: Settings) -> str:
    """Why the key was refused; on a database with no org at all, that it is empty (a
    new default home, most often), not only that the key is unknown."""
    from app.db.database import describe_database, holds_no_org

    if holds_no_org(conn):
        return (
            f"{KEY_VARIABLE} is not a key of this database: the database {describe_database(settings)} is empty "
            "(new: no org, no key); set CONTEXTS_HOME (or CONTEXTS_DATABASE_URL) to the one that holds your "
            "keys, or create them here (contexts org create ORG; contexts key create ORG PRINCIPAL)"
        )
    return f"{KEY_VARIABLE} is not a valid API key: it is unknown or revoked"


COMMANDS = (mcp,)
