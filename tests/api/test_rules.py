"""/rules and `touching`: workflow rules bring a Context into a retrieval or session
pack naming the files a step touches, composed after the pins, each fragment marked
with its rule; grants and subscriptions bound what a rule may bring (docs/adr/0022)."""

from __future__ import annotations

import psycopg
import pytest

from tests.api.test_api import problem
from tests.api.test_contexts import PAYMENTS, accept, new_context, other_org, principal, sources
from tests.api.test_contexts import corpus as corpus  # noqa: F401 (fixture)

UNRELATED = "onboarding buddy for new engineers"


def versioned(client, name: str, globs: list[str], **scope) -> str:
    ctx = new_context(client, name, **scope)
    made = client.post(f"/contexts/{ctx['ref']}/versions", json={"path_globs": globs})
    assert made.status_code == 201, made.text
    return ctx["ref"]


def add_rule(client, headers=None, **body) -> dict:
    made = client.post("/rules", json={"org_id": "acme", **body}, headers=headers)
    assert made.status_code == 201, made.text
    return made.json()


def retrieve(client, headers=None, **body) -> dict:
    request = {"query": UNRELATED, "scope": {"org_id": "acme"}} | body
    response = client.post("/contexts/retrieve", json=request, headers=headers)
    assert response.status_code == 200, response.text
    return response.json()


def ruled(body: dict) -> list[tuple[str, int | None]]:
    return [(f["source"].split("#")[0], f["rule"]) for f in body["fragments"] if f["rule"] is not None]


def test_touching_a_matching_file_composes_the_rule_context_after_pins(corpus):
    ref = versioned(corpus, "payments runbook", ["stripe/*.md"], repo_id="payments")
    rule = add_rule(
        corpus,
        repo_id="payments",
        name="stripe code pulls the payments runbook",
        context=f"{ref}@latest",
        path_globs=["src/payments/**/stripe*.py"],
        symbol_globs=["Stripe*"],
    )
    assert (rule["context_ref"], rule["enabled"], rule["expired"]) == (f"{ref}@latest", True, False)
    scope = {"org_id": "acme", "repo_id": "payments"}
    plain = retrieve(corpus, scope=scope)
    assert ruled(plain) == [] and all(f["rule"] is None for f in plain["fragments"])

    # A pin still comes first; the rule's members right after it, whatever the query.
    pin_target = plain["fragments"][-1]["id"]
    assert corpus.post("/pins", json={"scope": scope, "fragment_id": pin_target, "reason": "x"}).status_code == 201
    body = retrieve(corpus, scope=scope, touching=["README.md", "src/payments/v2/stripe_client.py"])
    assert body["fragments"][0]["id"] == pin_target and body["fragments"][0]["pinned"]
    assert sorted(ruled(body)) == [("stripe/refunds.md", rule["rule_id"]), ("stripe/webhooks.md", rule["rule_id"])]
    assert [f["rule"] for f in body["fragments"][1:3]] == [rule["rule_id"]] * 2
    marked = [f for f in body["fragments"] if f["rule"]]
    assert all(f["rule_name"] == rule["name"] and f["context"] == f"{ref}@1" for f in marked)
    trace = corpus.get(f"/traces/{body['trace_id']}").json()
    entries = {c["fragment_id"]: c for c in trace["candidates"]}
    assert all(entries[f["id"]]["rule"] == rule["rule_id"] and entries[f["id"]]["reason"] == "rule" for f in marked)
    assert trace["request"]["touching"] == ["README.md", "src/payments/v2/stripe_client.py"]

    # A symbol matches as well; a path in another directory does not.
    by_symbol = retrieve(corpus, scope=scope, touching=["lib/pay.py#StripeClient.charge"])
    assert len(ruled(by_symbol)) == 2
    assert ruled(retrieve(corpus, scope=scope, touching=["src/payments/paypal.py", "x.py#Paypal"])) == []
    # A repo rule: a retrieval in the org or another repo does not consult it.
    assert ruled(retrieve(corpus, touching=["src/payments/stripe.py"])) == []

    # The budget bounds them: what does not fit is left out, with its reason.
    tight = retrieve(corpus, scope=scope, touching=["src/payments/stripe.py"], budget_tokens=40)
    assert tight["tokens_used"] <= 40
    fates = {c["reason"] for c in corpus.get(f"/traces/{tight['trace_id']}").json()["candidates"] if c.get("rule")}
    assert "rule_over_budget" in fates


