"""What an agent expects of a memory service, over HTTP against the real service and
database: documents listed with filters, read with their versions, deleted (gone from
retrieval, history kept); retrieval with top_k, filters, stored metadata, an absolute
relevance and a floor that can answer nothing; sessions that open with a context pack,
notes that stay inside their session, and promotion to repo or org scope."""

from __future__ import annotations

import psycopg
import pytest

from app.access import create_api_key
from tests.api.test_api import ingest, problem
from tests.retrieve.corpus import CODE, DOCS

STORAGE_QUERY = "what to do when the storage volume is full"


def retrieve(client, query: str = STORAGE_QUERY, **extra):
    body = {"query": query, "scope": {"org_id": "acme", **extra.pop("scope", {})}, "budget_tokens": 2000, **extra}
    return client.post("/contexts/retrieve", json=body)


def key_for(db_url: str, principal: str, *grants: tuple[str, str | None, bool]) -> dict[str, str]:
    with psycopg.connect(db_url) as conn:
        conn.execute("select service.create_principal('acme', %s)", (principal,))
        for kind, scope_id, write in grants:
            conn.execute("select service.grant_scope('acme', %s, %s, %s, %s)", (principal, kind, scope_id, write))
        return {"Authorization": f"Bearer {create_api_key(conn, 'acme', principal).token}"}


# -- documents ------------------------------------------------------------------------


def test_documents_are_filtered_read_with_versions_and_deleted_with_history_kept(client, db_url):
    assert ingest(client, DOCS).status_code == 201
    body = {
        "scope": {"org_id": "acme"},
        "documents": [
            {
                "path": "code/tax.py",
                "content": CODE["billing/tax.py"],
                "owner": "Grace",
                "metadata": {"team": "billing"},
            }
        ],
    }
    assert client.post("/documents", json=body).status_code == 201

    by_kind = client.get("/documents", params={"org_id": "acme", "kind": "code"}).json()["documents"]
    assert [d["path"] for d in by_kind] == ["code/tax.py"] and by_kind[0]["owner"] == "Grace"
    assert [
        d["path"] for d in client.get("/documents", params={"org_id": "acme", "owner": "Grace"}).json()["documents"]
    ] == ["code/tax.py"]
    assert (
        client.get("/documents", params={"org_id": "acme", "updated_since": "2999-01-01T00:00:00Z"}).json()["documents"]
        == []
    )
    page = client.get("/documents", params={"org_id": "acme", "path_prefix": "runbooks/", "limit": 1}).json()
    second = client.get(
        "/documents", params={"org_id": "acme", "path_prefix": "runbooks/", "after": page["next_after"]}
    )
    assert {page["documents"][0]["path"], *(d["path"] for d in second.json()["documents"])} == {
        "runbooks/storage.md",
        "runbooks/certificates.md",
    }
    problem(client.get("/documents", params={"org_id": "acme", "repo_id": "no-such-repo"}), 404)
    problem(client.get("/documents", params={"org_id": "acme", "kind": "Not A Kind"}), 400)

    storage = next(
        d
        for d in client.get("/documents", params={"org_id": "acme"}).json()["documents"]
        if d["path"] == "runbooks/storage.md"
    )
    changed = {
        "scope": {"org_id": "acme"},
        "documents": [{"path": "runbooks/storage.md", "content": "# Storage\n\nv2\n"}],
    }
    assert client.post("/documents", json=changed).json()["documents"][0]["version"] == 2
    detail = client.get(f"/documents/{storage['doc_id']}").json()
    assert [(v["version"], v["current"]) for v in detail["versions"]] == [(1, False), (2, True)]
    assert detail["versions"][0]["author"] == "Ada" and detail["versions"][1]["author"] is None

    deleted = client.delete(f"/documents/{storage['doc_id']}")
    assert deleted.status_code == 200, deleted.text
    assert deleted.json() | {"fragments_retired": 0} == {
        "doc_id": storage["doc_id"],
        "org_id": "acme",
        "path": "runbooks/storage.md",
        "version": 2,
        "fragments_retired": 0,
        "rehomed": 0,
    }
    problem(client.get(f"/documents/{storage['doc_id']}"), 404)
    problem(client.delete(f"/documents/{storage['doc_id']}"), 404)
    problem(client.delete("/documents/99999999"), 404)
    problem(client.delete("/documents/0"), 400)
    assert "runbooks/storage.md" not in {f["source"].split("#")[0] for f in retrieve(client).json()["fragments"]}
    with psycopg.connect(db_url) as conn:  # history, for audit
        assert conn.execute(
            "select count(*), max(d.deleted_by) from data.document_versions v join data.documents d"
            " using (doc_id) where doc_id = %s",
            (storage["doc_id"],),
        ).fetchone() == (2, "admin")


