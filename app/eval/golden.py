"""Layer 1: golden sets. Ingest a BEIR corpus through the ingestion lane into an org of
its own (kept between runs), run every labelled query through the retrieval lane, and
score each stage at document level, or per fragment for a set whose labels name
fragments (`ID#L<n>`, app/eval/beir.py).

Stages, each through the `Retriever` the HTTP endpoint uses:
- lexical: `Retriever.candidates` with k_dense = 0 (BM25 only);
- dense:   `Retriever.candidates` with k_lexical = 0 (cosine only);
- hybrid:  `Retriever.rank`'s fused candidate list (one SQL call, both lists fused);
- full:    `Retriever.rank`'s final order (reranked top `rerank_top`, then the rest of
           the fused list); without a reranker it is the hybrid order, and says so.

What eval leaves out of `Retriever.retrieve`: budget composition (metrics need a
ranked list of `depth` candidates, not a 4k-token prompt) and the trace row (thousands
of eval queries would bury the real traces that `eval replay` reads).
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import psycopg

from app.access import act_as, ensure_admin_principal
from app.eval import beir
from app.eval.embedding_cache import CorpusVectors, with_rounding
from app.eval.metrics import Span, fragment_ranking, mean, score_query
from app.eval.stages import DEFAULT_DEPTH, STAGES
from app.ingest.batches import ingest_groups
from app.ingest.dedupe import VERSION as SIMHASH_VERSION
from app.ingest.normalize import SourceDocument
from app.ingest.pipeline import IngestPipeline
from app.retrieve.candidates import Candidate
from app.retrieve.service import Retriever
from app.scope import Scope
from app.text.embed import model_label
from app.text.versions import CHUNKER_VERSION
from app.wire.retrieve import DEFAULT_K_DENSE, DEFAULT_K_LEXICAL, DEFAULT_RERANK_TOP, RetrieveRequest

EVAL_INGEST_VERSION = "2"
"""Bump when how a corpus document becomes a SourceDocument changes (paths, title), or
what ingestion records of it (2: the references of the citation graph)."""
EVAL_PRINCIPAL = "eval"
"""Principal of an eval org: writes the corpus and reads it as the service does (bound
to each transaction, under the service role, so row-level security applies)."""

Progress = Callable[[str, int, int], None]
"""progress(phase, done, total)."""


@dataclass(slots=True)
class GoldenOptions:
    stages: tuple[str, ...] = STAGES
    depth: int = DEFAULT_DEPTH
    rerank_top: int = DEFAULT_RERANK_TOP
    kind: str = "auto"
    out_dir: Path | None = None
    vectors_dir: Path | None = None
    """The eval lane's corpus vectors (eval/embeddings/, docs/adr/0024): the set's file
    there is read before any model runs, and every corpus vector is rounded through
    float16. None: every text is embedded, in the embedder's precision."""


@dataclass(slots=True)
class IngestStats:
    org: str
    documents: int
    ingested_now: int
    refused: list[str] = field(default_factory=list)
    dropped_orgs: list[str] = field(default_factory=list)
    seconds: float = 0.0


def lexical_version(conn: psycopg.Connection) -> str:
    """Digest of the SQL that turns text into BM25 terms (changes re-index the corpus)."""
    row = conn.execute(
        "select md5(string_agg(pg_get_functiondef(p.oid), E'\\n' order by p.oid::regprocedure::text)) "
        "from pg_proc p where p.pronamespace = 'api'::regnamespace "
        "and p.proname in ('lexical_tsvector', 'lexical_document')"
    ).fetchone()
    return ((row[0] if row else None) or "none")[:12]


def pipeline_version(conn: psycopg.Connection, pipeline: IngestPipeline) -> dict:
    """Everything an ingested copy of a corpus depends on."""
    settings = pipeline.settings
    version = {
        "chunker_version": CHUNKER_VERSION,
        "simhash": SIMHASH_VERSION,
        "embedding_models": {ns: model_label(e.name) for ns, e in sorted(pipeline.embedders.items())},
        "embed_dtype": next(iter(pipeline.embedders.values())).dtype,  # `auto` resolved
        "max_fragment_tokens": settings.max_fragment_tokens,
        "overlap_tokens": settings.overlap_tokens,
        "lexical": lexical_version(conn),
        "eval_ingest": EVAL_INGEST_VERSION,
    }
    return with_rounding(version, pipeline.embedders.values())


