"""/contexts over HTTP: versioned bundles, reading one composed, retrieval restricted to or
boosted by Contexts, retirement, and subscriptions across orgs and repos (docs/adr/0018)."""

from __future__ import annotations

import psycopg
import pytest

from app.access import create_api_key, ensure_admin_principal
from tests.api.test_api import ingest, problem
from tests.retrieve.corpus import DOCS

PAYMENTS = {
    "stripe/webhooks.md": "# Stripe webhooks\n\nVerify the signature of every Stripe webhook before trusting it; "
    "replayed events are refused after five minutes.\n",
    "stripe/refunds.md": "# Refunds runbook\n\nRefunds above 10,000 EUR need a second approver in the payments team.\n",
}


def sources(body: dict) -> list[str]:
    return [f["source"].split("#")[0] for f in body["fragments"]]


@pytest.fixture
def corpus(client):
    assert ingest(client, DOCS).status_code == 201
    assert ingest(client, PAYMENTS, repo_id="payments").status_code == 201
    return client


def other_org(db_url: str, org: str, principal: str = "admin", grants=(("org", None, True),)) -> dict[str, str]:
    with psycopg.connect(db_url) as conn:
        conn.execute("select service.create_org(%s)", (org,))
        if principal == "admin":
            ensure_admin_principal(conn, org, principal)
        else:
            conn.execute("select service.create_principal(%s, %s)", (org, principal))
            for kind, scope_id, write in grants:
                conn.execute("select service.grant_scope(%s, %s, %s, %s, %s)", (org, principal, kind, scope_id, write))
        token = create_api_key(conn, org, principal).token
    return {"Authorization": f"Bearer {token}"}


def principal(db_url: str, org: str, name: str, grants) -> dict[str, str]:
    with psycopg.connect(db_url) as conn:
        conn.execute("select service.create_principal(%s, %s)", (org, name))
        for kind, scope_id, write in grants:
            conn.execute("select service.grant_scope(%s, %s, %s, %s, %s)", (org, name, kind, scope_id, write))
        token = create_api_key(conn, org, name).token
    return {"Authorization": f"Bearer {token}"}


def accept(client, ctx: dict, subscription: dict, headers: dict[str, str]) -> dict:
    """The subscriber scope's writer accepts an offered subscription (ADR 0018, 2026-12-06)."""
    path = f"/contexts/{ctx['ref']}/subscriptions/{subscription['subscription_id']}/accept"
    done = client.post(path, headers=headers)
    assert done.status_code == 200, done.text
    return done.json()


def new_context(client, name: str, **scope) -> dict:
    created = client.post("/contexts", json={"scope": {"org_id": "acme", **scope}, "name": name})
    assert created.status_code == 201, created.text
    return created.json()


def test_versions_are_immutable_and_read_like_a_retrieval(corpus):
    ctx = new_context(corpus, "ops runbooks")
    assert (ctx["ref"], ctx["latest_version"], ctx["subscribed"]) == (f"ctx_{ctx['context_id']}", None, False)
    v1 = corpus.post(f"/contexts/{ctx['ref']}/versions", json={"path_globs": ["runbooks/*.md"], "note": "first"})
    assert v1.status_code == 201, v1.text
    assert (v1.json()["ref"], v1.json()["fragment_count"]) == (f"{ctx['ref']}@1", 2)
    read = corpus.get(f"/contexts/{ctx['ref']}@latest").json()
    assert read["ref"] == f"{ctx['ref']}@1" and read["left_out"] == 0
    assert sorted(sources(read)) == ["runbooks/certificates.md", "runbooks/storage.md"]
    assert all(f["context"] == f"{ctx['ref']}@1" for f in read["fragments"])
    trace = corpus.get(f"/traces/{read['trace_id']}").json()
    assert {c["fragment_id"] for c in trace["candidates"]} == {f["id"] for f in read["fragments"]}
    assert all(c["context"] == f"{ctx['ref']}@1" for c in trace["candidates"])

    # From a saved query, frozen: the version records the query and its trace.
    v2 = corpus.post(
        f"/contexts/{ctx['context_id']}/versions",
        json={"query": {"query": "rotate credentials and store secrets in the vault", "top_k": 1}},
    )
    assert v2.status_code == 201, v2.text
    built = v2.json()["built_from"]["query"]
    assert built["query"].startswith("rotate") and built["trace_id"]
    assert sources(corpus.get(f"/contexts/{ctx['ref']}@2").json()) == ["policies/secrets.md"]
    # Version 1 has not moved, and a tight budget leaves members out.
    assert sorted(sources(corpus.get(f"/contexts/{ctx['ref']}@1").json())) == sorted(sources(read))
    tight = corpus.get(f"/contexts/{ctx['ref']}@1", params={"budget_tokens": 30}).json()
    assert tight["left_out"] == 2 - len(tight["fragments"]) and tight["tokens_used"] <= 30
    ranked = corpus.get(f"/contexts/{ctx['ref']}@1", params={"query": "tls certificate renewal"}).json()
    assert sources(ranked)[0] == "runbooks/certificates.md"
    versions = corpus.get(f"/contexts/{ctx['ref']}/versions").json()["versions"]
    assert [v["version"] for v in versions] == [2, 1] and versions[1]["built_from"]["path_globs"] == ["runbooks/*.md"]


