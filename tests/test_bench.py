"""`make bench` end to end on a tiny corpus: every step runs, the report is written."""

from __future__ import annotations

import json

from app import bench


def test_bench_runs_every_step(db_url, tmp_path):
    out = tmp_path / "out"
    assert bench.main(["--fragments", "60", "--queries", "3", "--db-url", db_url, "--out", str(out)]) == 0
    report = json.loads((out / "latest.json").read_text())
    assert report["corpus_fragments"] >= 60
    assert set(report["retrieval"]) == {"lexical", "dense", "hybrid"}
    assert report["rls_overhead"]["queries"] == 3 and report["rls_overhead"]["rls_p50_ms"] > 0
