"""BM25 alone at scale: a lexical corpus of real text written straight into the fragments
table (no chunker, no embedding: the BM25 triggers are the same), then the lexical top k
as retrieval computes it (pruned, data._bm25_top) against scoring every posting, on
ordinary and long queries, with the two results compared.

The corpus is the installed packages' source and documentation cut into chunks of about
900 characters (heading: the file's path), `--copies` times in as many repos of one org:
each term's document frequency is then `--copies` times the original's, as in a tenant of
repositories that share code. It exists because `make bench --copies` pushes every
fragment through the ingestion pipeline and embeds what it cannot reuse, which takes hours
at 100k fragments on two cores, while BM25's cost needs only the postings.

    python -m app.bench_lexical --home .contexts/bench-lexical --chunks 20000 --copies 5
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

import psycopg
from rich.console import Console
from rich.progress import Progress

from app import bench_reference
from app.bench import bench_database, corpus_files
from app.db.migrate import migrate

ORG = "bench"


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


def build(dsn: str, site: Path, limit: int, copies: int) -> int:
    """Write the corpus unless the org already holds it; returns its active fragments."""
    migrate(dsn)
    with psycopg.connect(dsn, autocommit=True) as conn:
        held = conn.execute("select count(*) from data.fragments where org_id = %s and active", (ORG,)).fetchone()
        if held and held[0]:
            return int(held[0])
        pieces = chunks(site, limit)
        conn.execute("select api.create_org(%s, 'lexical bench')", (ORG,))
        conn.execute("create temp table corpus (path text, body text)")
        with conn.cursor().copy("copy corpus (path, body) from stdin") as copy:
            for row in pieces:
                copy.write_row(row)
        with Progress(console=Console(stderr=True)) as progress:
            task = progress.add_task(f"writing {len(pieces)} chunks x {copies}", total=copies)
            for c in range(copies):
                repo = f"copy-{c}"
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
        conn.execute("vacuum analyze")
        count = conn.execute("select count(*) from data.fragments where org_id = %s", (ORG,)).fetchone()
        return int(count[0]) if count else 0


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--home", type=Path, default=Path(".contexts/bench-lexical"))
    parser.add_argument("--chunks", type=int, default=20000, help="distinct chunks in one copy")
    parser.add_argument("--copies", type=int, default=5, help="repos holding a copy each")
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--reuse", action="store_true", help="keep the database of an earlier run")
    args = parser.parse_args(argv)
    dsn = bench_database(args.home, args.reuse)
    site = Path(sys.prefix) / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
    fragments = build(dsn, site, args.chunks, args.copies)
    with psycopg.connect(dsn) as conn:
        asked = queries(conn, args.queries, args.seed)
        long = bench_reference.long_queries(conn, ORG, max(args.queries // 2, 1), args.seed)
        report = {
            "fragments": fragments,
            "corpus": f"installed packages' text in chunks of ~900 characters, {args.copies} copies in as many repos",
            "ordinary": bench_reference.pruning(conn, ORG, asked),
            "long": bench_reference.pruning(conn, ORG, long),
        }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
