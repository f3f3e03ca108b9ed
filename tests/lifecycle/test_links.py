"""Links resolved on demand: GET /fragments/{id}/links and a retrieval's expand_links,
one hop, within the request's scope and the caller's grants."""

from __future__ import annotations

import psycopg

from app.access import create_api_key
from tests.api.test_api import problem

RUNBOOK = (
    "# Outage runbook\n\nWhen the payment gateway times out, first check name resolution: "
    "follow [the DNS checks](dns.md), then [the secret rotation](../payments/keys.md) and [the old page](gone.md).\n"
)
DNS = "# DNS checks\n\nRun dig against both resolvers and compare the answers with the zone file.\n"
KEYS = "# Key rotation\n\nRotate the gateway signing keys with the vault CLI.\n"
QUERY = "payment gateway times out outage runbook"


def post(client, scope: dict, *documents: dict) -> None:
    response = client.post("/documents", json={"scope": scope, "documents": list(documents)})
    assert response.status_code == 201, response.text


def fragment_of(client, path: str) -> int:
    docs = client.get("/documents", params={"org_id": "acme", "path_prefix": path}).json()["documents"]
    doc_id = next(d["doc_id"] for d in docs if d["path"] == path)
    return client.get(f"/documents/{doc_id}").json()["fragments"][0]["fragment_id"]


def corpus(client) -> None:
    post(
        client,
        {"org_id": "acme"},
        {"path": "docs/runbook.md", "content": RUNBOOK},
        {"path": "docs/dns.md", "content": DNS},
    )
    post(client, {"org_id": "acme", "repo_id": "payments"}, {"path": "payments/keys.md", "content": KEYS})


def test_links_of_a_fragment_both_ways(client):
    corpus(client)
    runbook, dns = fragment_of(client, "docs/runbook.md"), fragment_of(client, "docs/dns.md")
    links = client.get(f"/fragments/{runbook}/links").json()
    out = {link["target"]: link for link in links["outgoing"]}
    assert out["dns.md"]["resolved"] and out["dns.md"]["fragment_id"] == dns and out["dns.md"]["path"] == "docs/dns.md"
    assert out["gone.md"]["resolved"] is False and out["gone.md"]["fragment_id"] is None
    assert out["../payments/keys.md"]["resolved"]  # the admin reads the payments repo
    incoming = client.get(f"/fragments/{dns}/links").json()["incoming"]
    assert [(link["fragment_id"], link["link_type"], link["path"]) for link in incoming] == [
        (runbook, "link", "docs/runbook.md")
    ]
    problem(client.get("/fragments/999999/links"), 404)
    problem(client.get("/fragments/+1/links"), 400)


def test_a_reader_sees_a_link_to_what_it_may_not_read_as_a_link_to_nothing(client, db_url):
    """The citing text is the reader's; what it reaches is not. A reference to a fragment
    the reader may not read is shown as one to nothing is (unresolved, no id, no path):
    left out, it would tell the reader that the path it names exists."""
    corpus(client)
    runbook, keys = fragment_of(client, "docs/runbook.md"), fragment_of(client, "payments/keys.md")
    with psycopg.connect(db_url) as conn:
        conn.execute("select service.create_principal('acme', 'outsider', 'agent', '')")
        conn.execute("select service.grant_scope('acme', 'outsider', 'repo', 'platform')")
        headers = {"Authorization": f"Bearer {create_api_key(conn, 'acme', 'outsider').token}"}
    seen = {
        link["target"]: link for link in client.get(f"/fragments/{runbook}/links", headers=headers).json()["outgoing"]
    }
    assert set(seen) == {"dns.md", "gone.md", "../payments/keys.md"}
    assert seen["dns.md"]["resolved"] is True
    hidden, missing = seen["../payments/keys.md"], seen["gone.md"]
    assert hidden["resolved"] is False and hidden["fragment_id"] is None and hidden["path"] is None
    assert set(hidden) == set(missing) and all(
        hidden[k] == missing[k] for k in hidden if k not in ("target", "evidence")
    ), (hidden, missing)
    problem(client.get(f"/fragments/{keys}/links", headers=headers), 404)
    body = {"query": QUERY, "scope": {"org_id": "acme"}, "expand_links": True, "top_k": 1}
    found = client.post("/contexts/retrieve", json=body, headers=headers).json()["fragments"]
    assert keys not in {f["id"] for f in found}


def test_expand_links_composes_what_the_answer_cites_after_it(client, db_url):
    corpus(client)
    runbook, dns = fragment_of(client, "docs/runbook.md"), fragment_of(client, "docs/dns.md")
    keys = fragment_of(client, "payments/keys.md")
    plain = {"query": QUERY, "scope": {"org_id": "acme"}, "top_k": 1}
    assert [f["id"] for f in client.post("/contexts/retrieve", json=plain).json()["fragments"]] == [runbook]

    result = client.post("/contexts/retrieve", json=plain | {"expand_links": True}).json()
    got = [(f["id"], f["linked_from"], f["link_type"]) for f in result["fragments"]]
    # top_k bounds the ranked ones only; what they cite follows in the order it is cited.
    assert got == [(runbook, None, None), (dns, runbook, "link"), (keys, runbook, "link")]
    trace = client.get(f"/traces/{result['trace_id']}").json()
    linked = [c for c in trace["candidates"] if c.get("linked_from") is not None]
    assert linked and all(c["fused_rank"] is None and c["reason"].startswith("linked") for c in linked)

    # Outside the request's scope nothing is followed: a persona's own page is not
    # composed into an org-wide request.
    with psycopg.connect(db_url) as conn:
        conn.execute("select service.ensure_scope('acme', null, 'sre')")
    post(client, {"org_id": "acme", "persona_id": "sre"}, {"path": "sre/dns.md", "content": DNS + "\nSRE notes.\n"})
    linker = RUNBOOK.replace("](dns.md)", "](dns.md) and [SRE](../sre/dns.md)")
    post(client, {"org_id": "acme"}, {"path": "docs/runbook.md", "content": linker})
    again = client.post("/contexts/retrieve", json=plain | {"expand_links": True}).json()["fragments"]
    assert dns in {f["id"] for f in again} and not any(f["source"].startswith("sre/") for f in again)

    # A budget too small leaves what is cited out, and the trace says so.
    tight = client.post("/contexts/retrieve", json=plain | {"expand_links": True, "budget_tokens": 60}).json()
    assert [f["id"] for f in tight["fragments"]] == [fragment_of(client, "docs/runbook.md")]
    reasons = {c["reason"] for c in client.get(f"/traces/{tight['trace_id']}").json()["candidates"]}
    assert "linked_over_budget" in reasons
