"""HTTP API: shapes of SPEC, provenance endpoints, and problem details on bad input."""

from __future__ import annotations

import time

import psycopg
import pytest
from litestar.testing import TestClient

from app.access import create_api_key, ensure_admin_principal
from app.retrieve.learned import LearnedReranker
from app.serve.app import build_services, create_app
from tests.retrieve.corpus import CODE, DOCS


def ingest(client, files: dict[str, str], **scope):
    body = {
        "scope": {"org_id": "acme", **scope},
        "documents": [{"path": p, "content": c, "author": "Ada", "owner": "Ada"} for p, c in files.items()],
    }
    return client.post("/documents", json=body)


def problem(response, status: int):
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    body = response.json()
    assert body["status"] == status and body["title"] and body["detail"]
    return body


def test_health_and_openapi(client):
    assert client.get("/health").json()["status"] == "ok"
    schema = client.get("/schema/openapi.json").json()
    assert {"/contexts/retrieve", "/documents", "/fragments/{fragment_id}", "/traces/{trace_id}"} <= set(
        schema["paths"]
    )


def test_ingest_then_retrieve_with_citations(client):
    response = ingest(client, DOCS | CODE, repo_id="platform")
    assert response.status_code == 201, response.text
    assert all(d["changed"] and d["fragments"] >= 1 for d in response.json()["documents"])

    body = {
        "query": "what to do when the storage volume is full",
        "scope": {"org_id": "acme"},
        "budget_tokens": 300,
        "k_lexical": 50,
        "k_dense": 50,
        "rerank_top": 10,
    }
    result = client.post("/contexts/retrieve", json=body).json()
    assert result["trace_id"]
    fragments = result["fragments"]
    assert fragments and fragments[0]["source"] == "runbooks/storage.md#storage-runbook"
    assert set(fragments[0]) >= {"id", "doc_id", "version", "score", "tokens", "source", "updated_at", "text"}
    assert sum(f["tokens"] for f in fragments) == result["tokens_used"] <= 300
    assert fragments[0]["text"] == DOCS["runbooks/storage.md"].strip()
    scores = [f["score"] for f in fragments]
    assert scores == sorted(scores, reverse=True)

    fragment = client.get(f"/fragments/{fragments[0]['id']}").json()
    assert fragment["chunker_version"] and fragment["embedding_model"].startswith("sentence-transformers/all-MiniLM")
    assert fragment["sources"][0]["path"] == "runbooks/storage.md" and fragment["owner"] == "Ada"


