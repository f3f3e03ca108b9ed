"""`make bench`: ingest throughput and retrieval latency on a corpus of >= 20,000
fragments (the installed Python packages' sources and docs), lexical, dense and
hybrid measured separately; what the ranking layer (the blend, docs/adr/0014) adds to
hybrid retrieval, against relevance alone in the same run; our candidates SQL against a
hand-written SQL hybrid (app.bench.reference), for ordinary and for long queries; and the
citation-authority refresh of the corpus and of synthetic graphs of fixed sizes
(docs/adr/0013). Figures go to stdout and bench-results/latest.json."""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import msgspec
import psycopg
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from app.access import act_as, ensure_admin_principal
from app.authority import refresh as refresh_authority
from app.bench import authority as bench_authority
from app.bench import engines as bench_engines
from app.bench import ingest as bench_ingest
from app.bench import reference as bench_reference
from app.bench import rerank as bench_rerank
from app.bench import scale as bench_scale
from app.bench.stats import percentile
from app.db.embedded import EmbeddedPostgres
from app.db.migrate import migrate
from app.db.sql import scalar
from app.ingest.batches import ingest_groups
from app.ingest.normalize import RejectedDocument, SourceDocument
from app.ingest.pipeline import IngestPipeline, PreparedDocument
from app.ingest.readings import write_readings
from app.operations.profiles import description_vectors, set_profile_on
from app.retrieve.blend import blend
from app.retrieve.candidates import fetch_candidates
from app.retrieve.fusion import fusion_spec
from app.retrieve.service import Retriever
from app.retrieve.usage_fold import folding
from app.scope import Scope
from app.settings import Settings
from app.text.embed import Embedder, embedders
from app.wire.bodies import RankingProfileSet
from app.wire.retrieve import (
    DEFAULT_BUDGET_TOKENS,
    DEFAULT_K_DENSE,
    DEFAULT_K_LEXICAL,
    DEFAULT_RERANK_TOP,
    RetrieveRequest,
    check_text,
)

console = Console(stderr=True, soft_wrap=True)
PACKAGES = (
    "sqlalchemy",
    "litestar",
    "alembic",
    "psycopg",
    "rich",
    "click",
    "markdown_it",
    "pygments",
    "transformers",
    "sentence_transformers",
    "tree_sitter",
    "httpx",
    "anyio",
    "msgspec",
    "pytest",
    "_pytest",
    "mako",
    "uvicorn",
    "numpy",
    "scipy",
    "sklearn",
    "torch",
)
SUFFIXES = {".py", ".md", ".rst", ".txt"}
ORG = "bench"
ADMIN = "admin"
CORPUS_REPO = "site-packages"
"""The repo of the bench org that holds the corpus (`bench --load` writes elsewhere)."""


def corpus_files(site_packages: Path) -> list[Path]:
    """Package descriptions (prose: each dist-info METADATA holds the README) first,
    then the packages' own sources and docs."""
    files: list[Path] = sorted(p for p in site_packages.glob("*.dist-info/METADATA") if p.stat().st_size < 400_000)
    for package in PACKAGES:
        root = site_packages / package
        if root.is_dir():
            files.extend(text_files(root))
    return files


def text_files(root: Path) -> list[Path]:
    """Sources and docs under `root` (the bench's corpus when `--corpus` names a folder)."""
    return sorted(
        p
        for p in root.rglob("*")
        if p.suffix in SUFFIXES and p.is_file() and "__pycache__" not in p.parts and p.stat().st_size < 400_000
    )


def source_document(path: Path, site: Path) -> SourceDocument:
    """A corpus file as the bench ingests it: named relative to site-packages."""
    return SourceDocument(path=path.relative_to(site).as_posix(), content=path.read_bytes(), author="bench")


def prepared_documents(pipeline: IngestPipeline, files: list[Path], site: Path) -> Iterator[PreparedDocument]:
    for path in files:
        try:
            yield pipeline.prepare(source_document(path, site))
        except RejectedDocument:
            continue