def test_retrieval_restricted_to_or_boosted_by_contexts(corpus):
    ctx = new_context(corpus, "runbooks")
    corpus.post(f"/contexts/{ctx['ref']}/versions", json={"path_globs": ["runbooks/**"]})
    body = {"query": "rotate credentials in the vault", "scope": {"org_id": "acme"}}
    plain = corpus.post("/contexts/retrieve", json=body).json()
    assert sources(plain)[0] == "policies/secrets.md" and all(f["context"] is None for f in plain["fragments"])
    restricted = corpus.post("/contexts/retrieve", json=body | {"contexts": [f"{ctx['ref']}@1"]}).json()
    assert set(sources(restricted)) <= {"runbooks/storage.md", "runbooks/certificates.md"}
    assert restricted["fragments"] and all(f["context"] == f"{ctx['ref']}@1" for f in restricted["fragments"])
    boosted = corpus.post(
        "/contexts/retrieve", json=body | {"contexts": [f"{ctx['ref']}@latest"], "context_mode": "boost"}
    ).json()
    assert set(sources(boosted)) >= {"policies/secrets.md", "runbooks/storage.md"}
    marked = {f["source"].split("#")[0] for f in boosted["fragments"] if f["context"]}
    assert marked == {"runbooks/storage.md", "runbooks/certificates.md"}
    # Filters apply to members too.
    only_certs = body | {"contexts": [f"{ctx['ref']}@1"], "path_prefix": "runbooks/cert"}
    assert sources(corpus.post("/contexts/retrieve", json=only_certs).json()) == ["runbooks/certificates.md"]

    problem(corpus.post("/contexts/retrieve", json=body | {"contexts": ["ctx_1"]}), 400)
    problem(corpus.post("/contexts/retrieve", json=body | {"contexts": ["ctx_999999@1"]}), 404)
    problem(corpus.post("/contexts/retrieve", json=body | {"contexts": [f"{ctx['ref']}@7"]}), 404)
    problem(corpus.post("/contexts/retrieve", json=body | {"contexts": [f"{ctx['ref']}@1"], "context_mode": "x"}), 400)