def test_trace_explains_every_candidate(client):
    ingest(client, DOCS | CODE)
    body = {"query": "rotate credentials", "scope": {"org_id": "acme"}, "budget_tokens": 60, "rerank_top": 5}
    result = client.post("/contexts/retrieve", json=body).json()
    trace = client.get(f"/traces/{result['trace_id']}").json()
    assert trace["query"] == "rotate credentials" and trace["request"]["budget_tokens"] == 60
    # The default full stage: the shipped learned reranker, named with its version.
    assert trace["pipeline"]["reranker"] == "learned"
    assert trace["pipeline"]["score_basis"] == "rerank_probability x 0.40 + fused score / best of the head x 0.60"
    assert trace["pipeline"]["reranker_version"] == LearnedReranker().version
    fusion = trace["pipeline"]["fusion"]
    assert fusion["method"] == "weighted" and fusion["query_shape"] == "prose"
    assert fusion["dense_weight"] == 0.5 and fusion["lexical_weight"] == {"code": 0.2}
    candidates = trace["candidates"]
    included = [c for c in candidates if c["included"]]
    assert sorted(c["fragment_id"] for c in included) == sorted(f["id"] for f in result["fragments"])
    # final_rank: the place after rerank, 1..rerank_top; the included ones in that order.
    ranked = sorted((c for c in candidates if c["final_rank"] is not None), key=lambda c: c["final_rank"])
    assert [c["final_rank"] for c in ranked] == list(range(1, 6))
    assert all(c["final_rank"] is None for c in candidates if c["reason"] == "beyond_rerank_top")
    assert [c["fragment_id"] for c in ranked if c["included"]] == [f["id"] for f in result["fragments"]]
    # Each reranked candidate's probability, and the features behind it.
    for c in ranked:
        assert 0.0 <= c["rerank_score"] <= 1.0 and c["final_score"] is not None
        assert set(c["rerank_detail"]["features"]) == set(LearnedReranker().model.columns)
    # Every final score is recomputed from the trace as served: the profile's weights
    # times each candidate's blend terms (authority among them, as the candidate says).
    weights = trace["pipeline"]["profile"]["weights"]
    for c in ranked:
        assert set(c["terms"]) == set(weights) and c["terms"]["authority"] == (c["authority"] or 0.0)
        assert c["final_score"] == pytest.approx(sum(weights[t] * v for t, v in c["terms"].items()))
    reasons = {c["reason"] for c in candidates}
    assert reasons <= {"included", "over_budget", "below_min_score", "beyond_rerank_top", "only_boilerplate"}
    assert "beyond_rerank_top" in reasons
    for c in candidates:
        assert {
            "lexical_rank",
            "dense_rank",
            "fused_score",
            "rerank_score",
            "final_score",
            "chunker_version",
            "embedding_model",
            "source",
        } <= set(c)
        assert c["lexical_rank"] is not None or c["dense_rank"] is not None
        # Every fused score can be recomputed from the trace.
        assert c["fused_score"] == pytest.approx(
            c["lexical_weight"] * c["lexical_norm"] + c["dense_weight"] * c["dense_norm"]
        )


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"scope": {"org_id": "acme"}}, 400),  # missing query
        ({"query": "x"}, 400),  # missing scope
        ({"query": 42, "scope": {"org_id": "acme"}}, 400),  # wrong type
        ({"query": "", "scope": {"org_id": "acme"}}, 400),  # empty query
        ({"query": "x", "scope": {"org_id": "acme"}, "budget_tokens": 0}, 400),  # budget <= 0
        ({"query": "x", "scope": {"org_id": "acme"}, "budget_tokens": -5}, 400),
        ({"query": "x", "scope": {"org_id": "acme"}, "k_dense": 5000}, 400),
        ({"query": "x", "scope": {"org_id": "acme'; drop table data.fragments; --"}}, 400),
        ({"query": "x", "scope": {"org_id": "acme"}, "unexpected": True}, 400),
        ({"query": "x", "scope": {"org_id": "nobody"}}, 403),  # not the key's org
        ({"query": "   ", "scope": {"org_id": "acme"}}, 400),  # blank query
        ({"query": "nul\u0000byte", "scope": {"org_id": "acme"}}, 400),
    ],
)
def test_bad_retrieve_requests(client, body, status):
    problem(client.post("/contexts/retrieve", json=body), status)


def test_malformed_json_and_oversized_body(client):
    problem(client.post("/contexts/retrieve", content=b"{not json", headers={"content-type": "application/json"}), 400)
    huge = {"query": "x", "scope": {"org_id": "acme"}, "pad": "y" * (300 * 1024)}
    problem(client.post("/contexts/retrieve", json=huge), 413)


