"""`make bench` end to end on a tiny corpus (the repository's docs): every step runs, the
report is written."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg

from app import bench, bench_reference

DOCS = Path(__file__).resolve().parents[1] / "docs"
"""The corpus: this repository's own docs, a few dozen fragments of real prose."""


def test_bench_runs_every_step(db_url, tmp_path):
    out = tmp_path / "out"
    argv = ["--fragments", "20", "--corpus", str(DOCS), "--queries", "3", "--db-url", db_url, "--out", str(out)]
    argv += ["--authority-fragments", "40", "80", "--authority-repeat", "1"]
    assert bench.main(argv) == 0
    report = json.loads((out / "latest.json").read_text())
    assert report["corpus_fragments"] >= 20
    assert set(report["retrieval"]) == {"lexical", "dense", "hybrid"}
    assert report["rls_overhead"]["queries"] == 3 and report["rls_overhead"]["rls_p50_ms"] > 0
    assert report["authority_refresh"]["ms"] >= 0
    blend = report["blend_overhead"]
    assert blend["queries"] == 3
    for variant in ("relevance_only", "blend_defaults", "blend_with_persona_term"):
        assert blend[variant]["p50_ms"] > 0
    assert set(blend["added_p50_ms"]) == {"blend_defaults", "blend_with_persona_term"}
    assert blend["left_in_relevance_only"]["python_blend_ms"] >= 0
    synthetic = report["authority_refresh_synthetic"]
    assert [r["fragments"] for r in synthetic] == [40, 80]
    assert all(r["links"] > 0 and r["refresh_ms_best"] > 0 and r["seed_seconds"] >= 0 for r in synthetic)
    reference = report["reference"]
    for key in ("hybrid", "long_lexical", "long_hybrid"):
        assert reference[key]["queries"] > 0
        assert reference[key]["ours"]["p50_ms"] > 0 and reference[key]["reference"]["p50_ms"] > 0
    assert reference["hybrid"]["queries"] == 3
    assert 20 <= reference["long_lexical"]["terms_median"] <= 40
    with psycopg.connect(db_url) as conn:
        assert conn.execute("select to_regnamespace('bench_reference')").fetchone() == (None,)  # dropped
        # The reference is a real search: it finds a fragment from a span of its own words.
        conn.execute(
            "create schema bench_reference; create table bench_reference.fts as"
            " select fragment_id, org_id, to_tsvector('english', text) as tsv from data.fragments where active"
        )
        fragment_id, text = conn.execute(
            "select fragment_id, text from data.fragments where org_id = 'bench' and active and namespace = 'prose'"
            " order by length(text) desc limit 1"
        ).fetchone()
        query = " ".join(text.split()[:25])
        rows = conn.execute(bench_reference.reference_sql([]), {"query": query, "org": "bench", "k": 100}).fetchall()
        assert fragment_id in [r[0] for r in rows[:3]]
        conn.rollback()
