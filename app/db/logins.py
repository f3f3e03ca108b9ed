"""Analysts' logins: a database role in contexts_analyst mapped to a principal, whose
grants row-level security then applies to everything the login reads. The SQL is in
sql/functions/13_logins.sql; here: passwords (generated, sent only as SCRAM-SHA-256
verifiers) and the connection URL an analyst is given."""

from __future__ import annotations

import secrets
from urllib.parse import quote, urlencode

import psycopg
from psycopg.conninfo import conninfo_to_dict

PASSWORD_BYTES = 24
"""Random bytes of a generated password (32 URL-safe characters, 192 bits)."""
WILDCARDS = {"*": "127.0.0.1", "0.0.0.0": "127.0.0.1", "": "127.0.0.1", "::": "::1"}
"""A server listening on every interface is reached locally at these addresses."""


def new_password() -> str:
    """URL-safe, so it goes into a connection URL as it is."""
    return secrets.token_urlsafe(PASSWORD_BYTES)


def scram_verifier(conn: psycopg.Connection, login: str, password: str) -> str:
    """What the server stores for `password` (libpq's PQencryptPasswordConn, as psql's
    \\password): the clear text never reaches the server or its logs."""
    return conn.pgconn.encrypt_password(password.encode(), login.encode(), b"scram-sha-256").decode()


def login_exists(conn: psycopg.Connection, login: str) -> bool:
    return conn.execute("select exists (select 1 from pg_roles where rolname = %s)", (login,)).fetchone() == (True,)


def create_login(conn: psycopg.Connection, login: str) -> str:
    """A new analyst login; returns its password (shown once, never stored)."""
    password = new_password()
    conn.execute("select service.create_login(%s, %s)", (login, scram_verifier(conn, login, password)))
    return password


def create_analyst(
    conn: psycopg.Connection, org_id: str, principal_id: str, login: str, grants: list[str], display_name: str = ""
) -> str | None:
    """The login (or an existing one adopted), its principal and read grants, in the
    open transaction. Returns the new login's password; None when the login existed
    (its password is whoever set it's)."""
    password = new_password()
    created = conn.execute(
        "select service.create_analyst(%s, %s, %s, %s, %s, %s)",
        (org_id, principal_id, login, scram_verifier(conn, login, password), grants, display_name),
    ).fetchone()
    return password if created == (True,) else None


def rotate_password(conn: psycopg.Connection, org_id: str, principal_id: str) -> tuple[str, str]:
    """A new password on the principal's login: (login, password)."""
    password = new_password()
    # A SCRAM verifier does not depend on the role name (only MD5's did).
    verifier = scram_verifier(conn, principal_id, password)
    row = conn.execute("select service.set_login_password(%s, %s, %s)", (org_id, principal_id, verifier)).fetchone()
    assert row is not None
    return row[0], password


def connection_url(dsn: str, login: str, password: str | None = None, address: tuple[str, int] | None = None) -> str:
    """postgresql://LOGIN[:PASSWORD]@HOST:PORT/DB for the database at `dsn` (its other
    parameters kept, e.g. sslmode); `address` replaces its host and port (the embedded
    server's TCP door)."""
    params = {k: str(v) for k, v in conninfo_to_dict(dsn).items() if v is not None and k not in ("user", "password")}
    host, port = params.pop("host", None), params.pop("port", None)
    if address is not None:
        host, port = WILDCARDS.get(address[0], address[0].split(",")[0].strip()), str(address[1])
    dbname = params.pop("dbname", None) or login
    if host and host.startswith("/"):  # a Unix socket: only as a parameter
        params["host"] = host
        host = ""
    netloc = f"[{host}]" if host and ":" in host else host or ""
    if port:
        netloc += f":{port}"
    user = quote(login, safe="") + (f":{quote(password, safe='')}" if password else "")
    query = f"?{urlencode(params)}" if params else ""
    return f"postgresql://{user}@{netloc}/{quote(dbname, safe='')}{query}"
