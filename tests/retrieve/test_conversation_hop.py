"""The second hop over conversation turns and their sessions' share (app/retrieve/hop.py):
a turn's fused score holds what the hop and its session gave it, as the trace says; a
retrieval over fragments that are not turns makes no hop and keeps its scores."""

from __future__ import annotations

import msgspec
import pytest

from app.retrieve import hop
from app.retrieve.candidates import fetch_candidates
from app.retrieve.service import Retriever
from app.wire.retrieve import RetrieveRequest

TRANSCRIPT = """# Jon and Gina

## Session 1, 2023-01-20

Jon: Lost my job as a banker yesterday, so I'm gonna start my own dance studio.
Gina: Sorry about your job! I lost mine at the store too. What kind of studio?
Jon: A place where kids learn hip hop and ballet after school.

## Session 2, 2023-06-19

Gina: Can't wait for the grand opening of your studio tomorrow!
Jon: Me neither, I put so much into this. I want to savor every second of it.
Gina: I'll be right by your side. Let's make some great memories tomorrow.
"""

NOTES = """# Studio notes

The grand opening needs chairs, a sound system and flyers.

## Budget

Flyers cost less than radio ads; the sound system is rented.
"""

QUESTION = "What does Gina say about the grand opening?"


def request(query: str, **knobs: int) -> RetrieveRequest:
    return msgspec.convert({"query": query, "scope": {"org_id": "acme"}, "rerank_top": 20, **knobs}, RetrieveRequest)


class Counting:
    """A namespace's query model, counting the texts the hop asks it to embed."""

    def __init__(self, embedder) -> None:
        self.embedder = embedder
        self.texts: list[str] = []

    def __getattr__(self, name: str):
        return getattr(self.embedder, name)

    def embed(self, texts: list[str]) -> list[list[float]]:
        self.texts.extend(texts)
        return self.embedder.embed(texts)


@pytest.fixture
def counted(models):
    """A retriever whose query models count what they embed (the query's own vector is
    computed before, by the query embedder, as the service does)."""
    retriever = Retriever(models, None)
    prose = Counting(retriever.query_embedder.embedders["prose"])
    retriever.query_embedder.embedders = {**retriever.query_embedder.embedders, "prose": prose}  # type: ignore[dict-item]
    return retriever, prose


def _first_and_ranked(conn, retriever, embedded):
    """The first fusion's candidates (fetch_candidates alone) and the whole ranking of
    QUESTION; `embedded` then holds only what the ranking embedded beyond the query."""
    q = retriever.resolve(request(QUESTION))
    vectors = retriever.query_embedder.vectors(QUESTION)  # kept for the retrieval below
    embedded.texts.clear()
    first = fetch_candidates(conn, q.scope, q.query, vectors, q.k_lexical, q.k_dense, q.rrf_k, q.fusion, q.filters)
    ranking = retriever.rank(conn, q)
    conn.rollback()
    return first, ranking


def test_a_turns_fused_score_holds_the_hop_and_its_sessions_share(conn, ingest, as_principal, counted):
    retriever, embedded = counted
    ingest("acme", {"chats/jon-gina.md": TRANSCRIPT}, kind="conversation")
    as_principal("acme")
    first, ranking = _first_and_ranked(conn, retriever, embedded)
    found = ranking.candidates
    assert {c.fragment_id for c in found} == {c.fragment_id for c in first}  # six turns: all listed already
    # What the two best turns of the first fusion said: nothing else.
    assert embedded.texts == [hop.said(c) for c in first[: hop.FEEDBACK]]
    by_id = {c.fragment_id: c for c in first}
    sessions: dict[str, float] = {}
    for c in found:
        assert c.hop_score is not None and 0.0 <= c.hop_score <= 1.0
        assert c.session_score is not None and 0.0 <= c.session_score <= 1.0
        label = c.text.split("\n", 1)[0]
        after_hop = (1 - hop.WEIGHT) * by_id[c.fragment_id].fused_score + hop.WEIGHT * c.hop_score
        sessions[label] = max(sessions.get(label, 0.0), after_hop)
    assert max(c.hop_score for c in found) == pytest.approx(1.0)
    for c in found:
        label = c.text.split("\n", 1)[0]
        assert c.session_score == pytest.approx(sessions[label] / max(sessions.values()))
        after_hop = (1 - hop.WEIGHT) * by_id[c.fragment_id].fused_score + hop.WEIGHT * c.hop_score
        expected = (1 - hop.SESSION_WEIGHT) * after_hop + hop.SESSION_WEIGHT * c.session_score
        assert c.fused_score == pytest.approx(expected)
    assert [c.fused_score for c in found] == sorted((c.fused_score for c in found), reverse=True)
    # The grand opening is session 2's: its turns share the best session's score.
    assert all(c.session_score == pytest.approx(1.0) for c in found if "Session 2" in c.text)
    assert all(c.session_score < 1.0 for c in found if "Session 1" in c.text)


