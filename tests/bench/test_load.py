"""`make bench-load` end to end at a tiny scale (2 readers, 1 writer, 2 s phases): the
service starts and stops, every phase runs without errors (the database-alone phase too),
the report is written."""

from __future__ import annotations

import json

import psutil

from app.bench import load as bench_load
from tests.bench.corpus import small_corpus


def test_load_bench_runs_every_phase(db_url, tmp_path):
    out = tmp_path / "out"
    argv = [
        "--fragments",
        "20",
        "--corpus",
        str(small_corpus(tmp_path / "corpus")),
        "--readers",
        "2",
        "--writers",
        "1",
        "--seconds",
        "2",
        "--idle-queries",
        "3",
        "--idle-writes",
        "1",
        "--ceiling-seconds",
        "1",
        "--ceiling-rounds",
        "2",
        "--db-url",
        db_url,
        "--out",
        str(out),
    ]
    assert bench_load.main(argv) == 0
    report = json.loads((out / "load.json").read_text())
    assert report["corpus"]["fragments"] >= 20
    assert list(report["phases"]) == ["idle", "readers", "readers+writers"]
    for name, phase in report["phases"].items():
        assert phase["read"]["ok"] > 0 and phase["read"]["errors"] == {}, (name, phase)
        assert phase["write"]["errors"] == {}, (name, phase)
    assert report["phases"]["readers+writers"]["write"]["ok"] >= 1
    assert report["phases"]["readers"]["cpu"]["seconds"]["service"] > 0
    for name in ("idle", "readers"):
        per_request = report["phases"][name]["cpu"]["ms_per_request"]
        assert per_request["service"] > 0 and per_request["postgres"] > 0, (name, per_request)
    assert set(report["ratios"]) == {
        "read_p95_readers_over_idle",
        "read_p95_with_writers_over_readers",
        "read_throughput_readers_over_with_writers",
    }
    assert report["targets"]["no_errors"] is True
    # The database alone, both searches, alternated: real searches, no errors, CPU measured.
    alone = report["database_alone"]
    assert alone["rounds"] == 2 and alone["queries"] > 0
    for variant in ("reference", "candidates", "retrieval"):
        searched = alone[variant]
        assert searched["searches"] > 0 and searched["errors"] == 0, (variant, searched)
        assert searched["cpu_ms_per_search"]["postgres"] > 0, (variant, searched)
        assert searched["postgres_alone_per_second"] > 0, (variant, searched)
    # The service stopped with the bench.
    assert not [p for p in psutil.Process().children(recursive=True) if "--serve-child" in p.cmdline()]


def test_query_mix_repeats_the_share_it_is_given():
    mix = bench_load.QueryMix([f"q{i}" for i in range(1000)], hot=10, repeat_share=0.3, seed=1)
    asked = [mix.next() for _ in range(1000)]
    hot = sum(q in mix.hot for q in asked)
    assert 230 <= hot <= 370
    fresh = [q for q in asked if q not in mix.hot]
    assert len(fresh) == len(set(fresh))  # none asked twice until the pool runs out
    assert mix.describe()["fresh_asked_again"] == 0


def test_documents_written_by_an_earlier_run_come_last(tmp_path):
    files = []
    for name in ("a.py", "b.py", "c.py"):
        (tmp_path / name).write_text(f"# {name}\n")
        files.append(tmp_path / name)
    documents = bench_load.Documents(files, tmp_path, written={"a.py"})
    assert documents.new == 2
    assert [documents.next()["path"] for _ in range(4)] == ["b.py", "c.py", "a.py", "b.py"]