def org_id_for(dataset_name: str, content_hash: str, version: dict, kind: str) -> str:
    key = hashlib.sha256(json.dumps([content_hash, version, kind], sort_keys=True).encode()).hexdigest()[:10]
    slug = re.sub(r"[^a-z0-9_.-]+", "-", dataset_name.lower()).strip("-._") or "set"
    return f"{org_prefix(slug)[:51]}{key}"


def org_prefix(slug: str) -> str:
    return f"eval-{slug}-"


def ensure_ingested(
    conn: psycopg.Connection,
    pipeline: IngestPipeline,
    dataset: beir.Dataset,
    org: str,
    kind: str,
    progress: Progress | None = None,
) -> IngestStats:
    """Ingest the corpus into `org` unless it is there already; resume an interrupted
    ingestion (documents already present are skipped); drop this dataset's stale orgs."""
    started = time.perf_counter()
    prefix = org[: org.rindex("-") + 1]
    stale = [
        r[0]
        for r in conn.execute(
            "select org_id from data.orgs where starts_with(org_id, %s) and org_id <> %s order by org_id", (prefix, org)
        ).fetchall()
        if re.fullmatch(re.escape(prefix) + "[0-9a-f]{10}", r[0])
    ]
    for old in stale:
        drop_org(conn, old)
    conn.execute("select service.create_org(%s, %s)", (org, f"eval copy of {dataset.name}"))
    ensure_admin_principal(conn, org, EVAL_PRINCIPAL)
    pipeline.register_models(conn)  # as the migrator; the principal then only writes
    conn.commit()
    present = {r[0] for r in conn.execute("select path from data.documents where org_id = %s", (org,)).fetchall()}
    docs = list(dataset.corpus())
    todo = [d for d in docs if beir.document_path(d.id, kind) not in present]
    stats = IngestStats(org, len(docs), 0, dropped_orgs=stale)
    scope = Scope(org)
    done = len(docs) - len(todo)
    if progress:
        progress("ingest", done, len(docs))

    def source(doc: beir.CorpusDoc) -> SourceDocument:
        return beir.source_document(doc, kind)

    for group in ingest_groups(conn, pipeline, scope, EVAL_PRINCIPAL, todo, source):
        stats.refused.extend(f"{doc.id}: {exc}" for doc, exc in group.refused)
        stats.ingested_now += len(group.prepared)
        done += group.items
        if progress:
            progress("ingest", done, len(docs))
    if stats.ingested_now:
        # Citation authority of what was just written (the service does it in the
        # background; here the queries follow at once).
        conn.execute("select service.refresh_authority()")
        conn.commit()
    stats.seconds = time.perf_counter() - started
    return stats


def drop_org(conn: psycopg.Connection, org: str) -> None:
    """Delete an org (its rows cascade). Its emptied partitions stay, as for any deleted
    org (the partition design keeps them). Needs the migrator's connection."""
    conn.execute("delete from data.orgs where org_id = %s", (org,))
    conn.commit()


def fragment_documents(conn: psycopg.Connection, org: str, kind: str) -> dict[int, list[str]]:
    """Fragment id -> corpus ids of every live source (near-duplicates collapse into one
    fragment with several sources: retrieving it retrieves each of those documents)."""
    out: dict[int, list[str]] = {}
    for fragment_id, path in conn.execute(
        "select s.fragment_id, d.path from data.fragment_sources s join data.documents d using (doc_id) "
        "where d.org_id = %s and s.retired_at is null order by s.fragment_id, d.path",
        (org,),
    ):
        out.setdefault(fragment_id, []).append(beir.corpus_id(path, kind))
    return out


def fragment_spans(conn: psycopg.Connection, org: str, kind: str) -> dict[int, list[Span]]:
    """Fragment id -> (corpus id, first line, last line) of every live source."""
    out: dict[int, list[Span]] = {}
    for fragment_id, path, start, end in conn.execute(
        "select s.fragment_id, d.path, s.start_line, s.end_line from data.fragment_sources s "
        "join data.documents d using (doc_id) where d.org_id = %s and s.retired_at is null "
        "order by s.fragment_id, d.path, s.start_line",
        (org,),
    ):
        out.setdefault(fragment_id, []).append((beir.corpus_id(path, kind), start, end))
    return out


def fragment_keys(candidates: list[Candidate], spans: dict[int, list[Span]], kind: str) -> list[tuple[str, list[Span]]]:
    """Each candidate as (its own key `ID#Lstart-Lend` of the cited source, its spans):
    fragment_ranking's input."""
    out: list[tuple[str, list[Span]]] = []
    for c in candidates:
        own = spans.get(c.fragment_id, [])
        cited = beir.corpus_id(c.path, kind)
        span = next((s for s in own if s[0] == cited), None)
        key = f"{cited}#L{span[1]}-L{span[2]}" if span else f"{cited}#fragment-{c.fragment_id}"
        out.append((key, own))
    return out


