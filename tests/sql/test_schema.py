"""Migrations: released files never change, migrate is repeatable, the catalog is documented."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import psycopg
import pytest

from app.db.migrate import SQL_DIR, migrate, migration_checksums
from tests.sql.snapshot import head_revision


def test_released_migrations_match_their_recorded_hashes():
    recorded = dict(reversed(line.split()) for line in (SQL_DIR / "migrations" / "SHA256SUMS").read_text().splitlines())
    assert migration_checksums() == recorded, "a released migration was edited: add a new one instead"


def test_every_migration_file_has_an_alembic_revision():
    revisions = " ".join(p.read_text() for p in (Path(SQL_DIR).parent / "alembic" / "versions").glob("*.py"))
    for name in migration_checksums():
        assert f"migrations/{name}" in revisions


def test_migrate_is_idempotent(db_url):
    migrate(db_url)
    migrate(db_url)
    with psycopg.connect(db_url) as conn:
        assert conn.execute("select version_num from alembic_version").fetchall() == [(head_revision(),)]


def test_an_unchanged_migrate_does_not_wait_for_readers(db_url):
    """With the SQL files as last applied, migrate re-creates no policy, so a reader
    holding tenant tables (an eval run, the service) neither blocks it nor deadlocks
    with it; a forced migrate re-applies and has to wait for the reader."""
    done = threading.Event()
    with psycopg.connect(db_url) as reader:
        reader.execute("select count(*) from data.fragments")  # holds AccessShare until rollback
        worker = threading.Thread(target=lambda: (migrate(db_url), done.set()))
        worker.start()
        worker.join(30)
        assert done.is_set(), "an unchanged migrate waited for a reader"
        forced = threading.Thread(target=migrate, args=(db_url,), kwargs={"force": True})
        forced.start()
        forced.join(2)
        assert forced.is_alive(), "a forced migrate should wait for the reader's lock"
        reader.rollback()
    forced.join(60)
    assert not forced.is_alive()


def test_tables_and_api_functions_are_documented(conn):
    undocumented_tables = conn.execute("""
        select c.relname from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = 'data' and c.relkind in ('r', 'p') and obj_description(c.oid, 'pg_class') is null
    """).fetchall()
    assert undocumented_tables == []
    undocumented_functions = conn.execute("""
        select p.proname from pg_proc p join pg_namespace n on n.oid = p.pronamespace
        where n.nspname in ('api', 'service') and obj_description(p.oid, 'pg_proc') is null
    """).fetchall()
    assert undocumented_functions == []
    undocumented_views = conn.execute("""
        select c.relname from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = 'api' and c.relkind in ('v', 'm') and obj_description(c.oid, 'pg_class') is null
    """).fetchall()
    assert undocumented_views == []


def test_every_function_pins_its_search_path(conn):
    """Except immutable SQL helpers written to be inlined (a SET clause prevents it), and
    aggregates over a built-in transition function (an aggregate takes no SET clause)."""
    unpinned = conn.execute("""
        select n.nspname || '.' || p.proname from pg_proc p join pg_namespace n on n.oid = p.pronamespace
        join pg_language l on l.oid = p.prolang
        where n.nspname in ('api', 'service', 'data')
          and not exists (select 1 from unnest(p.proconfig) c where c like 'search_path=%')
          and not (l.lanname = 'sql' and p.provolatile = 'i')
          and not exists (select 1 from pg_aggregate a join pg_proc t on t.oid = a.aggtransfn
                          where a.aggfnoid = p.oid and t.pronamespace = 'pg_catalog'::regnamespace)
    """).fetchall()
    assert unpinned == []


def test_scope_filter_is_inlined_into_lexical_search(conn, ingest):
    from tests.ingest.test_write import nested_plans

    ingest("acme", {"a.md": "# A\n\nrotate the journal"}, repo="r")
    plans = nested_plans(
        conn, "select * from api.search_lexical('acme', 'journal', 10, 'r')", principal=("acme", "admin")
    )
    assert re.search(r"Index Scan using bm25_blocks_\d+_pkey", plans)
    assert "Filter: data._in_scope" not in plans, "the filter must not be a per-row function call"
    assert "repo_id IS NULL" in plans, "the scope condition appears inlined in the plan"


def test_hnsw_index_per_registered_model(conn):
    conn.execute("select service.register_embedding_model('prose', 'model-a', 8)")
    conn.execute("select service.register_embedding_model('code', 'model-b', 4)")
    indexes = [
        r[0]
        for r in conn.execute(
            "select indexdef from pg_indexes where tablename = 'embeddings' and indexdef like '%hnsw%' order by 1"
        )
    ]
    assert len(indexes) == 2
    assert any("vector(8)" in i for i in indexes) and any("vector(4)" in i for i in indexes)


def test_a_different_model_for_an_indexed_namespace_is_refused(conn):
    first = conn.execute("select service.register_embedding_model('prose', 'model-a', 8)").fetchone()[0]
    assert conn.execute("select service.register_embedding_model('prose', 'model-a', 8)").fetchone()[0] == first
    with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState, match="indexed with model-a"):
        conn.execute("select service.register_embedding_model('prose', 'model-b', 8)")