def test_only_writers_delete_and_other_orgs_see_nothing(client, db_url):
    ingest(client, {"platform/storage.md": DOCS["runbooks/storage.md"]}, repo_id="platform")
    doc_id = client.get("/documents", params={"org_id": "acme"}).json()["documents"][0]["doc_id"]
    reader = key_for(db_url, "reader", ("org", None, False))
    problem(client.delete(f"/documents/{doc_id}", headers=reader), 403)
    other_repo = key_for(db_url, "mobile-writer", ("repo", "mobile", True))
    problem(client.delete(f"/documents/{doc_id}", headers=other_repo), 404)
    with psycopg.connect(db_url) as conn:
        conn.execute("select service.create_org('globex')")
        conn.execute("select service.create_principal('globex', 'admin')")
        conn.execute("select service.grant_scope('globex', 'admin', 'org', null, true)")
        globex = {"Authorization": f"Bearer {create_api_key(conn, 'globex', 'admin').token}"}
    problem(client.delete(f"/documents/{doc_id}", headers=globex), 404)
    problem(client.get(f"/documents/{doc_id}", headers=globex), 404)
    assert client.get(f"/documents/{doc_id}").status_code == 200, "still there"


# -- retrieval --------------------------------------------------------------------------


def test_retrieval_top_k_filters_metadata_and_relevance(client):
    documents = [
        {"path": p, "content": c, "author": "Ada", "metadata": {"origin": p}} for p, c in (DOCS | CODE).items()
    ]
    body = {"scope": {"org_id": "acme"}, "documents": documents}
    assert client.post("/documents", json=body).status_code == 201

    full = retrieve(client).json()["fragments"]
    assert len(full) > 2 and full[0]["metadata"] == {"origin": "runbooks/storage.md"}
    assert all(f["metadata"] == {"origin": f["source"].split("#")[0]} for f in full)
    assert all(0.0 <= f["relevance"] <= 1.0 for f in full) and full[0]["relevance"] >= 0.5
    capped = retrieve(client, top_k=2).json()["fragments"]
    assert [f["id"] for f in capped] == [f["id"] for f in full[:2]]

    runbooks = retrieve(client, path_prefix="runbooks/").json()["fragments"]
    assert runbooks and {f["source"].split("/")[0] for f in runbooks} == {"runbooks"}
    code = retrieve(client, "refund window for an invoice", kinds=["code"]).json()["fragments"]
    assert code and {f["kind"] for f in code} == {"code"}
    assert retrieve(client, updated_until="2000-01-01T00:00:00Z").json()["fragments"] == []
    assert retrieve(client, updated_since="2000-01-01T00:00:00Z").json()["fragments"]
    assert retrieve(client, path_prefix="nowhere/").json()["fragments"] == []
    window = {"updated_since": "2030-01-01T00:00:00Z", "updated_until": "2020-01-01T00:00:00Z"}
    assert retrieve(client, **window).json()["fragments"] == [], "an empty window holds nothing"

    # The same floor answers a relevant query and answers an unrelated one with nothing.
    assert retrieve(client, min_relevance=0.3).json()["fragments"][0]["source"].startswith("runbooks/storage.md")
    unrelated = retrieve(client, "banana bread recipe with walnuts", min_relevance=0.3).json()
    assert unrelated["fragments"] == []
    assert retrieve(client, "banana bread recipe with walnuts").json()["fragments"], "no floor: relative scores"
    trace = client.get(f"/traces/{unrelated['trace_id']}").json()
    assert {c["reason"] for c in trace["candidates"]} <= {"below_min_relevance", "beyond_rerank_top"}


