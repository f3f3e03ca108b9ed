"""A Context never carries what its reader may not read now (docs/adr/0018, second
amendment): persona and session Contexts are never subscribed, a request names only
Contexts within its scope, and a version stops serving a member whose document was
deleted or whose session expired; subscribers see what docs/dba.md lists, no more."""

from __future__ import annotations

import psycopg
import pytest

from tests.api.test_api import ingest, problem
from tests.api.test_contexts import PAYMENTS, accept, new_context, other_org, principal, sources
from tests.retrieve.corpus import DOCS

NOTE = "# Incident notes\n\nThe signing key of the payments vault is in kv/payments/prod-signing.\n"


def retrieve(client, query: str, scope: dict | None = None, headers: dict | None = None, **extra):
    body = {"query": query, "scope": {"org_id": "acme", **(scope or {})}, "budget_tokens": 2000, **extra}
    return client.post("/contexts/retrieve", json=body, headers=headers)


@pytest.fixture
def corpus(client):
    assert ingest(client, DOCS).status_code == 201
    assert ingest(client, PAYMENTS, repo_id="payments").status_code == 201
    return client


def session_context(client) -> tuple[str, dict]:
    """A session with a note, and a Context of that session bundling its notes."""
    opened = client.post("/sessions", json={"scope": {"org_id": "acme"}, "task": "rotate the signing key"})
    assert opened.status_code == 200, opened.text
    session = opened.json()["session_id"]
    note = client.post(f"/sessions/{session}/notes", json={"text": NOTE, "path": "notes/incident.md"})
    assert note.status_code == 201, note.text
    ctx = new_context(client, "incident", session_id=session)
    built = client.post(f"/contexts/{ctx['ref']}/versions", json={"path_globs": ["notes/**"]})
    assert built.status_code == 201, built.text
    return session, ctx


def test_a_session_context_is_never_subscribed_by_another_org(corpus, db_url):
    session, ctx = session_context(corpus)
    other = other_org(db_url, "globex")
    refused = problem(corpus.post(f"/contexts/{ctx['ref']}/subscriptions", json={"subscriber_org_id": "globex"}), 403)
    assert "session Context" in refused["detail"] and "never subscribed" in refused["detail"]
    problem(corpus.get(f"/contexts/{ctx['ref']}@latest", headers=other), 404)
    restricted = retrieve(
        corpus,
        "signing key",
        scope={"org_id": "globex"},
        contexts=[f"{ctx['ref']}@latest"],
        context_mode="restrict",
        headers=other,
    )
    assert restricted.status_code == 404, restricted.text
    # Inside its session, its own readers still read it.
    read = corpus.get(f"/contexts/{ctx['ref']}@latest").json()
    assert sources(read) == ["notes/incident.md"]


def test_persona_and_session_contexts_are_not_subscribed_to_a_repo_of_the_org(corpus, db_url):
    session, session_ctx = session_context(corpus)
    with psycopg.connect(db_url) as conn:
        conn.execute("select service.grant_scope('acme', 'admin', 'persona', 'sre', true)")
    persona_doc = ingest(corpus, {"sre/oncall.md": "# On call\n\nThe pager rotates on Mondays.\n"}, persona_id="sre")
    assert persona_doc.status_code == 201, persona_doc.text
    persona_ctx = new_context(corpus, "sre", persona_id="sre")
    assert corpus.post(f"/contexts/{persona_ctx['ref']}/versions", json={"path_globs": ["sre/**"]}).status_code == 201
    payments_reader = principal(db_url, "acme", "payments-reader", [("repo", "payments", False)])
    for ctx, kind in ((persona_ctx, "persona"), (session_ctx, "session")):
        subscribe = {"subscriber_org_id": "acme", "subscriber_repo_id": "payments"}
        refused = problem(corpus.post(f"/contexts/{ctx['ref']}/subscriptions", json=subscribe), 403)
        assert f"{kind} Context" in refused["detail"]
        problem(corpus.get(f"/contexts/{ctx['ref']}@latest", headers=payments_reader), 404)
    listed = corpus.get("/contexts", params={"org_id": "acme", "repo_id": "payments"}, headers=payments_reader)
    assert listed.json()["contexts"] == []