def test_rules_are_managed_under_grants(corpus, db_url):
    repo_ref = versioned(corpus, "payments runbook", ["stripe/*.md"], repo_id="payments")
    org_ref = versioned(corpus, "runbooks", ["runbooks/*.md"])
    payload = {"name": "certs", "context": f"{org_ref}@1", "path_globs": ["deploy/**"]}
    # A repo's Context is not readable by all of the org: an org rule may not name it.
    problem(corpus.post("/rules", json={"org_id": "acme", **payload, "context": f"{repo_ref}@1"}), 400)
    problem(corpus.post("/rules", json={"org_id": "acme", **payload, "context": "ctx_999999@1"}), 404)
    problem(corpus.post("/rules", json={"org_id": "acme", **payload, "path_globs": []}), 400)
    problem(corpus.post("/rules", json={"org_id": "acme", **payload, "path_globs": ["a\u0001"]}), 400)
    problem(corpus.post("/rules", json={"org_id": "acme", **payload, "repo_id": "nowhere"}), 404)
    org_rule = add_rule(corpus, **payload)
    problem(corpus.post("/rules", json={"org_id": "acme", **payload}), 409)
    repo_rule = add_rule(corpus, repo_id="payments", name="stripe", context=f"{repo_ref}@1", path_globs=["**/stripe*"])

    reader = principal(db_url, "acme", "reader", [("org", None, False)])
    problem(corpus.post("/rules", json={"org_id": "acme", **payload, "name": "mine"}, headers=reader), 403)
    problem(corpus.delete(f"/rules/{org_rule['rule_id']}", headers=reader), 403)
    docs_only = principal(db_url, "acme", "docs-only", [("repo", "docs", True)])
    listed = corpus.get("/rules", params={"org_id": "acme", "repo_id": "docs"}, headers=docs_only).json()["rules"]
    assert [r["rule_id"] for r in listed] == [org_rule["rule_id"]]
    problem(corpus.get("/rules", params={"org_id": "acme", "repo_id": "payments"}, headers=docs_only), 403)
    problem(corpus.delete(f"/rules/{repo_rule['rule_id']}", headers=docs_only), 404)
    everything = corpus.get("/rules", params={"org_id": "acme", "repo_id": "payments"}).json()["rules"]
    assert [r["rule_id"] for r in everything] == [org_rule["rule_id"], repo_rule["rule_id"]]
    # The org rule brings its (org-wide) Context to a reader of one repo.
    touched = retrieve(corpus, docs_only, scope={"org_id": "acme", "repo_id": "docs"}, touching=["deploy/tls.yaml"])
    assert {s for s, _ in ruled(touched)} == {"runbooks/storage.md", "runbooks/certificates.md"}

    # Disabled, expired or deleted: it brings nothing.
    add_rule(corpus, name="off", context=f"{org_ref}@1", path_globs=["off/**"], enabled=False)
    # A rule that has expired already is refused when made (as a pin is); one that expires later brings nothing.
    past = {"name": "old", "context": f"{org_ref}@1", "path_globs": ["old/**"], "expires_at": "2020-01-01T00:00:00Z"}
    assert "not in the future" in problem(corpus.post("/rules", json={"org_id": "acme", **past}), 400)["detail"]
    old = add_rule(corpus, **(past | {"expires_at": "2999-01-01T00:00:00Z"}))
    with psycopg.connect(db_url) as conn:
        conn.execute(
            "update data.context_rules set expires_at = '2020-01-01T00:00:00Z', created_at = '2019-12-01T00:00:00Z'"
            " where rule_id = %s",
            (old["rule_id"],),
        )
    assert ruled(retrieve(corpus, touching=["off/a.py", "old/b.py"])) == []
    assert corpus.delete(f"/rules/{org_rule['rule_id']}").json()["rule_id"] == org_rule["rule_id"]
    problem(corpus.delete(f"/rules/{org_rule['rule_id']}"), 404)
    assert ruled(retrieve(corpus, touching=["deploy/tls.yaml"])) == []
    # A retired Context is refused when the rule is made, and brings nothing afterwards.
    rule = add_rule(corpus, name="again", context=f"{org_ref}@latest", path_globs=["deploy/**"])
    assert corpus.delete(f"/contexts/{org_ref}").status_code == 200
    problem(corpus.post("/rules", json={"org_id": "acme", **payload, "name": "late"}), 409)
    assert ruled(retrieve(corpus, touching=["deploy/tls.yaml"])) == []
    assert rule["rule_id"] in [r["rule_id"] for r in corpus.get("/rules", params={"org_id": "acme"}).json()["rules"]]


