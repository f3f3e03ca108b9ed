"""Small helpers for statements: one row, one value, a JSON parameter."""

from __future__ import annotations

from typing import Any

import msgspec
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


def json_text(value: object) -> str:
    """A JSON parameter as text (values JSON lacks, such as datetimes, as str). msgspec
    encodes a query vector or a trace of a few hundred candidates several times faster
    than json.dumps: on a busy service that encoding was a visible share of a read."""
    return msgspec.json.encode(value, enc_hook=str).decode()