def test_bad_documents_store_nothing(client, db_url):
    good = {"path": "ok.md", "content": "# Fine\n\nA perfectly good document."}
    binary = {"path": "logo.png", "content": "\x00\x01\x02PNG"}
    response = client.post("/documents", json={"scope": {"org_id": "acme"}, "documents": [good, binary]})
    problem(response, 422)
    problem(client.post("/documents", json={"scope": {"org_id": "acme"}, "documents": []}), 400)
    problem(client.post("/documents", json={"scope": {"org_id": "nobody"}, "documents": [good]}), 403)
    problem(client.post("/documents", json={"scope": {"org_id": "acme"}, "documents": [good, good]}), 400)
    problem(
        client.post(
            "/documents", json={"scope": {"org_id": "acme"}, "documents": [dict(good, timestamp="2026-01-01T10:00:00")]}
        ),
        400,
    )
    same_path = dict(good, path="/ok.md")
    problem(client.post("/documents", json={"scope": {"org_id": "acme"}, "documents": [good, same_path]}), 400)
    for field, value in (
        ("author", "A\u0000da"),
        ("owner", "x\u0000"),
        ("metadata", {"k": "v\u0000"}),
        ("metadata", {"k\u0000": 1}),
    ):
        problem(
            client.post("/documents", json={"scope": {"org_id": "acme"}, "documents": [dict(good, **{field: value})]}),
            400,
        )
    deep = (
        b'{"scope": {"org_id": "acme"}, "documents": [{"path": "d.md", "content": "x", "metadata": '
        + b'{"x": ' * 5000
        + b"1"
        + b"}" * 5000
        + b"}]}"
    )
    response = client.post("/documents", content=deep, headers={"content-type": "application/json"})
    assert 400 <= response.status_code < 500
    problem(
        client.post(
            "/documents",
            json={"scope": {"org_id": "acme"}, "documents": [{"path": "a.md", "content": "x", "kind": "BAD KIND"}]},
        ),
        400,
    )
    with psycopg.connect(db_url) as conn:
        assert conn.execute("select count(*) from data.documents").fetchone() == (0,)
        assert conn.execute("select count(*) from data.fragments").fetchone() == (0,)


def test_whoami_and_documents_list_and_read(client, db_url):
    me = client.get("/whoami").json()
    assert me == {
        "org_id": "acme",
        "principal_id": "admin",
        "org_wide": True,
        "repos": [],
        "personas": [],
        "sessions": [],
        "audit": True,
    }
    ingest(client, DOCS, repo_id="platform")
    ingest(client, {"notes/today.md": "# Today\n\nThe deploy went out at noon."}, session_id="s1")
    first = client.get("/documents", params={"org_id": "acme", "limit": 4}).json()
    assert len(first["documents"]) == 4 and first["next_after"] == first["documents"][-1]["doc_id"]
    rest = client.get("/documents", params={"org_id": "acme", "after": first["next_after"]}).json()
    assert rest["next_after"] is None
    listed = first["documents"] + rest["documents"]
    # The session's note is listed only when the session is named, as retrieval reads it.
    assert {d["path"] for d in listed} == set(DOCS) and all(d["repo_id"] == "platform" for d in listed)
    session = client.get("/documents", params={"org_id": "acme", "session_id": "s1", "path_prefix": "notes/"}).json()
    assert [d["path"] for d in session["documents"]] == ["notes/today.md"]
    assert session["documents"][0]["version"] == 1 and session["documents"][0]["fragments"] == 1

    doc_id = next(d["doc_id"] for d in listed if d["path"] == "runbooks/storage.md")
    document = client.get(f"/documents/{doc_id}").json()
    assert document["content"] == DOCS["runbooks/storage.md"] and document["version"] == 1
    assert [f["anchor"] for f in document["fragments"]] == ["storage-runbook"]
    fragment = client.get(f"/fragments/{document['fragments'][0]['fragment_id']}").json()
    assert fragment["sources"][0]["doc_id"] == doc_id
    part = client.get(f"/documents/{doc_id}", params={"offset": 2, "max_chars": 7}).json()
    assert part["content"] == "Storage" and part["content_chars"] == len(DOCS["runbooks/storage.md"])

    problem(client.get("/documents/999999"), 404)
    problem(client.get(f"/documents/{doc_id}", params={"version": 2}), 404)
    problem(client.get("/documents/01"), 400)
    problem(client.get("/documents", params={"org_id": "acme", "limit": 0}), 400)
    problem(client.get("/documents", params={"org_id": "globex"}), 403)
    problem(client.get("/documents", params={"org_id": "acme", "session_id": "s2"}), 403)

    # Another org's key reads none of it.
    with psycopg.connect(db_url) as conn:
        conn.execute("select service.create_org('globex')")
        ensure_admin_principal(conn, "globex", "admin")
        other = create_api_key(conn, "globex", "admin").token
    as_globex = {"Authorization": f"Bearer {other}"}
    assert client.get("/whoami", headers=as_globex).json()["org_id"] == "globex"
    problem(client.get(f"/documents/{doc_id}", headers=as_globex), 404)
    problem(client.get("/documents", params={"org_id": "acme"}, headers=as_globex), 403)
    assert client.get("/documents", params={"org_id": "globex"}, headers=as_globex).json()["documents"] == []