def labels_without_fragment(dataset: beir.Dataset, spans: dict[int, list[Span]]) -> int:
    """Relevant fragment labels that no fragment's line range holds (they count as misses:
    a label past the end of its document, or a document that was refused)."""
    ranges: dict[str, list[tuple[int, int]]] = {}
    for sources in spans.values():
        for doc, start, end in sources:
            ranges.setdefault(doc, []).append((start, end))
    missing = 0
    for query_id in dataset.queries:
        for label, grade in dataset.qrels[query_id].items():
            fragment = beir.fragment_label(label)
            if grade > 0 and fragment and not any(a <= fragment[1] <= b for a, b in ranges.get(fragment[0], ())):
                missing += 1
    return missing


def document_ranking(candidates: list[Candidate], sources: dict[int, list[str]], kind: str) -> list[str]:
    """Corpus ids in rank order: each fragment's cited document first, then its other
    sources; a document counts once, at its best fragment."""
    out: list[str] = []
    seen: set[str] = set()
    for c in candidates:
        cited = beir.corpus_id(c.path, kind)
        for doc in (cited, *sources.get(c.fragment_id, ())):
            if doc not in seen:
                seen.add(doc)
                out.append(doc)
    return out


def stage_rankings(
    retriever: Retriever, conn: psycopg.Connection, query: str, org: str, options: GoldenOptions
) -> dict[str, list[Candidate]]:
    def request(k_lexical: int, k_dense: int) -> RetrieveRequest:
        return msgspec.convert(
            {
                "query": query,
                "scope": {"org_id": org},
                "k_lexical": k_lexical,
                "k_dense": k_dense,
                "rerank_top": options.rerank_top,
            },
            RetrieveRequest,
        )

    out: dict[str, list[Candidate]] = {}
    act_as(conn, org, EVAL_PRINCIPAL)
    if "lexical" in options.stages:
        out["lexical"] = retriever.candidates(conn, request(options.depth, 0))
    if "dense" in options.stages:
        out["dense"] = retriever.candidates(conn, request(0, options.depth))
    if "hybrid" in options.stages or "full" in options.stages:
        # The production list depths (the configuration's, else the request defaults):
        # fusion depends on them, and its fused list holds enough documents anyway.
        ranking = retriever.rank(conn, retriever.config.apply(request(DEFAULT_K_LEXICAL, DEFAULT_K_DENSE)))
        if "hybrid" in options.stages:
            out["hybrid"] = ranking.candidates
        if "full" in options.stages:
            head = {c.fragment_id for c in ranking.ranked}
            out["full"] = ranking.ranked + [c for c in ranking.candidates if c.fragment_id not in head]
    conn.rollback()  # nothing was written; drop the transaction-local search settings
    return out


def full_stage_label(retriever: Retriever) -> str:
    if retriever.reranker is None:
        return "no reranker configured: full = hybrid order"
    version = f" (version {retriever.reranker.version})" if retriever.reranker.version else ""
    return f"hybrid, then top rerank_top reranked by {retriever.reranker.name}{version}"


@dataclass(frozen=True, slots=True)
class IngestedCorpus:
    org: str
    version: dict
    """The pipeline's versions, which name the org (pipeline_version)."""
    stats: IngestStats
    sources: dict[int, list[str]]
    """Each fragment's documents (fragment_documents)."""
    vectors: CorpusVectors | None
    """The committed vectors read, when a folder of them was given."""


def ingested_corpus(
    conn: psycopg.Connection,
    pipeline: IngestPipeline,
    dataset: beir.Dataset,
    kind: str,
    vectors_dir: Path | None,
    progress: Progress | None = None,
) -> IngestedCorpus:
    """The set's corpus in its org, ingested now unless this pipeline ingested it before
    (with the committed vectors of `vectors_dir`, when given)."""
    vectors = None
    if vectors_dir is not None:
        vectors = CorpusVectors.open(vectors_dir, dataset.name)
        pipeline = IngestPipeline(pipeline.settings, vectors.embedders(pipeline.embedders))
    version = pipeline_version(conn, pipeline)
    org = org_id_for(dataset.name, dataset.content_hash(), version, kind)
    stats = ensure_ingested(conn, pipeline, dataset, org, kind, progress)
    return IngestedCorpus(org, version, stats, fragment_documents(conn, org, kind), vectors)


