"""/profiles over HTTP: ranking profiles of an org and its personas (docs/adr/0014),
who may set and read them, and what is refused."""

from __future__ import annotations

import psycopg
import pytest

from app.access import create_api_key
from tests.api.test_api import ingest, problem
from tests.retrieve.corpus import DOCS


@pytest.fixture
def keys(client, db_url) -> dict[str, str]:
    """reader: reads the org; sre-lead: writes persona sre only; a11y-agent: reads persona a11y only."""
    with psycopg.connect(db_url) as conn:
        conn.execute("select service.ensure_scope('acme', null, 'sre')")
        conn.execute("select service.ensure_scope('acme', null, 'a11y')")
        for principal, kind, scope, target, write in (
            ("reader", "agent", "org", None, False),
            ("sre-lead", "human", "persona", "sre", True),
            ("a11y-agent", "agent", "persona", "a11y", False),
        ):
            conn.execute("select service.create_principal('acme', %s, %s, '')", (principal, kind))
            conn.execute("select service.grant_scope('acme', %s, %s, %s, %s)", (principal, scope, target, write))
        return {p: create_api_key(conn, "acme", p).token for p in ("reader", "sre-lead", "a11y-agent")}


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_set_show_list_and_delete(client, keys):
    shown = client.get("/profiles/effective", params={"org_id": "acme"})
    assert shown.status_code == 200, shown.text
    built_in = shown.json()["effective"]
    assert built_in["source"] == "built-in" and shown.json()["updated_by"] is None
    assert (built_in["w_rerank"], built_in["w_freshness"], built_in["w_authority"], built_in["w_pinned"]) == (
        0.75,
        0.1,
        0.1,
        0.05,
    )
    assert built_in["halflife_days"] == {"default": 90, "policy": 365}

    org = client.put("/profiles", json={"org_id": "acme", "w_freshness": 0.3, "halflife_days": {"adr": 180}})
    assert org.status_code == 200, org.text
    assert org.json()["updated_by"] == "admin" and org.json()["w_rerank"] is None
    assert org.json()["effective"]["w_freshness"] == 0.3 and org.json()["effective"]["w_rerank"] == 0.75
    assert org.json()["effective"]["halflife_days"] == {"default": 90, "policy": 365, "adr": 180}

    sre = client.put(
        "/profiles",
        json={"org_id": "acme", "persona_id": "sre", "w_persona": 0.2, "description": "reliability first"},
        headers=auth(keys["sre-lead"]),
    )
    assert sre.status_code == 200, sre.text
    effective = sre.json()["effective"]
    assert (effective["source"], effective["w_persona"], effective["w_freshness"]) == ("persona", 0.2, 0.3)
    assert effective["halflife_days"]["adr"] == 180, "inherited from the org default"

    listed = client.get("/profiles", params={"org_id": "acme"}).json()["profiles"]
    assert [p["persona_id"] for p in listed] == [None, "sre"]
    # A reader of persona a11y only sees the org default, not sre's profile.
    theirs = client.get("/profiles", params={"org_id": "acme"}, headers=auth(keys["a11y-agent"])).json()
    assert [p["persona_id"] for p in theirs["profiles"]] == [None]
    problem(
        client.get(
            "/profiles/effective", params={"org_id": "acme", "persona_id": "sre"}, headers=auth(keys["a11y-agent"])
        ),
        403,
    )

    # A DELETE reads no body: one naming the persona is refused, not taken as the org's.
    sent = client.request("DELETE", "/profiles", params={"org_id": "acme"}, json={"persona_id": "sre"})
    assert "takes no body" in problem(sent, 400)["detail"]
    assert [p["persona_id"] for p in client.get("/profiles", params={"org_id": "acme"}).json()["profiles"]] == [
        None,
        "sre",
    ]
    assert (
        client.request("DELETE", "/profiles", params={"org_id": "acme", "persona_id": "x"}, json={}).status_code == 404
    )
    removed = client.delete("/profiles", params={"org_id": "acme", "persona_id": "sre"}, headers=auth(keys["sre-lead"]))
    assert removed.status_code == 200 and removed.json()["effective"]["source"] == "org"
    problem(client.delete("/profiles", params={"org_id": "acme", "persona_id": "sre"}), 404)


