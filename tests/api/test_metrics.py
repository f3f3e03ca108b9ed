"""GET /metrics: Prometheus text with requests per route template, retrieval stages,
ingestion, pools and per-org sizes; only for the metrics token (or loopback), and no
tenant data in it beyond org ids."""

from __future__ import annotations

import pytest
from prometheus_client.parser import text_string_to_metric_families

from app.api.metrics import _loopback
from tests.conftest import serving

TOKEN = "metrics-token-for-tests"


@pytest.fixture
def service(settings, models, db_url, logins):
    """The API with a metrics token, and the key of acme's administrator."""
    with serving(settings, db_url, logins, metrics_token=TOKEN) as (client, token):
        yield client, {"Authorization": f"Bearer {token}"}


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def test_metrics_count_requests_stages_ingestion_and_sizes(service):
    client, auth = service
    secret_query = "zanzibar quokka ledger reconciliation"
    body = {
        "scope": {"org_id": "acme", "repo_id": "payments"},
        "documents": [
            {"path": "docs/ledger.md", "content": "# Ledger\n\nReconciliation runs nightly and pages on drift.\n"},
            {
                "path": "src/ledger.py",
                "content": "def reconcile(entries):\n    return sum(e.amount for e in entries)\n",
            },
        ],
    }
    assert client.post("/documents", json=body, headers=auth).status_code == 201
    retrieve = {"query": secret_query, "scope": {"org_id": "acme"}}
    assert client.post("/contexts/retrieve", json=retrieve, headers=auth).status_code == 200
    assert client.get("/fragments/987654321", headers=auth).status_code == 404
    assert client.get("/no/such/path/42").status_code == 404

    response = client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain")
    text = response.text
    found = samples(text)

    def value(name: str, **labels: str) -> float:
        return found.get((name, tuple(sorted(labels.items()))), 0.0)

    assert value("contexts_http_requests_total", method="POST", route="/contexts/retrieve", status="200") == 1
    assert value("contexts_http_requests_total", method="POST", route="/documents", status="201") == 1
    # Route templates, never raw paths: the ids a client sends are not labels.
    fragment_routes = {dict(k[1]).get("route") for k in found if k[0] == "contexts_http_requests_total"}
    assert "/fragments/987654321" not in fragment_routes and "/no/such/path/42" not in fragment_routes
    assert "unmatched" in fragment_routes
    assert any(r and r.startswith("/fragments/{") for r in fragment_routes)
    assert value("contexts_http_request_duration_seconds_count", method="POST", route="/contexts/retrieve") == 1
    for stage in ("embed", "candidates", "rerank", "compose", "trace"):
        assert value("contexts_retrieval_stage_duration_seconds_count", stage=stage) == 1, stage
    assert value("contexts_ingest_documents_total", org="acme") == 2
    assert value("contexts_ingest_fragments_total", org="acme") >= 2
    assert value("contexts_ingest_seconds_total", org="acme") > 0
    assert value("contexts_pool_connections", pool="read", state="max") >= 1
    assert ("contexts_executor_queue_depth", (("executor", "embed"),)) in found
    assert value("contexts_database_up") == 1
    assert value("contexts_org_active_fragments", org="acme") >= 2
    assert value("contexts_org_hnsw_bytes", org="acme") > 0
    assert value("contexts_org_fragment_bytes", org="acme") > 0
    # No tenant data beyond org ids: neither the query, the repo nor a path.
    for leaked in ("zanzibar", "quokka", "payments", "ledger.md", "reconcile"):
        assert leaked not in text, leaked


def test_metrics_need_the_token(service):
    client, auth = service
    for headers in ({}, auth, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {TOKEN}"}):
        response = client.get("/metrics", headers=headers)
        assert response.status_code == 401, headers
        assert response.headers["content-type"].startswith("application/problem+json")
        assert "contexts_" not in response.text


def test_metrics_name_their_charset_once(service):
    client, _auth = service
    kind = client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"}).headers["content-type"]
    assert kind.startswith("text/plain; version=") and kind.lower().count("charset") == 1, kind


def test_without_a_token_metrics_answer_loopback_clients_only(client):
    response = client.get("/metrics")  # the test client's address is no loopback address
    assert response.status_code == 403
    assert "CONTEXTS_METRICS_TOKEN" in response.json()["detail"]


@pytest.mark.parametrize(
    "host, allowed", [("127.0.0.1", True), ("::1", True), ("10.0.0.7", False), ("testclient", False), ("", False)]
)
def test_loopback_is_judged_by_address(host, allowed):
    class Client:
        pass

    class FakeRequest:
        client = Client()

    FakeRequest.client.host = host  # type: ignore[attr-defined]
    assert _loopback(FakeRequest()) is allowed  # type: ignore[arg-type]


def test_metrics_are_not_in_the_api_document(client):
    assert "/metrics" not in client.get("/schema/openapi.json").json()["paths"]
