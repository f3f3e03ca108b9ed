"""/pins over HTTP, pins and negative fragments in retrievals and session packs."""

from __future__ import annotations

import psycopg
import pytest

from app.access import create_api_key
from tests.api.test_api import ingest, problem
from tests.retrieve.corpus import DOCS

TRAP = "# Silent retries\n\nNever wrap storage calls in silent retries that mask 5xx errors.\n"
QUERY = "what to do when the storage volume is full"


def fragment_id(client, path: str) -> int:
    doc_id = next(
        d["doc_id"]
        for d in client.get("/documents", params={"org_id": "acme"}).json()["documents"]
        if d["path"] == path
    )
    return client.get(f"/documents/{doc_id}").json()["fragments"][0]["fragment_id"]


@pytest.fixture
def corpus(client):
    assert ingest(client, DOCS).status_code == 201
    body = {
        "scope": {"org_id": "acme"},
        "documents": [{"path": "traps/retries.md", "content": TRAP, "kind": "anti-pattern"}],
    }
    assert client.post("/documents", json=body).status_code == 201
    return client


def test_pin_list_retrieve_and_remove(corpus):
    onboarding = fragment_id(corpus, "docs/onboarding.md")
    created = corpus.post(
        "/pins", json={"scope": {"org_id": "acme"}, "fragment_id": onboarding, "reason": "read this first"}
    )
    assert created.status_code == 201, created.text
    pin = created.json()
    assert pin["fragment_id"] == onboarding and pin["pinned_by"] == "admin" and pin["negative"] is False
    assert [p["pin_id"] for p in corpus.get("/pins", params={"org_id": "acme"}).json()["pins"]] == [pin["pin_id"]]

    result = corpus.post("/contexts/retrieve", json={"query": QUERY, "scope": {"org_id": "acme"}}).json()
    first = result["fragments"][0]
    assert (first["id"], first["pinned"], first["pin_id"]) == (onboarding, True, pin["pin_id"])
    assert result["pins_left_out"] == []
    trap = next(f for f in result["fragments"] if f["source"].startswith("traps/"))
    assert trap["negative"] is True and trap["kind"] == "anti-pattern"
    only = corpus.post("/contexts/retrieve", json={"query": QUERY, "scope": {"org_id": "acme"}, "negatives": "only"})
    assert [f["source"].split("#")[0] for f in only.json()["fragments"]] == ["traps/retries.md"]

    again = corpus.post("/pins", json={"scope": {"org_id": "acme"}, "fragment_id": onboarding, "reason": "twice"})
    problem(again, 409)
    assert corpus.delete(f"/pins/{pin['pin_id']}").json()["pin_id"] == pin["pin_id"]
    problem(corpus.delete(f"/pins/{pin['pin_id']}"), 404)
    assert corpus.get("/pins", params={"org_id": "acme"}).json()["pins"] == []


def test_pinning_without_a_write_grant_is_403(corpus, db_url):
    onboarding = fragment_id(corpus, "docs/onboarding.md")
    with psycopg.connect(db_url) as conn:
        conn.execute("select service.create_principal('acme', 'reader', 'agent', '')")
        conn.execute("select service.grant_scope('acme', 'reader', 'org', null, false)")
        reader = create_api_key(conn, "acme", "reader").token
    body = {"scope": {"org_id": "acme"}, "fragment_id": onboarding, "reason": "mine"}
    problem(corpus.post("/pins", json=body, headers={"Authorization": f"Bearer {reader}"}), 403)
    pin_id = corpus.post("/pins", json=body).json()["pin_id"]
    problem(corpus.delete(f"/pins/{pin_id}", headers={"Authorization": f"Bearer {reader}"}), 403)
    listed = corpus.get("/pins", params={"org_id": "acme"}, headers={"Authorization": f"Bearer {reader}"})
    assert [p["pin_id"] for p in listed.json()["pins"]] == [pin_id]


@pytest.mark.parametrize(
    "body",
    [
        {"scope": {"org_id": "acme"}, "fragment_id": 1},
        {"scope": {"org_id": "acme"}, "fragment_id": 1, "reason": "  "},
        {"scope": {"org_id": "acme"}, "fragment_id": 0, "reason": "x"},
        {"scope": {"org_id": "acme"}, "fragment_id": 1, "reason": "x", "expires_at": "2030-01-01T00:00:00"},
        {"scope": {"org_id": "acme"}, "fragment_id": 1, "reason": "x", "extra": True},
    ],
)
def test_bad_pin_bodies_are_400(client, body):
    problem(client.post("/pins", json=body), 400)


def test_unknown_fragment_and_bad_negatives(client):
    problem(client.post("/pins", json={"scope": {"org_id": "acme"}, "fragment_id": 999999, "reason": "x"}), 404)
    body = {"query": "anything", "scope": {"org_id": "acme"}, "negatives": "never"}
    problem(client.post("/contexts/retrieve", json=body), 400)
    problem(client.delete("/pins/01"), 400)


def test_session_pack_puts_pins_and_traps_first(corpus):
    frontend = fragment_id(corpus, "docs/frontend.md")
    pin = corpus.post("/pins", json={"scope": {"org_id": "acme"}, "fragment_id": frontend, "reason": "house rules"})
    pack = corpus.post("/sessions", json={"scope": {"org_id": "acme"}, "task": QUERY})
    assert pack.status_code == 200, pack.text
    body = pack.json()
    fragments = body["fragments"]
    assert (fragments[0]["id"], fragments[0]["pinned"]) == (frontend, True)
    assert fragments[1]["negative"] is True and fragments[1]["source"].startswith("traps/retries.md")
    assert not any(f["pinned"] or f["negative"] for f in fragments[2:])
    markdown = body["markdown"]
    assert markdown.index("# Pinned, and known traps") < markdown.index("docs/frontend.md")
    assert markdown.index("negative: do not do this") < markdown.index("# Matching the task")
    assert markdown.index("# Matching the task") < markdown.index("runbooks/storage.md")
    assert pin.json()["pin_id"] == fragments[0]["pin_id"] and body["pins_left_out"] == []


def test_session_pack_takes_the_negatives_mode(corpus):
    """A pack of what not to do ("only": a pin that is no trap is filtered like any
    fragment, as in a retrieval), one without traps ("exclude": the pin stays first); a
    mode that is not one of the three is a 400 that opens nothing."""
    frontend = fragment_id(corpus, "docs/frontend.md")
    corpus.post("/pins", json={"scope": {"org_id": "acme"}, "fragment_id": frontend, "reason": "house rules"})

    def pack(mode: str) -> list[dict]:
        response = corpus.post("/sessions", json={"scope": {"org_id": "acme"}, "task": QUERY, "negatives": mode})
        assert response.status_code == 200, response.text
        return response.json()["fragments"]

    only = pack("only")
    assert only and all(f["negative"] for f in only)
    assert only[0]["source"].startswith("traps/retries.md")
    excluded = pack("exclude")
    assert excluded[0]["id"] == frontend and len(excluded) > 2
    assert not any(f["negative"] for f in excluded[1:])
    opened_before = corpus.get("/whoami").json()
    problem(corpus.post("/sessions", json={"scope": {"org_id": "acme"}, "task": QUERY, "negatives": "never"}), 400)
    assert corpus.get("/whoami").json() == opened_before
