"""The usage roll-ups are folded off the request path: the retrieval whose trace makes a
fold due answers without folding, and the service's folder folds afterwards, in a
transaction of its own (app.retrieve.usage_fold, docs/adr/0028)."""

from __future__ import annotations

import json

import psycopg

EVERY = 64
"""data._usage_fold_every()'s default."""


def test_the_retrieval_that_makes_a_fold_due_does_not_fold(client, db_url):
    with psycopg.connect(db_url, autocommit=True) as conn:
        (last,) = conn.execute(
            "select coalesce(pg_sequence_last_value('data.usage_pending_pending_id_seq'), 0)"
        ).fetchone()
        before = (-(last + 1)) % EVERY  # traces written before, so that the retrieval's crosses a multiple
        conn.execute(
            "insert into data.retrieval_traces (org_id, principal_id, query, request, pipeline, candidates)"
            " select 'acme', 'admin', 'q' || n, %s::jsonb, '{}', '[]' from generate_series(1, %s) n",
            (json.dumps({"query": "q", "scope": {"org_id": "acme"}}), before),
        )
        assert conn.execute("select count(*) from data.usage_days").fetchone() == (0,)

    response = client.post(
        "/contexts/retrieve", json={"query": "rotate the keys", "scope": {"org_id": "acme"}, "k_dense": 0}
    )
    assert response.status_code == 200, response.text
    trace_id = response.json()["trace_id"]
    folder = client.app.state.services.usage_folder
    assert folder is not None and folder.wait_idle(30)

    with psycopg.connect(db_url, autocommit=True) as conn:
        (trace_xact,) = conn.execute(
            "select xmin::text from data.retrieval_traces where trace_id = %s", (trace_id,)
        ).fetchone()
        (pending,) = conn.execute("select count(*) from data.usage_pending").fetchone()
        (counted, fold_xacts) = conn.execute(
            "select coalesce(sum(retrievals), 0), array_agg(distinct xmin::text) from data.usage_days"
        ).fetchone()
        assert folder.folded > 0 and counted + pending == before + 1 and pending <= 1
        assert trace_xact not in fold_xacts  # folded in a transaction other than the retrieval's
