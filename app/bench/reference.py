"""`make bench`'s reference: the hybrid search a user would write by hand in SQL, timed in
the same run as ours, query by query and interleaved, so that each figure of ours has a
same-machine, same-moment figure beside it (issue 14).

The reference is what the PostgreSQL documentation and pgvector's README suggest: full
text search ranked with `ts_rank_cd` over stored `to_tsvector('english', text)` values
with a GIN index (a side table made for the run in the bench database, schema
bench_reference, dropped after it; the documentation's faster variant, since ranking
then reads no text), the terms OR-ed so that a long query still matches (plainto_tsquery
AND-s them), a plain pgvector `order by
embedding <=> query limit k` per embedding model (the HNSW index is the one the product
built), and the two lists fused with reciprocal rank fusion (k = 60), top 10 returned
with their text. It reads as the database owner, without row-level security, scopes,
deduplication, citations or traces: it is the floor that work costs, not an equal.

Ours is the one SQL call of a hybrid retrieval (api.retrieve_candidates, as a principal
under row-level security), given the same query vectors; and, end to end, a whole
retrieval (query embedding, candidates, composition, trace, commit) against the same
model's query embedding followed by the reference's SQL. Long queries (20 to 40 terms,
spans of the corpus's own text) are measured apart: BM25 over many common terms is where
postings lists are longest.
"""

from __future__ import annotations

import json
import random
import statistics
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import msgspec
import psycopg

from app.access import act_as
from app.bench.stats import percentile
from app.retrieve.candidates import fetch_candidates
from app.retrieve.fusion import fusion_spec
from app.retrieve.service import Retriever
from app.retrieve.usage_fold import folding
from app.scope import Scope
from app.wire.retrieve import DEFAULT_BUDGET_TOKENS, DEFAULT_K_DENSE, DEFAULT_K_LEXICAL, RetrieveRequest

LEXICAL = """
    select s.fragment_id, row_number() over (order by ts_rank_cd(s.tsv, t.q) desc) as r
    from bench_reference.fts s
    cross join (select replace(plainto_tsquery('english', %(query)s)::text, ' & ', ' | ')::tsquery as q) t
    where s.org_id = %(org)s and s.tsv @@ t.q
    order by ts_rank_cd(s.tsv, t.q) desc
    limit %(k)s
"""

DENSE = """
    select e.fragment_id,
           row_number() over (order by e.embedding::extensions.vector({dims})
                                       <=> %(vector_{i})s::extensions.vector({dims})) as r
    from data.embeddings e
    where e.model_id = {model_id} and e.org_id = %(org)s
    order by e.embedding::extensions.vector({dims}) <=> %(vector_{i})s::extensions.vector({dims})
    limit %(k)s
"""


def reference_sql(models: list[tuple[int, int]]) -> str:
    """RRF of the lexical list and one dense list per (model_id, dims) (none: lexical only)."""
    dense = (
        " union all ".join(
            f"(select * from ({DENSE.format(i=i, model_id=model_id, dims=dims)}) d{i})"
            for i, (model_id, dims) in enumerate(models)
        )
        or "select null::bigint as fragment_id, null::bigint as r where false"
    )
    return f"""
        with lexical as ({LEXICAL}), dense as ({dense}),
        fused as (
            select fragment_id, sum(1.0 / (60 + r)) as score
            from (select * from lexical union all select * from dense) l
            group by fragment_id
        )
        select f.fragment_id, fu.score, f.text
        from fused fu join data.fragments f on f.fragment_id = fu.fragment_id
        order by fu.score desc, f.fragment_id
        limit 10
    """


def long_queries(conn: psycopg.Connection, org: str, n: int, seed: int) -> list[str]:
    """Spans of 20 to 40 words of the corpus's prose: long questions, pasted errors."""
    rows = conn.execute(
        "select text from data.fragments where org_id = %s and active and namespace = 'prose' order by fragment_id",
        (org,),
    ).fetchall()
    rng = random.Random(seed)
    rng.shuffle(rows)
    queries: list[str] = []
    for (text,) in rows:
        words = [w for w in text.split() if any(c.isalpha() for c in w)]
        if len(words) < 40:
            continue
        size = rng.randint(20, 40)
        start = rng.randrange(0, len(words) - size + 1)
        queries.append(" ".join(words[start : start + size]))
        if len(queries) >= n:
            break
    return queries


def latency_summary(values: list[float], digits: int = 1) -> dict:
    """p50, p95 and mean in ms, to `digits` decimals (None for each when nothing was timed)."""
    return {
        "p50_ms": round(percentile(values, 50), digits) if values else None,
        "p95_ms": round(percentile(values, 95), digits) if values else None,
        "mean_ms": round(statistics.fmean(values), digits) if values else None,
    }


