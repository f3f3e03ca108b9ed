"""Ingest's database path, vectors given, two checkouts side by side in one run.

Each database is migrated by the code of its own checkout (`--against PATH`: another
checkout of the repository, e.g. main's, beside this one) and written by that
checkout's own ingestion (`app.ingest.batches.ingest_groups`, groups of 64 documents,
one transaction a group), each in a worker process of its own. The corpus is installed
packages' sources and docs (httpx, httpcore, h11 and litestar by default): a first pass
writes every file, a second pass writes every third file again with a line changed (a
new version: its old pointers retire, its unchanged chunks revive their fragments).
Vectors are given: every embedding input's vector is computed before the clock starts
(a fixed pseudo-random unit vector per input; `--vectors model`: the configured models'
own, computed once and kept under `--home`, which HNSW inserts faster, as real
embeddings cluster), so no model runs while timed; what is timed is the
database path (and the Python around it: references, chunk rows, encoding), group by
group, the two sides alternating group by group so both see the same load. Chunking is
timed apart. `--embed`: end to end instead, the configured models embedding each side's
new chunks (use fewer packages: `--packages httpx httpcore h11`).

    python -m app.bench.writes --home .contexts/bench-writes --against /work/main

`--statements`: instead, one side alone (`--side this|against`) with pg_stat_statements
(track = all, so the statements inside the SQL functions count too): the statements
that took the most time, what `docs/scale.md`'s breakdown of a document's write is made of.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

import psycopg

from app.db.embedded import EmbeddedPostgres

ORG = "bench-writes"
REPO = "writes"
PACKAGES = ("httpx", "httpcore", "h11", "litestar")
DIMS = 384

WORKER = r'''
import hashlib, json, sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import psycopg

from app.ingest.batches import ingest_groups
from app.ingest.normalize import SourceDocument
from app.ingest.pipeline import IngestPipeline, embedding_input
from app.scope import Scope
from app.settings import Settings
from app.text.embed import Embedder

dsn, site, packages = sys.argv[1], Path(sys.argv[2]), sys.argv[3].split(",")
org, repo, dims, embed = sys.argv[4], sys.argv[5], int(sys.argv[6]), sys.argv[7] == "embed"
cache = Path(sys.argv[8]) if len(sys.argv) > 8 and sys.argv[8] else None
GIVEN = {}


@dataclass(frozen=True, slots=True)
class Given(Embedder):
    """Vectors computed before the clock starts; the model is never loaded."""

    @property
    def dims(self) -> int:
        return dims

    def embed(self, texts):
        return [GIVEN[t] for t in texts]


def vector(text):
    rng = np.random.default_rng(int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little"))
    v = rng.standard_normal(dims)
    return (v / np.linalg.norm(v)).astype(np.float32).tolist()


settings = Settings.from_env()
if embed:
    from app.text.embed import embedders

    models = embedders(settings)
    for model in models.values():
        model.load()
else:
    models = {ns: Given(ns, "bench-" + ns, "float32", 1, 64) for ns in ("prose", "code")}
pipeline = IngestPipeline(settings, models)
suffixes = {".py", ".md", ".rst", ".txt", ".pyi", ".toml", ".json", ".yaml", ".yml", ".cfg", ".ini"}
files = sorted(p for pkg in packages for p in (site / pkg).rglob("*")
               if p.is_file() and p.suffix in suffixes and "__pycache__" not in p.parts and p.stat().st_size < 400_000)
sources = [SourceDocument(path=p.relative_to(site).as_posix(), content=p.read_bytes(), author="bench") for p in files]
edited = [SourceDocument(path=s.path, content=s.content + b"\n# edited\n", author="bench") for s in sources[::3]]
wanted = {}
for s in [] if embed else sources + edited:
    try:
        prepared = pipeline.prepare(s)
    except Exception:
        continue
    for c in prepared.chunks:
        wanted.setdefault(embedding_input(prepared.doc.path, c.heading_path, c.text), prepared.namespace)
if cache is None:
    GIVEN.update((text, vector(text)) for text in wanted)
else:
    # The configured models' own vectors (HNSW entries cost what they cost on real
    # embeddings, not on random ones), computed once and kept in `cache` by text.
    key = lambda text: hashlib.sha256(text.encode()).hexdigest()
    stored = dict(np.load(cache)) if cache.exists() else {}
    missing = [t for t in wanted if key(t) not in stored]
    if missing:
        from app.text.embed import embedders

        models = embedders(settings)
        for namespace in sorted({wanted[t] for t in missing}):
            texts = [t for t in missing if wanted[t] == namespace]
            for text, v in zip(texts, models[namespace].embed(texts)):
                stored[key(text)] = np.asarray(v, dtype=np.float32)
        np.savez(cache, **stored)
    GIVEN.update((t, stored[key(t)].tolist()) for t in wanted)
conn = psycopg.connect(dsn)
pipeline.register_models(conn)
conn.commit()
scope = Scope(org, repo)
passes = iter([ingest_groups(conn, pipeline, scope, "admin", sources, lambda s: s),
               ingest_groups(conn, pipeline, scope, "admin", edited, lambda s: s)])
current = next(passes)
pass_no = 1
print(json.dumps({"ready": len(GIVEN)}), flush=True)
for line in sys.stdin:
    group = None
    while current is not None:
        try:
            group = next(current)
            break
        except StopIteration:
            current = next(passes, None)
            pass_no += 1
    if group is None:
        print(json.dumps({"done": True}), flush=True)
        continue
    print(json.dumps({"pass": pass_no, "documents": len(group.results), "changed": group.changed,
                      "fragments": group.fragments, "created": group.created, "write_s": group.write_seconds,
                      "prepare_s": group.prepare_seconds}), flush=True)
'''


def database(server: EmbeddedPostgres, name: str) -> str:
    with psycopg.connect(server.url(), autocommit=True) as admin:
        admin.execute(f'drop database if exists "{name}" with (force)')
        admin.execute(f'create database "{name}"')
    return server.url(name)


def checkout_env(checkout: Path) -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(checkout))


def migrate_with(checkout: Path, dsn: str) -> None:
    """Migrate `dsn` with the code of `checkout` (its own SQL and migrations), and make
    the bench org with its administrator."""
    code = (
        "import sys, psycopg; from app.db.migrate import migrate; migrate(sys.argv[1]);"
        "from app.access import ensure_admin_principal;"
        "c = psycopg.connect(sys.argv[1]); c.execute('select service.create_org(%s, %s)', (sys.argv[2], 'bench'));"
        "ensure_admin_principal(c, sys.argv[2], 'admin'); c.commit()"
    )
    subprocess.run([sys.executable, "-c", code, dsn, ORG], cwd=checkout, env=checkout_env(checkout), check=True)


class Worker:
    """One checkout's ingestion in a process of its own, a group per request."""

    def __init__(
        self, checkout: Path, dsn: str, site: Path, packages: list[str], embed: bool = False, cache: Path | None = None
    ) -> None:
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-c",
                WORKER,
                dsn,
                str(site),
                ",".join(packages),
                ORG,
                REPO,
                str(DIMS),
                "embed" if embed else "given",
                str(cache or ""),
            ],
            cwd=checkout,
            env=checkout_env(checkout),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.ready = self.read()

    def read(self) -> dict:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the worker stopped (exit {self.process.wait()})")
        return json.loads(line)

    def next_group(self) -> dict:
        assert self.process.stdin is not None
        self.process.stdin.write("next\n")
        self.process.stdin.flush()
        return self.read()

    def close(self) -> None:
        if self.process.stdin:
            self.process.stdin.close()
        self.process.wait(timeout=60)


