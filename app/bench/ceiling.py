"""The database's part of a retrieval beside the load bench: how many searches a second
this machine serves without HTTP and without the model, for the hand-written SQL hybrid,
for ours, and for a whole retrieval run in process.

The load target (issue 8: 100 retrievals a second from 50 readers on 2 cores) leaves
20 ms of CPU per retrieval for everything: the service, the model, the database and the
load generator. This phase says how much of that the database takes here, in the same run
as the HTTP phases (this shared host's speed drifts within minutes, so figures from
different runs do not compare). `clients` connections (one thread each, as many as the
service's read pool) run closed loops over the bench's queries, with vectors embedded
beforehand (neither timed nor counted), alternating in rounds between:

- `reference`: app.bench.reference's hybrid (`ts_rank_cd` over stored tsvectors with a GIN
  index, pgvector `order by` per model, RRF, top 10 with text), as the database owner,
  without row-level security, rolled back;
- `candidates`: ours, the one SQL call of a retrieval (api.retrieve_candidates), as the
  bench reader bound like the CLI binds a principal, under row-level security, rolled back;
- `retrieval`: a whole retrieval as the service runs it once the query is embedded
  (app.retrieve.service.Retriever.retrieve): the key checked, candidates, blend,
  composition, the trace written and committed; no HTTP. The usage roll-ups are folded
  as the service folds them, by a folder on a connection of its own, its folds counted
  in the round (which waits for the last one).

Per variant: searches a second, latency, and CPU per search of PostgreSQL and of this
process (which parses the rows, and for `retrieval` composes and builds the trace):
cores over PostgreSQL's CPU per search is the most the database could serve if nothing
else ran on the machine.
"""

from __future__ import annotations

import contextlib
import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import msgspec
import psycopg

from app.access import SERVICE_ROLE, authenticate
from app.bench.cpu import CpuMeter
from app.bench.reference import (
    active_models,
    build_reference_table,
    drop_reference_table,
    latency_summary,
    reference_params,
    reference_sql,
    run_ours,
    run_reference,
)
from app.bench.stats import percentile
from app.retrieve.fusion import fusion_spec
from app.retrieve.service import Retriever
from app.retrieve.usage_fold import folding
from app.wire.retrieve import DEFAULT_K_DENSE, RetrieveRequest

VARIANTS = ("reference", "candidates", "retrieval")


@dataclass(frozen=True, slots=True)
class Search:
    query: str
    vectors: dict[str, list[float]]
    reference: dict
    """The reference SQL's parameters (vectors serialised once, outside the timing)."""
    fusion: dict


@dataclass
class Tally:
    """What one variant's searches gave, over all its rounds."""

    latencies_ms: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0
    cpu: list[dict] = field(default_factory=list)
    """CpuMeter.used of each round."""
    lock: threading.Lock = field(default_factory=threading.Lock)


def searches(
    retriever: Retriever, org: str, queries: list[str], models: list[tuple[int, int]], namespaces: dict[str, int]
) -> list[Search]:
    out = []
    for q in queries:
        vectors = retriever.query_embeddings(q)
        out.append(
            Search(q, vectors, reference_params(q, vectors, org, models, namespaces), fusion_spec(retriever.config, q))
        )
    return out


def _loop(
    conn: psycopg.Connection,
    one: Callable[[psycopg.Connection, Search], None],
    work: list[Search],
    first: int,
    step: int,
    start: threading.Barrier,
    stop_at: list[float],
    tally: Tally,
) -> None:
    start.wait()
    i, mine = first, []
    while time.monotonic() < stop_at[0]:
        search = work[i % len(work)]
        i += step
        began = time.perf_counter()
        try:
            one(conn, search)
            mine.append((time.perf_counter() - began) * 1000)
        except Exception as exc:  # counted, never the end of the loop: the next search starts clean
            with contextlib.suppress(psycopg.Error):
                conn.rollback()
            with tally.lock:
                tally.errors.append(f"{type(exc).__name__}: {str(exc).strip()[:200]}")
    with tally.lock:
        tally.latencies_ms.extend(mine)


def searchers(
    sql: str, retriever: Retriever, org: str, principal: str, token: str, budget_tokens: int
) -> dict[str, Callable[[psycopg.Connection, Search], None]]:
    """One search of each variant, on a connection of the database owner."""

    def reference(conn: psycopg.Connection, search: Search) -> None:
        run_reference(conn, sql, search.reference)
        conn.rollback()

    def candidates(conn: psycopg.Connection, search: Search) -> None:
        run_ours(
            conn, org, principal, search.query, search.vectors, DEFAULT_K_DENSE, retriever.config.rrf_k, search.fusion
        )
        conn.rollback()

    def retrieval(conn: psycopg.Connection, search: Search) -> None:
        # As the service's connections act (app.db.pool): row-level security applies.
        conn.execute(f"set local role {SERVICE_ROLE}")
        authenticate(conn, token)
        request = msgspec.convert(
            {"query": search.query, "scope": {"org_id": org}, "budget_tokens": budget_tokens}, RetrieveRequest
        )
        retriever.retrieve(conn, request, search.vectors)
        conn.commit()

    return {"reference": reference, "candidates": candidates, "retrieval": retrieval}


