"""Connection pool for the service: one request, one connection, one transaction."""

from __future__ import annotations

from psycopg_pool import ConnectionPool


def open_pool(dsn: str, max_size: int) -> ConnectionPool:
    pool = ConnectionPool(
        dsn,
        min_size=1,
        max_size=max_size,
        kwargs={"autocommit": False, "application_name": "contexts"},
        open=False,
    )
    pool.open(wait=True, timeout=30)
    return pool
