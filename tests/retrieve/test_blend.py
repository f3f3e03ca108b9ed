"""The blended score (R-RANK-1, docs/adr/0014): freshness by kind as a standing term,
weights and half-lives from the ranking profile of the org or persona, a persona term,
and a trace from which every final score can be recomputed."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import msgspec
import psycopg
import pytest

from app.access import act_as
from app.retrieve.blend import TERMS, Profile, freshness
from app.retrieve.trace import get_trace
from app.wire.retrieve import RetrieveRequest

NOW = datetime.now(UTC)
FREEZE = "# Deploy freeze\n\nNo production deploys on Fridays after 15:00; hotfixes need two approvals.\n"


def request(query: str, **fields) -> RetrieveRequest:
    scope = {"org_id": "acme"} | fields.pop("scope", {})
    return msgspec.convert({"query": query, "scope": scope, "budget_tokens": 4000} | fields, RetrieveRequest)


def retrieve(conn, retriever, req: RetrieveRequest, principal: str = "admin"):
    act_as(conn, "acme", principal)
    response = retriever.retrieve(conn, req)
    trace = get_trace(conn, response.trace_id)
    conn.commit()
    return response, trace


def paths(response) -> list[str]:
    return [f.source.split("#")[0] for f in response.fragments]


def set_profile(conn, persona: str | None, principal: str = "admin", **fields):
    act_as(conn, "acme", principal)
    row = conn.execute(
        "select effective from service.ranking_profile_set('acme', %s, %s, %s, %s, %s, %s, %s::jsonb, %s)",
        (
            persona,
            fields.get("w_rerank"),
            fields.get("w_freshness"),
            fields.get("w_authority"),
            fields.get("w_pinned"),
            fields.get("w_persona"),
            msgspec.json.encode(fields.get("halflife_days", {})).decode(),
            fields.get("description"),
        ),
    ).fetchone()
    conn.commit()
    return row[0]


def test_freshness_is_a_half_life_decay():
    now = datetime(2026, 1, 1, tzinfo=UTC)
    assert freshness(now, 90, now) == 1.0
    assert freshness(now - timedelta(days=90), 90, now) == pytest.approx(0.5)
    assert freshness(now - timedelta(days=180), 90, now) == pytest.approx(0.25)
    assert freshness(now - timedelta(days=900), 90, now) > 0


def test_half_life_is_per_kind_and_a_request_overrides_it():
    profile = Profile.from_row({"w_rerank": 8, "w_freshness": 2, "halflife_days": {"default": 90, "policy": 365}})
    assert profile.weights["rerank"] == pytest.approx(0.8) and sum(profile.weights.values()) == pytest.approx(1.0)
    assert (profile.halflife("adr"), profile.halflife("policy")) == (90, 365)
    a_year_ago = NOW - timedelta(days=365)
    assert freshness(a_year_ago, profile.halflife("policy"), NOW) == pytest.approx(0.5)
    assert freshness(a_year_ago, profile.halflife("adr"), NOW) == pytest.approx(0.5 ** (365 / 90))
    assert Profile.from_row({"halflife_days": {"policy": 365}}, halflife_override=30).halflife("policy") == 30
    # Written the same day: one value, so a corpus ingested at once keeps its order.
    assert freshness(NOW - timedelta(hours=1), 90, NOW) == freshness(NOW - timedelta(hours=20), 90, NOW) == 1.0


def test_an_old_adr_surfaces_alone_and_a_fresh_one_dominates(conn, ingest, retriever):
    ingest("acme", {"adr/0003-deploy-freeze.md": FREEZE}, kind="adr", timestamp=NOW - timedelta(days=730))
    alone, _ = retrieve(conn, retriever, request("deploy freeze on fridays"))
    assert paths(alone)[0] == "adr/0003-deploy-freeze.md", "nothing fresher: the two-year-old ADR still comes first"
    fresh_text = FREEZE.replace("hotfixes need two approvals", "hotfixes need one approval and a rollback plan")
    ingest("acme", {"adr/0031-deploy-freeze.md": fresh_text}, kind="adr", timestamp=NOW - timedelta(days=7))
    both, trace = retrieve(conn, retriever, request("deploy freeze on fridays"))
    assert paths(both)[:2] == ["adr/0031-deploy-freeze.md", "adr/0003-deploy-freeze.md"]
    terms = {c["source"].split("#")[0]: c["terms"] for c in trace["candidates"] if c.get("terms")}
    assert terms["adr/0031-deploy-freeze.md"]["freshness"] == pytest.approx(0.5 ** (7 / 90))
    assert terms["adr/0003-deploy-freeze.md"]["freshness"] == pytest.approx(0.5 ** (730 / 90))


def test_policy_ages_slower_than_engineering_content(conn, ingest, retriever):
    ago = NOW - timedelta(days=300)
    ingest("acme", {"policy/freeze.md": FREEZE.replace("# Deploy", "# Policy: deploy")}, kind="policy", timestamp=ago)
    ingest("acme", {"adr/freeze.md": FREEZE.replace("# Deploy", "# ADR: deploy")}, kind="adr", timestamp=ago)
    response, trace = retrieve(conn, retriever, request("deploy freeze on fridays"))
    assert paths(response)[0] == "policy/freeze.md", "like texts, same age: the policy is still fresh"
    terms = {c["source"].split("#")[0]: c["terms"] for c in trace["candidates"] if c.get("terms")}
    assert terms["policy/freeze.md"]["freshness"] == pytest.approx(0.5 ** (300 / 365))
    assert terms["adr/freeze.md"]["freshness"] == pytest.approx(0.5 ** (300 / 90))
    # The org default changes the half-lives; the request's own half-life overrides them all.
    set_profile(conn, None, halflife_days={"adr": 3650})
    _, trace = retrieve(conn, retriever, request("deploy freeze on fridays"))
    terms = {c["source"].split("#")[0]: c["terms"] for c in trace["candidates"] if c.get("terms")}
    assert terms["adr/freeze.md"]["freshness"] == pytest.approx(0.5 ** (300 / 3650))
    _, trace = retrieve(conn, retriever, request("deploy freeze on fridays", freshness_halflife_days=30))
    assert trace["pipeline"]["profile"]["halflife_override"] == 30
    assert [c["terms"]["freshness"] for c in trace["candidates"] if c.get("terms")] == [
        pytest.approx(0.5 ** (300 / 30))
    ] * 2


CORPUS = {
    "runbooks/storage.md": "# Storage volume full\n\nWhen the storage volume fills, rotate logs, reboot the daemon.\n",
    "adr/retries.md": "# Retries\n\nRetry idempotent calls three times with jittered exponential backoff.\n",
    "docs/onboarding.md": "# Onboarding\n\nNew engineers pair with a buddy for their first two weeks.\n",
    "policy/access.md": "# Access reviews\n\nProduction access is reviewed every quarter by the team lead.\n",
    "docs/caching.md": "# Caching\n\nCache keys expire after ten minutes; stampedes are prevented with jitter.\n",
}


def test_every_final_score_is_recomputed_from_the_trace_and_min_score_applies(conn, ingest, retriever):
    ingest("acme", CORPUS)
    response, trace = retrieve(conn, retriever, request("retry storage calls with backoff"))
    weights = trace["pipeline"]["profile"]["weights"]
    assert set(weights) == set(TERMS) and math.fsum(weights.values()) == pytest.approx(1.0)
    scored = [c for c in trace["candidates"] if c["final_score"] is not None]
    assert scored
    for c in scored:
        assert set(c["terms"]) == set(TERMS)
        assert 0.0 <= c["final_score"] <= 1.0
        assert math.fsum(weights[t] * c["terms"][t] for t in TERMS) == pytest.approx(c["final_score"], abs=1e-12)
    assert all(0.0 <= f.score <= 1.0 for f in response.fragments)
    scores = sorted({f.score for f in response.fragments})
    floor = (scores[0] + scores[-1]) / 2
    floored, trace = retrieve(conn, retriever, request("retry storage calls with backoff", min_score=floor))
    assert floored.fragments and all(f.score >= floor for f in floored.fragments)
    assert len(floored.fragments) < len(response.fragments)
    assert {c["reason"] for c in trace["candidates"] if c["final_score"] is not None and c["final_score"] < floor} == {
        "below_min_score"
    }


def test_constant_terms_keep_the_pipelines_order(conn, ingest, retriever):
    """Everything ingested at once: freshness is one value, authority 0, so the default
    blend orders exactly as relevance alone (what the golden sets rely on)."""
    ingest("acme", CORPUS)
    blended, _ = retrieve(conn, retriever, request("retry storage calls with backoff"))
    set_profile(conn, None, w_rerank=1, w_freshness=0, w_authority=0, w_pinned=0, w_persona=0)
    plain, _ = retrieve(conn, retriever, request("retry storage calls with backoff"))
    assert [f.id for f in blended.fragments] == [f.id for f in plain.fragments]
    assert [f.score for f in plain.fragments] != [f.score for f in blended.fragments]


PAYMENTS = {
    "payments/retries.md": (
        "# Retrying failed payment requests\n\nWhen a request to the payment service fails, retry it with "
        "exponential backoff and the same idempotency key, so the customer is never charged twice.\n"
    ),
    "ops/payment-alerts.md": (
        "# Alerting on payment failures\n\nPage the on-call engineer when the payment service error rate "
        "stays above 2% for five minutes; the dashboard shows latency and 5xx rates.\n"
    ),
    "ops/payment-timeouts.md": (
        "# Payment service timeouts\n\nClient timeouts to the payment service are 3 s; shed load when its "
        "latency SLO is breached and burn the error budget slowly.\n"
    ),
    "ui/payment-errors.md": (
        "# Showing failed payments to users\n\nWhen a payment request fails, announce the error to screen "
        "readers with an ARIA live region and keep keyboard focus on the form.\n"
    ),
    "ui/payment-error-contrast.md": (
        "# Accessible payment error messages\n\nError text for failed payments needs 4.5:1 colour contrast, "
        "must not rely on colour alone, and is tied to its field with aria-describedby.\n"
    ),
}
PERSONAS = {
    "sre": (
        "sre/charter.md",
        "# What SRE looks for\n\nReliability: on-call paging, alerts, dashboards, SLOs, latency, error budgets, "
        "incident response, timeouts and load shedding.\n",
    ),
    "a11y": (
        "a11y/charter.md",
        "# What accessibility review looks for\n\nScreen readers, ARIA roles and live regions, keyboard focus, "
        "colour contrast, WCAG conformance for every user.\n",
    ),
}


@pytest.fixture
def personas(conn, ingest):
    ingest("acme", PAYMENTS)
    for persona, (path, text) in PERSONAS.items():
        ingest("acme", {path: text}, persona=persona)
    return conn


def org_wide_top3(conn, retriever, persona: str) -> list[str]:
    req = request("what to do when a payment request fails", scope={"persona_id": persona})
    response, trace = retrieve(conn, retriever, req)
    return [p for p in paths(response) if not p.startswith(("sre/", "a11y/"))][:3]


def test_two_personas_get_different_top3s_and_both_keep_the_answer(personas, retriever):
    without = {persona: org_wide_top3(personas, retriever, persona) for persona in PERSONAS}
    assert without["sre"] == without["a11y"], "no persona weight: one order for both"
    for persona in PERSONAS:
        set_profile(personas, persona, w_persona=0.5, description=f"the {persona} persona")
    top3 = {persona: org_wide_top3(personas, retriever, persona) for persona in PERSONAS}
    assert top3["sre"] != top3["a11y"]
    assert all("payments/retries.md" in top for top in top3.values()), top3
    assert {"ops/payment-alerts.md", "ops/payment-timeouts.md"} & set(top3["sre"][1:])
    assert {"ui/payment-errors.md", "ui/payment-error-contrast.md"} & set(top3["a11y"][1:])


DESCRIPTIONS = {persona: text.split("\n\n", 1)[1].strip() for persona, (_path, text) in PERSONAS.items()}
"""What each persona cares about, as a lead would describe it (the charters' bodies)."""


def describe(conn, models, persona: str, description: str, **weights) -> None:
    """Set the persona's profile as the API and CLI do: the description embedded first."""
    from app.operations.profiles import description_vectors, set_profile_on
    from app.wire.bodies import RankingProfileSet

    data = msgspec.convert(
        {"org_id": "acme", "persona_id": persona, "description": description, **weights}, RankingProfileSet
    )
    vectors = description_vectors(models, data)
    act_as(conn, "acme", "admin")
    set_profile_on(conn, data, vectors)
    conn.commit()


def rank_of(top: list[str], paths_: set[str]) -> int:
    return min((i for i, p in enumerate(top) if p in paths_), default=len(top))


def test_a_persona_with_only_a_description_leans_toward_it_and_keeps_the_answer(conn, ingest, retriever, models):
    """No persona-scoped fragments: the description alone is the persona's evidence."""
    ingest("acme", PAYMENTS)
    for persona in PERSONAS:
        conn.execute("select service.ensure_scope('acme', null, %s, null)", (persona,))
    conn.commit()
    ops, ui = (
        {"ops/payment-alerts.md", "ops/payment-timeouts.md"},
        {"ui/payment-errors.md", "ui/payment-error-contrast.md"},
    )

    def top(persona: str) -> list[str]:
        response, trace = retrieve(
            conn, retriever, request("what to do when a payment request fails", scope={"persona_id": persona})
        )
        return paths(response), trace

    before, _ = top("sre")
    # Weighted, but neither described nor holding fragments: no persona term, one order.
    for persona in PERSONAS:
        set_profile(conn, persona, w_persona=0.5)
    assert top("sre")[0] == top("a11y")[0] == before
    for persona in PERSONAS:
        describe(conn, models, persona, DESCRIPTIONS[persona], w_persona=0.5)
    stored = conn.execute("select persona_id, count(*) from data.persona_vectors group by 1 order by 1").fetchall()
    assert stored == [("a11y", len(models)), ("sre", len(models))]
    (sre, trace), (a11y, _) = top("sre"), top("a11y")
    assert sre[:3] != a11y[:3]
    assert "payments/retries.md" in sre[:3] and "payments/retries.md" in a11y[:3], (sre, a11y)
    # Each moves toward what its description names: SRE's alerting and timeouts, the
    # accessibility reviewer's screen readers and contrast.
    assert rank_of(sre, ops) < rank_of(before, ops) and set(sre[:3]) & ops, (before, sre)
    assert rank_of(a11y, ui) < rank_of(before, ui), (before, a11y)
    assert any(c["terms"]["persona"] > 0 for c in trace["candidates"] if c.get("terms"))


def test_a_changed_description_drops_its_old_vectors_and_a_stale_one_is_refused(conn, ingest, models):
    ingest("acme", PAYMENTS)
    conn.execute("select service.ensure_scope('acme', null, 'sre', null)")
    conn.commit()
    describe(conn, models, "sre", DESCRIPTIONS["sre"], w_persona=0.3)
    count = "select count(*) from data.persona_vectors where persona_id = 'sre'"
    assert conn.execute(count).fetchone()[0] == len(models)
    set_profile(conn, "sre", w_persona=0.3, description=DESCRIPTIONS["sre"])  # unchanged: kept
    assert conn.execute(count).fetchone()[0] == len(models)
    set_profile(conn, "sre", w_persona=0.3, description="Incident response only.")  # changed: dropped
    assert conn.execute(count).fetchone()[0] == 0
    act_as(conn, "acme", "admin")
    vectors = msgspec.json.encode({"prose": [0.1] * models["prose"].dims}).decode()
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="does not hold this description"):
        conn.execute("select service.persona_vectors_set('acme', 'sre', %s, %s::jsonb)", (DESCRIPTIONS["sre"], vectors))
    conn.rollback()
    act_as(conn, "acme", "admin")
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="dimensions"):
        conn.execute(
            "select service.persona_vectors_set('acme', 'sre', 'Incident response only.', '{\"prose\": [1, 2]}')"
        )
    conn.rollback()
