"""Read cost of the usage views (sql/views/20_usage.sql) over a long trace history, and
what keeping their roll-ups (sql/functions/51_usage.sql) adds to writing a trace.

A scratch org gets `--fragments` fragments (written straight into the tables: no
chunking or embedding) and `--traces` retrieval traces of `--candidates` candidates
each, spread over 90 days across a few principals and scopes, written in batches (the
roll-up triggers run once per batch). Then each usage view is read whole, and over its
last week, as two analysts: one org-wide with an audit grant, one with a single repo and
an audit grant (whose scope ids and fragments are withheld); the median of `--repeat`
reads is kept. Writing one trace per transaction is timed with the roll-up triggers and
without them. The org is removed at the end. A view whose server time (median) exceeds
`--budget-ms` (100 ms: ADR 0028's target at 100,000 traces) is named, and the run exits 1.

    python -m app.bench.usage                      # the embedded bench server, 100,000 traces
    python -m app.bench.usage --db-url URL --traces 20000
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import psycopg
from rich.console import Console
from rich.table import Table

from app.bench.stats import percentile
from app.db.migrate import migrate

console = Console(stderr=True, soft_wrap=True)
ORG = "bench-usage"
READERS = {"org-wide auditor": "usage-admin", "one-repo auditor": "usage-repo"}
VIEWS = {
    "api.retrievals_per_day": "select * from api.retrievals_per_day",
    "api.retrievals_per_day, last week": "select * from api.retrievals_per_day where day > current_date - 7",
    "api.retrievals_below_floor": "select * from api.retrievals_below_floor",
    "api.retrievals_below_floor, last week": (
        "select * from api.retrievals_below_floor where created_at > now() - interval '7 days'"
    ),
    "api.fragment_retrievals": "select * from api.fragment_retrievals",
    "api.fragment_retrievals, top 20": "select * from api.fragment_retrievals order by retrievals desc limit 20",
    "api.document_retrievals": "select * from api.document_retrievals",
}

_SEED_SQL = """
with docs as (
    insert into data.documents (org_id, repo_id, persona_id, session_id, path, kind)
    select %(org)s, case when g %% 4 = 0 then null else 'r' || (g %% 4) end,
           case when g %% 50 = 7 then 'p1' end, case when g %% 100 = 3 then 's1' end, 'doc/' || g || '.md', 'doc'
    from generate_series(1, %(n)s::int) g
    returning doc_id, repo_id, persona_id, session_id, path
)
insert into data.fragments (org_id, repo_id, persona_id, session_id, doc_id, doc_version, namespace, kind, owner,
                            text, content_hash, token_count, chunker_version, simhash, tsv)
select %(org)s, d.repo_id, d.persona_id, d.session_id, d.doc_id, null, 'prose', 'doc', 'bench', d.path, md5(d.path), 1,
       'bench', 0, ''::tsvector
from docs d
"""

# Candidates skewed toward a few often-ranked fragments; the first five are returned.
_TRACES_SQL = """
with ids as (
    select array_agg(f.fragment_id order by f.fragment_id) as a,
           array_agg(f.doc_id order by f.fragment_id) as d
    from data.fragments f where f.org_id = %(org)s
)
insert into data.retrieval_traces (org_id, principal_id, query, request, pipeline, candidates, duration_ms,
                                   created_at)
select %(org)s, 'agent-' || (g %% 5), 'query ' || (g %% 997),
       jsonb_build_object('query', 'query ' || (g %% 997),
                          'scope', jsonb_strip_nulls(jsonb_build_object(
                              'org_id', %(org)s, 'repo_id', case when g %% 3 > 0 then 'r' || (g %% 4) end,
                              'session_id', case when g %% 41 = 0 then 's1' end))),
       '{}'::jsonb,
       (select jsonb_agg(jsonb_build_object(
                   'fragment_id', ids.a[i], 'doc_id', ids.d[i], 'source', 'doc/' || i || '.md#a',
                   'fused_rank', k, 'final_rank', k, 'final_score', 1.0 / k, 'included', k <= 5,
                   'relevance', round((0.6 * random() / k)::numeric, 4)) order by k)
        from (select k, 1 + floor(cardinality(ids.a) * power(random(), 3))::int as i
              from generate_series(1, %(candidates)s::int) k) c),
       exp(2.5 + random()), now() - (random() * interval '90 days')