def sample_queries(conn: psycopg.Connection, n: int, seed: int) -> list[str]:
    """Symbols (exact identifiers) and first lines of prose sections: what agents ask."""
    rows = conn.execute(
        "select symbol, heading_path, left(text, 200) from data.fragments where org_id = %s and repo_id = %s"
        " and active order by fragment_id",
        (ORG, CORPUS_REPO),
    ).fetchall()
    rng = random.Random(seed)
    rng.shuffle(rows)
    queries: list[str] = []
    for symbol, headings, text in rows:
        if symbol and len(queries) % 2 == 0:
            query = symbol.split(".")[-1]
        elif len(text.split()) >= 3:
            query = " ".join([*headings[-1:], *text.split()[:6]])
        else:
            continue
        try:
            check_text("query", query)  # what the API would refuse (a symbol "_") is no query
        except ValueError:
            continue
        queries.append(query)
        if len(queries) >= n:
            break
    return queries


def rls_overhead(conn: psycopg.Connection, retriever: Retriever, queries: list[str]) -> dict:
    """The one SQL call of a hybrid retrieval, as a DBA who bypasses row-level security
    and as a principal under it, interleaved query by query (same embeddings)."""
    bypass: list[float] = []
    rls: list[float] = []
    for q in queries:
        embeddings = retriever.query_embeddings(q)
        fusion = fusion_spec(retriever.config, q)
        for timings, as_principal in ((bypass, False), (rls, True)):
            if as_principal:
                act_as(conn, ORG, ADMIN)
            started = time.perf_counter()
            fetch_candidates(
                conn, Scope(ORG), q, embeddings, DEFAULT_K_LEXICAL, DEFAULT_K_DENSE, retriever.config.rrf_k, fusion
            )
            timings.append((time.perf_counter() - started) * 1000)
            conn.rollback()
    b50, r50 = percentile(bypass, 50), percentile(rls, 50)
    return {
        "queries": len(queries),
        "bypass_p50_ms": round(b50, 1),
        "rls_p50_ms": round(r50, 1),
        "bypass_p95_ms": round(percentile(bypass, 95), 1),
        "rls_p95_ms": round(percentile(rls, 95), 1),
        "ratio_p50": round(r50 / b50, 2),
    }


RELEVANCE = "bench-relevance"
"""A persona whose profile weighs relevance alone (w_rerank 1, the rest 0): the ranking
before the blend. The SQL call then reads no authority and no persona evidence (a term
weighted 0 is not computed); what remains of the ranking layer is the profile look-up
and the Python blend over the ranked candidates, both measured on their own."""
BLENDED = "bench-blend"
"""A persona with no profile of its own: the blend at the built-in defaults (relevance,
freshness, authority, pinned; persona weight 0), what every retrieval pays."""
DESCRIBED = "bench-persona"
"""The defaults plus the persona term (w_persona 0.1) for a persona with a description
(embedded as the service does) and no fragments: the blend with every term computed."""
DESCRIPTION = "Database access: SQL queries, connection pools, transactions, schema migrations and ORM sessions."
VARIANTS = {RELEVANCE: "relevance_only", BLENDED: "blend_defaults", DESCRIBED: "blend_with_persona_term"}


def blend_profiles(conn: psycopg.Connection, embedders: dict[str, Embedder]) -> None:
    """The personas the blend is measured with (no fragments of their own, so all
    retrieve from the same candidates) and their profiles."""
    for persona in VARIANTS:
        conn.execute("select service.ensure_scope(%s, null, %s, null)", (ORG, persona))
    conn.commit()
    described = msgspec.convert(
        {"org_id": ORG, "persona_id": DESCRIBED, "w_persona": 0.1, "description": DESCRIPTION}, RankingProfileSet
    )
    vectors = description_vectors(embedders, described)
    act_as(conn, ORG, ADMIN)
    conn.execute("select from service.ranking_profile_set(%s, %s, 1, 0, 0, 0, 0)", (ORG, RELEVANCE))
    set_profile_on(conn, described, vectors)
    conn.commit()


