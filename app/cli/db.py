"""`contexts db serve | psql | backup | restore`: the SQL door. `db serve` keeps the
embedded PostgreSQL running and open to SQL clients over TCP with TLS (every login proves
its password; app/cli/db_relay.py); `psql` opens the shipped psql on the Contexts database, as the DBA or as an
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
@click.option(
    "--tls-cert",
    default=None,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Your own certificate (PEM, with its chain) instead of the self-signed one kept under CONTEXTS_HOME/tls.",
)
@click.option(
    "--tls-key",
    default=None,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="The private key of --tls-cert (PEM, unencrypted).",
)
@click.pass_context
def db_serve(
    ctx: click.Context, host: str | None, port: int | None, tls_cert: Path | None, tls_key: Path | None
) -> None:
    """Open the embedded PostgreSQL to SQL clients on HOST:PORT, over TLS, until
    interrupted. The server runs on its Unix socket (started here, or already by
    `contexts serve` or `make run`: any order works) and this command listens on TCP and
    relays: it speaks TLS to every client (a certificate made on first start, or
    --tls-cert/--tls-key), refuses clients that do not ask for TLS, and refuses the
    superuser. Every login proves its password (SCRAM-SHA-256)."""
    from app.cli.db_relay import Relay, TlsError, given_certificate, self_signed_certificate, server_context
    from app.db.database import embedded_server, resolve_database_url
    from app.db.embedded import SUPERUSER, ServerUnavailable, running_postmaster
    from app.db.migrate import migrate

    settings = context_settings(ctx)
    settings = settings.with_(**{k: v for k, v in (("db_host", host), ("db_port", port)) if v is not None})
    if settings.database_url:
        raise CliError(
            "`contexts db serve` opens the embedded server; with CONTEXTS_DATABASE_URL (or --db-url) your "
            "PostgreSQL is a server already, whose DBA decides who connects (see docs/dba.md)"
        )
    if (tls_cert is None) != (tls_key is None):
        raise click.UsageError("--tls-cert and --tls-key go together (or neither: the self-signed certificate)")
    listen = (settings.db_host, settings.db_port)
    pgdata = settings.home / "pgdata"
    try:
        running = running_postmaster(pgdata)
        if running is not None and running[1] is not None:  # a door of an earlier version, without TLS
            raise CliError(_already_running(pgdata, running[0], running[1]))
        problem = port_problem(*listen)
        if problem:
            raise CliError(problem)
        if tls_cert is not None and tls_key is not None:
            certificate = given_certificate(tls_cert, tls_key)
        else:
            certificate = self_signed_certificate(settings.home, listen[0])
        tls = server_context(certificate)
        # Not running: started on its socket only, named after the door's port (TCP stays closed).
        dsn = resolve_database_url(settings, listen=None if running is not None else ("", listen[1]))
    except (ServerUnavailable, TlsError) as exc:
        raise CliError(str(exc)) from exc
    server = embedded_server(settings)
    assert server is not None
    if server.tcp_address is not None:
        raise CliError(_already_running(pgdata, server.pid, server.tcp_address))
    from psycopg.conninfo import conninfo_to_dict

    socket_port = conninfo_to_dict(server.url()).get("port") or 5432
    relay = Relay(*listen, f"{server.socket_dir}/.s.PGSQL.{socket_port}", SUPERUSER, tls)
    try:
        relay.start()
    except OSError as exc:
        raise CliError(f"cannot listen on {listen[0]}:{listen[1]}: {exc.strerror or exc}") from exc
    try:
        migrate(dsn)

        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # a normal exit stops the server (atexit)
        shown = f"[{listen[0]}]" if ":" in listen[0] else listen[0]
        if certificate.self_signed:
            verify = (
                f"  verify it:   sslmode=verify-ca sslrootcert={escape(str(certificate.cert))}  (a copy of that file "
                "on the client; or compare the fingerprint)"
            )
        else:
            verify = "  verify it:   sslmode=verify-full sslrootcert=<the certificate of the authority that signed it>"
        console.print(
            f"PostgreSQL accepts SQL clients on {escape(shown)}:{listen[1]}, database contexts, over TLS only "
            f"(pid {server.pid}, data in {escape(str(pgdata))}). Every login needs its password "
            "(SCRAM-SHA-256); the superuser connects only through the server's socket.\n"
            f"  TLS:         {'self-signed certificate' if certificate.self_signed else 'certificate'} "
            f"{escape(str(certificate.cert))}, valid until {certificate.not_after:%Y-%m-%d}\n"
            f"  SHA-256:     {certificate.fingerprint}\n"
            f"{verify}\n"
            "  an analyst:  contexts analyst create ORG NAME --grant org   (prints the login's URL)\n"
            "  the DBA:     contexts psql\n"
            "Ctrl-C stops it (the server itself stops once no other contexts command uses it).",
            emoji=False,  # a fingerprint's ":AB:" is no emoji
        )
        click.echo(f"postgresql://{shown}:{listen[1]}/contexts?sslmode=require")
        try:
            while server.is_running():
                time.sleep(0.5)
        except KeyboardInterrupt:
            console.print("stopped")
            return
    finally:
        relay.stop()
    raise CliError(f"the PostgreSQL server stopped; its log: {pgdata / 'log'}\n{server.log_tail(5)}")


def _already_running(pgdata: object, pid: int | None, address: tuple[str, int] | None) -> str:
    where = f"on {address[0]}:{address[1]}" if address else "on its Unix socket only"
    return (
        f"the embedded server under {pgdata} is already open to SQL clients {where} (pid {pid}), without TLS, "
        "by a `contexts db serve` of an earlier version: stop that one first"
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

    if not file.parent.is_dir():  # before the dump runs, not at its end
        raise CliError(f"{file.parent}: no such folder; create it, or name a file in a folder that exists")
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
    from app.db.backup import BackupError, check_backup, restore
    from app.db.database import resolve_database_url
    from app.db.migrate import migrate

    try:
        check_backup(file)
    except BackupError as exc:
        raise CliError(str(exc)) from exc
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