def test_unknown_ids(client):
    problem(client.get("/fragments/999999"), 404)
    problem(client.get("/fragments/99999999999999999999999"), 400)
    problem(client.get("/traces/00000000-0000-0000-0000-000000000000"), 404)
    response = client.get("/traces/not-a-uuid")
    assert response.status_code in (400, 404)
    assert response.headers["content-type"].startswith("application/problem+json")


def test_unreachable_database_is_503(settings, models, db_url, pg_server):
    from psycopg_pool import ConnectionPool

    from app.db.availability import DatabaseMonitor
    from app.operations.services import Services

    services = build_services(settings.with_(database_url=db_url), db_url)
    services.close()
    # A pool whose database does not exist cannot hand out a connection, and the
    # monitor finds it unreachable.
    missing = pg_server.url("no_such_database")
    broken = ConnectionPool(missing, min_size=0, max_size=1, timeout=1, open=True)
    monitor = DatabaseMonitor(missing, interval_s=0.05).start()
    try:
        app = create_app(
            settings,
            services=Services(services.settings, broken, services.retriever, services.pipeline, monitor=monitor),
        )
        with TestClient(app=app) as client:
            for _ in range(100):
                if not monitor.available:
                    break
                time.sleep(0.05)
            problem(client.get("/health"), 503)
            response = client.post(
                "/contexts/retrieve",
                json={"query": "q", "scope": {"org_id": "acme"}},
                headers={"Authorization": "Bearer ctx_x"},
            )
            problem(response, 503)
            assert response.headers["retry-after"]
    finally:
        monitor.close()
        broken.close()


def test_failure_after_the_first_writes_rolls_everything_back(client, db_url, monkeypatch):
    services = client.app.state.services

    def fail(_pending):
        raise RuntimeError("embedding backend crashed")

    monkeypatch.setattr(services.pipeline, "_embed_new", fail)
    response = ingest(client, DOCS)
    problem(response, 500)
    assert "crashed" not in response.text, "5xx bodies never echo internals"
    with psycopg.connect(db_url) as conn:
        assert conn.execute("select count(*) from data.documents").fetchone() == (0,)
        assert conn.execute("select count(*) from data.document_versions").fetchone() == (0,)


SESSIONS_METHOD = '''class {cls}:
    {a}def purge_expired_sessions(self, older_than_days: int) -> int:
        """Remove every expired session older than the given number of days and return
        how many were removed, so the caller can log the retention sweep."""
        rows = {w}self._store.sessions.delete_where(expired=True, age_days=older_than_days)
        {w}self._audit.record("retention_sweep", removed=len(rows))
        return len(rows)
'''


def test_trace_names_the_twin_a_fragment_repeats(client):
    """A sync method and its async copy: the lower one's final score is scaled (0.85) and
    the trace names the rank of its twin, so its final score is still recomputed from it."""
    files = {
        "client/sync_sessions.py": SESSIONS_METHOD.format(cls="Sessions", a="", w=""),
        "client/async_sessions.py": SESSIONS_METHOD.format(cls="AsyncSessions", a="async ", w="await "),
    }
    assert ingest(client, files | DOCS).status_code == 201
    body = {"query": "remove expired sessions retention sweep", "scope": {"org_id": "acme"}, "rerank_top": 10}
    result = client.post("/contexts/retrieve", json=body).json()
    candidates = client.get(f"/traces/{result['trace_id']}").json()["candidates"]
    twins = [c for c in candidates if c.get("twin_of_rank") is not None]
    assert len(twins) == 1, [(c["source"], c.get("twin_of_rank")) for c in candidates]
    twin = twins[0]
    above = next(c for c in candidates if c["final_rank"] == twin["twin_of_rank"])
    assert {twin["source"].split("#")[0], above["source"].split("#")[0]} == set(files)
    assert above["final_rank"] < twin["final_rank"]
    trace = client.get(f"/traces/{result['trace_id']}").json()
    weights = trace["pipeline"]["profile"]["weights"]
    assert twin["final_score"] == pytest.approx(0.85 * sum(weights[t] * v for t, v in twin["terms"].items()))


