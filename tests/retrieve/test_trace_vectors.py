"""Traces keep the query vectors a retrieval searched with (one per distinct embedding
model, exactly as the service computed them), so SQL can run the query again
(api.retrieve); service.record_trace refuses malformed vectors with 22023."""

from __future__ import annotations

import json

import msgspec
import numpy as np
import psycopg
import pytest

from app.wire.retrieve import RetrieveRequest
from tests.retrieve.corpus import DOCS


@pytest.fixture
def traced(conn, ingest, as_principal, retriever):
    ingest("acme", DOCS)
    for body in (
        {"query": "rotate the journal", "scope": {"org_id": "acme"}},
        {"query": "certificates renew", "scope": {"org_id": "acme"}, "k_dense": 0},
    ):
        as_principal("acme")
        retriever.retrieve(conn, msgspec.convert(body, RetrieveRequest))
        conn.commit()
    return conn


def test_a_trace_keeps_one_query_vector_per_model(traced, retriever):
    rows = traced.execute("select query, query_models, query_vectors::text[] from data.retrieval_traces").fetchall()
    by_query = {r[0]: (r[1], r[2]) for r in rows}
    vectors = retriever.query_embeddings("rotate the journal")
    assert set(vectors) == {"prose", "code"}  # two namespaces, one model: one vector stored
    models, stored = by_query["rotate the journal"]
    assert models == ["sentence-transformers/all-MiniLM-L6-v2"] and len(stored) == 1
    # Exactly the float32 vector the service searched with (pgvector prints the shortest
    # decimal that reads back as the same float32).
    assert np.array_equal(np.float32(json.loads(stored[0])), np.float32(vectors["prose"]))
    assert by_query["certificates renew"] == (None, None)  # k_dense = 0: nothing embedded, nothing kept


BAD_VECTORS = [
    ("[1, 2]", "JSON object keyed by namespace"),
    ('{"poetry": [1]}', "unknown embedding namespace: poetry"),
    ('{"prose": [1, 2, 3]}', "must have 384 dimensions"),
    ('{"prose": "[1, 2]"}', "must have 384 dimensions"),
]


def test_record_trace_refuses_bad_query_vectors(traced):
    traced.execute("select service.bind_principal('acme', 'admin')")
    for vectors, message in BAD_VECTORS:
        with pytest.raises(psycopg.errors.InvalidParameterValue, match=message), traced.transaction():
            traced.execute("select service.record_trace('acme', 'q', '{}', '{}', '[]', 1.0, %s)", (vectors,))


def test_namespaces_sharing_a_model_share_one_vector(traced):
    traced.execute("select service.bind_principal('acme', 'admin')")
    one, other = [0.0] * 384, [0.0] * 384
    one[0], other[1] = 1.0, 1.0
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="sharing model"), traced.transaction():
        traced.execute(
            "select service.record_trace('acme', 'q', '{}', '{}', '[]', 1.0, %s)",
            (json.dumps({"prose": one, "code": other}),),
        )
    trace = traced.execute(
        "select service.record_trace('acme', 'q', '{}', '{}', '[]', 1.0, %s)",
        (json.dumps({"prose": one, "code": one}),),
    ).fetchone()[0]
    assert traced.execute(
        "select cardinality(query_vectors) from data.retrieval_traces where trace_id = %s", (trace,)
    ).fetchone() == (1,)


def test_an_http_retrieval_keeps_the_vectors_the_api_embedded_before_its_transaction(client, db_url):
    """The API embeds a query before it takes a connection (app/api/retrieve.py): the
    trace keeps those very vectors."""
    ingest = client.post(
        "/documents",
        json={"scope": {"org_id": "acme"}, "documents": [{"path": p, "content": c} for p, c in DOCS.items()]},
    )
    assert ingest.status_code == 201, ingest.text
    answer = client.post("/contexts/retrieve", json={"query": "rotate the journal", "scope": {"org_id": "acme"}})
    assert answer.status_code == 200, answer.text
    with psycopg.connect(db_url) as conn:
        stored = conn.execute(
            "select query_models, cardinality(query_vectors) from data.retrieval_traces where trace_id = %s",
            (answer.json()["trace_id"],),
        ).fetchone()
    assert stored == (["sentence-transformers/all-MiniLM-L6-v2"], 1)
