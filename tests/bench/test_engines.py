"""Tantivy, bm25s and LanceDB timed beside ours (app.bench.engines) on a tiny corpus: the
report's shape, our BM25's top k against bm25s fed our lexemes, LanceDB's hybrid a real
search; and without the bench extra, its rows skipped in one line."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import psycopg
import pytest

from app.bench import engines as bench_engines
from app.bench import lexical as bench_lexical
from app.bench import reference as bench_reference

DOCS = Path(__file__).resolve().parents[2] / "docs"
ABSENT = bench_engines.missing(*bench_engines.EXTRA)
needs_extra = pytest.mark.skipif(
    ABSENT is not None, reason=f"{ABSENT} (CI does not install the bench extra: `make bench` does)"
)


def _site(root: Path) -> Path:
    """A site-packages whose package descriptions are this repository's docs, one package
    a page (the corpus skips descriptions over 400 KB, which the docs together pass): a few
    hundred chunks of real prose."""
    for n, page in enumerate(sorted(DOCS.rglob("*.md"))):
        meta = root / f"docs{n:03d}-1.0.dist-info"
        meta.mkdir(parents=True)
        (meta / "METADATA").write_text(page.read_text("utf-8"))
    return root


@needs_extra
def test_bm25_beside_tantivy_and_bm25s(db_url, tmp_path, monkeypatch):
    # Two copies of every chunk: each text ties with its copy, as at --copies 5.
    fragments, seconds = bench_lexical.build(db_url, _site(tmp_path / "site"), limit=150, copies=2)
    assert fragments == 300 and seconds is not None and seconds > 0
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    with psycopg.connect(db_url) as conn:
        ordinary = bench_lexical.queries(conn, 12, seed=3)
        long = bench_reference.long_queries(conn, bench_lexical.ORG, 6, 3)
        assert len(ordinary) == 12 and len(long) == 6
        report = bench_engines.lexical(
            conn, bench_lexical.ORG, {"ordinary": ordinary, "long": long}, ours_build_seconds=seconds
        )
    json.dumps(report)  # goes into the JSON report as it is
    assert report["fragments"] == 300
    assert report["storage"]["ours_bytes"] > 0 and report["storage"]["tantivy_bytes"] > 0
    assert report["storage"]["ratio"] > 0
    build = report["build"]
    assert build["ours_seconds"] == seconds and build["tantivy_seconds"] > 0 and build["ratio"] > 0
    for label, asked in (("ordinary", ordinary), ("long", long)):
        r = report[label]
        assert r["queries"] == len(asked)
        for engine in ("ours", "tantivy", "bm25s"):
            assert r[engine]["p50_ms"] > 0 and r[engine]["p95_ms"] >= r[engine]["p50_ms"]
        for engine in ("tantivy", "bm25s"):
            assert r[f"ours_over_{engine}"]["p50"] > 0 and r[f"ours_over_{engine}"]["p95"] > 0
        # Our top k is Okapi BM25's over our lexemes, ties between copies aside, and our
        # scores are bm25s's times (k1 + 1), which Lucene's formula drops.
        assert r["overlap_at_10_bm25s"] >= 0.99 and r["overlap_at_100_bm25s"] >= 0.99
        assert r["scores_agree_up_to_a_constant"] is True
        assert r["score_constant_bm25s"] == pytest.approx(2.2, rel=1e-4)
    assert len(bench_engines.engine_rows(report)) == 8
    assert list(scratch.iterdir()) == []  # Tantivy's folder removed


def test_agreement_counts_ties_with_the_kth_score_as_inside():
    reference = {1: 3.0, 2: 2.0, 3: 2.0, 4: 1.0}
    # bm25s kept fragment 2 at rank 2, ours fragment 3: the same score, the same top 2.
    assert bench_engines.agreement([(1, 6.6), (3, 4.4)], reference, 2) == 1.0
    assert bench_engines.agreement([(1, 6.6), (4, 2.2)], reference, 2) == 0.5
    assert bench_engines.agreement([(1, 6.6)], reference, 2) == 0.5  # ours found fewer
    assert bench_engines.agreement([], {}, 10) is None


@needs_extra
def test_lancedb_hybrid_beside_ours(ingest, conn, retriever):
    from tests.conftest import ADMIN

    files = {p.name: p.read_text("utf-8") for p in sorted(DOCS.glob("*.md"))[:3]}
    ingest(bench_lexical.ORG, files)
    fragment_id, text = conn.execute(
        "select fragment_id, text from data.fragments where org_id = %s and active order by length(text) desc limit 1",
        (bench_lexical.ORG,),
    ).fetchone()
    active = conn.execute(
        "select count(*) from data.fragments where org_id = %s and active", (bench_lexical.ORG,)
    ).fetchone()[0]
    conn.rollback()
    words = text.split()
    query = " ".join(words[len(words) // 2 - 10 : len(words) // 2 + 10])
    queries = [query, "row-level security policies", "migrations and goldens"]

    report = bench_engines.hybrid(conn, retriever, bench_lexical.ORG, ADMIN, queries)
    json.dumps(report)
    assert report["fragments"] == active and report["queries"] == 3
    for side in ("candidates", "whole", "lancedb"):
        assert report[side]["p50_ms"] > 0
    assert report["candidates_over_lancedb"]["p50"] > 0 and report["whole_over_lancedb"]["p50"] > 0
    assert report["lancedb_hits_median"] > 0

    # LanceDB's side is a real hybrid search over the same texts and vectors.
    table = bench_engines.LanceTable(conn, bench_lexical.ORG)
    try:
        vector = bench_engines._one_vector(retriever.query_embeddings(query))
        assert vector is not None
        assert fragment_id in table.hybrid(query, vector, 100)[:3]
    finally:
        table.close()
    assert not table.folder.exists()


def test_without_the_extra_its_rows_are_skipped_in_one_line(conn, monkeypatch):
    for name in bench_engines.EXTRA:
        monkeypatch.setitem(sys.modules, name, None)  # what an absent package imports as
    lexical = bench_engines.lexical(conn, bench_lexical.ORG, {"ordinary": ["anything"]})
    hybrid = bench_engines.hybrid(conn, None, bench_lexical.ORG, "admin", ["anything"])  # type: ignore[arg-type]
    for report in (lexical, hybrid):
        assert list(report) == ["skipped"]
        assert "\n" not in report["skipped"] and "pip install -e '.[bench]'" in report["skipped"]
    assert "tantivy, bm25s" in lexical["skipped"] and "lancedb" in hybrid["skipped"]
    # The lexical bench's table shows the one line instead of the rows.
    report = {
        "fragments": 0,
        "ordinary": {"pruned": {}, "every_posting": {}, "differing_top_k": 0, "queries": 0},
        "engines": lexical,
    }
    report["ordinary"]["pruned"] = report["ordinary"]["every_posting"] = {"p50_ms": 1, "p95_ms": 1}
    report["long"] = report["ordinary"]
    rendered = bench_lexical.table(report)
    assert rendered.columns[1]._cells[-1] == f"skipped: {lexical['skipped']}"