def alternate(
    i: int,
    runs: list[tuple[str, Callable[[], Any]]],
    timings: dict[str, list[float]],
    after: Callable[[], Any] | None = None,
) -> dict[str, Any]:
    """Run each of `runs` once, in the given order for an even `i` and reversed for an
    odd one (neither side always runs on a cache the other warmed), adding each one's
    milliseconds to `timings[name]` and calling `after` (untimed) after each; returns
    what each returned."""
    results: dict[str, Any] = {}
    for name, run in runs if i % 2 == 0 else runs[::-1]:
        began = time.perf_counter()
        results[name] = run()
        timings.setdefault(name, []).append((time.perf_counter() - began) * 1000)
        if after is not None:
            after()
    return results


def compared(ours: list[float], reference: list[float], **extra: Any) -> dict:
    """Ours beside the reference: each one's latencies and the ratio of their p50s."""
    mine, theirs = latency_summary(ours), latency_summary(reference)
    return {
        "queries": len(ours),
        **extra,
        "ours": mine,
        "reference": theirs,
        "ratio_p50": round(mine["p50_ms"] / theirs["p50_ms"], 2) if mine["p50_ms"] and theirs["p50_ms"] else None,
    }


def measure(
    conn: psycopg.Connection, retriever: Retriever, org: str, principal: str, queries: list[str], seed: int
) -> dict:
    """Ours against the reference, interleaved (the order alternates), for the bench's
    queries (hybrid) and for long queries (lexical alone, then hybrid). `conn` is the
    database owner's: it makes the reference's table and drops it at the end."""
    build_seconds = build_reference_table(conn)
    models, namespaces = active_models(conn)
    try:
        results: dict = {
            "reference": "ts_rank_cd over stored tsvectors with a GIN index (terms OR-ed) + pgvector order by"
            " per model, RRF k=60, top 10 with text; as the owner, no row-level security",
            "reference_build_seconds": build_seconds,
        }
        long = long_queries(conn, org, len(queries), seed)
        results["hybrid_end_to_end"] = _compare_end_to_end(conn, retriever, org, principal, queries, models, namespaces)
        for label, texts, k_dense in (
            ("hybrid", queries, DEFAULT_K_DENSE),
            ("long_lexical", long, 0),
            ("long_hybrid", long, DEFAULT_K_DENSE),
        ):
            results[label] = _compare(conn, retriever, org, principal, texts, k_dense, models, namespaces)
        results["lexical_pruning"] = {
            label: pruning(conn, org, texts) for label, texts in (("ordinary", queries), ("long", long))
        }
        return results
    finally:
        drop_reference_table(conn)


def build_reference_table(conn: psycopg.Connection) -> float:
    """The reference's side table of stored tsvectors and its GIN index; seconds taken."""
    started = time.perf_counter()
    conn.execute("drop schema if exists bench_reference cascade")
    conn.execute("create schema bench_reference")
    conn.execute(
        "create table bench_reference.fts as select fragment_id, org_id, to_tsvector('english', text) as tsv"
        " from data.fragments where active"
    )
    conn.execute("create index on bench_reference.fts using gin (tsv)")
    conn.execute("analyze bench_reference.fts")
    conn.commit()
    return round(time.perf_counter() - started, 1)


def drop_reference_table(conn: psycopg.Connection) -> None:
    conn.rollback()
    conn.execute("drop schema if exists bench_reference cascade")
    conn.commit()


def active_models(conn: psycopg.Connection) -> tuple[list[tuple[int, int]], dict[str, int]]:
    """(model_id, dims) of each active model, and each namespace's active model."""
    models = conn.execute(
        "select model_id, dims from data.embedding_models where status = 'active' order by model_id"
    ).fetchall()
    namespaces: dict[str, int] = dict(
        conn.execute("select namespace, model_id from data.embedding_models where status = 'active'").fetchall()
    )
    return models, namespaces


def reference_params(
    query: str, vectors: dict[str, list[float]], org: str, models: list[tuple[int, int]], namespaces: dict[str, int]
) -> dict:
    """The reference SQL's parameters: the query, and one vector per active model."""
    params: dict = {"query": query, "org": org, "k": DEFAULT_K_LEXICAL}
    by_model = {namespaces[ns]: vector for ns, vector in vectors.items() if ns in namespaces}
    for j, (model_id, _dims) in enumerate(models):
        params[f"vector_{j}"] = json.dumps(by_model.get(model_id, next(iter(vectors.values()))))
    return params


def run_reference(conn: psycopg.Connection, sql: str, params: dict) -> None:
    """One reference search, as the owner (the caller ends the transaction)."""
    conn.execute("set local search_path = public, extensions")  # pgvector's operators
    conn.execute(sql, params).fetchall()