def test_setting_needs_a_write_grant_on_the_org_or_persona(client, keys):
    problem(client.put("/profiles", json={"org_id": "acme", "w_rerank": 1}, headers=auth(keys["reader"])), 403)
    problem(client.put("/profiles", json={"org_id": "acme", "w_rerank": 1}, headers=auth(keys["sre-lead"])), 403)
    body = {"org_id": "acme", "persona_id": "a11y", "w_persona": 1}
    problem(client.put("/profiles", json=body, headers=auth(keys["sre-lead"])), 403)
    problem(client.put("/profiles", json=body, headers=auth(keys["a11y-agent"])), 403)
    problem(client.delete("/profiles", params={"org_id": "acme"}, headers=auth(keys["reader"])), 403)
    problem(client.put("/profiles", json={"org_id": "acme", "persona_id": "nobody", "w_persona": 1}), 404)


@pytest.mark.parametrize(
    "body",
    [
        {"org_id": "acme", "w_rerank": -0.1},
        {"org_id": "acme", "w_rerank": 0, "w_freshness": 0, "w_authority": 0, "w_pinned": 0, "w_persona": 0},
        # All zero in effect (w_persona inherits the built-in 0): refused by the database.
        {"org_id": "acme", "w_rerank": 0, "w_freshness": 0, "w_authority": 0, "w_pinned": 0},
        {"org_id": "acme", "halflife_days": {"adr": 0}},
        {"org_id": "acme", "halflife_days": {"adr": -5}},
        {"org_id": "acme", "halflife_days": {"Not A Kind": 30}},
        {"org_id": "acme", "w_rerank": "high"},
        {"org_id": "acme", "weights": {}},
    ],
)
def test_bad_profiles_are_400(client, body):
    problem(client.put("/profiles", json=body), 400)
    assert client.get("/profiles", params={"org_id": "acme"}).json()["profiles"] == []


def test_a_persona_profile_changes_its_retrievals(client, keys):
    assert ingest(client, DOCS).status_code == 201
    query = {"query": "what to do when the storage volume is full", "scope": {"org_id": "acme", "persona_id": "sre"}}
    before = client.post("/contexts/retrieve", json=query).json()
    assert (
        client.put(
            "/profiles",
            json={
                "org_id": "acme",
                "persona_id": "sre",
                "w_rerank": 1,
                "w_freshness": 0,
                "w_authority": 0,
                "w_pinned": 0,
            },
            headers=auth(keys["sre-lead"]),
        ).status_code
        == 200
    )
    after = client.post("/contexts/retrieve", json=query).json()
    assert [f["id"] for f in after["fragments"]] == [f["id"] for f in before["fragments"]]
    trace = client.get(f"/traces/{after['trace_id']}").json()
    assert trace["pipeline"]["profile"]["source"] == "persona"
    assert trace["pipeline"]["profile"]["weights"]["rerank"] == 1.0
    # The score is now the rerank term alone: no freshness added as the built-in profile does.
    top = next(c for c in trace["candidates"] if c["fragment_id"] == after["fragments"][0]["id"])
    assert after["fragments"][0]["score"] == pytest.approx(top["terms"]["rerank"], abs=1e-6)
    before_trace = client.get(f"/traces/{before['trace_id']}").json()
    assert before_trace["pipeline"]["profile"]["source"] != "persona"
    assert after["fragments"][0]["score"] != pytest.approx(before["fragments"][0]["score"], abs=1e-6)


