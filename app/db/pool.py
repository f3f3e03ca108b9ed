"""Connection pool for the service: one request, one connection, one transaction.
The login is checked first (app.db.service_login: never a superuser or an owner);
every connection then acts as contexts_service, so row-level security applies to
everything the service reads."""

from __future__ import annotations

import psycopg
from psycopg_pool import ConnectionPool

from app.access import SERVICE_ROLE


def _as_service(conn: psycopg.Connection) -> None:
    conn.execute(f"set role {SERVICE_ROLE}")
    conn.commit()


def open_pool(dsn: str, max_size: int) -> ConnectionPool:
    pool = ConnectionPool(
        dsn,
        min_size=1,
        max_size=max_size,
        kwargs={"autocommit": False, "application_name": "contexts"},
        configure=_as_service,
        open=False,
    )
    pool.open(wait=True, timeout=30)
    return pool