def test_building_checks_grants_and_scope(corpus, db_url):
    repo_ctx = new_context(corpus, "payments", repo_id="payments")
    org_ctx = new_context(corpus, "everything")
    problem(corpus.post(f"/contexts/{org_ctx['ref']}/versions", json={"path_globs": ["nothing/*"]}), 400)
    # An org-wide Context holds org-wide fragments only; a repo one its repo's as well.
    docs = corpus.get("/documents", params={"org_id": "acme", "repo_id": "payments"}).json()["documents"]
    stripe_doc = next(d["doc_id"] for d in docs if d["path"] == "stripe/webhooks.md")
    problem(corpus.post(f"/contexts/{org_ctx['ref']}/versions", json={"doc_ids": [stripe_doc]}), 400)
    built = corpus.post(f"/contexts/{repo_ctx['ref']}/versions", json={"doc_ids": [stripe_doc], "path_globs": ["**"]})
    assert built.status_code == 201 and built.json()["fragment_count"] == len(DOCS) + len(PAYMENTS)
    problem(corpus.post(f"/contexts/{repo_ctx['ref']}/versions", json={"fragment_ids": [987654321]}), 404)
    problem(corpus.post(f"/contexts/{repo_ctx['ref']}/versions", json={}), 400)
    problem(corpus.post("/contexts", json={"scope": {"org_id": "acme"}, "name": "everything"}), 409)

    reader = principal(db_url, "acme", "reader", [("org", None, False)])
    problem(corpus.post("/contexts", json={"scope": {"org_id": "acme"}, "name": "mine"}, headers=reader), 403)
    problem(corpus.post(f"/contexts/{org_ctx['ref']}/versions", json={"path_globs": ["**"]}, headers=reader), 403)
    docs_only = principal(db_url, "acme", "docs-only", [("repo", "docs", False)])
    problem(corpus.get(f"/contexts/{repo_ctx['ref']}@1", headers=docs_only), 404)
    listed = corpus.get("/contexts", params={"org_id": "acme"}, headers=docs_only).json()["contexts"]
    assert [c["name"] for c in listed] == ["everything"]


def test_retired_contexts_leave_listings_and_retrieval_but_stay_readable(corpus):
    ctx = new_context(corpus, "old")
    corpus.post(f"/contexts/{ctx['ref']}/versions", json={"path_globs": ["docs/*"]})
    assert corpus.delete(f"/contexts/{ctx['ref']}").json()["retired_at"] is not None
    problem(corpus.delete(f"/contexts/{ctx['ref']}"), 409)
    assert corpus.get("/contexts", params={"org_id": "acme"}).json()["contexts"] == []
    listed = corpus.get("/contexts", params={"org_id": "acme", "include_retired": True}).json()["contexts"]
    assert [c["ref"] for c in listed] == [ctx["ref"]]
    body = {"query": "onboarding buddy", "scope": {"org_id": "acme"}, "contexts": [f"{ctx['ref']}@1"]}
    problem(corpus.post("/contexts/retrieve", json=body), 409)
    assert len(corpus.get(f"/contexts/{ctx['ref']}@1").json()["fragments"]) == 2
    problem(corpus.post(f"/contexts/{ctx['ref']}/versions", json={"path_globs": ["docs/*"]}), 409)
    # Its name is free again.
    assert new_context(corpus, "old")["context_id"] != ctx["context_id"]