def blend_overhead(
    conn: psycopg.Connection, retriever: Retriever, embedders: dict[str, Embedder], queries: list[str]
) -> dict:
    """Hybrid retrieval with relevance alone (the "before") and with the blend, at its
    defaults and with the persona term, interleaved query by query (the order rotates),
    each query's vectors computed once and shared, so the differences are the ranking
    layer's. Then what the relevance-only run still pays: the profile look-up (one SQL
    function call against a constant of the same type, same round trip) and the Python
    blend."""
    blend_profiles(conn, embedders)
    timings: dict[str, list[float]] = {persona: [] for persona in VARIANTS}
    deltas: dict[str, list[float]] = {BLENDED: [], DESCRIBED: []}
    personas = list(VARIANTS)
    for i, q in enumerate(queries):
        vectors = retriever.query_embeddings(q)
        took: dict[str, float] = {}
        for persona in personas[i % 3 :] + personas[: i % 3]:
            request = msgspec.convert(
                {"query": q, "scope": {"org_id": ORG, "persona_id": persona}, "budget_tokens": DEFAULT_BUDGET_TOKENS},
                RetrieveRequest,
            )
            started = time.perf_counter()
            act_as(conn, ORG, ADMIN)
            retriever.retrieve(conn, request, vectors)
            conn.commit()
            took[persona] = (time.perf_counter() - started) * 1000
            timings[persona].append(took[persona])
        for persona, added in deltas.items():
            added.append(took[persona] - took[RELEVANCE])
    # The Python blend alone, on one ranking with every term.
    act_as(conn, ORG, ADMIN)
    request = msgspec.convert({"query": queries[0], "scope": {"org_id": ORG, "persona_id": DESCRIBED}}, RetrieveRequest)
    ranking = retriever.rank(conn, request)
    conn.rollback()
    blend_ms: list[float] = []
    for _ in range(200):
        started = time.perf_counter()
        blend(ranking.ranked + ranking.pinned, ranking.profile, datetime.now(UTC))
        blend_ms.append((time.perf_counter() - started) * 1000)
    profile_ms: list[float] = []
    calls = (
        ("select data._ranking_profile(%s, %s)", (ORG, BLENDED)),
        ("select %s::text || %s::text", (ORG, BLENDED)),
    )
    for i in range(2 * len(queries)):
        act_as(conn, ORG, ADMIN)
        spent = {}
        for sql, args in calls if i % 2 == 0 else calls[::-1]:
            started = time.perf_counter()
            conn.execute(sql, args).fetchone()
            spent[sql] = (time.perf_counter() - started) * 1000
        profile_ms.append(spent[calls[0][0]] - spent[calls[1][0]])
        conn.rollback()
    p50 = {persona: percentile(values, 50) for persona, values in timings.items()}
    return {
        "queries": len(queries),
        "without": "relevance_only: profile w_rerank 1, the rest 0 (no authority or persona look-up in SQL)",
        **{
            VARIANTS[persona]: {
                "p50_ms": round(p50[persona], 2),
                "p95_ms": round(percentile(values, 95), 2),
                "mean_ms": round(statistics.fmean(values), 2),
            }
            for persona, values in timings.items()
        },
        "added_p50_ms": {VARIANTS[p]: round(p50[p] - p50[RELEVANCE], 2) for p in deltas},
        "added_paired_median_ms": {VARIANTS[p]: round(statistics.median(d), 2) for p, d in deltas.items()},
        "left_in_relevance_only": {
            "profile_lookup_ms": round(statistics.median(profile_ms), 3),
            "python_blend_ms": round(statistics.median(blend_ms), 3),
            "ranked_candidates": len(ranking.ranked),
        },
    }


def bench_database(home: Path, reuse: bool) -> str:
    """The `bench` database of the embedded server under `home`, new unless reused."""
    server = EmbeddedPostgres(home.resolve() / "pgdata")
    with psycopg.connect(server.url(), autocommit=True) as admin:
        exists = admin.execute("select 1 from pg_database where datname = 'bench'").fetchone()
        if exists and not reuse:
            admin.execute("drop database bench with (force)")
        if not exists or not reuse:
            admin.execute("create database bench")
    return server.url("bench")