def test_a_trace_withholds_a_persona_profile_from_an_auditor_without_that_persona(client, keys, db_url):
    """GET /profiles withholds sre's profile from a principal without a grant on sre; a
    trace of a retrieval in sre's scope does too (its weights are the profile), where the
    org's reader, whose grant covers every persona, sees it."""
    assert ingest(client, DOCS).status_code == 201
    body = {"org_id": "acme", "persona_id": "sre", "w_rerank": 0.9, "w_freshness": 0.1, "w_authority": 0, "w_pinned": 0}
    assert client.put("/profiles", json=body, headers=auth(keys["sre-lead"])).status_code == 200
    query = {"query": "what to do when the storage volume is full", "scope": {"org_id": "acme", "persona_id": "sre"}}
    trace_id = client.post("/contexts/retrieve", json=query).json()["trace_id"]
    with psycopg.connect(db_url) as conn:
        conn.execute("select service.create_principal('acme', 'auditor', 'human', '')")
        conn.execute("select service.grant_scope('acme', 'auditor', 'audit', null, false)")
        conn.execute("select service.grant_scope('acme', 'reader', 'audit', null, false)")
        auditor = create_api_key(conn, "acme", "auditor").token
    seen = client.get(f"/traces/{trace_id}", headers=auth(auditor)).json()
    assert seen["pipeline"]["profile"] is None and "pipeline.profile" in seen["redacted"], seen["redacted"]
    assert "request.scope.persona_id" in seen["redacted"]
    whole = client.get(f"/traces/{trace_id}", headers=auth(keys["reader"])).json()
    assert whole["pipeline"]["profile"]["weights"]["rerank"] == 0.9 and "pipeline.profile" not in whole["redacted"]


def test_a_persona_description_is_embedded_when_set_and_dropped_with_the_profile(client, keys, db_url):
    body = {
        "org_id": "acme",
        "persona_id": "sre",
        "w_persona": 0.3,
        "description": "Alerts, SLOs and incident response.",
    }
    assert client.put("/profiles", json=body, headers=auth(keys["sre-lead"])).status_code == 200
    count = "select count(*) from data.persona_vectors where org_id = 'acme' and persona_id = 'sre'"
    with psycopg.connect(db_url) as conn:
        assert conn.execute(count).fetchone()[0] == 2  # one per namespace's model
    params = {"org_id": "acme", "persona_id": "sre"}
    assert client.delete("/profiles", params=params, headers=auth(keys["sre-lead"])).status_code == 200
    with psycopg.connect(db_url) as conn:
        assert conn.execute(count).fetchone()[0] == 0


@pytest.mark.parametrize("persona", [None, "sre"])
def test_concurrent_setters_of_one_profile_each_set_it_in_turn(client, keys, db_url, persona):
    """A second setter waits for the first and then replaces its profile: no 409 (a
    delete then an insert made it a unique violation)."""
    import threading

    assert client.put("/profiles", json={"org_id": "acme", "w_freshness": 0.2}).status_code == 200
    if persona:
        assert client.put("/profiles", json={"org_id": "acme", "persona_id": persona}).status_code == 200
    call = "select w_freshness from service.ranking_profile_set('acme', %s, p_w_freshness => %s)"
    with psycopg.connect(db_url) as first, psycopg.connect(db_url) as late:
        for conn in (first, late):
            conn.execute("select service.bind_principal('acme', 'admin')")
        assert first.execute(call, (persona, 0.4)).fetchone() == (0.4,)
        outcome: list[object] = []

        def waiting() -> None:
            try:
                outcome.append(late.execute(call, (persona, 0.6)).fetchone())
            except psycopg.Error as exc:
                outcome.append(exc.sqlstate)

        thread = threading.Thread(target=waiting)
        thread.start()
        thread.join(timeout=1.5)
        assert thread.is_alive(), f"the second setter did not wait for the first: {outcome}"
        first.commit()
        thread.join(timeout=30)
        assert outcome == [(0.6,)], outcome
        late.commit()
    shown = client.get("/profiles", params={"org_id": "acme"}).json()["profiles"]
    assert [(p["persona_id"], p["w_freshness"]) for p in shown if p["persona_id"] == persona] == [(persona, 0.6)]
