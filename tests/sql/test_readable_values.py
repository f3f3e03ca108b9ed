"""Only values every reader can decode are stored, whatever the door: every time column
of the data schema is checked (migration 0026), service.begin_document checks paths and
metadata, and a database that already holds unreadable times is repaired by clamping."""

from __future__ import annotations

import json
import unicodedata
from datetime import UTC, datetime

import psycopg
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from pytest_postgresql.janitor import DatabaseJanitor

from app.access import act_as
from app.db.migrate import migrate
from app.ingest.normalize import RejectedDocument, normalize_path
from app.operations.queries import list_documents_on, read_document_on
from app.readable import READABLE_FROM, READABLE_UNTIL
from app.wire.bodies import DocumentQuery, DocumentRead, ScopeIn

UNREADABLE = ["infinity", "-infinity", "10000-01-01 13:59:59+00", "0001-01-01 00:00:00+14", "0001-01-01 13:59:59+00"]
"""Times PostgreSQL stores and Python (psycopg) cannot decode in some zone, or at all."""


def time_columns(conn) -> list[tuple[str, str]]:
    return conn.execute("""
        select c.relname, a.attname from pg_attribute a
        join pg_class c on c.oid = a.attrelid join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = 'data' and c.relkind in ('r', 'p') and not c.relispartition
          and a.attnum > 0 and not a.attisdropped
          and a.atttypid in ('timestamptz'::regtype, 'timestamp'::regtype, 'date'::regtype)
        order by 1, 2
    """).fetchall()


def checks_column(definition: str, column: str) -> bool:
    """Whether a check constraint's definition passes `column` to data._readable_time (a
    date column is cast to timestamptz in it)."""
    return f"_readable_time({column}," in definition or f"_readable_time(({column})::timestamp" in definition


def test_every_time_column_of_the_data_schema_is_checked(conn):
    """A table or column added later needs its own check (data._readable_time)."""
    checks = {
        (table, definition)
        for table, definition in conn.execute("""
            select c.relname, pg_get_constraintdef(k.oid) from pg_constraint k
            join pg_class c on c.oid = k.conrelid join pg_namespace n on n.oid = c.relnamespace
            where n.nspname = 'data' and k.contype = 'c'
        """).fetchall()
    }
    columns = time_columns(conn)
    assert ("document_versions", "source_ts") in columns and ("pins", "expires_at") in columns
    unchecked = [
        (table, column)
        for table, column in columns
        if not any(t == table and checks_column(d, column) for t, d in checks)
    ]
    assert unchecked == []


def test_the_readable_range_is_the_same_in_sql_and_python(conn):
    for value, readable in (
        (READABLE_FROM, True),
        (READABLE_UNTIL, False),
        (datetime(9999, 12, 30, 23, 59, 59, 999999, tzinfo=UTC), True),
        (datetime(1, 1, 1, 23, 59, 59, 999999, tzinfo=UTC), False),
    ):
        try:
            conn.execute("select data._readable_time(%s, 'x')", (value,))
            accepted = True
        except psycopg.errors.InvalidParameterValue:
            conn.rollback()
            accepted = False
        assert accepted is readable, value


@pytest.fixture
def acme(conn, ingest):
    results = ingest("acme", {"runbooks/disk.md": "# Disk\n\nWhen the disk is full, rotate the journal."})
    act_as(conn, "acme", "admin")
    return results[0]


def begin(conn, path="notes/a.md", source_ts=None, metadata="{}"):
    return conn.execute(
        "select * from service.begin_document('acme', null, null, null, %s, 'doc', 'x', md5(%s), null, null, %s, %s)",
        (path, path, source_ts, metadata),
    ).fetchone()


