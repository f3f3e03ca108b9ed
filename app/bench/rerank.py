"""`make bench`: what the shipped learned reranker adds to a hybrid retrieval of 100
candidates (docs/adr/0015; the target is at most 5 ms at the median).

The same queries through a retriever without a reranker and one with the learned model,
in alternating order query by query, each query's vectors computed once and shared, so
the difference is what a reranked retrieval does more: the reranking (features, model,
contributions, calibration) and the larger trace it writes (the features and
contributions of the best-scored candidates). Then the reranker's own scoring alone on
each query's 100 fused candidates, in CPU time: cold (nothing cached between queries:
the candidates' stored readings decoded, and a text without one tokenized; the tokens'
stem ids stay known, as in any running service), the model's features alone cold, and
warm (the same candidates again)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import msgspec
import psycopg

from app.access import act_as
from app.bench.reference import alternate, latency_summary
from app.bench.stats import percentile
from app.retrieve import features, rerank
from app.retrieve.learned import LearnedReranker
from app.retrieve.query_vectors import QueryVectors
from app.retrieve.service import Retriever
from app.text.embed import Embedder
from app.wire.retrieve import DEFAULT_BUDGET_TOKENS, RetrieveRequest

RERANK_TOP = 100
"""The issue's yardstick; `make bench` also measures the requests' default (50)."""


def measure(
    conn: psycopg.Connection,
    embedders: dict[str, Embedder],
    org: str,
    principal: str,
    queries: list[str],
    rerank_top: int = RERANK_TOP,
) -> dict:
    reranker = LearnedReranker()
    plain = Retriever(embedders, None, query_cache=0)
    reranked = Retriever(embedders, reranker, query_cache=0)
    timings: dict[str, list[float]] = {}
    paired: list[float] = []
    cold: list[float] = []
    warm: list[float] = []
    features_only: list[float] = []
    sizes: list[int] = []

    def retrieve(retriever: Retriever, request: RetrieveRequest, vectors: QueryVectors) -> None:
        act_as(conn, org, principal)
        retriever.retrieve(conn, request, vectors)
        conn.commit()

    requests = [
        msgspec.convert(
            {"query": q, "scope": {"org_id": org}, "rerank_top": rerank_top, "budget_tokens": DEFAULT_BUDGET_TOKENS},
            RetrieveRequest,
        )
        for q in queries
    ]
    # Retrievals first, the cache of tokenized texts filling as in a running service.
    features.clear_cache()
    vectors = [plain.query_embeddings(q) for q in queries]
    for i, (request, qv) in enumerate(zip(requests, vectors)):
        runs: list[tuple[str, Callable[[], Any]]] = [
            ("fused", partial(retrieve, plain, request, qv)),
            ("learned", partial(retrieve, reranked, request, qv)),
        ]
        alternate(i, runs, timings)
        paired.append(timings["learned"][-1] - timings["fused"][-1])
    # Then the scoring alone, cold and warm.
    for q, request, qv in zip(queries, requests, vectors):
        act_as(conn, org, principal)
        head, _ = rerank.head_and_tail(plain.candidates(conn, request, qv), rerank_top)
        conn.rollback()
        sizes.append(len(head))
        model_features = partial(features.extract, columns=reranker.model.columns)
        for timed, run in ((features_only, model_features), (cold, reranker.score), (warm, reranker.score)):
            if timed is not warm:
                features.clear_cache()
            began = time.process_time()
            run(q, head)
            timed.append((time.process_time() - began) * 1000)
    fused, learned = latency_summary(timings.get("fused", [])), latency_summary(timings.get("learned", []))
    return {
        "queries": len(queries),
        "reranker": reranker.info(),
        "rerank_top": rerank_top,
        "candidates_median": statistics.median(sizes) if sizes else 0,
        "fused": fused,
        "learned": learned,
        "added_p50_ms": round(learned["p50_ms"] - fused["p50_ms"], 2) if queries else None,
        "added_paired_median_ms": round(statistics.median(paired), 2) if paired else None,
        "scoring_cpu": {
            "cold_p50_ms": _p50(cold),
            "cold_p95_ms": _percentile(cold, 95),
            "cold_features_p50_ms": _p50(features_only),
            "warm_p50_ms": _p50(warm),
        },
    }


def _p50(values: list[float]) -> float | None:
    return _percentile(values, 50)


def _percentile(values: list[float], q: float) -> float | None:
    return round(percentile(values, q), 2) if values else None
