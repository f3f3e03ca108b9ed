"""BM25 alone at scale: a lexical corpus of real text written straight into the fragments
table (no chunker, no embedding: the BM25 triggers are the same), then the lexical top k
as retrieval computes it (pruned, data._bm25_top) against scoring every posting, on
ordinary and long queries, with the two results compared.

The corpus is the installed packages' source and documentation cut into chunks of about
900 characters (heading: the file's path), `--copies` times in as many repos of one org:
each term's document frequency is then `--copies` times the original's, as in a tenant of
repositories that share code. `--tenants T` adds T more orgs holding one copy each, so
the database holds `copies + T` copies while the measured tenant holds `copies` (1M
fragments in the database, 100k in the tenant: `--copies 5 --tenants 45`); a tenant's
postings live in its own partition, and the report says how big the whole is. It exists
because `make bench --copies` pushes every fragment through the ingestion pipeline and
embeds what it cannot reuse, which takes hours at 100k fragments on two cores, while
BM25's cost needs only the postings.

Beside ours, on the same queries and interleaved with it (app.bench.engines, from the
optional `bench` extra; skipped in one line without it): Tantivy over the same texts and
bm25s fed our lexemes, each one's p50 and p95 and ours over it, the overlap of our top k
with bm25s's and whether our scores are its up to a constant; and our lexical index's
bytes and build (the corpus's writes through the BM25 triggers) beside Tantivy's.

    python -m app.bench.lexical --home .contexts/bench-lexical --chunks 20000 --copies 5 --tenants 45
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from functools import partial
from pathlib import Path

import psycopg
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from app.bench import engines as bench_engines
from app.bench import reference as bench_reference
from app.bench.run import bench_database, corpus_files
from app.db.migrate import migrate
from app.settings import usable_cores
from app.wire.retrieve import DEFAULT_K_LEXICAL

ORG = "bench"
FIRST_REPO = "copy-0"
"""The repo holding the org's first copy: what each tenant copies."""


def tenant_org(n: int) -> str:
    return f"{ORG}-tenant-{n}"


def chunks(site: Path, limit: int) -> list[tuple[str, str]]:
    """(path, text) pieces of about 900 characters, cut between lines."""
    pieces: list[tuple[str, str]] = []
    for path in corpus_files(site):
        try:
            lines = path.read_text("utf-8").replace("\x00", "").splitlines()
        except (OSError, UnicodeDecodeError):
            continue
        buffer: list[str] = []
        for line in lines:
            buffer.append(line)
            if sum(len(x) for x in buffer) > 900:
                pieces.append((str(path.relative_to(site)), "\n".join(buffer)))
                buffer = []
                if len(pieces) >= limit:
                    return pieces
    return pieces


def build(dsn: str, site: Path, limit: int, copies: int) -> tuple[int, float | None]:
    """Write the corpus unless the org already holds it; returns its active fragments and
    the seconds its writes took through the BM25 triggers (None: an earlier run wrote it)."""
    migrate(dsn)
    with psycopg.connect(dsn, autocommit=True) as conn:
        held = conn.execute("select count(*) from data.fragments where org_id = %s and active", (ORG,)).fetchone()
        if held and held[0]:
            return int(held[0]), None
        pieces = chunks(site, limit)
        conn.execute("select service.create_org(%s, 'lexical bench')", (ORG,))
        conn.execute("create temp table corpus (path text, body text)")
        with conn.cursor().copy("copy corpus (path, body) from stdin") as copy:
            for row in pieces:
                copy.write_row(row)
        started = time.perf_counter()
        with Progress(console=Console(stderr=True)) as progress:
            task = progress.add_task(f"writing {len(pieces)} chunks x {copies}", total=copies)
            for c in range(copies):
                repo = f"copy-{c}"  # copy-0 is FIRST_REPO
                conn.execute("insert into data.repos (org_id, repo_id) values (%s, %s)", (ORG, repo))
                conn.execute(
                    "insert into data.fragments (fragment_id, org_id, repo_id, namespace, kind, owner, heading_path,"
                    " text, content_hash, token_count, chunker_version, simhash, tsv)"
                    " select nextval('data.fragment_id_seq'), %s, %s, 'prose', 'doc', 'bench', array[path], body,"
                    " md5(body || %s), length(body) / 4, 'bench-lexical', 0, api.lexical_document(path, body)"
                    " from corpus",
                    (ORG, repo, repo),
                )
                progress.advance(task)
        seconds = round(time.perf_counter() - started, 2)
        conn.execute("vacuum analyze")
        count = conn.execute("select count(*) from data.fragments where org_id = %s", (ORG,)).fetchone()
        return (int(count[0]) if count else 0), seconds


