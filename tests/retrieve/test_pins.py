"""Manual pins always win (R-RANK-1) and negative fragments are flagged (R-DOC-2):
service.pin_add / service.pin_remove / api.pins_list, and a retrieval composing the pins its
scope sees first, whatever their relevance, within the budget."""

from __future__ import annotations

import msgspec
import psycopg
import pytest
from psycopg import errors

from app.access import act_as
from app.retrieve.trace import get_trace
from app.wire.retrieve import RetrieveRequest
from tests.retrieve.corpus import DOCS

TRAP = (
    "# Silent retries\n\nNever wrap storage calls in silent retries that mask 5xx errors: "
    "the volume fills while every call looks healthy.\n"
)


@pytest.fixture
def corpus(conn, ingest):
    ingest("acme", DOCS)
    ingest("acme", {"traps/retries.md": TRAP}, kind="anti-pattern")
    ingest(
        "acme",
        {"traps/flagged.md": "# Cache stampede\n\nDo not expire every cache key at once.\n"},
        metadata={"negative": True},
    )
    ingest("acme", {"runbooks/sre-only.md": "# SRE pager\n\nThe storage pager rotates weekly.\n"}, persona="sre")
    conn.execute("select service.create_principal('acme', 'reader', 'agent', '')")
    conn.execute("select service.grant_scope('acme', 'reader', 'org', null, false)")
    conn.execute("select service.create_principal('acme', 'lead', 'human', '')")
    conn.execute("select service.grant_scope('acme', 'lead', 'org', null, true)")
    conn.execute("select service.grant_scope('acme', 'lead', 'persona', 'sre', true)")
    conn.commit()
    return conn


def request(query: str, **fields) -> RetrieveRequest:
    return msgspec.convert({"query": query, "scope": {"org_id": "acme"}} | fields, RetrieveRequest)


def fragment_of(conn: psycopg.Connection, path: str) -> int:
    return conn.execute(
        "select s.fragment_id from data.fragment_sources s join data.documents d on d.doc_id = s.doc_id"
        " where d.path = %s order by s.ordinal limit 1",
        (path,),
    ).fetchone()[0]


def pin(
    conn: psycopg.Connection,
    fragment_id: int,
    principal: str = "lead",
    persona: str | None = None,
    reason: str = "always read this first",
    expires_at: str | None = None,
) -> int:
    act_as(conn, "acme", principal)
    pin_id = conn.execute(
        "select pin_id from service.pin_add('acme', null, %s, null, %s, %s, %s)",
        (persona, fragment_id, reason, expires_at),
    ).fetchone()[0]
    conn.commit()
    return pin_id


def retrieve(conn, retriever, req: RetrieveRequest, principal: str = "reader"):
    act_as(conn, "acme", principal)
    response = retriever.retrieve(conn, req)
    conn.commit()
    return response


def test_a_pin_wins_over_more_relevant_fragments(corpus, retriever):
    onboarding = fragment_of(corpus, "docs/onboarding.md")
    before = retrieve(corpus, retriever, request("storage volume capacity reboot daemon"))
    assert before.fragments[0].source.startswith("runbooks/storage.md")
    assert onboarding not in [f.id for f in before.fragments[:1]]
    pin_id = pin(corpus, onboarding)

    after = retrieve(
        corpus, retriever, request("storage volume capacity reboot daemon", min_score=0.95, min_relevance=0.5)
    )
    first = after.fragments[0]
    assert (first.id, first.pinned, first.pin_id) == (onboarding, True, pin_id)
    assert first.relevance < 0.5, "min_relevance and min_score do not drop a pin"
    assert not any(f.pinned for f in after.fragments[1:])
    assert after.pins_left_out == []


def test_pins_leave_the_other_candidates_exactly_as_they_were(corpus, retriever):
    req = request("rotate credentials and keys")
    act_as(corpus, "acme", "reader")
    before = [(c.fragment_id, c.fused_score, c.lexical_rank, c.dense_rank) for c in retriever.candidates(corpus, req)]
    corpus.rollback()
    pin(corpus, fragment_of(corpus, "docs/frontend.md"))
    act_as(corpus, "acme", "reader")
    candidates = retriever.candidates(corpus, req)
    after = [(c.fragment_id, c.fused_score, c.lexical_rank, c.dense_rank) for c in candidates if c.pin_id is None]
    pinned = [c for c in candidates if c.pin_id is not None]
    assert len(pinned) == 1
    expected = [row for row in before if row[0] != pinned[0].fragment_id]
    assert after == expected