def test_a_subscription_row_written_past_the_api_gives_nothing(corpus, db_url):
    """The read rule holds on its own: a subscription of a session Context that exists
    anyway (written before this release, or by a DBA with triggers off) gives nothing."""
    session, ctx = session_context(corpus)
    other = other_org(db_url, "globex")
    with psycopg.connect(db_url) as conn:
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="never subscribed"):
            conn.execute(
                "insert into data.context_subscriptions (context_id, org_id, subscriber_org_id, created_by)"
                " values (%s, 'acme', 'globex', 'dba')",
                (ctx["context_id"],),
            )
        conn.rollback()
        conn.execute("set session_replication_role = replica")  # no triggers: as an old release wrote it
        conn.execute(
            "insert into data.context_subscriptions (context_id, org_id, subscriber_org_id, created_by,"
            " accepted_at, accepted_by) values (%s, 'acme', 'globex', 'dba', clock_timestamp(), 'globex/admin')",
            (ctx["context_id"],),
        )
    problem(corpus.get(f"/contexts/{ctx['ref']}@latest", headers=other), 404)
    assert corpus.get("/contexts", params={"org_id": "globex"}, headers=other).json()["contexts"] == []


def test_an_expired_session_context_answers_nobody(corpus, db_url):
    session, ctx = session_context(corpus)
    with psycopg.connect(db_url) as conn:
        expire = "update data.sessions set expires_at = now() - interval '1 second' where session_id = %s"
        conn.execute(expire, (session,))
    problem(corpus.get(f"/contexts/{ctx['ref']}@latest"), 404)
    asked = retrieve(corpus, "signing key", contexts=[f"{ctx['ref']}@latest"], context_mode="restrict")
    assert asked.status_code == 404, asked.text


def test_a_request_names_only_contexts_within_its_scope(corpus, db_url):
    """A repo's subscription serves that repo's requests (and the org's), never another
    repo's; a persona's Context, requests naming that persona."""
    ctx = new_context(corpus, "payments", repo_id="payments")
    assert corpus.post(f"/contexts/{ctx['ref']}/versions", json={"path_globs": ["stripe/**"]}).status_code == 201
    with psycopg.connect(db_url) as conn:  # a repo of the publisher's own org must exist to be offered to
        conn.execute("select service.ensure_scope('acme', 'docs')")
        conn.execute("select service.ensure_scope('acme', 'web')")
    subscribed = corpus.post(
        f"/contexts/{ctx['ref']}/subscriptions", json={"subscriber_org_id": "acme", "subscriber_repo_id": "docs"}
    )
    assert subscribed.status_code == 201, subscribed.text
    both = principal(db_url, "acme", "docs-and-web", [("repo", "docs", False), ("repo", "web", False)])
    ref = f"{ctx['ref']}@latest"
    in_docs = retrieve(corpus, "webhook signature", scope={"repo_id": "docs"}, contexts=[ref], headers=both)
    assert in_docs.status_code == 200 and "stripe/webhooks.md" in sources(in_docs.json())
    in_web = retrieve(
        corpus, "webhook signature", scope={"repo_id": "web"}, contexts=[ref], context_mode="restrict", headers=both
    )
    assert in_web.status_code == 400 and "outside the requested scope" in in_web.json()["detail"], in_web.text
    listed = corpus.get("/contexts", params={"org_id": "acme", "repo_id": "web"}, headers=both).json()["contexts"]
    assert ctx["context_id"] not in {c["context_id"] for c in listed}
    listed = corpus.get("/contexts", params={"org_id": "acme", "repo_id": "docs"}, headers=both).json()["contexts"]
    assert ctx["context_id"] in {c["context_id"] for c in listed}


def test_a_deleted_document_leaves_every_context_version(corpus, db_url):
    ctx = new_context(corpus, "payments", repo_id="payments")
    assert corpus.post(f"/contexts/{ctx['ref']}/versions", json={"path_globs": ["stripe/**"]}).status_code == 201
    other = other_org(db_url, "globex")
    offered = corpus.post(f"/contexts/{ctx['ref']}/subscriptions", json={"subscriber_org_id": "globex"})
    accept(corpus, ctx, offered.json(), other)
    docs = corpus.get("/documents", params={"org_id": "acme", "repo_id": "payments"}).json()["documents"]
    webhooks = next(d["doc_id"] for d in docs if d["path"] == "stripe/webhooks.md")
    assert corpus.delete(f"/documents/{webhooks}").status_code == 200
    ref = f"{ctx['ref']}@latest"
    for headers, org in (({}, "acme"), (other, "globex")):
        read = corpus.get(f"/contexts/{ref}", headers=headers).json()
        assert sources(read) == ["stripe/refunds.md"] and read["unavailable"] == 1, read
        ranked = corpus.get(f"/contexts/{ref}", params={"query": "webhook signature"}, headers=headers).json()
        assert sources(ranked) == ["stripe/refunds.md"] and ranked["unavailable"] == 1
        for mode in ("restrict", "boost"):
            found = retrieve(
                corpus, "verify the webhook signature", scope={"org_id": org}, contexts=[ref], context_mode=mode,
                headers=headers,
            )  # fmt: skip
            assert found.status_code == 200, found.text
            assert "stripe/webhooks.md" not in sources(found.json()), (org, mode)