def test_another_org_reads_exactly_the_subscribed_version_until_revoked(corpus, db_url):
    ctx = new_context(corpus, "payments runbook", repo_id="payments")
    corpus.post(f"/contexts/{ctx['ref']}/versions", json={"path_globs": ["stripe/webhooks.md"]})
    corpus.post(f"/contexts/{ctx['ref']}/versions", json={"path_globs": ["stripe/*.md"]})
    globex = other_org(db_url, "globex")
    with psycopg.connect(db_url) as conn:
        conn.execute("select service.create_org('initech')")
    problem(corpus.get(f"/contexts/{ctx['ref']}@1", headers=globex), 404)

    sub = corpus.post(f"/contexts/{ctx['ref']}/subscriptions", json={"subscriber_org_id": "globex", "version": 1})
    assert sub.status_code == 201, sub.text
    assert (sub.json()["ref"], sub.json()["state"]) == (f"{ctx['ref']}@1", "pending")
    accepted = accept(corpus, ctx, sub.json(), globex)
    assert (accepted["state"], accepted["accepted_by"], accepted["created_by"]) == ("live", "globex/admin", None)
    problem(
        corpus.post(f"/contexts/{ctx['ref']}/subscriptions", json={"subscriber_org_id": "globex", "version": 1}), 409
    )
    problem(corpus.post(f"/contexts/{ctx['ref']}/subscriptions", json={"subscriber_org_id": "nowhere"}), 404)
    problem(
        corpus.post(f"/contexts/{ctx['ref']}/subscriptions", json={"subscriber_org_id": "globex", "version": 9}), 404
    )

    read = corpus.get(f"/contexts/{ctx['ref']}@latest", headers=globex).json()
    assert read["ref"] == f"{ctx['ref']}@1" and sources(read) == ["stripe/webhooks.md"]
    assert read["context"]["subscribed"] is True and read["context"]["latest_version"] == 1
    problem(corpus.get(f"/contexts/{ctx['ref']}@2", headers=globex), 404)
    # It reads the Context, so it is told why it cannot change it (not "unknown").
    for refused in (
        corpus.delete(f"/contexts/{ctx['ref']}", headers=globex),
        corpus.post(f"/contexts/{ctx['ref']}/versions", json={"path_globs": ["**"]}, headers=globex),
    ):
        told = problem(refused, 403)
        assert "read through a subscription: only its publisher (org acme)" in told["detail"], told
        assert f"DELETE /contexts/{ctx['ref']}/subscriptions/" in told["hint"], told
    problem(corpus.delete("/contexts/ctx_999999", headers=globex), 404)
    versions = corpus.get(f"/contexts/{ctx['ref']}/versions", headers=globex).json()["versions"]
    assert [v["version"] for v in versions] == [1]
    listed = corpus.get("/contexts", params={"org_id": "globex"}, headers=globex).json()["contexts"]
    assert [(c["ref"], c["subscribed"]) for c in listed] == [(ctx["ref"], True)]
    # A grant on the bundle, not a copy: the fragment itself stays the publisher's.
    fragment_id = read["fragments"][0]["id"]
    problem(corpus.get(f"/fragments/{fragment_id}", headers=globex), 404)
    body = {"query": "stripe webhook signature", "scope": {"org_id": "globex"}, "contexts": [f"{ctx['ref']}@1"]}
    result = corpus.post("/contexts/retrieve", json=body, headers=globex).json()
    assert [f["id"] for f in result["fragments"]] == [fragment_id]
    plain = corpus.post(
        "/contexts/retrieve", json={"query": "stripe webhook", "scope": {"org_id": "globex"}}, headers=globex
    )
    assert plain.json()["fragments"] == []
    # The subscriber's trace withholds what its grants alone do not cover.
    trace = corpus.get(f"/traces/{result['trace_id']}", headers=globex).json()
    assert [c["redacted"] for c in trace["candidates"]] == [True]

    # Following the newest version; then the publisher revokes both.
    follow = corpus.post(f"/contexts/{ctx['ref']}/subscriptions", json={"subscriber_org_id": "globex"}).json()
    accept(corpus, ctx, follow, globex)
    assert sorted(sources(corpus.get(f"/contexts/{ctx['ref']}@2", headers=globex).json())) == [
        "stripe/refunds.md",
        "stripe/webhooks.md",
    ]
    subs = corpus.get(f"/contexts/{ctx['ref']}/subscriptions").json()["subscriptions"]
    assert {s["subscription_id"] for s in subs} == {sub.json()["subscription_id"], follow["subscription_id"]}
    for s in subs:
        assert corpus.delete(f"/contexts/{ctx['ref']}/subscriptions/{s['subscription_id']}").json()["revoked_at"]
    problem(corpus.get(f"/contexts/{ctx['ref']}@1", headers=globex), 404)
    problem(corpus.post("/contexts/retrieve", json=body, headers=globex), 404)
    assert corpus.get("/contexts", params={"org_id": "globex"}, headers=globex).json()["contexts"] == []
    revoked = corpus.get(f"/contexts/{ctx['ref']}/subscriptions", params={"include_revoked": True}).json()
    assert all(s["revoked_by"] == "acme/admin" for s in revoked["subscriptions"])
    problem(corpus.delete(f"/contexts/{ctx['ref']}/subscriptions/{follow['subscription_id']}"), 409)


