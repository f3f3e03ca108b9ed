"""One check before a command uses a PostgreSQL of the user's own (CONTEXTS_DATABASE_URL,
--db-url): the URL parses, the server answers, its version is supported, the extensions
Contexts needs are available, and the login may do what the migrate does. Each failure is
one line that says what is wrong and what to do (DatabaseUnusable), never a traceback."""

from __future__ import annotations

import psycopg
from psycopg.conninfo import conninfo_to_dict

MIN_SERVER_VERSION = 160000
"""PostgreSQL 16 or later (server_version_num)."""

CONNECT_TIMEOUT_S = 10

EXTENSIONS: dict[str, str] = {
    "vector": (
        "install pgvector on that server (e.g. apt-get install postgresql-NN-pgvector, or "
        "https://github.com/pgvector/pgvector#installation), then run the command again"
    ),
    "contexts_bm25": (
        "build and install Contexts' lexical engine on that server (make -C ext/contexts_bm25 "
        "PG_CONFIG=/usr/lib/postgresql/NN/bin/pg_config install; docs/dba.md), then run the command again"
    ),
}
"""The extensions the migrate creates (schema `extensions`), with what to do when one is missing."""

GROUP_ROLES = ("contexts_service", "contexts_analyst", "contexts_auditor")
"""Created by the first migrate (sql/migrations/0002_scope_security.sql)."""

URL_FORM = "postgresql://USER:PASSWORD@HOST:PORT/DATABASE"


class DatabaseUnusable(RuntimeError):
    """The configured PostgreSQL cannot serve Contexts; the message is one line saying
    what is wrong and what to do."""


def where(url: str) -> str:
    """USER@HOST:PORT/DATABASE of a URL, without its password (for messages)."""
    try:
        params = conninfo_to_dict(url)
    except psycopg.Error:
        return "the configured server"
    host = str(params.get("host") or "localhost")
    port = str(params.get("port") or "5432")
    user = str(params.get("user") or "")
    database = str(params.get("dbname") or user)
    return f"{user + '@' if user else ''}{host}:{port}/{database or ''}"


def check_url(url: str) -> None:
    """A postgresql:// URL that libpq can read (the migrate needs the URL form)."""
    shown = url.rsplit("@", 1)[-1] if "@" in url else url  # never the password
    if not url.startswith(("postgresql://", "postgres://")):
        raise DatabaseUnusable(
            f"--db-url (CONTEXTS_DATABASE_URL) is not a PostgreSQL URL: {shown!r}; write it as {URL_FORM}"
        )
    try:
        conninfo_to_dict(url)
    except psycopg.Error as exc:
        raise DatabaseUnusable(
            f"--db-url (CONTEXTS_DATABASE_URL) cannot be read ({_first_line(exc)}): {shown!r}; write it as {URL_FORM}"
        ) from exc


def preflight(url: str, extensions: dict[str, str] | None = None) -> None:
    """Raise DatabaseUnusable unless the server at `url` can hold Contexts' schema (or
    already does) as this login. `extensions`: name -> what to do when it is missing
    (default EXTENSIONS)."""
    check_url(url)
    target = where(url)
    try:
        conn = psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S)
    except psycopg.Error as exc:
        raise DatabaseUnusable(connection_problem(exc, url)) from exc
    with conn:
        _check_server(conn, target, EXTENSIONS if extensions is None else extensions)


