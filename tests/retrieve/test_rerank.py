"""R-RET-2 with a real CrossEncoder: a tiny one is built on the fly (no model ships
offline), loaded by path exactly as a configured reranker would be."""

from __future__ import annotations

import math

import msgspec
import pytest

from app.retrieve.rerank import Reranker, head_and_tail, rerank_text
from app.retrieve.service import Retriever
from app.retrieve.trace import get_trace
from app.wire.retrieve import RetrieveRequest
from tests.retrieve import cross_encoders
from tests.retrieve.corpus import CODE, DOCS


@pytest.fixture(scope="session")
def tiny_cross_encoder(tmp_path_factory) -> str:
    return str(cross_encoders.tiny_cross_encoder(tmp_path_factory.mktemp("tiny-cross-encoder"), seed=7))


def test_reranker_orders_the_top_candidates(conn, ingest, as_principal, models, tiny_cross_encoder):
    from sentence_transformers import CrossEncoder

    ingest("acme", DOCS | CODE)
    retriever = Retriever(models, Reranker(tiny_cross_encoder))
    request = msgspec.convert(
        {"query": "rotate credentials", "scope": {"org_id": "acme"}, "rerank_top": 6, "budget_tokens": 5000},
        RetrieveRequest,
    )
    as_principal("acme")
    response = retriever.retrieve(conn, request)
    trace = get_trace(conn, response.trace_id)
    assert trace["pipeline"]["reranker"] == tiny_cross_encoder
    assert trace["pipeline"]["score_basis"] == "rerank_probability"  # a cross-encoder keeps no fused share

    # Scored: the fused top 6 and each list's first 3 (rerank.head_and_tail); ranked, the
    # best 6 of them; every other candidate is beyond rerank_top.
    reranked = [c for c in trace["candidates"] if c["rerank_score"] is not None]
    candidates, _ = head_and_tail(retriever.candidates(conn, request), 6)
    assert sorted(c["fragment_id"] for c in reranked) == sorted(c.fragment_id for c in candidates)
    assert len([c for c in reranked if c["final_rank"] is not None]) == 6
    assert all(c["reason"] == "beyond_rerank_top" for c in trace["candidates"] if c["final_rank"] is None)

    # Scores are the cross-encoder's own sigmoid outputs on (query, heading + text).
    logits = CrossEncoder(tiny_cross_encoder, device="cpu").predict(
        [(request.query, rerank_text(c)) for c in candidates], activation_fn=lambda x: x
    )
    expected = {c.fragment_id: 1 / (1 + math.exp(-float(logit))) for c, logit in zip(candidates, logits)}
    for c in reranked:
        assert c["rerank_score"] == pytest.approx(expected[c["fragment_id"]], abs=1e-5)
    returned = [f.id for f in response.fragments]
    assert returned == sorted(expected, key=lambda fid: -expected[fid])[:6]
