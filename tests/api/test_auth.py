"""HTTP authentication and scope enforcement: bearer keys, 401 and 403, and ids of
what another tenant or principal owns answering exactly like ids that do not exist."""

from __future__ import annotations

import hashlib

import psycopg
import pytest

from app.access import create_api_key
from app.ingest.normalize import normalize_path
from tests.api.test_api import ingest, problem
from tests.conftest import login_url
from tests.retrieve.corpus import DOCS

QUERY = {"query": "what to do when the storage volume is full", "scope": {"org_id": "acme"}}


def key_for(db_url: str, org: str, principal: str, *grants: tuple[str, str | None]) -> str:
    with psycopg.connect(db_url) as conn:
        conn.execute("select service.create_org(%s)", (org,))
        conn.execute("select service.create_principal(%s, %s)", (org, principal))
        for kind, scope_id in grants:
            conn.execute("select service.grant_scope(%s, %s, %s, %s)", (org, principal, kind, scope_id))
        return create_api_key(conn, org, principal).token


def test_missing_or_malformed_credentials_are_401(client):
    for header in ("", "Basic YWRtaW46YWRtaW4=", "Bearer", "Bearer ctx_000000000000_nope", "Bearer " + "x" * 300):
        response = client.post("/contexts/retrieve", json=QUERY, headers={"Authorization": header})
        body = problem(response, 401)
        assert response.headers["www-authenticate"].startswith("Bearer")
        assert "key" in body["detail"] or "Authorization" in body["detail"]
    assert client.get("/health").status_code == 200  # liveness needs no key


def test_revoked_key_is_401_and_last_use_is_recorded(client, db_url):
    token = key_for(db_url, "acme", "bot", ("org", None))
    headers = {"Authorization": f"Bearer {token}"}
    assert client.post("/contexts/retrieve", json=QUERY, headers=headers).status_code == 200
    key_id = token.split("_")[1]
    with psycopg.connect(db_url) as conn:
        used, stored = conn.execute(
            "select last_used_at, key_hash from data.api_keys where key_id = %s", (key_id,)
        ).fetchone()
        assert used is not None
        assert bytes(stored) == hashlib.sha256(token.encode()).digest()  # the token itself is never stored
        assert conn.execute("select service.revoke_api_key(%s)", (key_id,)).fetchone() == (True,)
    problem(client.post("/contexts/retrieve", json=QUERY, headers=headers), 401)
    problem(client.get("/fragments/1", headers=headers), 401)


def test_key_of_another_org_is_403(client, db_url):
    assert ingest(client, DOCS).status_code == 201
    token = key_for(db_url, "globex", "intruder", ("org", None))
    headers = {"Authorization": f"Bearer {token}"}
    problem(client.post("/contexts/retrieve", json=QUERY, headers=headers), 403)
    problem(
        client.post(
            "/documents",
            headers=headers,
            json={"scope": {"org_id": "acme"}, "documents": [{"path": "x.md", "content": "pwned"}]},
        ),
        403,
    )


def test_grants_bound_every_endpoint(client, db_url):
    assert ingest(client, {"runbooks/storage.md": DOCS["runbooks/storage.md"]}, repo_id="platform").status_code == 201
    assert (
        ingest(
            client, {"secret/storage.md": DOCS["runbooks/storage.md"] + "\nVault: s3cr3t.\n"}, repo_id="secret"
        ).status_code
        == 201
    )
    admin = client.post("/contexts/retrieve", json=QUERY).json()
    secret_ids = {f["id"] for f in admin["fragments"] if f["source"].startswith("secret/")}
    assert secret_ids
    token = key_for(db_url, "acme", "reader", ("repo", "platform"))
    headers = {"Authorization": f"Bearer {token}"}
    # Asking for a scope without a grant is a 403, not an empty answer.
    problem(
        client.post(
            "/contexts/retrieve", headers=headers, json=QUERY | {"scope": {"org_id": "acme", "repo_id": "secret"}}
        ),
        403,
    )
    problem(
        client.post(
            "/contexts/retrieve",
            headers=headers,
            json=QUERY | {"scope": {"org_id": "acme", "session_id": "someone-else"}},
        ),
        403,
    )
    # Org-wide request: only what the grants allow, never scored or counted otherwise.
    mine = client.post("/contexts/retrieve", json=QUERY, headers=headers).json()
    assert mine["fragments"] and all(f["source"].startswith("runbooks/") for f in mine["fragments"])
    trace = client.get(f"/traces/{mine['trace_id']}", headers=headers).json()
    assert trace["principal_id"] == "reader"
    assert not {c["fragment_id"] for c in trace["candidates"]} & secret_ids
    # Other tenants' and principals' ids look exactly like unknown ids.
    for fragment_id in secret_ids:
        problem(client.get(f"/fragments/{fragment_id}", headers=headers), 404)
    problem(client.get(f"/traces/{admin['trace_id']}", headers=headers), 404)
    # Reading is not writing.
    problem(
        client.post(
            "/documents",
            headers=headers,
            json={"scope": {"org_id": "acme", "repo_id": "platform"}, "documents": [{"path": "n.md", "content": "x"}]},
        ),
        403,
    )
    # The admin holds an audit grant: it reads the reader's trace.
    assert client.get(f"/traces/{mine['trace_id']}").status_code == 200


