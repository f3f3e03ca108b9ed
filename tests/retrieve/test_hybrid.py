"""R-RET-1/2: each side finds what the other cannot, and fusion keeps both."""

from __future__ import annotations

from datetime import UTC

import msgspec
import pytest

from app.wire.retrieve import RetrieveRequest
from tests.retrieve.corpus import CODE, DOCS


@pytest.fixture
def corpus(conn, ingest):
    ingest("acme", DOCS | CODE, repo="platform")
    return conn


def request(query: str, **fields) -> RetrieveRequest:
    return msgspec.convert({"query": query, "scope": {"org_id": "acme"}} | fields, RetrieveRequest)


def by_path(candidates):
    return {c.path: c for c in candidates}


def test_exact_identifier_is_found_by_lexical_side_only(corpus, retriever):
    candidates = retriever.candidates(corpus, request("SessionTimeoutGuard", k_dense=3))
    target = by_path(candidates)["billing/limits.py"]
    assert target.lexical_rank == 1
    assert target.dense_rank is None, "the dense side alone does not surface an opaque identifier"
    assert candidates[0].path == "billing/limits.py", "fusion keeps the lexical hit on top"


def test_paraphrase_is_found_by_dense_side_only(corpus, retriever):
    query = "hard drive completely full, how should I bring the server back?"
    candidates = retriever.candidates(corpus, request(query, k_dense=3))
    target = by_path(candidates)["runbooks/storage.md"]
    assert target.lexical_rank is None, "no term of the query occurs in the runbook"
    assert target.dense_rank == 1
    assert candidates[0].path == "runbooks/storage.md"


def test_rrf_fusion_when_configured(corpus, models):
    from app.retrieve.config import PipelineConfig
    from app.retrieve.service import Retriever

    rrf = Retriever(models, None, PipelineConfig(fusion="rrf"))
    candidates = rrf.candidates(corpus, request("rotate credentials and keys", k_lexical=5, k_dense=5))
    for c in candidates:
        expected = sum(1 / (60 + r) for r in (c.lexical_rank, c.dense_rank) if r is not None)
        assert c.fused_score == pytest.approx(expected)
    assert [c.fused_score for c in candidates] == sorted((c.fused_score for c in candidates), reverse=True)
    assert len({c.fragment_id for c in candidates}) == len(candidates)
    assert rrf.pipeline_info("rotate credentials")["fusion"] == {"method": "rrf", "k": 60}


def test_weighted_fusion_completes_and_calibrates_scores(corpus, retriever):
    candidates = retriever.candidates(corpus, request("rotate credentials and keys", k_lexical=3, k_dense=3))
    assert len({c.fragment_id for c in candidates}) == len(candidates) > 3
    for c in candidates:
        # Found by one side only, a candidate still carries the other side's exact score.
        assert c.dense_similarity is not None
        assert c.lexical_score is not None and c.lexical_score >= 0
        assert 0 <= c.lexical_norm <= 1 and 0 <= c.dense_norm <= 1
        assert c.fused_score == pytest.approx(c.lexical_weight * c.lexical_norm + c.dense_weight * c.dense_norm)
        # A natural-language question discounts the lexical evidence of code only, and
        # code's dense side takes the share it gives up: each namespace's weights sum to 1,
        # so the best code fragment can score 1 as the best prose fragment can.
        lexical_share = 0.5 * 0.2 / (0.5 * 0.2 + 0.5) if c.namespace == "code" else 0.5
        assert c.lexical_weight == pytest.approx(lexical_share)
        assert c.dense_weight == pytest.approx(1 - lexical_share)
    assert [c.fused_score for c in candidates] == sorted((c.fused_score for c in candidates), reverse=True)
    best_lexical = min((c for c in candidates if c.lexical_rank), key=lambda c: c.lexical_rank)
    assert best_lexical.lexical_norm == 1.0
    beyond = [c for c in candidates if c.lexical_rank is None]
    assert beyond and all(c.lexical_score <= best_lexical.lexical_score for c in beyond)


def test_single_side_requests_keep_that_sides_order(corpus, retriever):
    lexical = retriever.candidates(corpus, request("rotate credentials and keys", k_dense=0))
    assert [c.lexical_rank for c in lexical] == list(range(1, len(lexical) + 1))
    assert all(c.dense_similarity is None and c.dense_weight == 0 for c in lexical)
    dense = retriever.candidates(corpus, request("rotate credentials and keys", k_lexical=0))
    assert sorted(c.dense_rank for c in dense) == list(range(1, len(dense) + 1))
    assert all(c.lexical_score is None and c.lexical_weight == 0 for c in dense)
    # Both namespaces embed with the same model here: one calibration, cosine order.
    similarities = [c.dense_similarity for c in dense]
    assert similarities == sorted(similarities, reverse=True)


