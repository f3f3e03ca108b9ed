"""The login the API serves with. It must own no table and be neither a superuser nor
BYPASSRLS, or row-level security would not apply to it: the service refuses to start
otherwise. Without CONTEXTS_SERVICE_DATABASE_URL, the migrator creates (or updates) a
login `contexts_api` in the contexts_service role and the service connects as it."""

from __future__ import annotations

import psycopg
from psycopg import sql
from psycopg.conninfo import make_conninfo

from app.db.logins import scram_verifier
from app.db.sql import one

SERVICE_LOGIN = "contexts_api"


class UnsafeServiceLogin(RuntimeError):
    """The configured service login would bypass row-level security."""


def ensure_service_login(migrator_dsn: str, password: str | None) -> str:
    """Create or update the `contexts_api` login (as the migrator); returns its URL."""
    with psycopg.connect(migrator_dsn, autocommit=True) as conn:
        exists = conn.execute("select 1 from pg_roles where rolname = %s", (SERVICE_LOGIN,)).fetchone()
        verb = sql.SQL("alter role {} login" if exists else "create role {} login in role contexts_service")
        statement = verb.format(sql.Identifier(SERVICE_LOGIN))
        if password:  # as its SCRAM verifier: the clear text never reaches the server's logs
            verifier = scram_verifier(conn, SERVICE_LOGIN, password)
            statement = sql.SQL("{} password {}").format(statement, sql.Literal(verifier))
        conn.execute(statement)
        conn.execute(sql.SQL("grant contexts_service to {}").format(sql.Identifier(SERVICE_LOGIN)))
    return make_conninfo(migrator_dsn, user=SERVICE_LOGIN, **({"password": password} if password else {}))


def check_service_login(url: str) -> None:
    with psycopg.connect(url) as conn:
        superuser, bypass, member, owns = one(
            conn,
            """
            select r.rolsuper, r.rolbypassrls, pg_has_role(session_user, 'contexts_service', 'member'),
                   exists (select 1 from pg_class c where c.relowner = r.oid)
            from pg_roles r where r.rolname = session_user""",
        )
        login = conn.info.user
    if superuser or bypass or owns:
        raise UnsafeServiceLogin(
            f"refusing to serve as {login!r}: it is a superuser, has BYPASSRLS or owns tables, so row-level "
            "security would not apply; set CONTEXTS_SERVICE_DATABASE_URL to a login in contexts_service"
        )
    if not member:
        raise UnsafeServiceLogin(f"login {login!r} is not a member of contexts_service")


def service_database_url(configured: str | None, migrator_dsn: str, password: str | None) -> str:
    url = configured or ensure_service_login(migrator_dsn, password)
    check_service_login(url)
    return url