@pytest.mark.parametrize("value", UNREADABLE)
def test_sql_doors_refuse_times_no_reader_decodes(conn, acme, value):
    """Called directly (as analysts' and the service's SQL does), the functions that
    store times refuse these with 22023 (a 400 over HTTP), naming the range."""
    for statement, args in (
        ("select * from service.begin_document('acme', null, null, null, 'n.md', 'doc', 'x', 'h', null, null, %s)", ()),
        (
            "select * from service.pin_add('acme', null, null, null, %s, 'why', %s)",
            (conn.execute("select min(fragment_id) from data.fragments").fetchone()[0],),
        ),
    ):
        conn.execute("savepoint s")
        # (a pin refuses a past expiry for its own reason first)
        with pytest.raises(
            psycopg.errors.InvalidParameterValue, match="from 0001-01-02 to 9999-12-30|not in the future"
        ):
            conn.execute(statement, (*args, value) if args else (value,))
        conn.execute("rollback to savepoint s")


def test_a_session_that_would_expire_past_year_9999_is_not_opened(conn, db_url, acme):
    """An org's session lifetime is the operator's (`contexts org create --session-ttl-hours`):
    one that puts a session's expiry past what readers decode refuses the session."""
    conn.commit()
    with psycopg.connect(db_url, autocommit=True) as admin:
        admin.execute("update data.orgs set session_ttl = interval '100000000 hours' where org_id = 'acme'")
    act_as(conn, "acme", "admin")
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="sessions.expires_at"):
        conn.execute("select service.open_session('s-far')")


@pytest.mark.parametrize(
    ("metadata", "problem"),
    [
        ([], "must be a JSON object"),
        ({"a": "x" * 33000}, "at most 32768"),
        ({"deep": json.loads("[" * 32 + "]" * 32)}, "nested more than 32"),
        ({"n": "1e400"}, "beyond what a double holds"),
        ({"n": "-2e308"}, "beyond what a double holds"),
        ({"n": "1" + "0" * 5000}, "beyond what a double holds"),
        ({"valid_until": "9999-12-31T23:59:59-14:00"}, "valid_until"),
        ({"valid_from": "infinity"}, "valid_from"),
    ],
)
def test_begin_document_refuses_metadata_no_reader_decodes(conn, acme, metadata, problem):
    if isinstance(metadata, dict) and metadata.get("n"):
        text = '{"n": ' + metadata["n"] + "}"  # a number JSON holds and a double does not
    else:
        text = json.dumps(metadata)
    with pytest.raises(psycopg.errors.InvalidParameterValue, match=problem):
        begin(conn, metadata=text)


def test_begin_document_accepts_metadata_at_the_bounds(conn, acme):
    deepest = {"deep": json.loads("[" * 31 + "]" * 31)}  # 32 levels with the object itself
    for metadata in (deepest, {"n": 1.7976931348623157e308}, {"valid_until": "9999-12-30T23:59:59+00:00"}):
        assert begin(conn, path=f"notes/{len(json.dumps(metadata))}.md", metadata=json.dumps(metadata))[2]
    assert begin(conn, path="notes/n.md", metadata='{"big": ' + "9" * 300 + "}")[2]


# A path as normalize_path returns it is stored; anything it would change or refuse is
# not (NUL aside: PostgreSQL text cannot hold it, and psycopg refuses it first).
PATH_CHARACTERS = st.one_of(
    st.sampled_from(list("/.\\ ab-_é") + ["..", "\u00a0", "\u3000", "\u202e", "\u200b", "\u2028", "\x7f", "\x85"]),
    st.characters(exclude_categories=("Cs",), exclude_characters="\x00"),
)


@given(path=st.lists(PATH_CHARACTERS, min_size=1, max_size=12).map("".join))
@example(path="a/\u00a0/b")
@example(path="e\u0301.md")  # not NFC
@example(path="a/ .. /b")
@example(path="x" * 1025)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_sql_path_rule_is_the_ingestion_rule(conn, path):
    try:
        expected = normalize_path(path) == path
    except RejectedDocument:
        expected = False
    problem = conn.execute("select data._path_problem(%s)", (path,)).fetchone()[0]
    assert (problem is None) is expected, (path, problem)


def test_every_hidden_character_python_refuses_sql_refuses(conn):
    refused = [chr(cp) for cp in range(1, 0x110000) if unicodedata.category(chr(cp)) in ("Cc", "Cf", "Zl", "Zp")]
    accepted = conn.execute(
        "select array_agg(c) from unnest(%s::text[]) c where data._path_problem('a' || c || 'b') is null",
        (refused,),
    ).fetchone()[0]
    assert accepted is None