def test_a_pin_is_seen_only_in_its_scope(corpus, retriever):
    sre = fragment_of(corpus, "runbooks/sre-only.md")
    pin_id = pin(corpus, sre, persona="sre")
    corpus.execute("select service.grant_scope('acme', 'reader', 'persona', 'sre', false)")
    corpus.commit()
    without = retrieve(corpus, retriever, request("accessible buttons"))
    assert sre not in [f.id for f in without.fragments]
    with_persona = retrieve(
        corpus, retriever, request("accessible buttons", scope={"org_id": "acme", "persona_id": "sre"})
    )
    assert (with_persona.fragments[0].id, with_persona.fragments[0].pin_id) == (sre, pin_id)
    act_as(corpus, "acme", "reader")
    listed = corpus.execute("select pin_id from api.pins_list('acme', null, 'sre', null)").fetchall()
    assert listed == [(pin_id,)]
    assert corpus.execute("select pin_id from api.pins_list('acme')").fetchall() == []


def test_pinning_needs_a_write_grant_on_the_pin_scope(corpus):
    fragment = fragment_of(corpus, "docs/onboarding.md")
    with pytest.raises(errors.InsufficientPrivilege):
        pin(corpus, fragment, principal="reader")
    corpus.rollback()
    pin_id = pin(corpus, fragment)
    act_as(corpus, "acme", "reader")
    with pytest.raises(errors.InsufficientPrivilege):
        corpus.execute("select service.pin_remove(%s)", (pin_id,))
    corpus.rollback()
    act_as(corpus, "acme", "lead")
    assert corpus.execute("select pin_id from service.pin_remove(%s)", (pin_id,)).fetchone() == (pin_id,)
    with pytest.raises(errors.NoDataFound):
        corpus.execute("select service.pin_remove(%s)", (pin_id,))


def test_bad_pins_are_refused(corpus):
    onboarding = fragment_of(corpus, "docs/onboarding.md")
    sre = fragment_of(corpus, "runbooks/sre-only.md")
    with pytest.raises(errors.NoDataFound):  # an id that is not a fragment
        pin(corpus, 10**12)
    corpus.rollback()
    with pytest.raises(errors.InvalidParameterValue):  # a persona fragment pinned org-wide
        pin(corpus, sre)
    corpus.rollback()
    with pytest.raises(errors.InvalidParameterValue):
        pin(corpus, onboarding, reason=" ")
    corpus.rollback()
    with pytest.raises(errors.InvalidParameterValue):
        pin(corpus, onboarding, expires_at="2000-01-01T00:00:00Z")
    corpus.rollback()
    pin(corpus, onboarding)
    with pytest.raises(errors.UniqueViolation):
        pin(corpus, onboarding)


def test_an_expired_pin_is_ignored(corpus, retriever):
    onboarding = fragment_of(corpus, "docs/onboarding.md")
    pin_id = pin(corpus, onboarding, expires_at="2999-01-01T00:00:00Z")
    assert retrieve(corpus, retriever, request("storage volume capacity")).fragments[0].pin_id == pin_id
    corpus.execute(  # as the migrator: age the pin past its expiry
        "update data.pins set created_at = now() - interval '2 days', expires_at = now() - interval '1 day'"
        " where pin_id = %s",
        (pin_id,),
    )
    corpus.commit()
    response = retrieve(corpus, retriever, request("storage volume capacity"))
    assert not any(f.pinned for f in response.fragments)
    act_as(corpus, "acme", "reader")
    assert corpus.execute("select pin_id from api.pins_list('acme')").fetchall() == []
    assert corpus.execute(
        "select pin_id, expired from api.pins_list('acme', p_include_expired => true)"
    ).fetchall() == [(pin_id, True)]


def test_pins_over_the_budget_are_reported_earlier_pins_winning(corpus, retriever):
    first = pin(corpus, fragment_of(corpus, "policies/secrets.md"))
    second = pin(corpus, fragment_of(corpus, "docs/frontend.md"))
    tokens = corpus.execute(
        "select token_count from data.fragments where fragment_id = %s", (fragment_of(corpus, "policies/secrets.md"),)
    ).fetchone()[0]
    response = retrieve(corpus, retriever, request("storage volume capacity", budget_tokens=tokens))
    assert [(f.pin_id, f.pinned) for f in response.fragments] == [(first, True)]
    assert response.pins_left_out == [second]
    act_as(corpus, "acme", "reader")
    trace = get_trace(corpus, response.trace_id)
    fates = {c.get("pin_id"): c["reason"] for c in trace["candidates"] if c.get("pin_id")}
    assert fates == {first: "pinned", second: "pin_over_budget"}
    corpus.rollback()

    capped = retrieve(corpus, retriever, request("storage volume capacity", top_k=1))
    assert [f.pin_id for f in capped.fragments] == [first]
    assert capped.pins_left_out == [second]


