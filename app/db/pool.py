"""Connection pools for the service: one request, one connection, one transaction.
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


def open_pool(dsn: str, max_size: int, name: str = "contexts", timeout: float = 0.75) -> ConnectionPool:
    """Each connection is checked when it is handed out: after a database restart a
    stale one is replaced instead of failing the request it was given to. A worker
    thread never waits for a connection in normal operation (one thread per
    connection), so `timeout` only runs out when none can be made: 503 within a second."""
    pool = ConnectionPool(
        dsn,
        min_size=1,
        max_size=max_size,
        kwargs={"autocommit": False, "application_name": name},
        configure=_as_service,
        check=ConnectionPool.check_connection,
        name=name,
        timeout=timeout,
        reconnect_timeout=24 * 3600.0,
        open=False,
    )
    pool.open(wait=True, timeout=30)
    return pool