def _phase(
    conns: list[psycopg.Connection],
    one: Callable[[psycopg.Connection, Search], None],
    work: list[Search],
    seconds: float,
    meter: CpuMeter,
    tally: Tally,
    settle: Callable[[], object] | None = None,
) -> None:
    """One round of one variant, added to `tally`; `settle`: waits for the round's
    background work (the usage folds its retrievals made due), counted in the round."""
    start = threading.Barrier(len(conns) + 1)
    stop_at = [0.0]
    already = len(tally.latencies_ms)
    threads = [
        threading.Thread(
            target=_loop,
            args=(conn, one, work, n, len(conns), start, stop_at, tally),
            daemon=True,
        )
        for n, conn in enumerate(conns)
    ]
    for t in threads:
        t.start()
    before = meter.snapshot()
    stop_at[0] = time.monotonic() + seconds
    start.wait()
    for t in threads:
        t.join()
    if settle is not None:
        settle()
    after = meter.snapshot()
    searched = len(tally.latencies_ms) - already
    tally.seconds += after["at"] - before["at"]
    tally.cpu.append(CpuMeter.used(before, after, searched))


def measure(
    dsn: str,
    retriever: Retriever,
    org: str,
    principal: str,
    token: str,
    queries: list[str],
    budget_tokens: int,
    clients: int,
    seconds: float,
    rounds: int,
    postmaster: int | None,
) -> dict:
    """Every variant, `rounds` times each, alternated; `dsn` is the database owner's (it
    builds the reference's side table and drops it at the end)."""
    if clients < 1 or seconds <= 0 or rounds < 1:
        raise ValueError("clients and rounds must be at least 1 and seconds positive")
    with psycopg.connect(dsn) as owner:
        build_seconds = build_reference_table(owner)
        try:
            models, namespaces = active_models(owner)
            sql = reference_sql(models)
            work = searches(retriever, org, queries, models, namespaces)
            if not work:
                raise ValueError("no queries")
            conns = [psycopg.connect(dsn) for _ in range(clients)]
            try:
                # As the service folds the usage roll-ups: on a connection of its own, after
                # the retrieval that made a fold due has committed (app.retrieve.usage_fold).
                with folding(retriever, owner) as folder:
                    meter = CpuMeter(None, postmaster)
                    one = searchers(sql, retriever, org, principal, token, budget_tokens)
                    totals = {variant: Tally() for variant in VARIANTS}
                    for r in range(rounds):
                        for variant in VARIANTS if r % 2 == 0 else VARIANTS[::-1]:
                            settle = (lambda: folder.wait_idle(60)) if variant == "retrieval" else None
                            _phase(conns, one[variant], work, seconds, meter, totals[variant], settle)
            finally:
                for conn in conns:
                    conn.close()
        finally:
            drop_reference_table(owner)
    return {
        "what": "closed loops on as many connections as the read pool, without HTTP or the model (vectors embedded"
        " before)",
        "searches": {
            "reference": "ts_rank_cd over stored tsvectors (GIN) + pgvector order by per model, RRF k=60, top 10"
            " with text; as the owner, no row-level security",
            "candidates": "api.retrieve_candidates as the bench reader under row-level security, rolled back",
            "retrieval": "a whole retrieval in this process, as the service runs it without HTTP: the key checked,"
            " candidates, blend, composition and the trace, committed",
        },
        "clients": clients,
        "seconds_each": seconds,
        "rounds": rounds,
        "queries": len(work),
        "reference_build_seconds": build_seconds,
        **{variant: _summary(totals[variant]) for variant in VARIANTS},
    }


def _summary(tally: Tally) -> dict:
    latencies = tally.latencies_ms
    count = len(latencies)
    cpu_seconds: dict[str, float] = {}
    for used in tally.cpu:
        for part, value in used["seconds"].items():
            cpu_seconds[part] = cpu_seconds.get(part, 0.0) + value
    per_search = {k: round(v * 1000 / max(count, 1), 2) for k, v in cpu_seconds.items() if k != "service"}
    postgres_ms = per_search.get("postgres", 0.0)
    cores = tally.cpu[0]["cores"] if tally.cpu else None
    return {
        "searches": count,
        "errors": len(tally.errors),
        "error_examples": sorted(set(tally.errors))[:3],
        "per_second": round(count / tally.seconds, 1) if tally.seconds else 0.0,
        **latency_summary(latencies),
        # The tail: a retrieval that paid a fold of the usage roll-ups showed here.
        "p99_ms": round(percentile(latencies, 99), 1) if latencies else None,
        "max_ms": round(max(latencies), 1) if latencies else None,
        "cpu_ms_per_search": per_search,
        "cores_busy": round(statistics.fmean(u["cores_busy"] for u in tally.cpu), 2) if tally.cpu else None,
        "postgres_alone_per_second": round(cores * 1000 / postgres_ms, 1) if cores and postgres_ms else None,
    }