from ids, generate_series(%(first)s::int, %(last)s::int) g
"""


def seed(conn: psycopg.Connection, fragments: int) -> None:
    conn.execute("select service.create_org(%s)", (ORG,))
    conn.execute("insert into data.repos (org_id, repo_id) select %s, 'r' || i from generate_series(1, 3) i", (ORG,))
    conn.execute("insert into data.personas (org_id, persona_id) values (%s, 'p1')", (ORG,))
    conn.execute("insert into data.sessions (org_id, session_id) values (%s, 's1')", (ORG,))
    for i in range(5):
        conn.execute("select service.create_principal(%s, %s, 'agent')", (ORG, f"agent-{i}"))
    conn.execute("select service.create_principal(%s, 'usage-admin', 'human')", (ORG,))
    conn.execute("select service.grant_scope(%s, 'usage-admin', 'org', null)", (ORG,))
    conn.execute("select service.grant_scope(%s, 'usage-admin', 'audit', null)", (ORG,))
    conn.execute("select service.create_principal(%s, 'usage-repo', 'human')", (ORG,))
    conn.execute("select service.grant_scope(%s, 'usage-repo', 'repo', 'r1')", (ORG,))
    conn.execute("select service.grant_scope(%s, 'usage-repo', 'audit', null)", (ORG,))
    conn.execute(_SEED_SQL, {"org": ORG, "n": fragments})
    conn.commit()


def write_traces(conn: psycopg.Connection, traces: int, candidates: int, batch: int = 5_000) -> float:
    started = time.perf_counter()
    for first in range(0, traces, batch):
        last = min(traces, first + batch) - 1
        with console.status(f"writing traces {first + 1}-{last + 1} of {traces}..."):
            conn.execute(_TRACES_SQL, {"org": ORG, "candidates": candidates, "first": first, "last": last})
            conn.commit()
    return time.perf_counter() - started


def single_writes(conn: psycopg.Connection, candidates: int, n: int) -> dict:
    """One trace per transaction, with the roll-up triggers and without them (disabled
    meanwhile; the traces written without them are deleted, still without them, so the
    roll-ups stay right)."""
    triggers = [f"retrieval_traces_usage_{op}" for op in ("insert", "delete", "update")]
    out = {}
    for label, disabled in (("with_rollups", False), ("without_rollups", True)):
        walls, written = [], []
        try:
            if disabled:
                for trigger in triggers:
                    conn.execute(f"alter table data.retrieval_traces disable trigger {trigger}")
                conn.commit()
            for i in range(n):
                started = time.perf_counter()
                row = conn.execute(
                    _TRACES_SQL + " returning trace_id", {"org": ORG, "candidates": candidates, "first": i, "last": i}
                ).fetchone()
                conn.commit()
                walls.append((time.perf_counter() - started) * 1000)
                written.append(row[0] if row else None)
            if disabled:
                conn.execute("delete from data.retrieval_traces where trace_id = any(%s)", (written,))
                conn.commit()
        finally:
            conn.rollback()
            if disabled:
                for trigger in triggers:
                    conn.execute(f"alter table data.retrieval_traces enable trigger {trigger}")
                conn.commit()
        out[label] = {"median_ms": round(statistics.median(walls), 3), "p95_ms": round(percentile(walls, 95), 3)}
    return out


def read_views(conn: psycopg.Connection, repeat: int) -> list[dict]:
    """Each view as each reader: the time to fetch every row into Python (client), and
    the server's execution time alone (EXPLAIN ANALYZE, without per-node timing)."""
    results = []
    for reader, principal in READERS.items():
        for view, sql in VIEWS.items():
            walls, servers, rows = [], [], 0
            for _ in range(repeat + 1):
                with conn.transaction():
                    conn.execute("select service.bind_principal(%s, %s)", (ORG, principal))
                    conn.execute("set local role contexts_analyst")
                    started = time.perf_counter()
                    rows = len(conn.execute(sql).fetchall())
                    walls.append((time.perf_counter() - started) * 1000)
                    plan = [r[0] for r in conn.execute("explain (analyze, timing off, summary) " + sql)]
                    servers.append(float(plan[-1].split(":")[1].split()[0]))
            walls, servers = walls[1:], servers[1:]  # the first read warms the cache
            results.append(
                {
                    "reader": reader,
                    "view": view,
                    "rows": rows,
                    "server_median_ms": round(statistics.median(servers), 1),
                    "client_median_ms": round(statistics.median(walls), 1),
                    "client_max_ms": round(max(walls), 1),
                }
            )
    return results


