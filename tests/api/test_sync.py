"""GET /repos/{repo_id}/sync: a repo's last git sync, under the repo's read rule, and
service.sync_record's compare-and-set (a second sync from a stale commit is refused)."""

from __future__ import annotations

import psycopg
import pytest

from app.access import act_as, create_api_key

HEAD = "a" * 40
NEXT = "b" * 40


def record(db_url: str, repo: str, commit: str, previous: str | None) -> None:
    with psycopg.connect(db_url) as conn:
        act_as(conn, "acme", "admin")
        conn.execute(
            "select * from service.sync_record('acme', %s, %s, 'main', %s, 3, 1, true)", (repo, commit, previous)
        )


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_state_follows_the_repo_read_rule(client, db_url):
    record(db_url, "platform", HEAD, None)
    record(db_url, "secret", HEAD, None)
    with psycopg.connect(db_url) as conn:
        conn.execute("select service.create_principal('acme', 'bot', 'agent', '')")
        conn.execute("select service.grant_scope('acme', 'bot', 'repo', 'platform', false)")
        bot = create_api_key(conn, "acme", "bot").token
        conn.commit()
        act_as(conn, "acme", "bot")  # the service role: row-level security applies to plain SQL too
        assert conn.execute("select repo_id from data.git_syncs").fetchall() == [("platform",)]
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(
                "insert into data.git_syncs (org_id, repo_id, commit_sha, synced_by) values ('acme', 'x', %s, 'bot')",
                (HEAD,),
            )

    shown = client.get("/repos/platform/sync", params={"org_id": "acme"})
    assert shown.status_code == 200, shown.text
    body = shown.json()
    assert (body["commit_sha"], body["ref"], body["synced_by"], body["written"], body["deleted"]) == (
        HEAD,
        "main",
        "admin",
        3,
        1,
    )
    assert client.get("/repos/platform/sync", params={"org_id": "acme"}, headers=auth(bot)).status_code == 200
    assert client.get("/repos/secret/sync", params={"org_id": "acme"}, headers=auth(bot)).status_code == 403
    assert client.get("/repos/nowhere/sync", params={"org_id": "acme"}).status_code == 404
    assert client.get("/repos/Not%20a%20repo!/sync", params={"org_id": "acme"}).status_code == 400
    assert client.get("/repos/platform/sync", params={"org_id": "globex"}).status_code == 403
    with psycopg.connect(db_url) as conn:
        conn.execute("select service.ensure_scope('acme', 'fresh')")
    never = client.get("/repos/fresh/sync", params={"org_id": "acme"})
    assert never.status_code == 404 and "never synced" in never.text


def test_a_repo_whose_id_holds_a_slash_is_named_in_the_query(client, db_url):
    """`acme/payments` is no path segment (the server decodes %2F before routing): the
    404 there says so, and GET /sync?repo_id= answers for it, under the same rules."""
    record(db_url, "team/payments", HEAD, None)
    by_path = client.get("/repos/team%2Fpayments/sync", params={"org_id": "acme"})
    assert by_path.status_code == 404 and "GET /sync?repo_id=" in by_path.json()["hint"], by_path.text
    shown = client.get("/sync", params={"org_id": "acme", "repo_id": "team/payments"})
    assert shown.status_code == 200 and shown.json()["commit_sha"] == HEAD, shown.text
    assert client.get("/sync", params={"org_id": "acme", "repo_id": "nowhere"}).status_code == 404
    assert client.get("/sync", params={"org_id": "globex", "repo_id": "team/payments"}).status_code == 403
    assert client.get("/sync", params={"org_id": "acme", "repo_id": "Not a repo!"}).status_code == 400
    assert client.get("/sync", params={"org_id": "acme"}).status_code == 400


def test_a_sync_from_a_stale_commit_is_refused(client, db_url):
    record(db_url, "platform", HEAD, None)
    record(db_url, "platform", NEXT, HEAD)
    with pytest.raises(psycopg.errors.SerializationFailure, match="synced to b+ meanwhile"):
        record(db_url, "platform", HEAD, HEAD)
    with pytest.raises(psycopg.errors.SerializationFailure):
        record(db_url, "platform", HEAD, None)
    with psycopg.connect(db_url) as conn:
        conn.execute("select service.create_principal('acme', 'reader', 'agent', '')")
        conn.execute("select service.grant_scope('acme', 'reader', 'org', null, false)")
        conn.commit()
        act_as(conn, "acme", "reader")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("select * from service.sync_record('acme', 'platform', %s, null, %s)", (HEAD, NEXT))


def test_python_client_reads_the_state(client, db_url):
    import httpx

    from app.client import Client, ContextsError
    from app.wire.bodies import SyncState

    record(db_url, "platform", HEAD, None)
    token = client.headers["Authorization"].removeprefix("Bearer ")

    def forward(request: httpx.Request) -> httpx.Response:
        answer = client.request(request.method, request.url.path, params=request.url.params, headers=request.headers)
        return httpx.Response(answer.status_code, headers=answer.headers, content=answer.content)

    with Client("http://contexts.test", token, transport=httpx.MockTransport(forward)) as contexts:
        shown = contexts.sync_state("platform", org_id="acme")
        assert isinstance(shown, SyncState) and shown.commit_sha == HEAD and shown.full_scan
        with pytest.raises(ContextsError) as never:
            contexts.sync_state("nowhere", org_id="acme")
        assert never.value.status == 404
        record(db_url, "team/payments", HEAD, None)
        assert contexts.sync_state("team/payments", org_id="acme").commit_sha == HEAD