def test_another_repo_of_the_org_subscribes(corpus, db_url):
    ctx = new_context(corpus, "payments runbook", repo_id="payments")
    corpus.post(f"/contexts/{ctx['ref']}/versions", json={"path_globs": ["stripe/refunds.md"]})
    web = principal(db_url, "acme", "web-agent", [("repo", "web", True)])
    ops = principal(db_url, "acme", "ops-agent", [("repo", "ops", True)])
    sub = corpus.post(
        f"/contexts/{ctx['ref']}/subscriptions", json={"subscriber_org_id": "acme", "subscriber_repo_id": "web"}
    ).json()
    assert sources(corpus.get(f"/contexts/{ctx['ref']}@latest", headers=web).json()) == ["stripe/refunds.md"]
    problem(corpus.get(f"/contexts/{ctx['ref']}@latest", headers=ops), 404)
    # The subscriber may end it too; a stranger may not see it at all.
    problem(corpus.delete(f"/contexts/{ctx['ref']}/subscriptions/{sub['subscription_id']}", headers=ops), 404)
    assert (
        corpus.delete(f"/contexts/{ctx['ref']}/subscriptions/{sub['subscription_id']}", headers=web).status_code == 200
    )
    problem(corpus.get(f"/contexts/{ctx['ref']}@latest", headers=web), 404)


def test_an_offer_to_a_repo_the_own_org_lacks_is_a_404_another_orgs_is_not_told(corpus, db_url):
    """A misspelt repo of the publisher's own org would wait unseen for ever: refused.
    Whether another org has a repo is not the publisher's to learn: that offer waits."""
    ctx = new_context(corpus, "payments runbook", repo_id="payments")
    corpus.post(f"/contexts/{ctx['ref']}/versions", json={"path_globs": ["stripe/refunds.md"]})
    misspelt = problem(
        corpus.post(
            f"/contexts/{ctx['ref']}/subscriptions", json={"subscriber_org_id": "acme", "subscriber_repo_id": "wbe"}
        ),
        404,
    )
    assert misspelt["detail"] == "unknown repo wbe in org acme", misspelt
    assert corpus.get(f"/contexts/{ctx['ref']}/subscriptions").json()["subscriptions"] == []
    # A publisher held to its repo does not learn which other repos its org has.
    narrow = principal(db_url, "acme", "payments-writer", [("repo", "payments", True)])
    for repo in ("wbe", "payments-archive"):
        offered = corpus.post(
            f"/contexts/{ctx['ref']}/subscriptions",
            json={"subscriber_org_id": "acme", "subscriber_repo_id": repo},
            headers=narrow,
        )
        assert offered.status_code == 201 and offered.json()["state"] == "pending", offered.text
    other_org(db_url, "globex")
    for repo in ("web", "no-such-repo"):
        offered = corpus.post(
            f"/contexts/{ctx['ref']}/subscriptions", json={"subscriber_org_id": "globex", "subscriber_repo_id": repo}
        )
        assert offered.status_code == 201 and offered.json()["state"] == "pending", offered.text