def test_a_saved_query_of_an_org_context_keeps_its_org_wide_finds(corpus):
    """The query runs in the org's scope and finds repo fragments too: those are left out
    and counted, not a reason to fail the version."""
    ctx = new_context(corpus, "everything")
    built = corpus.post(
        f"/contexts/{ctx['ref']}/versions", json={"query": {"query": "stripe webhook signature refunds", "top_k": 10}}
    )
    assert built.status_code == 201, built.text
    body = built.json()
    assert body["built_from"]["query_outside_scope"] >= 1
    read = corpus.get(f"/contexts/{ctx['ref']}@latest").json()
    assert not any(s.startswith("stripe/") for s in sources(read))


def test_a_member_outside_the_contexts_scope_is_refused_with_its_scope_and_what_to_do(corpus):
    """The refusal names the member's scope and the Context's, and its hint (problem
    details' `hint`) says which members a Context of that scope holds."""
    ctx = new_context(corpus, "org-wide only")
    payments = corpus.get("/documents", params={"org_id": "acme", "repo_id": "payments"}).json()["documents"]
    doc = next(d for d in payments if d["repo_id"] == "payments")
    fragment = corpus.get(f"/documents/{doc['doc_id']}").json()["fragments"][0]["fragment_id"]
    cases = (
        ({"fragment_ids": [fragment]}, f"fragment {fragment} (of repo payments)"),
        ({"doc_ids": [doc["doc_id"]]}, f"document {doc['doc_id']} (of repo payments)"),
        ({"query": {"query": "stripe webhook signature refunds replayed approver", "top_k": 1}}, "nothing to bundle"),
    )
    for body, said in cases:
        refused = problem(corpus.post(f"/contexts/{ctx['ref']}/versions", json=body), 400)
        assert said in refused["detail"] and f"scope of {ctx['ref']} (the org)" in refused["detail"], refused
        assert "an org context, org-wide ones only" in refused["hint"], refused
    assert corpus.get("/contexts", params={"org_id": "acme"}).json()["contexts"][0]["latest_version"] is None


def test_a_subscriber_sees_no_more_than_docs_dba_lists(corpus, db_url):
    ctx = new_context(corpus, "ops")
    built = corpus.post(f"/contexts/{ctx['ref']}/versions", json={"query": {"query": "rotate credentials"}})
    assert built.status_code == 201 and built.json()["built_from"]["query"]["trace_id"]
    other = other_org(db_url, "globex")
    offered = corpus.post(f"/contexts/{ctx['ref']}/subscriptions", json={"subscriber_org_id": "globex"})
    accept(corpus, ctx, offered.json(), other)
    seen = corpus.get(f"/contexts/{ctx['ref']}/versions", headers=other).json()["versions"]
    assert [(v["built_from"], v["created_by"]) for v in seen] == [({}, None)]
    read = corpus.get(f"/contexts/{ctx['ref']}@latest", headers=other).json()
    assert read["context"]["created_by"] is None and read["context"]["subscribed"] is True
    subs = corpus.get(f"/contexts/{ctx['ref']}/subscriptions", headers=other).json()["subscriptions"]
    assert [s["created_by"] for s in subs] == [None]
    # The publisher sees everything it made.
    mine = corpus.get(f"/contexts/{ctx['ref']}/versions").json()["versions"]
    assert mine[0]["built_from"]["query"]["query"] == "rotate credentials" and mine[0]["created_by"] == "admin"
    assert corpus.get(f"/contexts/{ctx['ref']}/subscriptions").json()["subscriptions"][0]["created_by"] == "admin"


def test_a_duplicate_name_or_pin_says_what_is_taken(corpus):
    new_context(corpus, "ops")
    taken = problem(corpus.post("/contexts", json={"scope": {"org_id": "acme"}, "name": "ops"}), 409)
    assert "retry" not in taken["detail"] and "name" in taken["detail"]
    fragment = retrieve(corpus, "storage volume").json()["fragments"][0]
    pin = {"scope": {"org_id": "acme"}, "fragment_id": fragment["id"], "reason": "x"}
    assert corpus.post("/pins", json=pin).status_code == 201
    twice = problem(corpus.post("/pins", json=pin), 409)
    assert "retry" not in twice["detail"] and "already pinned" in twice["detail"]