def vector_cache(args: argparse.Namespace) -> Path | None:
    """Where `--vectors model` keeps the models' vectors between runs (none: random ones)."""
    return args.home.resolve() / "model-vectors.npz" if args.vectors == "model" else None


def site_packages() -> Path:
    return Path(sys.prefix) / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"


def summary(groups: list[dict]) -> dict:
    write_s = sum(g["write_s"] for g in groups)
    fragments = sum(g["fragments"] for g in groups)
    changed = sum(g["changed"] for g in groups)
    return {
        "groups": len(groups),
        "documents_changed": changed,
        "fragments": fragments,
        "created": sum(g["created"] for g in groups),
        "write_s": round(write_s, 2),
        "prepare_s": round(sum(g["prepare_s"] for g in groups), 2),
        "fragments_per_s": round(fragments / write_s, 1) if write_s else None,
        "ms_per_document": round(1000 * write_s / changed, 2) if changed else None,
        "group_p50_ms": round(1000 * statistics.median(g["write_s"] for g in groups), 1),
    }


def compare(args: argparse.Namespace, server: EmbeddedPostgres, site: Path) -> dict:
    sides = {"this": Path.cwd(), "against": args.against.resolve()}
    workers = {}
    for name, checkout in sides.items():
        dsn = database(server, f"bench_writes_{name}")
        migrate_with(checkout, dsn)
        workers[name] = Worker(checkout, dsn, site, args.packages, args.embed, vector_cache(args))
    groups: dict[str, list[dict]] = {name: [] for name in sides}
    i = 0
    while True:
        order = list(sides) if i % 2 == 0 else list(reversed(sides))
        answers = {name: workers[name].next_group() for name in order}
        if any(a.get("done") for a in answers.values()):
            break
        for name, answer in answers.items():
            groups[name].append(answer)
        i += 1
    for worker in workers.values():
        worker.close()
    report: dict = {name: summary(g) for name, g in groups.items()}
    for name, g in groups.items():
        # The first pass writes every file; the second, edited files (new versions).
        report[name]["passes"] = [summary([x for x in g if x["pass"] == n]) for n in (1, 2)]
    report["same_counts"] = all(
        (a["fragments"], a["created"], a["changed"]) == (b["fragments"], b["created"], b["changed"])
        for a, b in zip(groups["this"], groups["against"])
    )
    report["ratio"] = round(report["against"]["write_s"] / report["this"]["write_s"], 2)
    return report


