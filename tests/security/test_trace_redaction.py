"""Traces show a reader only what that reader could read directly now. An auditor
reads every trace of its org, but a candidate it may not read is reduced to its ranks
and scores, and a request in a scope it may not read loses its query and hidden scope
ids (marked as redacted), whether it asks over HTTP, through api.get_trace, or with
plain SQL as an analyst, an auditor or the service. Session notes stay inside their
session, traces included."""

from __future__ import annotations

import json

import psycopg
import pytest

from app.access import act_as, create_api_key
from tests.api.test_api import ingest
from tests.conftest import login_url
from tests.retrieve.corpus import DOCS

SESSION = "s-payroll-7f3c"
NOTE_PATH = "notes/payroll-incident.md"
NOTE = "# Payroll incident\n\nThe payroll override code is kestrel-42; rotate it once the storage volume is fixed.\n"
QUERY = "payroll override kestrel storage volume"
SECRETS = (SESSION, NOTE_PATH, "payroll", "kestrel", "Payroll")
"""Nothing of these may appear anywhere in what a reader without the session sees."""
AUDITOR_LOGIN = "auditor_carol"
SCORE_KEYS = {
    "fused_rank",
    "lexical_rank",
    "lexical_score",
    "dense_rank",
    "dense_similarity",
    "lexical_norm",
    "dense_norm",
    "lexical_weight",
    "dense_weight",
    "fused_score",
    "rerank_score",
    "freshness",
    "terms",
    "relevance",
    "final_rank",
    "final_score",
    "included",
    "reason",
    "redacted",
}
"""All that a trace shows of a candidate its reader may not read (the property test uses it too)."""


def key_for(db_url: str, principal: str, *grants: tuple[str, str | None, bool], db_role: str | None = None) -> str:
    with psycopg.connect(db_url) as conn:
        conn.execute("select service.create_principal('acme', %s, 'human', '', %s)", (principal, db_role))
        for kind, scope_id, write in grants:
            conn.execute("select service.grant_scope('acme', %s, %s, %s, %s)", (principal, kind, scope_id, write))
        return create_api_key(conn, "acme", principal).token


@pytest.fixture
def world(client, db_url, logins):
    """alice writes a note in her session and retrieves it there; carol (an auditor
    with a repo grant) and dave (the same, logged in as an auditor) hold no grant on
    the session; the admin holds org and audit grants (an org grant covers no session)."""
    with psycopg.connect(db_url, autocommit=True) as admin:
        if admin.execute("select 1 from pg_roles where rolname = %s", (AUDITOR_LOGIN,)).fetchone() is None:
            admin.execute(f"create role {AUDITOR_LOGIN} login in role contexts_auditor")
    assert ingest(client, DOCS).status_code == 201
    alice = {"Authorization": "Bearer " + key_for(db_url, "alice", ("repo", "platform", True))}
    written = client.post(
        "/documents",
        headers=alice,
        json={"scope": {"org_id": "acme", "session_id": SESSION}, "documents": [{"path": NOTE_PATH, "content": NOTE}]},
    )
    assert written.status_code == 201, written.text
    retrieved = client.post(
        "/contexts/retrieve", headers=alice, json={"query": QUERY, "scope": {"org_id": "acme", "session_id": SESSION}}
    ).json()
    assert NOTE_PATH + "#payroll-incident" in {f["source"] for f in retrieved["fragments"]}
    carol = {
        "Authorization": "Bearer "
        + key_for(db_url, "carol", ("audit", None, False), ("repo", "platform", False), db_role=logins["analysts"][0])
    }
    key_for(db_url, "dave", ("audit", None, False), ("repo", "platform", False), db_role=AUDITOR_LOGIN)
    with psycopg.connect(db_url) as conn:
        note = conn.execute(
            "select f.fragment_id, f.doc_id from data.fragments f join data.documents d "
            "using (doc_id) where d.path = %s",
            (NOTE_PATH,),
        ).fetchone()
    return {"trace_id": retrieved["trace_id"], "alice": alice, "carol": carol, "note": note}


