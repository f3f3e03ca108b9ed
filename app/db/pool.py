"""Connection pools for the service: one request, one connection, one transaction.
The login is checked first (app.db.service_login: never a superuser or an owner);
every connection then acts as contexts_service, so row-level security applies to
everything the service reads."""

from __future__ import annotations

import select

import psycopg
from psycopg_pool import ConnectionPool

from app.access import SERVICE_ROLE


def _as_service(conn: psycopg.Connection) -> None:
    conn.execute(f"set role {SERVICE_ROLE}")
    conn.commit()


def check_idle_connection(conn: psycopg.Connection) -> None:
    """The pool's check, with a round trip only when one can fail. An idle connection
    has nothing to read: a server that shut down or restarted has sent it a
    termination notice or closed it, and either makes its socket readable. So a quiet
    socket passes without a query, and a readable one gets the pool's own check (which
    raises, and the pool replaces the connection). Hand-written: psycopg_pool's check
    costs a round trip on every checkout, two per retrieval."""
    if conn.closed or conn.broken:
        raise psycopg.OperationalError("the connection is closed")
    poller = select.poll()
    poller.register(conn.fileno(), select.POLLIN | select.POLLERR | select.POLLHUP)
    if poller.poll(0):
        ConnectionPool.check_connection(conn)


def open_pool(
    dsn: str, max_size: int, name: str = "contexts", timeout: float = 0.75, statement_timeout_s: float = 0.0
) -> ConnectionPool:
    """Each connection is checked when it is handed out (check_idle_connection): after a
    database restart a stale one is replaced instead of failing the request it was given to. A worker
    thread never waits for a connection in normal operation (one thread per
    connection), so `timeout` only runs out when none can be made: 503 within a second.
    `statement_timeout_s` (0: none) cancels a statement that runs longer (SQLSTATE 57014,
    a 503): one pathological request must not hold a connection and a core for minutes."""
    kwargs: dict[str, object] = {"autocommit": False, "application_name": name}
    if statement_timeout_s > 0:
        kwargs["options"] = f"-c statement_timeout={round(statement_timeout_s * 1000)}"
    pool = ConnectionPool(
        dsn,
        min_size=1,
        max_size=max_size,
        kwargs=kwargs,
        configure=_as_service,
        check=check_idle_connection,
        name=name,
        timeout=timeout,
        reconnect_timeout=24 * 3600.0,
        open=False,
    )
    pool.open(wait=True, timeout=30)
    return pool
