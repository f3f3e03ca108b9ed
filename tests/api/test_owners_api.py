"""GET /owners/{owner}/nudges, GET /stale, POST /owners/reassign and the org webhook over HTTP."""

from __future__ import annotations

import json

import psycopg

from tests.api.test_api import problem
from tests.owners.helpers import fragments_of, record_returns

DOC = {
    "path": "runbooks/failover.md",
    "content": "# Failover\n\nPromote the replica, then repoint DNS to it and page the on-call.\n",
    "owner": "Ada",
    "timestamp": "2024-01-15T00:00:00+00:00",
}


def test_owner_nudges_reassign_and_webhook(client, db_url):
    written = client.post("/documents", json={"scope": {"org_id": "acme", "repo_id": "core"}, "documents": [DOC]})
    assert written.status_code == 201, written.text
    with psycopg.connect(db_url) as conn:
        ids = fragments_of(conn, "acme", DOC["path"])
        record_returns(conn, "acme", ids, times=5)

    nudges = client.get("/owners/Ada/nudges")
    assert nudges.status_code == 200, nudges.text
    body = nudges.json()
    assert (body["org_id"], body["owner"], body["min_retrievals"], body["window_days"]) == ("acme", "Ada", 5, 90)
    assert [(n["fragment_id"], n["path"], n["retrievals"], n["owner_source"]) for n in body["nudges"]] == [
        (i, DOC["path"], 5, "document") for i in ids
    ]
    assert client.get("/owners/Grace/nudges").json()["nudges"] == []
    assert len(client.get("/stale", params={"min_retrievals": 6}).json()["nudges"]) == 0
    assert client.get("/stale", params={"window_days": 0}).status_code == 400

    moved = client.post("/owners/reassign", json={"org_id": "acme", "from_owner": "Ada", "to_owner": "Grace"})
    assert moved.status_code == 200 and moved.json()["documents"] == 1, moved.text
    assert [n["owner_source"] for n in client.get("/owners/Grace/nudges").json()["nudges"]] == ["reassigned"] * len(ids)
    assert client.get("/documents", params={"org_id": "acme"}).json()["documents"][0]["version"] == 1

    assert client.get("/orgs/acme/webhook").status_code == 404
    bad = client.put("/orgs/acme/webhook", json={"url": "http://user:pw@hooks.example.com/x"})
    assert bad.status_code == 400 and bad.headers["content-type"].startswith("application/problem+json")
    metadata_service = client.put("/orgs/acme/webhook", json={"url": "http://169.254.169.254/latest/meta-data/"})
    assert metadata_service.status_code == 400, metadata_service.text
    assert "169.254.169.254, a link-local address" in metadata_service.json()["detail"]
    assert client.get("/orgs/acme/webhook").status_code == 404  # nothing stored
    # Another org's writer is refused for the grant before anything is resolved.
    foreign = client.put("/orgs/beta/webhook", json={"url": "http://169.254.169.254/latest/meta-data/"})
    assert foreign.status_code == 403 and "169.254" not in foreign.text
    secret = "a-long-enough-secret"
    hook = client.put("/orgs/acme/webhook", json={"url": "https://hooks.example.com/x", "secret": secret})
    assert hook.status_code == 200, hook.text
    assert hook.json()["has_secret"] is True and secret not in hook.text
    shown = client.get("/orgs/acme/webhook")
    assert shown.status_code == 200 and secret not in shown.text and "secret" not in shown.json()
    assert client.put("/orgs/beta/webhook", json={"url": "https://hooks.example.com/x"}).status_code == 403
    assert client.delete("/orgs/acme/webhook").status_code == 200


def test_nudges_read_the_org_asked_for_and_refuse_an_empty_or_foreign_one(client, db_url):
    """`org_id` was not a parameter: an empty one, or another org's, was ignored and the
    key's own org answered. Now it is read: empty or malformed 400, another org 403."""
    for path in ("/owners/Ada/nudges", "/stale"):
        assert client.get(path, params={"org_id": "acme"}).json()["org_id"] == "acme"
        for bad in ("", "a b", "-x"):
            body = problem(client.get(f"{path}?org_id={bad}"), 400)
            assert "org_id" in json.dumps(body), body
        with psycopg.connect(db_url) as conn:
            conn.execute("select service.create_org('globex')")  # idempotent
        problem(client.get(path, params={"org_id": "globex"}), 403)