def test_an_errors_key_names_the_field_as_the_client_sent_it(client):
    """`errors[].key` is the query parameter's own name and the body field's path, not
    the handler's Python names (`subscription_state`, `data`)."""
    cases = (
        (client.get("/subscriptions", params={"state": "bogus"}), "state"),
        (client.post("/contexts/retrieve", json={"query": "x"}), "scope"),
        (client.post("/contexts/retrieve", json={"query": "x", "scope": {}}), "scope.org_id"),
        (client.post("/contexts/retrieve", json={"query": 1, "scope": {"org_id": "acme"}}), "query"),
        (client.post("/contexts/retrieve", json=[1]), "body"),
    )
    for response, key in cases:
        body = problem(response, 400)
        assert [e["key"] for e in body["errors"]] == [key], body


@pytest.mark.parametrize(
    ("extra", "key"),
    [
        ({"top_k": "5"}, "top_k"),
        ({"budget_tokens": "1e3"}, "budget_tokens"),
        ({"min_relevance": "0.5"}, "min_relevance"),
        ({"include_superseded": "true"}, "include_superseded"),
        ({"include_superseded": 1}, "include_superseded"),
        ({"as_of": 0}, "as_of"),
        ({"scope": {"org_id": "acme", "repo_id": 7}}, "scope.repo_id"),
    ],
)
def test_a_body_value_of_the_wrong_json_type_is_refused_not_converted(client, extra, key):
    """The OpenAPI document says integer, boolean, date-time string: Litestar converted
    `"5"`, `"true"`, 1 and a number of seconds, so a client's mistake was served."""
    body = problem(client.post("/contexts/retrieve", json={"query": "x", "scope": {"org_id": "acme"}} | extra), 400)
    assert [e["key"] for e in body["errors"]] == [key], body
    assert "Expected" in body["errors"][0]["message"], body


def test_a_timestamp_given_as_a_number_is_refused_for_a_document(client):
    doc = {"path": "a.md", "content": "# A\n\nText.\n", "timestamp": 1700000000.5}
    body = problem(client.post("/documents", json={"scope": {"org_id": "acme"}, "documents": [doc]}), 400)
    assert body["errors"][0]["key"] == "documents[0].timestamp", body
    assert client.get("/documents", params={"org_id": "acme"}).json()["documents"] == []


@pytest.mark.parametrize("header", [b"authorization", b"idempotency-key", b"content-type"])
def test_a_header_a_request_states_once_is_refused_when_sent_twice(header):
    """Which of two keys (two orgs' keys were served as the first), two idempotency keys
    or two content types would count is a guess. An ASGI test client joins repeated
    headers into one, so the request is built here as a server hands it over."""
    from litestar import Request

    from app.api.request_checks import repeated_header_problem

    twice = [(header, b"Bearer ctx_a_b" if header == b"authorization" else b"x"), (header, b"y")]
    scope = {"type": "http", "method": "POST", "path": "/documents", "headers": [(b"host", b"h"), *twice]}
    refused = repeated_header_problem(Request(scope))  # type: ignore[arg-type]
    assert refused is not None and refused.status_code == 400
    assert f"the {header.decode()} header is sent 2 times" in refused.content["detail"]
    once = {**scope, "headers": [(b"host", b"h"), twice[0]]}
    assert repeated_header_problem(Request(once)) is None  # type: ignore[arg-type]