@pytest.mark.parametrize("mode", ["include", "only", "exclude"])
def test_negative_fragments_are_flagged_and_filtered(corpus, retriever, mode):
    query = "storage retries errors cache expire"
    response = retrieve(corpus, retriever, request(query, negatives=mode))
    negatives = {f.source.split("#")[0] for f in response.fragments if f.negative}
    others = [f for f in response.fragments if not f.negative]
    if mode == "include":
        assert negatives == {"traps/retries.md", "traps/flagged.md"} and others
    elif mode == "only":
        assert negatives == {"traps/retries.md", "traps/flagged.md"} and not others
    else:
        assert negatives == set() and others


def test_negatives_apply_to_pins_and_front_matter_marks_a_document(corpus, ingest, retriever):
    ingest("acme", {"traps/front.md": "---\nkind: anti-pattern\n---\n# Shared mutable fixtures\n\nAvoid them.\n"})
    trap = fragment_of(corpus, "traps/front.md")
    assert corpus.execute("select negative, kind from data.fragments where fragment_id = %s", (trap,)).fetchone() == (
        True,
        "anti-pattern",
    )
    pin(corpus, trap)
    pinned = retrieve(corpus, retriever, request("certificates renew", negatives="include")).fragments[0]
    assert (pinned.id, pinned.pinned, pinned.negative) == (trap, True, True)
    excluded = retrieve(corpus, retriever, request("certificates renew", negatives="exclude"))
    assert trap not in [f.id for f in excluded.fragments]
    with pytest.raises(msgspec.ValidationError):
        request("certificates", negatives="some")


def test_pins_a_request_cannot_serve_are_named_with_why(corpus, ingest, retriever):
    """A pin whose document was deleted or changed (its text retired), and one the
    request's filters exclude, are not composed and are named in `pins_left_out` with
    their reason, earliest pin first, as budget and validity left-outs are."""
    ingest("acme", {"notes/drain.md": "# Drain\n\nDrain the node before the kernel upgrade.\n"})
    drained = pin(corpus, fragment_of(corpus, "notes/drain.md"))
    secrets = pin(corpus, fragment_of(corpus, "policies/secrets.md"))
    onboarding = pin(corpus, fragment_of(corpus, "docs/onboarding.md"))
    served = retrieve(corpus, retriever, request("storage volume capacity"))
    assert [f.pin_id for f in served.fragments if f.pinned] == [drained, secrets, onboarding]
    assert served.pins_left_out == []

    ingest("acme", {"notes/drain.md": "# Drain\n\nCordon, then drain the node before any kernel upgrade.\n"})
    filtered = retrieve(corpus, retriever, request("storage volume capacity", path_prefix="docs/"))
    assert [f.pin_id for f in filtered.fragments if f.pinned] == [onboarding]
    assert filtered.pins_left_out == [drained, secrets]
    why = {p.pin_id: (p.reason, p.detail) for p in filtered.pins_left_out_reasons}
    assert why[drained] == (
        "retired",
        "its text is no longer live in notes/drain.md (deleted or changed since it was pinned)",
    )
    assert why[secrets] == ("filtered", "outside one of this request's filters (path_prefix)")
    act_as(corpus, "acme", "reader")
    trace = get_trace(corpus, filtered.trace_id)
    corpus.rollback()
    assert {x["pin_id"]: x["reason"] for x in trace["left_out"] if "pin_id" in x} == {
        drained: "retired",
        secrets: "filtered",
    }
    # Without filters, the live pins are served again; the retired one stays named.
    again = retrieve(corpus, retriever, request("storage volume capacity"))
    assert [f.pin_id for f in again.fragments if f.pinned] == [secrets, onboarding]
    assert again.pins_left_out == [drained]
    # So it is for a request that keeps superseded fragments (no window keeps anything out).
    kept = retrieve(corpus, retriever, request("storage volume capacity", path_prefix="docs/", include_superseded=True))
    assert [f.pin_id for f in kept.fragments if f.pinned] == [onboarding]
    assert kept.pins_left_out == [drained, secrets]