def strings(value) -> list[str]:
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (k, *strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return [value] if isinstance(value, str) else []


def assert_hides_the_session(trace: dict, note: tuple[int, int]) -> None:
    """Nothing of the session, its note or alice's query, anywhere in the document."""
    dumped = json.dumps(trace)
    assert not [s for s in SECRETS if s in dumped], dumped
    assert not [s for s in strings(trace) if s == QUERY or QUERY in s]
    for c in trace.get("candidates") or []:
        assert c.get("fragment_id") != note[0] and c.get("doc_id") != note[1], c


def assert_redacted_for_outsider(trace: dict, note: tuple[int, int]) -> None:
    assert_hides_the_session(trace, note)
    assert trace["principal_id"] == "alice"
    # Marked as redacted, not mistakable for an empty query or an org-wide request.
    assert trace["query"] is None and trace["request"]["query"] is None
    assert trace["request"]["scope"] == {"org_id": "acme", "repo_id": None, "persona_id": None, "session_id": None}
    assert {"query", "request.query", "request.scope.session_id"} <= set(trace["redacted"])
    assert trace["request"]["budget_tokens"] == 4000  # knobs identify nothing
    hidden = [c for c in trace["candidates"] if c["redacted"]]
    assert hidden and all(set(c) <= SCORE_KEYS for c in hidden)
    assert all(c["fused_score"] is not None and c["fused_rank"] >= 1 for c in hidden)
    # What the reader may read itself (org-wide runbooks) stays in full.
    shown = [c for c in trace["candidates"] if not c["redacted"]]
    assert "runbooks/storage.md#storage-runbook" in {c["source"] for c in shown}
    assert all(c["fragment_id"] and c["doc_id"] for c in shown)


def direct_rows(conn: psycopg.Connection, sql: str) -> list:
    """What a plain SELECT returns ([] when the role may not run it at all)."""
    try:
        with conn.transaction():
            return [r[0] for r in conn.execute(sql)]
    except psycopg.errors.InsufficientPrivilege:
        return []


def test_an_auditor_without_the_session_reads_the_trace_redacted(world, client, db_url, logins):
    trace_id, note = world["trace_id"], world["note"]
    # Over HTTP.
    response = client.get(f"/traces/{trace_id}", headers=world["carol"])
    assert response.status_code == 200
    assert_redacted_for_outsider(response.json(), note)
    # api.get_trace and plain SQL as an analyst login (carol), and as an auditor login (dave).
    for login in (logins["analysts"][0], AUDITOR_LOGIN):
        with psycopg.connect(login_url(db_url, login)) as sql:
            assert_redacted_for_outsider(sql.execute("select api.get_trace(%s)", (trace_id,)).fetchone()[0], note)
            for row in direct_rows(sql, "select to_jsonb(t) from data.retrieval_traces t"):
                assert_hides_the_session(row, note)
            viewed = direct_rows(sql, "select to_jsonb(t) from api.retrieval_traces t")
            assert [t["trace_id"] for t in viewed] == [trace_id]
            assert_redacted_for_outsider(viewed[0], note)
    # Plain SQL as the service role, acting for carol.
    with psycopg.connect(db_url) as conn:
        act_as(conn, "acme", "carol")
        for row in direct_rows(conn, "select to_jsonb(t) from data.retrieval_traces t"):
            assert_hides_the_session(row, note)
        assert_redacted_for_outsider(conn.execute("select api.get_trace(%s)", (trace_id,)).fetchone()[0], note)


def test_an_org_grant_does_not_open_the_session_in_traces(world, client):
    # The admin holds org and audit grants: sessions are not covered by either.
    trace = client.get(f"/traces/{world['trace_id']}").json()
    assert_redacted_for_outsider(trace, world["note"])


def test_a_grant_on_the_session_shows_it(world, client, db_url):
    with psycopg.connect(db_url) as conn:
        conn.execute("select service.grant_scope('acme', 'carol', 'session', %s)", (SESSION,))
    trace = client.get(f"/traces/{world['trace_id']}", headers=world["carol"]).json()
    assert trace["query"] == QUERY and trace["request"]["scope"]["session_id"] == SESSION
    assert trace["redacted"] == []
    assert NOTE_PATH + "#payroll-incident" in {c["source"] for c in trace["candidates"]}


def test_the_maker_reads_its_trace_in_full_only_while_its_grants_cover_it(world, client, db_url):
    trace_id, note = world["trace_id"], world["note"]
    trace = client.get(f"/traces/{trace_id}", headers=world["alice"]).json()
    assert trace["query"] == QUERY and trace["request"]["query"] == QUERY and trace["redacted"] == []
    assert trace["request"]["scope"]["session_id"] == SESSION
    mine = [c for c in trace["candidates"] if c["fragment_id"] == note[0]]
    assert mine and mine[0]["source"] == NOTE_PATH + "#payroll-incident" and mine[0]["redacted"] is False
    assert not any(c["redacted"] for c in trace["candidates"])
    # The session expires: alice can no longer read it, nor what her trace said of it.
    with psycopg.connect(db_url) as conn:
        conn.execute(
            "update data.sessions set expires_at = now() - interval '1 second' where session_id = %s", (SESSION,)
        )
    trace = client.get(f"/traces/{trace_id}", headers=world["alice"]).json()
    assert_hides_the_session(trace, note)
    assert trace["query"] is None and "request.scope.session_id" in trace["redacted"]