INJECTIONS = [
    "'; drop table data.fragments; --",
    "acme' or '1'='1",
    '" or 1=1 --',
    "$$; select pg_sleep(5); $$",
    "%s %s %(x)s",
    "') union select key_hash from data.api_keys --",
    "\\x00\\'",
]


@pytest.mark.parametrize("attack", INJECTIONS)
def test_injection_strings_are_data(client, db_url, attack):
    # Identifiers are validated at the edge.
    for field in ("org_id", "repo_id", "persona_id", "session_id"):
        problem(client.post("/contexts/retrieve", json={"query": "x", "scope": {"org_id": "acme", field: attack}}), 400)
    # Free text is stored and searched as text.
    document = {
        "path": f"inj/{attack}.md",
        "content": f"# {attack}\n\nvolume {attack}\n",
        "author": attack,
        "owner": attack,
        "metadata": {attack: attack},
    }
    assert client.post("/documents", json={"scope": {"org_id": "acme"}, "documents": [document]}).status_code == 201
    result = client.post("/contexts/retrieve", json={"query": attack, "scope": {"org_id": "acme"}})
    assert result.status_code == 200
    assert all(f["source"].startswith("inj/") for f in result.json()["fragments"])
    with psycopg.connect(db_url) as conn:
        # (paths are normalised: a backslash is a separator, repeated slashes are one)
        assert conn.execute("select path from data.documents").fetchall() == [(normalize_path(f"inj/{attack}.md"),)]
        assert conn.execute("select author, metadata from data.document_versions").fetchone() == (
            attack,
            {attack: attack},
        )
        assert conn.execute("select count(*) from data.orgs").fetchone() == (1,)


def test_reading_principals_cannot_write_or_open_sessions(client, db_url):
    """A read grant is never a way to write: not into a new session, not by joining one."""
    assert ingest(client, {"notes.md": "# Notes\n\nshared session notes\n"}, session_id="shared").status_code == 201
    with psycopg.connect(db_url) as conn:
        conn.execute("select service.create_org('acme')")
        conn.execute("select service.create_principal('acme', 'watcher')")
        conn.execute("select service.grant_scope('acme', 'watcher', 'session', 'shared')")
        token = create_api_key(conn, "acme", "watcher").token
    headers = {"Authorization": f"Bearer {token}"}
    note = [{"path": "x.md", "content": "injected instructions"}]
    for session in ("brand-new", "shared"):
        problem(
            client.post(
                "/documents",
                headers=headers,
                json={"scope": {"org_id": "acme", "session_id": session}, "documents": note},
            ),
            403,
        )
    with psycopg.connect(db_url) as conn:
        conn.execute("select service.authenticate(%s)", (token,))
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("select service.open_session('shared')")
        conn.rollback()
        assert conn.execute("select can_write from data.grants where principal_id = 'watcher'").fetchall() == [(False,)]
        assert conn.execute("select count(*) from data.sessions where session_id = 'brand-new'").fetchone() == (0,)
    found = client.post(
        "/contexts/retrieve",
        headers=headers,
        json={"query": "session notes", "scope": {"org_id": "acme", "session_id": "shared"}},
    ).json()
    assert [f["source"] for f in found["fragments"]] == ["notes.md#notes"]


def test_the_service_refuses_a_login_that_bypasses_rls(db_url, logins):
    from app.db.service_login import UnsafeServiceLogin, check_service_login

    with pytest.raises(UnsafeServiceLogin, match="refusing to serve"):
        check_service_login(db_url)  # the test superuser
    check_service_login(login_url(db_url, logins["service"]))