def build_corpus(dsn: str, pipeline: IngestPipeline, target: int, site: Path, corpus: Path | None = None) -> dict:
    """The bench org with at least `target` active fragments in its corpus repo: what is
    missing is ingested from `corpus` (a folder), else from `site` (the installed
    packages), then the database is
    vacuumed and analysed. Returns `corpus_fragments`, and `ingest` figures when it ingested."""
    results: dict = {}
    with psycopg.connect(dsn) as conn:
        conn.execute("select service.create_org(%s)", (ORG,))
        ensure_admin_principal(conn, ORG, ADMIN)
        pipeline.register_models(conn)
        conn.commit()
        active_sql = "select count(*) from data.fragments where org_id = %s and repo_id = %s and active"
        have = scalar(conn, active_sql, (ORG, CORPUS_REPO))
        if have < target:
            for model in pipeline.embedders.values():
                model.load()
            root = corpus.resolve() if corpus else site
            files = text_files(root) if corpus else corpus_files(site)
            prepare_s = write_s = 0.0
            chunks = written = created = ingested = 0
            with Progress(
                TextColumn("ingesting"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console
            ) as progress:
                task = progress.add_task("ingest", total=target)
                # Until the corpus holds the target number of *active* fragments (near
                # duplicates collapse, so more chunks than that are written).
                for group in ingest_groups(
                    conn,
                    pipeline,
                    Scope(ORG, CORPUS_REPO),
                    ADMIN,
                    files,
                    lambda path: source_document(path, root),
                    size=16,
                ):
                    prepare_s += group.prepare_seconds
                    write_s += group.write_seconds
                    written += group.fragments
                    created += group.created
                    chunks += sum(len(p.chunks) for p in group.prepared)
                    ingested += len(group.prepared)
                    have = scalar(conn, active_sql, (ORG, CORPUS_REPO))
                    progress.update(task, completed=have)
                    if have >= target:
                        break
                else:
                    console.print(f"[yellow]corpus exhausted at {have} fragments[/]")
            results["ingest"] = {
                "files": ingested,
                "chunks": chunks,
                "fragments_written": written,
                "fragments_new": created,
                "prepare_seconds": round(prepare_s, 2),
                "write_embed_seconds": round(write_s, 2),
                "fragments_per_second": round(chunks / (prepare_s + write_s), 2),
            }
        results["corpus_fragments"] = have
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("vacuum analyze")
    return results


def add_corpus_arguments(parser: argparse.ArgumentParser, report: str) -> None:
    """Where the bench corpus lives and how big it is (make bench and make bench-load)."""
    parser.add_argument("--fragments", type=int, default=20_000, help="corpus size, in fragments")
    parser.add_argument("--home", type=Path, default=Path(".contexts/bench"), help="embedded server data")
    parser.add_argument(
        "--db-url",
        default=None,
        help="an existing database to bench in (as the migrator) instead of the embedded server",
    )
    parser.add_argument("--reuse", action="store_true", help="keep an already ingested bench corpus")
    parser.add_argument(
        "--corpus",
        type=Path,
        default=None,
        help="a folder whose sources and docs make the corpus (default: the installed packages)",
    )
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--out", type=Path, default=Path("bench-results"), help=f"where {report} goes")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m app.bench", description=__doc__)
    parser.add_argument("--queries", type=int, default=200, help="queries per retrieval mode")
    parser.add_argument(
        "--authority-fragments",
        type=int,
        nargs="*",
        default=[20_000, 100_000],
        metavar="N",
        help="sizes of the synthetic citation graphs whose authority refresh is timed, in an org of their own"
        " written straight into the bench database after the retrieval figures (none: skip). This adds"
        " minutes: on a loaded 2-core machine seeding took 18 s at 20,000 and 83 s at 100,000, a refresh"
        " 2.4 s and 19 s, removing the org about 15 s: about 3.5 minutes for the defaults",
    )
    parser.add_argument(
        "--authority-repeat", type=int, default=3, help="refreshes per synthetic size (best and median kept)"
    )
    parser.add_argument(
        "--copies",
        type=int,
        default=1,
        help="copies of the corpus in the bench org (app.bench.scale: written through the pipeline, vectors"
        " reused): 5 makes a 100k-fragment tenant of a 20k corpus",
    )
    parser.add_argument(
        "--tenants",
        type=int,
        default=0,
        help="orgs holding one more copy each: the database's size (45 with --copies 5: 1M fragments)",
    )
    parser.add_argument(
        "--ingest-reference",
        type=int,
        default=2000,
        metavar="N",
        help="fragments of the corpus embedded and inserted by hand, beside our ingest rate (0: skip)",
    )
    parser.add_argument(
        "--no-engines",
        action="store_true",
        help="skip Tantivy, bm25s and LanceDB beside ours (app.bench.engines; skipped anyway without the extra)",
    )
    add_corpus_arguments(parser, "latest.json")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    settings = Settings.from_env()
    site = Path(psycopg.__file__).resolve().parents[1]
    dsn = args.db_url or bench_database(args.home, args.reuse)
    migrate(dsn)
    models = embedders(settings)
    pipeline = IngestPipeline(settings, models)
    results: dict = {
        "settings": {
            "embed_dtype": next(iter(models.values())).dtype,
            "torch_threads": settings.torch_threads,
            "max_fragment_tokens": settings.max_fragment_tokens,
        }
    }

    results.update(build_corpus(dsn, pipeline, args.fragments, site, args.corpus))
    scale = bench_scale.make_copies(dsn, pipeline, ORG, ADMIN, CORPUS_REPO, args.copies, args.tenants, console)
    if scale:
        results["scale"] = scale
        results["corpus_fragments"] = scale["tenant_fragments"]
    with psycopg.connect(dsn) as conn:
        # A reused database may hold fragments stored before ingestion wrote readings.
        written = write_readings(conn)
        results["readings_written"] = {"fragments": written.written, "s": round(written.seconds, 1)}
        # Citation authority of the corpus: one refresh (as after an ingestion), timed.
        done = refresh_authority(conn)
        results["authority_refresh"] = {"ms": round(done.duration_ms, 1), "scored": done.scored}

    retriever = Retriever(models, None, query_cache=0)  # each retrieval embeds its query
    # The usage roll-ups folded as the service folds them, after each answer on a
    # connection of their own (app.retrieve.usage_fold), not by a write's backstop.
    with psycopg.connect(dsn) as conn, folding(retriever, conn):
        queries = sample_queries(conn, args.queries, args.seed)
        modes = {
            "lexical": {"k_lexical": DEFAULT_K_LEXICAL, "k_dense": 0},
            "dense": {"k_lexical": 0, "k_dense": DEFAULT_K_DENSE},
            "hybrid": {"k_lexical": DEFAULT_K_LEXICAL, "k_dense": DEFAULT_K_DENSE},
        }
        results["retrieval"] = {}
        for mode, ks in modes.items():
            for q in queries[:5]:  # warm caches and the model
                act_as(conn, ORG, ADMIN)
                retriever.retrieve(conn, msgspec.convert({"query": q, "scope": {"org_id": ORG}, **ks}, RetrieveRequest))
                conn.commit()
            timings = []
            for q in queries:
                request = msgspec.convert(
                    {"query": q, "scope": {"org_id": ORG}, "budget_tokens": DEFAULT_BUDGET_TOKENS, **ks},
                    RetrieveRequest,
                )
                started = time.perf_counter()
                # As an HTTP request does: bind the principal, read under row-level security.
                act_as(conn, ORG, ADMIN)
                retriever.retrieve(conn, request)
                conn.commit()
                timings.append((time.perf_counter() - started) * 1000)
            results["retrieval"][mode] = {
                "queries": len(timings),
                "p50_ms": round(percentile(timings, 50), 1),
                "p95_ms": round(percentile(timings, 95), 1),
                "mean_ms": round(statistics.fmean(timings), 1),
            }
        results["rls_overhead"] = rls_overhead(conn, retriever, queries)
        results["blend_overhead"] = blend_overhead(conn, retriever, models, queries)
        results["rerank_overhead"] = bench_rerank.measure(conn, models, ORG, ADMIN, queries)
        results["rerank_overhead_default_top"] = bench_rerank.measure(
            conn, models, ORG, ADMIN, queries, DEFAULT_RERANK_TOP
        )
        # The same queries (and long ones) through a hand-written SQL hybrid, interleaved.
        results["reference"] = bench_reference.measure(conn, retriever, ORG, ADMIN, queries, args.seed)
        if not args.no_engines:
            # Tantivy and bm25s beside our BM25, LanceDB beside our hybrid (the bench extra).
            long = bench_reference.long_queries(conn, ORG, len(queries), args.seed)
            results["engines_lexical"] = bench_engines.lexical(conn, ORG, {"ordinary": queries, "long": long})
            results["engines_hybrid"] = bench_engines.hybrid(conn, retriever, ORG, ADMIN, queries)
            for key in ("engines_lexical", "engines_hybrid"):
                if "skipped" in results[key]:
                    console.print(f"[yellow]{key}: {results[key]['skipped']}[/]")
        if args.ingest_reference > 0:
            # Ingestion's reference: the corpus's own texts embedded and inserted by hand.
            results["ingest_reference"] = bench_ingest.measure(conn, models, ORG, args.ingest_reference)

    if args.authority_fragments:
        # Refresh cost at fixed sizes (docs/adr/0013) on a synthetic graph in an org of its
        # own, after the retrieval figures; the org is removed again afterwards.
        results["authority_refresh_synthetic"] = bench_authority.measure(
            dsn, args.authority_fragments, repeat=args.authority_repeat
        )

    table = Table(title=f"Contexts bench: {results['corpus_fragments']} active fragments")
    table.add_column("measure")
    table.add_column("value", justify="right")
    if "ingest" in results:
        table.add_row("ingest fragments/s (chunk+dedupe+embed+write)", str(results["ingest"]["fragments_per_second"]))
    if "ingest_reference" in results:
        ir = results["ingest_reference"]
        table.add_row(
            "hand-written ingest reference: fragments/s (embed + insert, same texts); embedding's share",
            f"{ir['fragments_per_second']}; {ir['embed_share']:.0%} ({ir['fragments']} fragments)",
        )
    if "scale" in results:
        sc = results["scale"]
        table.add_row(
            "tenant / database active fragments (copies, vectors reused)",
            f"{sc['tenant_fragments']} / {sc['database_fragments']}",
        )
        if sc["fragments_per_second_without_embedding"]:
            table.add_row(
                "copies written: fragments/s without embedding (chunk+dedupe+write)",
                str(sc["fragments_per_second_without_embedding"]),
            )
    for mode, r in results["retrieval"].items():
        table.add_row(f"{mode} retrieve p50 / p95 (ms)", f"{r['p50_ms']} / {r['p95_ms']}")
    table.add_row("citation authority refresh (ms)", str(results["authority_refresh"]["ms"]))
    r = results["rls_overhead"]
    table.add_row(
        "candidates SQL p50, DBA (no RLS) / principal (RLS) (ms)",
        f"{r['bypass_p50_ms']} / {r['rls_p50_ms']}  (x{r['ratio_p50']})",
    )
    b = results["blend_overhead"]
    for variant, label in (
        ("relevance_only", "relevance only, before the blend"),
        ("blend_defaults", "with the blend (defaults)"),
        ("blend_with_persona_term", "with the blend + persona term"),
    ):
        table.add_row(f"hybrid p50 / p95, {label} (ms)", f"{b[variant]['p50_ms']} / {b[variant]['p95_ms']}")
    for variant, label in (("blend_defaults", "blend"), ("blend_with_persona_term", "blend + persona term")):
        table.add_row(
            f"{label} adds to hybrid p50; paired median (ms)",
            f"{b['added_p50_ms'][variant]}; {b['added_paired_median_ms'][variant]}",
        )
    left = b["left_in_relevance_only"]
    table.add_row(
        "left in relevance only: profile look-up / Python blend (ms)",
        f"{left['profile_lookup_ms']} / {left['python_blend_ms']}",
    )
    for rr in (results["rerank_overhead"], results["rerank_overhead_default_top"]):
        top, sc = rr["rerank_top"], rr["scoring_cpu"]
        table.add_row(
            f"hybrid p50, {top} candidates, fused order / learned reranker (ms); added p50; paired median",
            f"{rr['fused']['p50_ms']} / {rr['learned']['p50_ms']}; {rr['added_p50_ms']};"
            f" {rr['added_paired_median_ms']}",
        )
        table.add_row(
            f"learned reranker scoring {top} alone, CPU: cold p50 / p95, its features cold p50, warm p50 (ms)",
            f"{sc['cold_p50_ms']} / {sc['cold_p95_ms']}, {sc['cold_features_p50_ms']}, {sc['warm_p50_ms']}",
        )
    ref = results["reference"]
    e2e = ref["hybrid_end_to_end"]
    table.add_row(
        "hybrid retrieve end to end p50 / p95, ours vs query embedding + hand-written SQL reference (ms)",
        f"{e2e['ours']['p50_ms']} / {e2e['ours']['p95_ms']} vs {e2e['reference']['p50_ms']} / "
        f"{e2e['reference']['p95_ms']}  (x{e2e['ratio_p50']})",
    )
    for label, key in (
        ("hybrid", "hybrid"),
        ("long queries, lexical", "long_lexical"),
        ("long queries, hybrid", "long_hybrid"),
    ):
        r = ref[key]
        table.add_row(
            f"{label}: candidates SQL p50 / p95, ours vs hand-written SQL reference (ms)",
            f"{r['ours']['p50_ms']} / {r['ours']['p95_ms']} vs {r['reference']['p50_ms']} / "
            f"{r['reference']['p95_ms']}  (x{r['ratio_p50']}, {r['terms_median']} terms)",
        )
    for label, r in ref["lexical_pruning"].items():
        table.add_row(
            f"BM25 top {DEFAULT_K_LEXICAL}, {label} queries: pruned vs every posting scored, p50 / p95 (ms)",
            f"{r['pruned']['p50_ms']} / {r['pruned']['p95_ms']} vs {r['every_posting']['p50_ms']} / "
            f"{r['every_posting']['p95_ms']}  (x{r['ratio_p50']}, {r['differing_top_k']} of {r['queries']} differ)",
        )
    engines = results.get("engines_lexical")
    if engines and "skipped" not in engines:
        for row in bench_engines.engine_rows(engines):
            table.add_row(f"BM25 top {DEFAULT_K_LEXICAL}, {row[0]}", row[1])
    lance = results.get("engines_hybrid")
    if lance and "skipped" not in lance:
        table.add_row(
            "hybrid p50 / p95, our candidates SQL / whole retrieval vs LanceDB hybrid, same vectors (ms)",
            f"{lance['candidates']['p50_ms']} / {lance['candidates']['p95_ms']}, {lance['whole']['p50_ms']} /"
            f" {lance['whole']['p95_ms']} vs {lance['lancedb']['p50_ms']} / {lance['lancedb']['p95_ms']}"
            f"  (x{lance['candidates_over_lancedb']['p50']}, x{lance['whole_over_lancedb']['p50']})",
        )
    for key in ("engines_lexical", "engines_hybrid"):
        if "skipped" in results.get(key, {}):
            table.add_row(key, f"skipped: {results[key]['skipped']}")
    for r in results.get("authority_refresh_synthetic", []):
        table.add_row(
            f"authority refresh, synthetic {r['fragments']} fragments / {r['links']} links: best / median (ms)",
            f"{r['refresh_ms_best']} / {r['refresh_ms_median']}  (seeded in {r['seed_seconds']} s)",
        )
    Console().print(table)
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    (out / "latest.json").write_text(json.dumps(results, indent=2))
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
