"""app.db.rows.dataclass_row: the rows psycopg's class_row would give, by position or
by keyword."""

from __future__ import annotations

from dataclasses import dataclass

import psycopg
import pytest
from psycopg.rows import class_row

from app.db.rows import dataclass_row


@dataclass(slots=True)
class Row:
    a: int
    b: str
    c: list[str] | None = None
    d: float = 0.5


QUERIES = [
    "select 1 as a, 'x' as b, array['p', 'q'] as c, 2.5::float8 as d",  # every field, in order
    "select 1 as a, 'x' as b",  # leading fields: by position, defaults for the rest
    "select 'x' as b, 1 as a, 0.25::float8 as d",  # another order: by keyword
    "select 'x' as b, 1 as a",  # the leading fields in another order: put in place by name
    "select 0.25::float8 as d, array['p'] as c, 'x' as b, 1 as a",
    "select g as a, g::text as b from generate_series(1, 3) g",
]


@pytest.mark.parametrize("query", QUERIES)
def test_rows_are_those_class_row_gives(conn, query):
    fast = conn.cursor(row_factory=dataclass_row(Row)).execute(query).fetchall()
    assert fast == conn.cursor(row_factory=class_row(Row)).execute(query).fetchall()
    assert fast and all(type(r) is Row for r in fast)


def test_a_column_that_is_no_field_is_refused(conn):
    with pytest.raises(TypeError, match="unexpected keyword argument 'e'"):
        conn.cursor(row_factory=dataclass_row(Row)).execute("select 1 as a, 'x' as b, 3 as e").fetchall()


def test_a_statement_without_rows_has_none_to_fetch(conn):
    cur = conn.cursor(row_factory=dataclass_row(Row)).execute("set application_name = 'rows'")
    with pytest.raises(psycopg.ProgrammingError):
        cur.fetchone()


@pytest.mark.parametrize("function", ["api.retrieve_candidates", "service.context_candidates"])
def test_candidate_functions_return_candidates_fields_in_order(conn, function):
    """So their rows are built by position (the cheap path): a column added to one of
    them goes in Candidate at the same place."""
    from dataclasses import fields

    from app.retrieve.candidates import Candidate

    names = conn.execute(
        "select array_agg(n order by i) from pg_proc p,"
        " unnest(p.proargnames, p.proargmodes) with ordinality as a(n, m, i)"
        " where p.oid = %s::regproc and a.m = 't'",
        (function,),
    ).fetchone()[0]
    assert names == [f.name for f in fields(Candidate)][: len(names)]