def run_ours(
    conn: psycopg.Connection,
    org: str,
    principal: str,
    query: str,
    vectors: dict[str, list[float]],
    k_dense: int,
    rrf_k: int,
    fusion: dict,
) -> None:
    """Our one SQL call for a query, as `principal` under row-level security (the caller
    ends the transaction)."""
    act_as(conn, org, principal)
    fetch_candidates(conn, Scope(org), query, vectors, DEFAULT_K_LEXICAL, k_dense, rrf_k, fusion)


def _compare(
    conn: psycopg.Connection,
    retriever: Retriever,
    org: str,
    principal: str,
    queries: list[str],
    k_dense: int,
    models: list[tuple[int, int]],
    namespaces: dict[str, int],
) -> dict:
    timings: dict[str, list[float]] = {"ours": [], "reference": []}
    sql = reference_sql(models if k_dense else [])
    for i, q in enumerate(queries):
        vectors = retriever.query_embeddings(q)
        params = reference_params(q, vectors, org, models, namespaces)
        fusion = fusion_spec(retriever.config, q)

        ours = partial(
            run_ours, conn, org, principal, q, vectors if k_dense else {}, k_dense, retriever.config.rrf_k, fusion
        )
        alternate(i, [("ours", ours), ("reference", partial(run_reference, conn, sql, params))], timings, conn.rollback)
    return compared(timings["ours"], timings["reference"], terms_median=_terms_median(queries))


def _terms_median(queries: list[str]) -> float:
    return statistics.median(len(q.split()) for q in queries) if queries else 0


def _compare_end_to_end(
    conn: psycopg.Connection,
    retriever: Retriever,
    org: str,
    principal: str,
    queries: list[str],
    models: list[tuple[int, int]],
    namespaces: dict[str, int],
) -> dict:
    """A whole hybrid retrieval as make bench times it (the principal bound, the query
    embedded, candidates, composition, trace, commit) against the query embedded by the
    same model followed by the reference's SQL, interleaved: the end-to-end figure's
    same-run reference. The retriever must not cache query vectors."""
    timings: dict[str, list[float]] = {"ours": [], "reference": []}
    sql = reference_sql(models)
    # The usage roll-ups folded as the service folds them: after the answer, on a
    # connection of its own (app.retrieve.usage_fold).
    with folding(retriever, conn):
        for i, q in enumerate(queries):
            request = msgspec.convert(
                {"query": q, "scope": {"org_id": org}, "budget_tokens": DEFAULT_BUDGET_TOKENS}, RetrieveRequest
            )

            def ours(request: RetrieveRequest = request) -> None:
                act_as(conn, org, principal)
                retriever.retrieve(conn, request)
                conn.commit()

            def reference(q: str = q) -> None:
                run_reference(conn, sql, reference_params(q, retriever.query_embeddings(q), org, models, namespaces))
                conn.rollback()

            alternate(i, [("ours", ours), ("reference", reference)], timings)
    return compared(timings["ours"], timings["reference"], terms_median=_terms_median(queries))


EVERY_POSTING = """
    select fragment_id, score from data._bm25_scores(%(org)s, %(query)s, null, null, null, null, 1.2, 0.75)
    order by score desc, fragment_id limit %(k)s
"""
PRUNED = "select fragment_id, score from data._bm25_top(%(org)s, %(query)s, null, null, null, null, %(k)s)"


def owner_rows(conn: psycopg.Connection, sql: str, params: dict) -> list:
    """One search's rows, as the owner (the caller ends the transaction)."""
    return conn.execute(sql, params).fetchall()


def pruning(conn: psycopg.Connection, org: str, queries: list[str]) -> dict:
    """The lexical top k as retrieval computes it (data._bm25_top, common terms pruned)
    against scoring every posting of every query term, interleaved, as the owner; and
    whether both give the same scores in the same order (docs/adr/0023)."""
    timings: dict[str, list[float]] = {"pruned": [], "every_posting": []}
    differing = 0
    for i, q in enumerate(queries):
        params = {"org": org, "query": q, "k": DEFAULT_K_LEXICAL}
        rows = alternate(
            i,
            [
                ("pruned", partial(owner_rows, conn, PRUNED, params)),
                ("every_posting", partial(owner_rows, conn, EVERY_POSTING, params)),
            ],
            timings,
            conn.rollback,
        )
        # Sums taken in another order may differ in their last bits: compare to 1e-9.
        if [round(r[1], 9) for r in rows["pruned"]] != [round(r[1], 9) for r in rows["every_posting"]]:
            differing += 1
    pruned, every = latency_summary(timings["pruned"]), latency_summary(timings["every_posting"])
    return {
        "queries": len(queries),
        "pruned": pruned,
        "every_posting": every,
        "ratio_p50": round(pruned["p50_ms"] / every["p50_ms"], 2) if every["p50_ms"] else None,
        "differing_top_k": differing,
    }