def connection_problem(exc: psycopg.Error, url: str) -> str:
    """One line for a refused connection: what the server (or libpq) said, and what to do."""
    params = conninfo_to_dict(url)
    target = where(url)
    host, port = params.get("host") or "localhost", params.get("port") or "5432"
    user, database = params.get("user") or "(your OS user)", params.get("dbname") or params.get("user")
    text = str(exc)
    lowered = text.lower()
    if "connection refused" in lowered or "no such file or directory" in lowered:
        return (
            f"cannot connect to PostgreSQL at {host}:{port}: nothing accepts connections there; "
            "start the server, or fix the host and port in --db-url (CONTEXTS_DATABASE_URL)"
        )
    if "could not translate host name" in lowered or "name or service not known" in lowered:
        return f"cannot connect to PostgreSQL: unknown host {host!r}; fix the host in --db-url (CONTEXTS_DATABASE_URL)"
    if "timeout expired" in lowered:
        return (
            f"cannot connect to PostgreSQL at {host}:{port}: no answer within {CONNECT_TIMEOUT_S} s; "
            "check the host, the port and any firewall between"
        )
    if "role" in lowered and "does not exist" in lowered:
        return (
            f"PostgreSQL at {host}:{port} has no role {user!r}: create it (create role {user} login password '...'; "
            "the migrator must be a superuser or hold CREATEROLE) or fix the user in --db-url"
        )
    if "password authentication failed" in lowered or "no password supplied" in lowered:
        return (
            f"PostgreSQL at {host}:{port} refused the password of {user!r}: put the right one in --db-url "
            f"({URL_FORM}), PGPASSWORD or ~/.pgpass"
        )
    if "database" in lowered and "does not exist" in lowered:
        return (
            f"PostgreSQL at {host}:{port} has no database {database!r}: create it (createdb {database}, "
            f"or create database {database}) or fix the database in --db-url"
        )
    if "pg_hba.conf" in lowered:
        return (
            f"PostgreSQL at {host}:{port} does not let {user!r} connect to {database!r} from here (pg_hba.conf): "
            "ask its DBA for a line allowing it"
        )
    return f"cannot connect to PostgreSQL at {target}: {_first_line(exc)}"


def _check_server(conn: psycopg.Connection, target: str, extensions: dict[str, str]) -> None:
    version_num, version, superuser, createrole, create_db = conn.execute(
        """
        select current_setting('server_version_num')::int, current_setting('server_version'),
               r.rolsuper, r.rolcreaterole, has_database_privilege(current_database(), 'CREATE')
        from pg_roles r where r.rolname = current_user"""
    ).fetchone() or (0, "?", False, False, False)
    if version_num < MIN_SERVER_VERSION:
        raise DatabaseUnusable(
            f"PostgreSQL {version} at {target} is too old: Contexts needs PostgreSQL 16 or later "
            "(with pgvector); upgrade the server or point --db-url at another"
        )
    found = {
        name: (installed, trusted)
        for name, installed, trusted in conn.execute(
            """
            select a.name, a.installed_version, coalesce(v.trusted, false)
            from pg_available_extensions a
            left join pg_available_extension_versions v on v.name = a.name and v.version = a.default_version
            where a.name = any(%s)""",
            (list(extensions),),
        ).fetchall()
    }
    for name, advice in extensions.items():
        if name not in found:
            raise DatabaseUnusable(
                f"the extension {name} is not available on the PostgreSQL server at {target}: {advice}"
            )
    login = conn.info.user
    if superuser:
        return
    for name, (installed, trusted) in found.items():
        if installed is None and not (trusted and create_db):
            raise DatabaseUnusable(
                f"login {login!r} may not create the extension {name} in {target}: run `create schema if not exists "
                f"extensions; create extension {name} with schema extensions` there as a superuser, or migrate as one"
            )
    owner = conn.execute(
        "select pg_get_userbyid(nspowner), pg_has_role(nspowner, 'USAGE') from pg_namespace where nspname = 'data'"
    ).fetchone()
    if owner is not None:
        if not owner[1]:
            raise DatabaseUnusable(
                f"login {login!r} does not own Contexts' schema in {target} (its owner is {owner[0]!r}): "
                "run the command as that login (the migrator)"
            )
        return
    missing = conn.execute(
        "select array_agg(r) from unnest(%s::text[]) r where not exists (select 1 from pg_roles where rolname = r)",
        (list(GROUP_ROLES),),
    ).fetchone()
    if not create_db:
        raise DatabaseUnusable(
            f"login {login!r} may not create schemas in {target}: grant create on database to it, "
            "or migrate as a superuser"
        )
    if missing and missing[0] and not createrole:
        raise DatabaseUnusable(
            f"login {login!r} may not create roles ({', '.join(missing[0])}), which the first migrate makes: "
            "migrate once as a superuser, or give it CREATEROLE"
        )


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