@pytest.mark.parametrize(
    ("change", "status"),
    [
        ({"scope": {"repo_id": "no-such-repo"}}, 404),
        ({"scope": {"persona_id": "no-such-persona"}}, 404),
        ({"top_k": 0}, 400),
        ({"min_relevance": 1.5}, 400),
        ({"kinds": []}, 400),
        ({"kinds": ["Code"]}, 400),
        ({"updated_since": "2026-01-01T00:00:00"}, 400),  # no offset
    ],
)
def test_bad_retrieval_filters_and_misspelled_scopes_are_problems(client, change, status):
    ingest(client, {"runbooks/storage.md": DOCS["runbooks/storage.md"]}, repo_id="platform")
    problem(retrieve(client, **change), status)


# -- sessions -----------------------------------------------------------------------------


def test_a_session_opens_with_its_pack_and_its_notes_stay_inside_it(client, db_url):
    ingest(client, DOCS | CODE, repo_id="platform")
    opened = client.post(
        "/sessions",
        json={
            "scope": {"org_id": "acme", "repo_id": "platform"},
            "task": "the storage volume is full, fix it",
            "budget_tokens": 300,
        },
    )
    assert opened.status_code == 200, opened.text
    pack = opened.json()
    session = pack["session_id"]
    assert pack["expires_at"] and pack["fragments"] and pack["tokens_used"] <= 300
    top = pack["fragments"][0]
    assert top["source"] == "runbooks/storage.md#storage-runbook"
    assert f"## [1] {top['source']} (document {top['doc_id']}, version 1)" in pack["markdown"]
    assert top["text"] in pack["markdown"]
    trace = client.get(f"/traces/{pack['trace_id']}").json()
    assert trace["request"]["scope"]["session_id"] == session and trace["query"].startswith("the storage")

    note = "# Finding\n\nThe journal of node 7 never rotates: its cron entry is commented out.\n"
    written = client.post(f"/sessions/{session}/notes", json={"text": note})
    assert written.status_code == 201, written.text
    note_id = written.json()["doc_id"]
    inside = retrieve(client, "why does the journal never rotate", scope={"session_id": session}).json()
    assert note_id in {f["doc_id"] for f in inside["fragments"]}
    outside = retrieve(client, "why does the journal never rotate").json()
    assert note_id not in {f["doc_id"] for f in outside["fragments"]}

    again = client.post(
        "/sessions",
        json={"scope": {"org_id": "acme", "session_id": session}, "task": "why does the journal never rotate"},
    ).json()
    assert again["session_id"] == session and again["fragments"][0]["doc_id"] == note_id

    promoted = client.post(
        f"/sessions/{session}/notes/{note_id}/promote", json={"repo_id": "platform", "owner": "Grace"}
    )
    assert promoted.status_code == 201, promoted.text
    result = promoted.json()
    assert (result["repo_id"], result["owner"], result["provenance"]["session_id"]) == ("platform", "Grace", session)
    assert result["provenance"]["author"] == "admin" and result["provenance"]["promoted_by"] == "admin"
    found = retrieve(client, "why does the journal never rotate", scope={"repo_id": "platform"}).json()
    hit = next(f for f in found["fragments"] if f["doc_id"] == result["doc_id"])
    assert hit["owner"] == "Grace" and hit["metadata"]["promoted_from"]["note_id"] == note_id
    # Deduplication applies: promoting the same note again creates no fragment.
    second = client.post(
        f"/sessions/{session}/notes/{note_id}/promote", json={"repo_id": "platform", "owner": "Grace"}
    ).json()
    assert second["created"] == 0 and second["changed"] is False
    # Nothing was written: it says the provenance that is stored, not a new one.
    assert second["provenance"] == result["provenance"]
    stored = client.get(f"/documents/{result['doc_id']}").json()
    assert len(stored["versions"]) == 1 and stored["metadata"]["promoted_from"] == result["provenance"]

    problem(client.post(f"/sessions/{session}/notes/999999/promote", json={}), 404)
    problem(client.post(f"/sessions/other-session/notes/{note_id}/promote", json={}), 404)
    problem(client.post("/sessions", json={"scope": {"org_id": "acme", "repo_id": "typo"}, "task": "x1"}), 404)
    problem(client.post("/sessions", json={"scope": {"org_id": "acme"}, "task": "!!!"}), 400)
    problem(client.post(f"/sessions/{session}/notes", json={"text": ""}), 400)
    # A promotion's provenance is the service's to write: no note or document may forge it.
    forged = {"promoted_from": {"session_id": "s", "note_id": 1, "promoted_by": "ceo"}}
    for refused in (
        client.post(f"/sessions/{session}/notes", json={"text": "a forged note", "metadata": forged}),
        client.post(
            "/documents",
            json={
                "scope": {"org_id": "acme"},
                "documents": [{"path": "f.md", "content": "# F\n\nx", "metadata": forged}],
            },
        ),
    ):
        assert "promoted_from is written by the service" in problem(refused, 400)["errors"][0]["message"]
    # What a git sync records of a file is its own too; other git_ keys are the writer's.
    for key in ("git_commit", "git_blob", "git_renamed_from", "git_added_at"):
        body = {
            "scope": {"org_id": "acme"},
            "documents": [{"path": "g.md", "content": "# G\n\nx", "metadata": {key: "x"}}],
        }
        message = problem(client.post("/documents", json=body), 400)["errors"][0]["message"]
        assert f"{key} is written by contexts sync" in message, message
    own = {
        "scope": {"org_id": "acme"},
        "documents": [{"path": "g.md", "content": "# G\n\nx", "metadata": {"git_sha": "abc"}}],
    }
    assert client.post("/documents", json=own).status_code == 201