def test_what_a_turn_said_is_its_words_without_the_session_speaker_or_carried_questions(conn, ingest):
    ingest("acme", {"chats/jon-gina.md": TRANSCRIPT}, kind="conversation")
    texts = [r[0] for r in conn.execute("select text from data.fragments order by fragment_id")]
    said = [hop.said(_Turn(t)) for t in texts]
    assert "Sorry about your job! I lost mine at the store too. What kind of studio?" in said
    assert any(s.startswith("A place where kids learn hip hop") and "What kind of studio" not in s for s in said)
    assert not any(s.startswith(("Jon:", "Gina:", "Session")) for s in said)


class _Turn:
    def __init__(self, text: str) -> None:
        self.text = text


def test_other_fragments_make_no_hop_and_keep_their_fused_scores(conn, ingest, as_principal, counted):
    retriever, embedded = counted
    ingest("acme", {"notes/studio.md": NOTES})
    as_principal("acme")
    first, ranking = _first_and_ranked(conn, retriever, embedded)
    assert first and embedded.texts == []  # no turn: no hop
    assert [(c.fragment_id, c.fused_score) for c in ranking.candidates] == [
        (c.fragment_id, c.fused_score) for c in first
    ]
    assert all(c.hop_score is None and c.session_score is None for c in ranking.candidates)


def test_a_request_searching_one_list_makes_no_hop(conn, ingest, as_principal, counted):
    retriever, embedded = counted
    ingest("acme", {"chats/jon-gina.md": TRANSCRIPT}, kind="conversation")
    as_principal("acme")
    retriever.query_embedder.vectors(QUESTION)  # kept for the retrieval below
    embedded.texts.clear()
    lexical_only = retriever.rank(conn, request(QUESTION, k_dense=0))
    dense_only = retriever.rank(conn, request(QUESTION, k_lexical=0))
    conn.rollback()
    assert lexical_only.candidates and dense_only.candidates
    assert all(c.hop_score is None for c in lexical_only.candidates + dense_only.candidates)
    assert embedded.texts == []


def test_the_trace_names_each_turns_hop_and_session_share(conn, ingest, as_principal, retriever):
    ingest("acme", {"chats/jon-gina.md": TRANSCRIPT}, kind="conversation")
    as_principal("acme")
    retriever.retrieve(conn, request(QUESTION))
    conn.commit()
    (entries,) = conn.execute("select candidates from data.retrieval_traces").fetchone()
    assert len(entries) == 6
    for e in entries:
        assert 0.0 <= e["hop_score"] <= 1.0 and 0.0 <= e["session_score"] <= 1.0
    first = min(entries, key=lambda e: e["fused_rank"])
    assert first["session_score"] == pytest.approx(1.0)


def test_the_orgs_ranking_profile_holds_when_turns_are_reordered(conn, ingest, as_principal, retriever):
    """The profile comes on the SQL call's first row; lifting another turn first (a date
    named, the hop, the session) must not drop it for the built-in one."""
    from tests.retrieve.test_blend import set_profile
    from tests.retrieve.test_conversation_dates import TRANSCRIPT as DATED

    ingest("acme", {"chats/mel.md": DATED}, kind="conversation")
    set_profile(conn, None, w_rerank=0.5, w_freshness=0.5, w_authority=0.0, w_pinned=0.0, w_persona=0.0)
    as_principal("acme")
    q = retriever.resolve(request("What class did Caroline take on 10 June, 2023?"))
    vectors = retriever.query_embedder.vectors(q.query)
    first = fetch_candidates(conn, q.scope, q.query, vectors, q.k_lexical, q.k_dense, q.rrf_k, q.fusion, q.filters)
    ranking = retriever.rank(conn, q)
    conn.rollback()
    assert ranking.candidates[0].fragment_id != first[0].fragment_id  # reordered
    assert ranking.profile.source == "org"
    assert ranking.profile.weights["freshness"] == pytest.approx(0.5)
