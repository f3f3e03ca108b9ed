"""R-RET-1: lexical and dense candidates and their fusion (R-RET-2), in one SQL call."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime

import psycopg
from psycopg.rows import class_row

from app.scope import Scope


@dataclass(slots=True)
class Candidate:
    fragment_id: int
    lexical_rank: int | None
    lexical_score: float | None
    dense_rank: int | None
    dense_similarity: float | None
    fused_score: float
    doc_id: int
    doc_version: int
    path: str
    anchor: str
    repo_id: str | None
    namespace: str
    kind: str
    owner: str
    heading_path: list[str]
    symbol: str | None
    text: str
    token_count: int
    chunker_version: str
    embedding_model: str | None
    updated_at: datetime
    lexical_norm: float | None = None
    """BM25 score over the query's best BM25 score (weighted fusion)."""
    dense_norm: float | None = None
    """Cosine over the best cosine of the same model (weighted fusion)."""
    lexical_weight: float | None = None
    dense_weight: float | None = None
    """Weighted fusion: fused_score = lexical_weight * lexical_norm + dense_weight * dense_norm."""
    rerank_score: float | None = None
    final_score: float | None = None

    @property
    def source(self) -> str:
        return f"{self.path}#{self.anchor}" if self.anchor else self.path


def fetch_candidates(
    conn: psycopg.Connection,
    scope: Scope,
    query: str,
    query_embeddings: dict[str, list[float]],
    k_lexical: int,
    k_dense: int,
    rrf_k: int,
    fusion: dict,
) -> list[Candidate]:
    """`fusion` is the p_fusion object of api.retrieve_candidates (method and weights)."""
    with conn.cursor(row_factory=class_row(Candidate)) as cur:
        cur.execute(
            "select * from api.retrieve_candidates(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s::jsonb)",
            (
                scope.org_id,
                query,
                json.dumps(query_embeddings),
                scope.repo_id,
                scope.persona_id,
                scope.session_id,
                k_lexical,
                k_dense,
                rrf_k,
                json.dumps(fusion),
            ),
        )
        return cur.fetchall()