def test_session_notes_and_promotion_follow_the_grants(client, db_url):
    ingest(client, DOCS)
    pack = client.post("/sessions", json={"scope": {"org_id": "acme"}, "task": "rotate credentials"}).json()
    session = pack["session_id"]
    note_id = client.post(f"/sessions/{session}/notes", json={"text": "# Note\n\nVault path is kv/payments.\n"}).json()[
        "doc_id"
    ]
    reader = key_for(db_url, "reader", ("org", None, False))
    problem(
        client.post("/sessions", json={"scope": {"org_id": "acme"}, "task": "rotate credentials"}, headers=reader), 403
    )
    problem(client.post(f"/sessions/{session}/notes", json={"text": "sneaky"}, headers=reader), 403)
    in_session = {"query": "vault path", "scope": {"org_id": "acme", "session_id": session}}
    problem(client.post("/contexts/retrieve", json=in_session, headers=reader), 403)
    # A repo writer who joined the session may promote into its repo, not org-wide.
    repo_writer = key_for(db_url, "repo-writer", ("repo", "platform", True), ("session", session, True))
    problem(client.post(f"/sessions/{session}/notes/{note_id}/promote", json={}, headers=repo_writer), 403)
    ok = client.post(f"/sessions/{session}/notes/{note_id}/promote", json={"repo_id": "platform"}, headers=repo_writer)
    assert ok.status_code == 201 and ok.json()["owner"] == "repo-writer"
    # Without a grant on the session, its note is unknown.
    outsider = key_for(db_url, "outsider", ("org", None, True))
    problem(client.post(f"/sessions/{session}/notes/{note_id}/promote", json={}, headers=outsider), 404)


# -- OpenAPI docs -------------------------------------------------------------------------


def test_interactive_docs_are_served_offline(client):
    for path in ("/schema", "/schema/swagger"):
        page = client.get(path)
        assert page.status_code == 200 and "SwaggerUIBundle" in page.text
        assert "http://" not in page.text and "https://" not in page.text, "no CDN"
    for asset in ("swagger-ui-bundle.js", "swagger-ui.css", "swagger-ui-standalone-preset.js"):
        assert client.get(f"/schema/assets/{asset}").status_code == 200
    for missing in ("/schema/redoc", "/schema/rapidoc", "/schema/nothing/else"):
        answer = client.get(missing)
        assert answer.status_code == 404 and answer.headers["content-type"] == "application/problem+json", missing
    assert client.get("/schema/redoc").json()["detail"] == (
        "the API docs have no page /redoc: they are at /schema and /schema/openapi.json"
    )
    document = client.get("/schema/openapi.json").json()
    for path, item in document["paths"].items():
        for method, operation in item.items():
            ok = [s for s in operation["responses"] if s.startswith("2")]
            assert ok and all("$ref" in str(operation["responses"][s].get("content", {})) or s == "204" for s in ok), (
                f"{method} {path}: untyped"
            )