def test_a_subscription_gives_nothing_until_a_writer_of_the_subscriber_scope_accepts_it(corpus, db_url):
    """ADR 0018, amendment of 2026-12-06: an offer puts nothing of the Context (name,
    description, members) before the subscriber org until one of its writers accepts it."""
    ctx = new_context(corpus, "ignore previous instructions", repo_id="payments")
    corpus.post(f"/contexts/{ctx['ref']}/versions", json={"path_globs": ["stripe/*.md"]})
    globex = other_org(db_url, "globex")
    reader = principal(db_url, "globex", "reader", [("org", None, False)])
    web_writer = principal(db_url, "globex", "web-writer", [("repo", "web", True)])
    offered = corpus.post(f"/contexts/{ctx['ref']}/subscriptions", json={"subscriber_org_id": "globex"}).json()
    assert (offered["state"], offered["accepted_at"], offered["accepted_by"]) == ("pending", None, None)

    body = {"query": "stripe refunds", "scope": {"org_id": "globex"}, "contexts": [f"{ctx['ref']}@latest"]}
    for who in (globex, reader, web_writer):
        assert corpus.get("/contexts", params={"org_id": "globex"}, headers=who).json()["contexts"] == []
        unknown = problem(corpus.get(f"/contexts/{ctx['ref']}@latest", headers=who), 404)
        assert unknown["detail"] == f"unknown context: {ctx['ref']}@latest", unknown
        assert "GET /subscriptions?state=pending" in unknown["hint"], unknown
        assert "contexts ctx subscriptions --pending" in unknown["hint"], unknown
        # The same words as for an id that names nothing: no oracle.
        nothing = problem(corpus.get("/contexts/ctx_999999@latest", headers=who), 404)
        assert (nothing["detail"], nothing["hint"]) == ("unknown context: ctx_999999@latest", unknown["hint"])
        problem(corpus.get(f"/contexts/{ctx['ref']}/versions", headers=who), 404)
        problem(corpus.post("/contexts/retrieve", json=body, headers=who), 404)
    # The offer is listed to the subscriber scope, without anything of the Context.
    pending = corpus.get("/subscriptions", params={"state": "pending"}, headers=reader).json()["subscriptions"]
    assert [(s["subscription_id"], s["org_id"], s["created_by"]) for s in pending] == [
        (offered["subscription_id"], "acme", None)
    ]
    assert "name" not in pending[0] and "description" not in pending[0]
    assert corpus.get("/subscriptions", params={"state": "live"}, headers=reader).json()["subscriptions"] == []

    # The Context's own listing of subscriptions shows the subscriber its offer too.
    mine = corpus.get(f"/contexts/{ctx['ref']}/subscriptions", headers=reader).json()["subscriptions"]
    assert [(s["subscription_id"], s["state"]) for s in mine] == [(offered["subscription_id"], "pending")]

    accept_path = f"/contexts/{ctx['ref']}/subscriptions/{offered['subscription_id']}/accept"
    # Its publisher cannot consent for the subscriber (and is told who does); a reader, or
    # a writer of one repo of an org-wide subscription, may not accept it; a stranger does
    # not see it.
    assert "accepted by a writer of its subscriber scope (globex)" in problem(corpus.post(accept_path), 403)["detail"]
    assert "needs a write grant on the org globex" in problem(corpus.post(accept_path, headers=reader), 403)["detail"]
    problem(corpus.post(accept_path, headers=web_writer), 403)
    problem(corpus.post(accept_path, headers=other_org(db_url, "initech")), 404)
    problem(corpus.post(f"/contexts/ctx_999999/subscriptions/{offered['subscription_id']}/accept", headers=globex), 404)
    # The door reads no body: one it would ignore is refused, not taken for consent.
    for ignored in ("{not json", '{"whatever": 1}', "[]"):
        sent = corpus.post(accept_path, content=ignored, headers=globex | {"content-type": "application/json"})
        assert "takes no body" in problem(sent, 400)["detail"]
    problem(corpus.post(accept_path, content="yes", headers=globex | {"content-type": "text/plain"}), 415)
    assert corpus.get("/subscriptions", params={"state": "pending"}, headers=globex).json()["subscriptions"]

    accepted = corpus.post(accept_path, headers=globex)
    assert accepted.status_code == 200, accepted.text
    assert (accepted.json()["state"], accepted.json()["accepted_by"]) == ("live", "globex/admin")
    assert "accepted already" in problem(corpus.post(accept_path, headers=globex), 409)["detail"]
    listed = corpus.get("/contexts", params={"org_id": "globex"}, headers=reader).json()["contexts"]
    assert [(c["ref"], c["subscribed"]) for c in listed] == [(ctx["ref"], True)]
    assert sorted(sources(corpus.post("/contexts/retrieve", json=body, headers=reader).json())) == [
        "stripe/refunds.md",
        "stripe/webhooks.md",
    ]
    publisher_view = corpus.get(f"/contexts/{ctx['ref']}/subscriptions").json()["subscriptions"]
    # Which principal of the other org accepted it is that org's business: its org alone.
    assert [(s["state"], s["created_by"], s["accepted_by"]) for s in publisher_view] == [("live", "admin", "globex")]

    # A revoked offer cannot be accepted afterwards; a subscriber may decline one by revoking it.
    again = corpus.post(f"/contexts/{ctx['ref']}/subscriptions", json={"subscriber_org_id": "globex", "version": 1})
    again_path = f"/contexts/{ctx['ref']}/subscriptions/{again.json()['subscription_id']}"
    assert corpus.delete(again_path, headers=globex).json()["state"] == "revoked"
    assert "revoked" in problem(corpus.post(f"{again_path}/accept", headers=globex), 409)["detail"]