def statements(args: argparse.Namespace, server: EmbeddedPostgres, site: Path) -> dict:
    """One side's ingestion with pg_stat_statements: where its database time goes."""
    checkout = Path.cwd() if args.side == "this" else args.against.resolve()
    with psycopg.connect(server.url(), autocommit=True) as admin:
        loaded = admin.execute("show shared_preload_libraries").fetchone()
        if loaded is None or "pg_stat_statements" not in loaded[0]:
            raise SystemExit(
                "pg_stat_statements is not loaded: `alter system set shared_preload_libraries = "
                "'pg_stat_statements'` on the bench server (--home), restart it, and run again"
            )
    name = f"bench_writes_{args.side}"
    dsn = database(server, name)
    migrate_with(checkout, dsn)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("create extension if not exists pg_stat_statements")
        # For the worker's sessions (a `set` here lasted as long as this connection).
        conn.execute(f"alter database {name} set pg_stat_statements.track = 'all'")
    worker = Worker(checkout, dsn, site, args.packages, cache=vector_cache(args))
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("select pg_stat_statements_reset()")
    groups = []
    while not (answer := worker.next_group()).get("done"):
        groups.append(answer)
    worker.close()
    with psycopg.connect(dsn, autocommit=True) as conn:
        rows = conn.execute(
            "select toplevel, calls, round(total_exec_time::numeric, 1), rows, left(regexp_replace(query, '\\s+', ' ',"
            " 'g'), 160) from pg_stat_statements where dbid = (select oid from pg_database where datname ="
            " current_database()) order by total_exec_time desc limit %s",
            (args.top,),
        ).fetchall()
    return {
        "side": args.side,
        "summary": summary(groups),
        "statements": [
            {"toplevel": top, "calls": calls, "ms": float(ms), "rows": n, "query": q} for top, calls, ms, n, q in rows
        ],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--home", type=Path, default=Path(".contexts/bench-writes"))
    parser.add_argument("--against", type=Path, required=True, help="the other checkout (e.g. main's)")
    parser.add_argument("--packages", nargs="+", default=list(PACKAGES), help="installed packages to ingest")
    parser.add_argument(
        "--embed", action="store_true", help="end to end: the configured models embed (no vectors given)"
    )
    parser.add_argument(
        "--vectors",
        choices=("random", "model"),
        default="random",
        help="given vectors: a fixed random unit vector per input, or the configured models' own (computed"
        " once before the clock, kept under --home)",
    )
    parser.add_argument("--statements", action="store_true", help="one side alone, with pg_stat_statements")
    parser.add_argument("--side", choices=("this", "against"), default="this")
    parser.add_argument("--top", type=int, default=40, help="statements listed with --statements")
    args = parser.parse_args(argv)
    server = EmbeddedPostgres(args.home.resolve() / "pgdata")
    site = site_packages()
    report = statements(args, server, site) if args.statements else compare(args, server, site)
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