COPY_TO_TENANT = (
    "insert into data.fragments (fragment_id, org_id, repo_id, namespace, kind, owner, heading_path,"
    " text, content_hash, token_count, chunker_version, simhash, tsv)"
    " select nextval('data.fragment_id_seq'), %(org)s, repo_id, namespace, kind, owner, heading_path,"
    " text, md5(text || %(org)s), token_count, chunker_version, simhash, tsv"
    " from data.fragments where org_id = %(source)s and repo_id = %(repo)s order by fragment_id"
)


def add_tenants(dsn: str, tenants: int, workers: int = 1) -> dict:
    """Give each of `tenants` more orgs one copy of the org's first repo (texts and
    tsvectors as stored, so the BM25 triggers index the same terms), skipping orgs an
    earlier run filled: each copy is one statement, so it is all there or absent (an org
    holding anything else is refused, never copied onto). The orgs (and their partitions:
    DDL) are made first, one after the other; the copies then run on `workers`
    connections, since each is one backend's CPU. A failed copy cancels those not started."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        size = conn.execute(
            "select count(*) from data.fragments where org_id = %s and repo_id = %s", (ORG, FIRST_REPO)
        ).fetchone()
        per_copy = int(size[0]) if size else 0
        todo = []
        for n in range(1, tenants + 1):
            held = conn.execute("select count(*) from data.fragments where org_id = %s", (tenant_org(n),)).fetchone()
            if held == (0,):
                todo.append(tenant_org(n))
            elif held != (per_copy,):
                raise SystemExit(f"{tenant_org(n)} holds {held[0] if held else 0} fragments, not 0 or {per_copy}")
        for org in todo:
            conn.execute("select service.create_org(%s, 'lexical bench tenant')", (org,))
            conn.execute(
                "insert into data.repos (org_id, repo_id) values (%s, %s) on conflict do nothing", (org, FIRST_REPO)
            )

    def copy(org: str) -> None:
        with psycopg.connect(dsn, autocommit=True) as worker:
            worker.execute(COPY_TO_TENANT, {"org": org, "source": ORG, "repo": FIRST_REPO})

    started = time.perf_counter()
    with Progress(console=Console(stderr=True)) as progress:
        task = progress.add_task(f"writing {len(todo)} tenants x {per_copy} fragments", total=len(todo))
        with ThreadPoolExecutor(max(1, workers)) as pool:
            try:
                for done in as_completed([pool.submit(copy, org) for org in todo]):
                    done.result()
                    progress.advance(task)
            except BaseException:
                pool.shutdown(cancel_futures=True)
                raise
    seconds = time.perf_counter() - started
    if todo:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("vacuum analyze")
    return {
        "tenants_written_now": len(todo),
        "write_seconds": round(seconds, 1),
        "fragments_per_second": round(len(todo) * per_copy / seconds, 1) if todo and seconds else None,
        "workers": workers,
    }


def database_size(conn: psycopg.Connection) -> dict:
    """How many fragments and postings the database and the measured org hold, and on disk."""
    row = conn.execute(
        """
        select (select count(*) from data.fragments where active),
               (select count(*) from data.fragments where active and org_id = %(org)s),
               (select count(distinct org_id) from data.fragments),
               (select sum(c.fragment_count)::bigint from data.bm25_corpus c where c.org_id = %(org)s),
               (select sum(pg_total_relation_size(i.inhrelid))::bigint
                from pg_inherits i where i.inhparent = 'data.bm25_blocks'::regclass),
               pg_database_size(current_database())
        """,
        {"org": ORG},
    ).fetchone()
    assert row is not None
    database, tenant, orgs, indexed, postings_bytes, database_bytes = row
    return {
        "database_fragments": database,
        "tenant_fragments": tenant,
        "orgs": orgs,
        "tenant_fragments_in_bm25": indexed,
        "postings_bytes": postings_bytes,
        "database_bytes": database_bytes,
    }


def queries(conn: psycopg.Connection, n: int, seed: int) -> list[str]:
    """First words of fragments with their heading, as make bench asks."""
    rows = conn.execute(
        "select heading_path, text from data.fragments where org_id = %s and repo_id = "
        "(select min(repo_id) from data.repos where org_id = %s) order by fragment_id",
        (ORG, ORG),
    ).fetchall()
    rng = random.Random(seed)
    rng.shuffle(rows)
    asked = []
    for headings, text in rows:
        words = [w for w in text.split() if any(c.isalpha() for c in w)]
        if len(words) >= 3:
            asked.append(" ".join([*headings[-1:], *words[:6]]))
        if len(asked) >= n:
            break
    return asked


def against_reference(conn: psycopg.Connection, queries: list[str]) -> dict:
    """The lexical top k as retrieval computes it against the lexical half of make bench's
    hand-written reference (ts_rank_cd over the GIN-indexed side table of every active
    fragment, filtered to the org: bench_reference.build_reference_table, built by the
    caller), interleaved, as the owner. The reference's index holds the whole database,
    as one a user writes without tenant partitions does; ours reads the org's partition."""
    timings: dict[str, list[float]] = {"ours": [], "reference": []}
    for i, q in enumerate(queries):
        params = {"org": ORG, "query": q, "k": DEFAULT_K_LEXICAL}
        bench_reference.alternate(
            i,
            [
                ("ours", partial(bench_reference.owner_rows, conn, bench_reference.PRUNED, params)),
                ("reference", partial(bench_reference.owner_rows, conn, bench_reference.LEXICAL, params)),
            ],
            timings,
            conn.rollback,
        )
    return bench_reference.compared(timings["ours"], timings["reference"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--home", type=Path, default=Path(".contexts/bench-lexical"))
    parser.add_argument("--chunks", type=int, default=20000, help="distinct chunks in one copy")
    parser.add_argument("--copies", type=int, default=5, help="repos holding a copy each")
    parser.add_argument(
        "--tenants", type=int, default=0, help="more orgs holding one copy each (45 with --copies 5: 1M fragments)"
    )
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--reuse", action="store_true", help="keep the database of an earlier run")
    parser.add_argument("--workers", type=int, default=usable_cores(), help="connections writing tenants at once")
    parser.add_argument(
        "--no-reference", action="store_true", help="skip the hand-written ts_rank_cd reference (its GIN build)"
    )
    parser.add_argument(
        "--no-engines", action="store_true", help="skip Tantivy and bm25s (the bench extra) beside ours"
    )
    args = parser.parse_args(argv)
    dsn = bench_database(args.home, args.reuse)
    site = Path(sys.prefix) / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
    fragments, write_seconds = build(dsn, site, args.chunks, args.copies)
    written = add_tenants(dsn, args.tenants, args.workers) if args.tenants > 0 else {}
    with psycopg.connect(dsn) as conn:
        asked = queries(conn, args.queries, args.seed)
        long = bench_reference.long_queries(conn, ORG, max(args.queries // 2, 1), args.seed)
        report = {
            "fragments": fragments,
            "corpus": f"installed packages' text in chunks of ~900 characters, {args.copies} copies in as many repos"
            + (f"; {args.tenants} more orgs holding one copy each" if args.tenants > 0 else ""),
            "database": {**database_size(conn), **written},
            "write_seconds": write_seconds,
            "ordinary": bench_reference.pruning(conn, ORG, asked),
            "long": bench_reference.pruning(conn, ORG, long),
        }
        if not args.no_reference:
            built = bench_reference.build_reference_table(conn)
            try:
                report["reference"] = {
                    "reference": "ts_rank_cd over stored to_tsvector('english', text) with a GIN index over every"
                    " active fragment of the database, terms OR-ed, filtered to the org; as the owner",
                    "reference_build_seconds": built,
                    "ordinary": against_reference(conn, asked),
                    "long": against_reference(conn, long),
                }
            finally:
                bench_reference.drop_reference_table(conn)
        if not args.no_engines:
            report["engines"] = bench_engines.lexical(
                conn, ORG, {"ordinary": asked, "long": long}, ours_build_seconds=write_seconds
            )
    Console(stderr=True).print(table(report))
    print(json.dumps(report, indent=2))
    return 0


def table(report: dict) -> Table:
    """The report's figures in rows, beside their same-run references."""
    rows = Table(title=f"BM25 top {DEFAULT_K_LEXICAL}: {report['fragments']} fragments in the tenant")
    rows.add_column("measure")
    rows.add_column("value", justify="right")
    for label in ("ordinary", "long"):
        r = report[label]
        rows.add_row(
            f"{label} queries: pruned vs every posting scored, p50 / p95 (ms)",
            f"{r['pruned']['p50_ms']} / {r['pruned']['p95_ms']} vs {r['every_posting']['p50_ms']} / "
            f"{r['every_posting']['p95_ms']}  ({r['differing_top_k']} of {r['queries']} differ)",
        )
    for label in ("ordinary", "long"):
        r = report.get("reference", {}).get(label)
        if r:
            rows.add_row(
                f"{label} queries: ours vs ts_rank_cd over GIN, p50 / p95 (ms)",
                f"{r['ours']['p50_ms']} / {r['ours']['p95_ms']} vs {r['reference']['p50_ms']} / "
                f"{r['reference']['p95_ms']}  (x{r['ratio_p50']})",
            )
    engines = report.get("engines")
    if engines and "skipped" in engines:
        rows.add_row("Tantivy, bm25s", f"skipped: {engines['skipped']}")
    elif engines:
        for row in bench_engines.engine_rows(engines):
            rows.add_row(*row)
    return rows


if __name__ == "__main__":
    raise SystemExit(main())
