"""Small helpers for statements that always return exactly one row."""

from __future__ import annotations

from typing import Any

import psycopg


def one(conn: psycopg.Connection, query: str, params: Any = None) -> tuple[Any, ...]:
    """The only row of `query` (a function call or an aggregate); a statement that
    returns no row here is a bug, not a case to handle."""
    row = conn.execute(query, params).fetchone()
    if row is None:
        raise LookupError(f"no row from: {query!r}")
    return row


def scalar(conn: psycopg.Connection, query: str, params: Any = None) -> Any:
    return one(conn, query, params)[0]
