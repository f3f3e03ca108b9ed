"""One retrieval: embed the query, fetch fused candidates (one SQL call), rerank,
compose within the budget, and record the trace. Shared by HTTP, CLI and eval."""

from __future__ import annotations

import time

import msgspec
import psycopg

from app.ingest.chunks import CHUNKER_VERSION
from app.ingest.embed import Embedder, model_label
from app.retrieve import rerank
from app.retrieve.candidates import Candidate, fetch_candidates
from app.retrieve.compose import compose, freshness
from app.retrieve.models import FragmentOut, RetrieveRequest, RetrieveResponse
from app.retrieve.rerank import Reranker
from app.retrieve.trace import candidate_entries, record_trace
from app.scope import Scope

RRF_K = 60
FRESHNESS_WEIGHT = 0.2
"""Share of the final score given to recency when a request sets a half-life."""


class Retriever:
    def __init__(self, embedders: dict[str, Embedder], reranker: Reranker | None) -> None:
        self.embedders = embedders
        self.reranker = reranker

    def query_embeddings(self, query: str) -> dict[str, list[float]]:
        """One vector per namespace; namespaces sharing a model share the computation."""
        by_model: dict[tuple[str, str], list[float]] = {}
        out: dict[str, list[float]] = {}
        for namespace, embedder in self.embedders.items():
            key = (embedder.name, embedder.dtype)
            if key not in by_model:
                by_model[key] = embedder.embed([query])[0]
            out[namespace] = by_model[key]
        return out

    def pipeline_info(self) -> dict:
        return {
            "chunker_version": CHUNKER_VERSION,
            "embedding_models": {ns: model_label(e.name) for ns, e in self.embedders.items()},
            "embed_dtype": next(iter(self.embedders.values())).dtype if self.embedders else None,
            "fusion": {"method": "rrf", "k": RRF_K},
            "reranker": self.reranker.name if self.reranker else None,
            "score_basis": "rerank_probability" if self.reranker else "fused_score_normalized (no reranker configured)",
        }

    def candidates(self, conn: psycopg.Connection, request: RetrieveRequest) -> list[Candidate]:
        scope = Scope(request.scope.org_id, request.scope.repo_id, request.scope.persona_id, request.scope.session_id)
        embeddings = self.query_embeddings(request.query) if request.k_dense > 0 else {}
        return fetch_candidates(conn, scope, request.query, embeddings, request.k_lexical, request.k_dense, RRF_K)

    def retrieve(self, conn: psycopg.Connection, request: RetrieveRequest) -> RetrieveResponse:
        """For the principal bound to `conn`'s transaction (see app.access)."""
        started = time.perf_counter()
        candidates = self.candidates(conn, request)
        ranked = rerank.order(request.query, candidates, request.rerank_top, self.reranker, RRF_K)
        recency: dict[int, float] = {}
        if request.freshness_halflife_days:
            for c in ranked:
                recency[c.fragment_id] = freshness(c.updated_at, request.freshness_halflife_days)
                c.final_score = (1 - FRESHNESS_WEIGHT) * (c.final_score or 0.0) + FRESHNESS_WEIGHT * recency[c.fragment_id]
            ranked.sort(key=lambda c: (-(c.final_score or 0.0), c.fragment_id))
        composition = compose(ranked, request.budget_tokens, request.min_score)
        duration_ms = (time.perf_counter() - started) * 1000.0
        entries = candidate_entries(candidates, {c.fragment_id for c in ranked}, composition, recency)
        pipeline = self.pipeline_info() | {"freshness_weight": FRESHNESS_WEIGHT if recency else 0.0}
        trace_id = record_trace(conn, request.scope.org_id, request.query,
                                msgspec.to_builtins(request), pipeline, entries, duration_ms)
        fragments = [
            FragmentOut(
                id=c.fragment_id, doc_id=c.doc_id, version=c.doc_version, score=round(c.final_score or 0.0, 6),
                tokens=composition.decisions[c.fragment_id].tokens, source=c.source, updated_at=c.updated_at,
                text=composition.decisions[c.fragment_id].text or c.text, heading_path=list(c.heading_path),
                kind=c.kind, owner=c.owner,
            )
            for c in composition.included
        ]
        return RetrieveResponse(fragments=fragments, trace_id=trace_id, tokens_used=composition.tokens_used,
                                budget_tokens=request.budget_tokens)
