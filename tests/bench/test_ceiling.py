"""The database-alone phase of the load bench: a search that fails is counted and the
loop goes on, on a connection left clean for the next phase."""

from __future__ import annotations

import psycopg
from psycopg.pq import TransactionStatus

from app.bench import ceiling as bench_ceiling
from app.bench.cpu import CpuMeter


def test_a_failing_search_is_counted_and_the_loop_goes_on(db_url):
    work = [bench_ceiling.Search(f"q{i}", {}, {}, {}) for i in range(3)]
    seen: list[str] = []

    def one(conn: psycopg.Connection, search: bench_ceiling.Search) -> None:
        conn.execute("select 1")  # opens a transaction, as every search does
        seen.append(search.query)
        if len(seen) == 1:
            raise ValueError("not a psycopg error")
        if len(seen) == 2:
            conn.execute("select 1 / 0")
        conn.rollback()

    with psycopg.connect(db_url) as conn:
        tally = bench_ceiling.Tally()
        bench_ceiling._phase([conn], one, work, 0.3, CpuMeter(None, None), tally)
        assert conn.info.transaction_status == TransactionStatus.IDLE
    assert [e.split(":")[0] for e in tally.errors] == ["ValueError", "DivisionByZero"]
    assert len(tally.latencies_ms) == len(seen) - 2 > 0
    assert tally.seconds > 0 and tally.cpu[0]["cores"] >= 1