def test_identifier_queries_keep_lexical_evidence_on_code(corpus, retriever):
    from app.retrieve.fusion import query_shape

    assert query_shape("SessionTimeoutGuard") == "identifier"
    assert query_shape("where is drain_pool called") == "identifier"
    assert query_shape("os.path.join with a trailing slash") == "identifier"
    assert query_shape("how do refunds work for annual plans") == "prose"
    candidates = retriever.candidates(corpus, request("where is SessionTimeoutGuard raised"))
    assert all(c.lexical_weight == 0.5 for c in candidates)
    assert candidates[0].path == "billing/limits.py"


def test_bad_fusion_specs_are_refused(corpus):
    import psycopg

    for spec in (
        '{"method": "magic"}',
        '{"method": "weighted", "dense_weight": 2}',
        '{"method": "weighted", "lexical_weight": {"code": "x"}}',
    ):
        with pytest.raises(psycopg.errors.InvalidParameterValue):
            corpus.execute(
                "select * from api.retrieve_candidates('acme', 'refund', '{}'::jsonb, "
                "p_k_dense => 0, p_fusion => %s::jsonb)",
                (spec,),
            )
        corpus.rollback()


def test_scope_narrows_to_a_repo_plus_org_wide(corpus, ingest, retriever):
    ingest(
        "acme",
        {"notes/other.md": "# Other repo\n\nRotate the journal in the other repository too.\n"},
        repo="elsewhere",
    )
    everywhere = retriever.candidates(corpus, request("rotate the journal"))
    only_platform = retriever.candidates(
        corpus, request("rotate the journal", scope={"org_id": "acme", "repo_id": "platform"})
    )
    assert "notes/other.md" in by_path(everywhere)
    assert "notes/other.md" not in by_path(only_platform)
    assert all(c.repo_id in (None, "platform") for c in only_platform)


def test_session_fragments_only_inside_their_session(corpus, ingest, retriever):
    ingest(
        "acme",
        {"session-notes.md": "# Session notes\n\nThe flaky test is test_checkout_timeout.\n"},
        session="s-1",
        kind="session-summary",
    )
    outside = retriever.candidates(corpus, request("flaky checkout timeout test"))
    inside = retriever.candidates(
        corpus, request("flaky checkout timeout test", scope={"org_id": "acme", "session_id": "s-1"})
    )
    assert "session-notes.md" not in by_path(outside)
    assert by_path(inside)["session-notes.md"].lexical_rank == 1


def test_other_org_is_invisible(corpus, ingest, retriever):
    ingest("rival", {"billing/limits.py": CODE["billing/limits.py"]})
    candidates = retriever.candidates(corpus, request("refund window", scope={"org_id": "rival"}))
    assert len(candidates) == 1
    own = retriever.candidates(corpus, request("refund window"))
    assert {c.fragment_id for c in candidates}.isdisjoint({c.fragment_id for c in own})


def test_freshness_half_life_prefers_recent_text(conn, ingest, as_principal, retriever):
    from datetime import datetime, timedelta

    now = datetime.now(UTC)
    text = "# Deploy freeze\n\nNo deploys on Fridays after 15:00.\n"
    ingest("acme", {"old/freeze.md": text}, repo="old", timestamp=now - timedelta(days=400))
    ingest("acme", {"new/freeze.md": text}, repo="new", timestamp=now - timedelta(days=2))
    base = {"query": "deploy freeze fridays", "scope": {"org_id": "acme"}, "budget_tokens": 1000}
    as_principal("acme")
    plain = retriever.retrieve(conn, msgspec.convert(base, RetrieveRequest))
    fresh = retriever.retrieve(conn, msgspec.convert(base | {"freshness_halflife_days": 30}, RetrieveRequest))
    assert fresh.fragments[0].source.startswith("new/freeze.md")
    old, new = sorted(fresh.fragments, key=lambda f: f.source.startswith("new/"))
    assert new.score > old.score
    assert {f.source for f in plain.fragments} == {f.source for f in fresh.fragments}


def test_a_top_k_above_rerank_top_is_not_cut_to_it(corpus, retriever):
    """The ranked head grows to top_k: asking for 8 fragments with rerank_top 3 gives 8
    (the corpus holds more than 8 that match), not 3."""
    from app.access import act_as

    act_as(corpus, "acme", "admin")
    query = "rotate storage credentials keys refund"
    response = retriever.retrieve(corpus, request(query, rerank_top=3, top_k=8, budget_tokens=100_000))
    assert len(response.fragments) == 8
    assert len(retriever.retrieve(corpus, request(query, rerank_top=3, budget_tokens=100_000)).fragments) == 3