def test_a_subscription_made_by_a_writer_of_the_subscriber_scope_is_live_at_once(corpus, db_url):
    """Its maker consents for a scope it may write itself; a repo writer offering to a repo
    of its org it may not write waits for that repo's writer."""
    ctx = new_context(corpus, "payments runbook", repo_id="payments")
    corpus.post(f"/contexts/{ctx['ref']}/versions", json={"path_globs": ["stripe/refunds.md"]})
    both = principal(db_url, "acme", "both", [("repo", "payments", True), ("repo", "web", True)])
    web = principal(db_url, "acme", "web-agent", [("repo", "web", True)])
    ops = principal(db_url, "acme", "ops-agent", [("repo", "ops", True)])

    def offer(headers: dict[str, str], repo: str) -> dict:
        made = corpus.post(
            f"/contexts/{ctx['ref']}/subscriptions",
            json={"subscriber_org_id": "acme", "subscriber_repo_id": repo},
            headers=headers,
        )
        assert made.status_code == 201, made.text
        return made.json()

    live = offer(both, "web")
    assert (live["state"], live["accepted_by"]) == ("live", "acme/both")
    assert sources(corpus.get(f"/contexts/{ctx['ref']}@latest", headers=web).json()) == ["stripe/refunds.md"]
    pending = offer(both, "ops")
    assert pending["state"] == "pending"
    problem(corpus.get(f"/contexts/{ctx['ref']}@latest", headers=ops), 404)
    accept(corpus, ctx, pending, ops)
    assert sources(corpus.get(f"/contexts/{ctx['ref']}@latest", headers=ops).json()) == ["stripe/refunds.md"]


@pytest.mark.parametrize(
    "path",
    ["/contexts/ctx_1", "/contexts/ctx_0@1", "/contexts/ctx_1@0", "/contexts/ctx_1@newest", "/contexts/x@1"],
)
def test_malformed_references_are_400(client, path):
    problem(client.get(path), 400)


def test_of_concurrent_accepts_or_revokes_exactly_one_succeeds(corpus, db_url):
    """Accept and revoke lock the subscription: one that waited on another reads its
    outcome (409), so `accepted_by` and `revoked_by` name the one that did it."""
    import threading

    ctx = new_context(corpus, "raced")
    assert corpus.post(f"/contexts/{ctx['ref']}/versions", json={"path_globs": ["runbooks/*.md"]}).status_code == 201
    other_org(db_url, "globex")
    for second in ("unsubscribe", "accept"):
        offer = corpus.post(f"/contexts/{ctx['ref']}/subscriptions", json={"subscriber_org_id": "globex"}).json()
        assert "subscription_id" in offer, offer
        sid = offer["subscription_id"]
        call = f"select state from service.context_{second}(%s)"
        with psycopg.connect(db_url) as first, psycopg.connect(db_url) as late:
            for conn in (first, late):
                conn.execute("select service.bind_principal('globex', 'admin')")
            assert first.execute("select state from service.context_accept(%s)", (sid,)).fetchone() == ("live",)
            outcome: list[object] = []

            def waiting(conn=late, call=call, sid=sid, outcome=outcome) -> None:
                try:
                    outcome.append(conn.execute(call, (sid,)).fetchone())
                except psycopg.Error as exc:
                    outcome.append(exc.sqlstate)

            thread = threading.Thread(target=waiting)
            thread.start()
            thread.join(timeout=1.5)
            assert thread.is_alive(), f"{second} did not wait for the accept holding the row: {outcome}"
            first.commit()
            thread.join(timeout=30)
            # A second accept is refused; a revoke after the accept revokes the live one.
            assert outcome == (["55000"] if second == "accept" else [("revoked",)]), outcome
            late.commit()
        state = corpus.get(f"/contexts/{ctx['ref']}/subscriptions", params={"include_revoked": True}).json()
        row = next(s for s in state["subscriptions"] if s["subscription_id"] == sid)
        assert row["accepted_by"] == "globex", row  # another org's principal shows as its org alone