def test_a_revoked_subscription_makes_the_rule_bring_nothing(corpus, db_url):
    ref = versioned(corpus, "payments runbook", ["stripe/*.md"], repo_id="payments")
    globex = other_org(db_url, "globex")
    payload = {"org_id": "globex", "name": "stripe", "context": f"{ref}@latest", "path_globs": ["**/stripe*"]}
    # Not readable by globex yet: unknown to it.
    problem(corpus.post("/rules", json=payload, headers=globex), 404)
    sub = corpus.post(f"/contexts/{ref}/subscriptions", json={"subscriber_org_id": "globex"}).json()
    # Offered, not yet accepted: still unknown to it.
    problem(corpus.post("/rules", json=payload, headers=globex), 404)
    # Readable through an accepted subscription of one repo, an org-wide rule still waits
    # for the org-wide offer to be accepted: its readers elsewhere read nothing of it.
    repo_sub = corpus.post(
        f"/contexts/{ref}/subscriptions", json={"subscriber_org_id": "globex", "subscriber_repo_id": "web"}
    )
    accept(corpus, {"ref": ref}, repo_sub.json(), globex)
    refused = problem(corpus.post("/rules", json=payload, headers=globex), 400)
    assert "not readable by everyone who reads the rule's scope" in refused["detail"]
    assert corpus.delete(f"/contexts/{ref}/subscriptions/{repo_sub.json()['subscription_id']}").status_code == 200
    accept(corpus, {"ref": ref}, sub, globex)
    rule = add_rule(corpus, globex, **payload)
    body = {"query": "refund approval", "scope": {"org_id": "globex"}, "touching": ["app/stripe.py"]}
    got = corpus.post("/contexts/retrieve", json=body, headers=globex).json()
    assert sorted(sources(got)) == sorted(PAYMENTS) and {f["rule"] for f in got["fragments"]} == {rule["rule_id"]}
    # Subscribed fragments stay redacted in the subscriber's trace, rule mark included.
    trace = corpus.get(f"/traces/{got['trace_id']}", headers=globex).json()
    assert all(c["redacted"] and "rule" not in c for c in trace["candidates"])

    assert corpus.delete(f"/contexts/{ref}/subscriptions/{sub['subscription_id']}").status_code == 200
    after = corpus.post("/contexts/retrieve", json=body, headers=globex)
    assert after.status_code == 200 and after.json()["fragments"] == []
    trace = corpus.get(f"/traces/{after.json()['trace_id']}", headers=globex).json()
    assert trace["candidates"] == []
    # acme never sees globex's rules.
    assert corpus.get("/rules", params={"org_id": "acme"}).json()["rules"] == []


def test_a_session_pack_composes_the_rules_of_the_files_touched(corpus):
    ref = versioned(corpus, "payments runbook", ["stripe/refunds.md"], repo_id="payments")
    rule = add_rule(corpus, repo_id="payments", name="refunds", context=f"{ref}@1", path_globs=["refunds/**"])
    opened = corpus.post(
        "/sessions",
        json={"scope": {"org_id": "acme", "repo_id": "payments"}, "task": UNRELATED, "touching": ["refunds/api.py"]},
    )
    assert opened.status_code == 200, opened.text
    pack = opened.json()
    assert pack["fragments"][0]["rule"] == rule["rule_id"]
    assert f"rule {rule['rule_id']} (refunds)" in pack["markdown"]


@pytest.mark.parametrize(
    "touching",
    [[], ["../etc/passwd"], ["src/../../x"], ["/abs/path"], ["a\u0000b"], ["a\nb"], ["x" * 1025], ["a.py"] * 65],
)
def test_hostile_touching_is_400(client, touching):
    body = {"query": "anything", "scope": {"org_id": "acme"}, "touching": touching}
    problem(client.post("/contexts/retrieve", json=body), 400)
