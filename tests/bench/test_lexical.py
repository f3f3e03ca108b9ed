"""The lexical bench at database scale: tenants hold one copy each, in partitions of their
own, and a second run writes only what the first did not."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import pytest

from app.bench import lexical as bench_lexical
from app.bench import reference as bench_reference


def _site(root: Path) -> Path:
    """A site-packages holding one package description long enough for a few chunks."""
    meta = root / "demo-1.0.dist-info"
    meta.mkdir(parents=True)
    lines = [f"Line {i}: the frobnicator resolves widget number {i} with care." for i in range(120)]
    (meta / "METADATA").write_text("\n".join(lines))
    return root


def test_tenants_hold_one_copy_each_and_a_rerun_writes_nothing(db_url, tmp_path):
    per_copy, _ = bench_lexical.build(db_url, _site(tmp_path), limit=5, copies=2)
    assert per_copy == 2 * 5

    first = bench_lexical.add_tenants(db_url, 3, workers=2)
    assert first["tenants_written_now"] == 3
    with psycopg.connect(db_url) as conn:
        size = bench_lexical.database_size(conn)
        json.dumps(size)  # the report is JSON: no Decimal from a sum
        assert size["database_fragments"] == 10 + 3 * 5
        assert size["tenant_fragments"] == size["tenant_fragments_in_bm25"] == 10
        assert size["orgs"] == 4
        # Each tenant's postings are its own and sit in its own partition.
        rows = conn.execute(
            "select p.tableoid::regclass::text, p.org_id, sum(p.postings_count) from data.bm25_blocks p"
            " where p.org_id like 'bench-tenant-%' group by 1, 2 order by 2"
        ).fetchall()
        assert [org for _, org, _ in rows] == [bench_lexical.tenant_org(n) for n in (1, 2, 3)]
        assert len({partition for partition, _, _ in rows}) == 3
        assert len({count for _, _, count in rows}) == 1
        # A tenant's BM25 statistics are its own copy's, not the bench org's.
        corpus = conn.execute(
            "select sum(fragment_count) from data.bm25_corpus where org_id = %s", (bench_lexical.tenant_org(2),)
        ).fetchone()
        assert corpus == (5,)

    again = bench_lexical.add_tenants(db_url, 4)
    assert again["tenants_written_now"] == 1
    with psycopg.connect(db_url) as conn:
        assert bench_lexical.database_size(conn)["database_fragments"] == 10 + 4 * 5
        # A tenant holding something else is refused, never copied onto.
        conn.execute("delete from data.fragments where fragment_id = (select max(fragment_id) from data.fragments)")
    with pytest.raises(SystemExit, match="bench-tenant-4 holds 4 fragments"):
        bench_lexical.add_tenants(db_url, 4)


def test_the_reference_is_timed_beside_ours_and_its_table_dropped(db_url, tmp_path):
    bench_lexical.build(db_url, _site(tmp_path), limit=5, copies=1)
    bench_lexical.add_tenants(db_url, 1)
    with psycopg.connect(db_url) as conn:
        bench_reference.build_reference_table(conn)
        try:
            report = bench_lexical.against_reference(conn, ["frobnicator widget", "resolves care"])
        finally:
            bench_reference.drop_reference_table(conn)
        assert report["queries"] == 2
        assert report["ours"]["p50_ms"] > 0 and report["reference"]["p50_ms"] > 0
        gone = conn.execute("select count(*) from pg_namespace where nspname = 'bench_reference'").fetchone()
        assert gone == (0,)