def test_begin_document_refuses_paths_ingestion_would_refuse(conn, acme):
    for path in ("a\nb.md", "/abs.md", "a//b.md", "../x.md", "a\u202eb.md", "x" * 1025, "a\\b.md"):
        conn.execute("savepoint s")
        with pytest.raises(psycopg.errors.InvalidParameterValue, match="invalid document"):
            begin(conn, path=path)
        conn.execute("rollback to savepoint s")


def test_clamping_repairs_a_database_holding_unreadable_times(conn, db_url, acme):
    """What a database written before this release may hold (no check then): every
    listing of the org failed. The repair of migration 0026 clamps, then checks again."""
    conn.commit()
    with psycopg.connect(db_url, autocommit=True) as admin:
        for table, column in time_columns(admin):
            admin.execute(f"alter table data.{table} drop constraint {table}_{column}_readable")
        admin.execute(
            "update data.document_versions set source_ts = '10000-01-01 13:59:59+00',"
            ' metadata = \'{"valid_until": "9999-12-31T23:59:59-14:00", "valid_from": "-infinity"}\''
        )
        admin.execute(
            "update data.fragments set updated_at = 'infinity', created_at = '0001-01-01 00:00:00+14',"
            " valid_until = '10000-01-01 13:59:59+00'"
        )
        admin.execute("update data.documents set updated_at = '-infinity'")
    scope = ScopeIn("acme")
    act_as(conn, "acme", "admin")
    with pytest.raises(psycopg.DataError):  # what every reader of the org met
        list_documents_on(conn, DocumentQuery(scope))
    conn.rollback()

    with psycopg.connect(db_url, autocommit=True) as admin:
        assert (
            admin.execute("select data._clamp_unreadable_times()").fetchone()[0] == 7
        )  # 2 metadata windows, 5 columns
        metadata = admin.execute("select metadata from data.document_versions").fetchone()[0]
        assert metadata == {"valid_until": "9999-12-30T00:00:00+00:00", "valid_from": "0001-01-02T00:00:00+00:00"}

    act_as(conn, "acme", "admin")
    page = list_documents_on(conn, DocumentQuery(scope))
    assert page.documents[0].source_ts == datetime(9999, 12, 30, tzinfo=UTC)
    assert page.documents[0].updated_at == READABLE_FROM
    read_document_on(conn, DocumentRead(acme.doc_id))
    row = conn.execute("select created_at, updated_at, valid_until from data.fragments").fetchone()
    assert row == (READABLE_FROM, datetime(9999, 12, 30, tzinfo=UTC), datetime(9999, 12, 30, tzinfo=UTC))
    conn.rollback()
    test_every_time_column_of_the_data_schema_is_checked(conn)


def test_upgrade_to_0026_clamps_what_an_earlier_release_stored(pg_server):
    janitor = DatabaseJanitor(
        user="postgres", host=pg_server.socket_dir, port=5432, dbname="contexts_upgrade_0025", password=None
    )
    janitor.drop()
    with janitor:
        url = pg_server.url("contexts_upgrade_0025")
        migrate(url, revision="0025", reapply=False)
        with psycopg.connect(url) as conn:
            conn.execute("insert into data.orgs (org_id) values ('acme')")
            doc = conn.execute(
                "insert into data.documents (org_id, path, kind, current_version) values ('acme', 'a.md', 'doc', 1)"
                " returning doc_id"
            ).fetchone()[0]
            conn.execute(
                "insert into data.document_versions (doc_id, version, content_hash, content, source_ts, metadata)"
                " values (%s, 1, 'h', 'x', '10000-01-01 13:59:59+00', '{\"valid_until\": \"infinity\"}')",
                (doc,),
            )
        migrate(url)
        with psycopg.connect(url) as conn:
            row = conn.execute("select source_ts, metadata from data.document_versions").fetchone()
            assert row == (datetime(9999, 12, 30, tzinfo=UTC), {"valid_until": "9999-12-30T00:00:00+00:00"})
            with pytest.raises(psycopg.errors.InvalidParameterValue, match="document_versions.source_ts"):
                conn.execute("update data.document_versions set source_ts = 'infinity'")