def run(
    conn: psycopg.Connection,
    pipeline: IngestPipeline,
    retriever: Retriever,
    dataset: beir.Dataset,
    options: GoldenOptions,
    progress: Progress | None = None,
) -> dict:
    """Ingest (or reuse) the corpus, run every labelled query, return the report."""
    kind = options.kind if options.kind != "auto" else beir.detect_kind(dataset)
    corpus = ingested_corpus(conn, pipeline, dataset, kind, options.vectors_dir, progress)
    org, version, stats, sources, vectors = corpus.org, corpus.version, corpus.stats, corpus.sources, corpus.vectors
    spans = fragment_spans(conn, org, kind) if dataset.fragment_level else {}

    started = time.perf_counter()
    per_query: list[dict] = []
    scores: dict[str, list[dict]] = {s: [] for s in options.stages}
    by_scope: dict[str, dict[str, list[dict]]] = {}
    total = len(dataset.queries)
    if progress:
        progress("queries", 0, total)
    for done, query in enumerate(dataset.queries.values(), start=1):
        qrels = dataset.qrels[query.id]
        rankings = stage_rankings(retriever, conn, query.text, org, options)
        record: dict[str, Any] = {
            "query_id": query.id,
            "query": query.text,
            "scope": query.scope,
            "relevant": {d: g for d, g in qrels.items() if g > 0},
            "stages": {},
        }
        for stage in options.stages:
            if dataset.fragment_level:
                docs = fragment_ranking(fragment_keys(rankings[stage], spans, kind), qrels)
            else:
                docs = document_ranking(rankings[stage], sources, kind)
            metrics = score_query(docs, qrels)
            assert metrics is not None  # load() keeps only queries with a relevant document
            scores[stage].append(metrics)
            if query.scope is not None:
                by_scope.setdefault(query.scope, {s: [] for s in options.stages})[stage].append(metrics)
            first = next((i for i, d in enumerate(docs, start=1) if qrels.get(d, 0) > 0), None)
            record["stages"][stage] = {
                "metrics": {k: round(v, 6) for k, v in metrics.items()},
                "first_relevant_rank": first,
                "top10": docs[:10],
            }
        per_query.append(record)
        if progress:
            progress("queries", done, total)
    query_seconds = time.perf_counter() - started

    report = {
        "dataset": dataset.name,
        "split": dataset.split,
        "queries": total,
        "stages": {s: {m: round(v, 4) for m, v in mean(scores[s]).items()} for s in options.stages},
        "pipeline_version": version
        | {
            "fusion": retriever.pipeline_info()["fusion"],
            "reranker": retriever.reranker.name if retriever.reranker else None,
        }
        | (
            {"reranker_version": retriever.reranker.version}
            if retriever.reranker and retriever.reranker.version
            else {}
        ),
        "full_stage": full_stage_label(retriever) if "full" in options.stages else None,
        "depth": options.depth,
        "hybrid_k": {
            "k_lexical": retriever.config.k_lexical or DEFAULT_K_LEXICAL,
            "k_dense": retriever.config.k_dense or DEFAULT_K_DENSE,
        },
        "rerank_top": options.rerank_top,
        "kind": kind,
        "org": org,
        "corpus_documents": stats.documents,
        "ingested_now": stats.ingested_now,
        "refused_documents": len(stats.refused),
        "skipped_queries": len(dataset.skipped_queries),
        "labels_missing_from_corpus": dataset.unknown_labels,
        "labels": "fragment" if dataset.fragment_level else "document",
        "seconds": {"ingest": round(stats.seconds, 1), "queries": round(query_seconds, 1)},
    }
    if dataset.fragment_level:
        report["labels_without_fragment"] = labels_without_fragment(dataset, spans)
    if vectors is not None:
        report["corpus_vectors"] = vectors.report()
    if by_scope:
        report["scopes"] = {
            scope: {
                "queries": len(next(iter(stages.values()))),
                "stages": {s: {m: round(v, 4) for m, v in mean(rows).items()} for s, rows in stages.items()},
            }
            for scope, stages in sorted(by_scope.items())
        }
    if options.out_dir is not None:
        options.out_dir.mkdir(parents=True, exist_ok=True)
        path = options.out_dir / f"{dataset.name}-{dataset.split}.jsonl"
        with path.open("w", encoding="utf-8") as fh:
            for record in per_query:
                fh.write(json.dumps(record, ensure_ascii=False) + "\n")
        (options.out_dir / f"{dataset.name}-{dataset.split}.summary.json").write_text(
            json.dumps(report, indent=2) + "\n", encoding="utf-8"
        )
        report["per_query_file"] = str(path)
    return report
