"""`contexts db serve | psql | backup | restore`: the SQL door. `db serve` keeps the
embedded PostgreSQL running and open to SQL clients over TCP (every login proves its
password); `psql` opens the shipped psql on the Contexts database, as the DBA or as an
analyst; `backup` and `restore` keep the database with its logins (app/db/backup.py)."""

from __future__ import annotations

import errno
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import click
from rich.markup import escape

from app.cli.common import CliError, console, context_settings, open_database


def port_problem(host: str, port: int) -> str | None:
    """Why PostgreSQL could not listen on host:port now (None: it can)."""
    advice = "stop it or choose another port (--port or CONTEXTS_DB_PORT)"
    try:
        addresses = socket.getaddrinfo(
            None if host in ("*", "") else host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
    except socket.gaierror as exc:
        return f"cannot listen on {host}:{port}: {exc.strerror}"
    for family, kind, proto, _, address in addresses:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as PostgreSQL does
            try:
                probe.bind(address)
            except OSError as exc:
                if exc.errno == errno.EADDRINUSE:
                    return f"port {port} on {host} is in use by another program; {advice}"
                return f"cannot listen on {host}:{port}: {exc.strerror or exc}"
    return None


@click.group("db")
def db_group() -> None:
    """The embedded PostgreSQL server, opened to SQL clients."""


@db_group.command("serve")
@click.option("--host", default=None, help="Default: CONTEXTS_DB_HOST or 127.0.0.1 ('*': every interface).")
@click.option("--port", default=None, type=click.IntRange(1, 65535), help="Default: CONTEXTS_DB_PORT or 5432.")
@click.pass_context
def db_serve(ctx: click.Context, host: str | None, port: int | None) -> None:
    """Run the embedded PostgreSQL open to SQL clients on HOST:PORT until interrupted.
    Every login proves its password (SCRAM-SHA-256) and none is trusted over TCP. Before
    or after `contexts serve` (or `make run`): started first, it opens the server's TCP
    port and the others join it; started after, it listens itself and relays to the
    running server's socket, refusing the superuser."""
    from app.db.database import embedded_server, resolve_database_url
    from app.db.embedded import ServerUnavailable, running_postmaster
    from app.db.migrate import migrate

    settings = context_settings(ctx)
    settings = settings.with_(**{k: v for k, v in (("db_host", host), ("db_port", port)) if v is not None})
    if settings.database_url:
        raise CliError(
            "`contexts db serve` opens the embedded server; with CONTEXTS_DATABASE_URL (or --db-url) your "
            "PostgreSQL is a server already, whose DBA decides who connects (see docs/dba.md)"
        )
    listen = (settings.db_host, settings.db_port)
    pgdata = settings.home / "pgdata"
    try:
        running = running_postmaster(pgdata)
        socket_only = running is not None and running[1] is None
        if running is None or socket_only:
            problem = port_problem(*listen)
            if problem:
                raise CliError(problem)
        elif running[1] != listen:
            raise CliError(_already_running(pgdata, running[0], running[1]))
        dsn = resolve_database_url(settings, listen=None if socket_only else listen)
    except ServerUnavailable as exc:
        raise CliError(str(exc)) from exc
    server = embedded_server(settings)
    assert server is not None
    relay = None
    if server.tcp_address is None:
        # Started by another command (`contexts serve`, `make run`) on its socket only:
        # listen here and relay to that socket (app/cli/db_relay.py refuses the superuser).
        from psycopg.conninfo import conninfo_to_dict

        from app.cli.db_relay import Relay
        from app.db.embedded import SUPERUSER

        socket_port = conninfo_to_dict(server.url()).get("port") or 5432
        relay = Relay(*listen, f"{server.socket_dir}/.s.PGSQL.{socket_port}", SUPERUSER)
        try:
            relay.start()
        except OSError as exc:
            raise CliError(f"cannot listen on {listen[0]}:{listen[1]}: {exc.strerror or exc}") from exc
    elif server.tcp_address != listen:  # another door, elsewhere
        raise CliError(_already_running(pgdata, server.pid, server.tcp_address))
    migrate(dsn)

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # a normal exit stops the server (atexit)
    shown = f"[{listen[0]}]" if ":" in listen[0] else listen[0]
    console.print(
        f"PostgreSQL accepts SQL clients on {escape(shown)}:{listen[1]}, database contexts "
        f"(pid {server.pid}, data in {escape(str(pgdata))}"
        + (", relayed to the server another contexts command started" if relay is not None else "")
        + "). Every login needs its password "
        "(SCRAM-SHA-256); none is trusted over TCP.\n"
        "  an analyst:  contexts analyst create ORG NAME --grant org   (prints the login's URL)\n"
        "  the DBA:     contexts psql\n"
        "Ctrl-C stops it (the server itself stops once no other contexts command uses it)."
    )
    click.echo(f"postgresql://{shown}:{listen[1]}/contexts")
    try:
        while server.is_running():
            time.sleep(0.5)
    except KeyboardInterrupt:
        console.print("stopped")
        return
    finally:
        if relay is not None:
            relay.stop()
    raise CliError(f"the PostgreSQL server stopped; its log: {pgdata / 'log'}\n{server.log_tail(5)}")


def _already_running(pgdata: object, pid: int | None, address: tuple[str, int] | None) -> str:
    where = f"on {address[0]}:{address[1]}" if address else "on its Unix socket only"
    return (
        f"the embedded server under {pgdata} is already open to SQL clients {where} (pid {pid}), by another "
        "`contexts db serve`: connect there, or stop that one first"
    )


@click.command("psql", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option(
    "--as",
    "login",
    default=None,
    metavar="NAME",
    help="Connect as this login; psql asks for its password (or reads PGPASSWORD). Default: the migrator (DBA).",
)
@click.argument("psql_args", nargs=-1, type=click.UNPROCESSED)
@click.pass_context
def psql_command(ctx: click.Context, login: str | None, psql_args: tuple[str, ...]) -> None:
    """Open psql (the embedded server's own build) on the Contexts database; arguments
    after the options go to psql, e.g. `contexts psql -c 'select * from api.whoami()'`."""
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    from app.pgtools import binary

    dsn = open_database(context_settings(ctx))
    params = {k: str(v) for k, v in conninfo_to_dict(dsn).items() if v is not None}
    if login is not None:
        params.pop("password", None)  # the analyst's own: asked for, or PGPASSWORD
        params["user"] = login
    # A child, not exec: this process holds the embedded server, which stops when the
    # last contexts process using it exits.
    child = subprocess.Popen([str(binary("psql")), "-d", make_conninfo(**params), *psql_args])
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # psql handles Ctrl-C (cancels the query)
    try:
        status = child.wait()
    finally:
        signal.signal(signal.SIGINT, previous)
    ctx.exit(status)


@db_group.command("url")
@click.pass_context
def db_url_command(ctx: click.Context) -> None:
    """Print the migrator's URL of the Contexts database (the embedded server's socket,
    with the port it runs on; or the configured URL), for the client tools:
    `.venv/bin/pg_dump --schema-only "$(contexts db url)"`."""
    from app.db.database import resolve_database_url

    click.echo(resolve_database_url(context_settings(ctx)))


@click.command("backup")
@click.argument("file", type=click.Path(dir_okay=False, writable=True, path_type=Path))
@click.pass_context
def backup_command(ctx: click.Context, file: Path) -> None:
    """Write the Contexts database and the server's roles (analysts' logins, with their
    passwords as SCRAM verifiers) to FILE; `contexts restore FILE` puts both back."""
    from app.db.backup import BackupError, backup
    from app.db.database import resolve_database_url

    dsn = resolve_database_url(context_settings(ctx))
    try:
        done = backup(dsn, file)
    except BackupError as exc:
        raise CliError(str(exc)) from exc
    console.print(
        f"backed up the database and {done.roles} role(s) to {escape(str(file))} ({done.size / 1e6:.1f} MB)"
        + ("" if done.passwords else "; without the logins' passwords (only a superuser may read them)")
    )


@click.command("restore")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.pass_context
def restore_command(ctx: click.Context, file: Path) -> None:
    """Restore a `contexts backup` FILE into a database with no Contexts schema yet (a
    new CONTEXTS_HOME, or a new database of your own): the roles it lacks first, then
    the data, then a migrate to the current schema."""
    from app.db.backup import BackupError, restore
    from app.db.database import resolve_database_url
    from app.db.migrate import migrate

    dsn = resolve_database_url(context_settings(ctx))
    try:
        done = restore(dsn, file)
    except BackupError as exc:
        raise CliError(str(exc)) from exc
    migrated = migrate(dsn, force=True)
    created = ", ".join(done.created) or "none"
    console.print(
        f"restored {escape(str(file))}: role(s) created: {escape(created)}; {done.kept} role(s) kept as they were; "
        f"{migrated.describe()}"
    )


COMMANDS = (db_group, psql_command, backup_command, restore_command)