def measure(
    db_url: str, traces: int, fragments: int, candidates: int, repeat: int, singles: int, keep: bool = False
) -> dict:
    with psycopg.connect(db_url) as conn:
        conn.execute("delete from data.orgs where org_id = %s", (ORG,))
        conn.commit()
        try:
            with console.status(f"seeding {fragments} fragments..."):
                seed(conn, fragments)
            write_s = write_traces(conn, traces, candidates)
            writes = single_writes(conn, candidates, singles)
            with psycopg.connect(db_url, autocommit=True) as vacuum:
                vacuum.execute(
                    "vacuum analyze data.usage_days, data.usage_fragments, data.usage_below_floor, data.fragments"
                )
            sizes = conn.execute(
                "select (select count(*) from data.usage_days where org_id = %(o)s),"
                " (select count(*) from data.usage_fragments where org_id = %(o)s),"
                " (select count(*) from data.usage_below_floor where org_id = %(o)s),"
                " (select count(*) from data.retrieval_traces where org_id = %(o)s)",
                {"o": ORG},
            ).fetchone()
            conn.commit()
            with console.status("reading the usage views..."):
                views = read_views(conn, repeat)
        finally:
            conn.rollback()
            if not keep:
                conn.execute("delete from data.orgs where org_id = %s", (ORG,))
                conn.commit()
    assert sizes is not None
    return {
        "traces": sizes[3],
        "candidates_per_trace": candidates,
        "fragments": fragments,
        "write_seconds": round(write_s, 1),
        "single_trace_insert": writes,
        "rollup_rows": {"usage_days": sizes[0], "usage_fragments": sizes[1], "usage_below_floor": sizes[2]},
        "views": views,
    }


def table(report: dict) -> Table:
    out = Table(title=f"usage views at {report['traces']:,} traces ({report['rollup_rows']})")
    for title in ("reader", "view", "rows", "server ms", "client ms", "client max ms"):
        out.add_column(title, justify="left" if title in ("reader", "view") else "right")
    keys = ("rows", "server_median_ms", "client_median_ms", "client_max_ms")
    for r in report["views"]:
        out.add_row(r["reader"], r["view"], *(str(r[k]) for k in keys))
    return out


def bench_database(home: Path) -> str:
    """A new `bench_usage` database on the embedded bench server under `home`."""
    from app.db.embedded import EmbeddedPostgres

    server = EmbeddedPostgres(home.resolve() / "pgdata")
    with psycopg.connect(server.url(), autocommit=True) as admin:
        admin.execute("drop database if exists bench_usage with (force)")
        admin.execute("create database bench_usage")
    return server.url("bench_usage")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db-url", help="a scratch database (as the migrator): an org is written, then removed")
    parser.add_argument("--home", type=Path, default=Path(".contexts/bench"), help="embedded server data")
    parser.add_argument("--traces", type=int, default=100_000)
    parser.add_argument("--fragments", type=int, default=5_000)
    parser.add_argument("--candidates", type=int, default=20, help="candidates per trace")
    parser.add_argument("--repeat", type=int, default=5, help="reads per view and reader (the median is kept)")
    parser.add_argument("--singles", type=int, default=200, help="traces written one per transaction, timed")
    parser.add_argument("--keep", action="store_true", help="leave the scratch org in place (to look at plans)")
    parser.add_argument("--out", type=Path, help="also write the figures to this JSON file")
    parser.add_argument(
        "--budget-ms", type=float, default=100.0, help="the most a view may take in the server (median); 0: no check"
    )
    args = parser.parse_args(argv)
    dsn = args.db_url or bench_database(args.home)
    migrate(dsn)
    report = measure(dsn, args.traces, args.fragments, args.candidates, args.repeat, args.singles, args.keep)
    report["budget_ms"] = args.budget_ms
    report["over_budget"] = [
        f"{r['view']} as the {r['reader']}: {r['server_median_ms']} ms"
        for r in report["views"]
        if args.budget_ms and r["server_median_ms"] > args.budget_ms
    ]
    Console(stderr=True).print(table(report))
    text = json.dumps(report, indent=2)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")
    print(text)
    for line in report["over_budget"]:
        console.print(f"over the budget of {args.budget_ms:g} ms: {line}")
    return 1 if report["over_budget"] else 0


if __name__ == "__main__":
    sys.exit(main())
