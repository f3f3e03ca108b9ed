"""A running service follows the database's model generations (docs/adr/0021): after a
promotion it embeds queries and documents with the promoted model without a restart,
persona descriptions set during the window are embedded for the shadow too, and retired
generations whose window has ended are dropped by the service. Real PostgreSQL, real
models: the bundled MiniLM under the folder name `minilm-next` is the new model."""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import replace

import psycopg
import pytest

from app.generations.serving import ModelNotLoadable, follow, serving_models
from app.generations.upgrade import upgrade
from app.serve.app import build_services, model_worker
from tests.api.test_api import ingest, problem
from tests.conftest import login_url, serving
from tests.ingest import test_model_generations
from tests.retrieve.corpus import DOCS

next_model = test_model_generations.next_model
"""The bundled MiniLM under the folder name minilm-next (a fixture)."""

QUERY = {"query": "rotate the journal", "scope": {"org_id": "acme"}}
NEW_DOC = {"runbooks/journal.md": "# Journal\n\nRotate the journal nightly and keep seven days of it.\n"}


def build_shadow(db_url: str, models, next_model: str) -> int:
    """The prose namespace re-embedded into generation 2 (minilm-next), not promoted."""
    with psycopg.connect(db_url) as conn:
        return upgrade(conn, "prose", replace(models["prose"], name=next_model)).model_id


def promote(db_url: str, generation: int = 2) -> None:
    """service.promote_model as `contexts models promote` runs it once its gate has passed."""
    with psycopg.connect(db_url) as conn:
        conn.execute("select * from service.promote_model('prose', %s)", (generation,))


def model_id(db_url: str, namespace: str, generation: int) -> int:
    with psycopg.connect(db_url) as conn:
        row = conn.execute(
            "select model_id from data.embedding_models where namespace = %s and generation = %s",
            (namespace, generation),
        ).fetchone()
    assert row is not None
    return row[0]


def vectors_of(db_url: str, fragment_ids: list[int]) -> dict[int, set[int]]:
    with psycopg.connect(db_url) as conn:
        rows = conn.execute(
            "select fragment_id, model_id from data.embeddings where fragment_id = any(%s)", (fragment_ids,)
        ).fetchall()
    out: dict[int, set[int]] = {}
    for fragment_id, model_id in rows:
        out.setdefault(fragment_id, set()).add(model_id)
    return out


def test_a_promotion_is_followed_without_restart_by_retrieval_and_ingestion(client, db_url, models, next_model, caplog):
    assert ingest(client, DOCS).status_code == 201
    services = client.app.state.services
    before = services.retriever
    assert client.post("/contexts/retrieve", json=QUERY).status_code == 200
    assert QUERY["query"] in before.query_embedder._recent  # cached for the old model
    shadow = build_shadow(db_url, models, next_model)
    promote(db_url)

    with caplog.at_level(logging.WARNING, logger="app.operations.following"):
        answered = client.post("/contexts/retrieve", json=QUERY)
    assert answered.status_code == 200, answered.text  # no 409, no restart
    assert services.retriever is not before and services.pipeline.embedders["prose"].name == next_model
    assert "now embedding with minilm-next (generation 2" in caplog.text
    trace = client.get(f"/traces/{answered.json()['trace_id']}").json()
    assert trace["pipeline"]["embedding_models"]["prose"] == "minilm-next"
    assert "minilm-next@2" in json.dumps(trace["candidates"])
    # The new retriever's cache holds the query embedded by the new model only.
    assert list(services.retriever.query_embedder._recent) == [QUERY["query"]]

    written = ingest(client, NEW_DOC)
    assert written.status_code == 201, written.text
    with psycopg.connect(db_url) as conn:
        new_ids = [
            r[0]
            for r in conn.execute(
                "select f.fragment_id from data.fragments f join data.documents d on d.doc_id = f.doc_id "
                "where d.path = 'runbooks/journal.md' and f.namespace = 'prose'"
            ).fetchall()
        ]
    assert new_ids
    # The serving generation's vector, and the retired one's (kept for a rollback).
    assert all(ids == {shadow, model_id(db_url, "prose", 1)} for ids in vectors_of(db_url, new_ids).values())
    assert services.following.follow_models() is False  # nothing changed since: no swap


def test_a_service_starts_with_the_active_generation_not_its_configuration(
    settings, db_url, logins, models, next_model
):
    with serving(settings, db_url, logins) as (client, token):
        client.headers["Authorization"] = f"Bearer {token}"
        assert ingest(client, DOCS).status_code == 201
    build_shadow(db_url, models, next_model)
    promote(db_url)
    local = settings.with_(database_url=db_url, service_database_url=login_url(db_url, logins["service"]))
    services = build_services(local, db_url)  # configured: the bundled MiniLM
    try:
        assert services.pipeline.embedders["prose"].name == next_model
        assert services.pipeline.embedders["code"].name == settings.code_model
        assert services.retriever.pipeline_info()["embedding_models"]["prose"] == "minilm-next"
    finally:
        services.close()


def test_a_promoted_model_that_is_not_on_this_machine_is_refused_clearly(client, db_url, models, next_model):
    assert ingest(client, DOCS).status_code == 201
    build_shadow(db_url, models, next_model)
    with psycopg.connect(db_url) as conn:
        conn.execute("update data.embedding_models set source = '/nowhere/minilm-next' where generation = 2")
    promote(db_url)
    with psycopg.connect(db_url) as conn, pytest.raises(ModelNotLoadable, match="not a model folder on this machine"):
        follow(models, serving_models(conn))
    body = problem(client.post("/contexts/retrieve", json=QUERY), 409)
    assert "served by minilm-next (generation 2)" in body["detail"]


def test_a_persona_description_set_during_the_window_survives_the_promotion(client, db_url, models, next_model):
    assert ingest(client, DOCS).status_code == 201
    with psycopg.connect(db_url) as conn:
        conn.execute("select service.ensure_scope('acme', null, 'sre')")
        conn.execute("select service.ensure_scope('acme', null, 'web')")
    # Set before the upgrade: the upgrade's backfill embeds it with the shadow.
    before = {"org_id": "acme", "persona_id": "web", "w_persona": 0.2, "description": "Pages and styles."}
    assert client.put("/profiles", json=before).status_code == 200
    shadow = build_shadow(db_url, models, next_model)
    # Set during the window: embedded with the active model and the shadow.
    during = {"org_id": "acme", "persona_id": "sre", "w_persona": 0.2, "description": "Alerts and incidents."}
    assert client.put("/profiles", json=during).status_code == 200

    def persona_models() -> dict[str, set[int]]:
        with psycopg.connect(db_url) as conn:
            rows = conn.execute("select persona_id, model_id, description from data.persona_vectors").fetchall()
        assert {d for _p, _m, d in rows} == {before["description"], during["description"]}
        out: dict[str, set[int]] = {}
        for persona_id, model_id, _d in rows:
            out.setdefault(persona_id, set()).add(model_id)
        return out

    every = {model_id(db_url, "prose", 1), model_id(db_url, "code", 1), shadow}
    assert persona_models() == {"web": every, "sre": every}
    promote(db_url)
    # After the promotion, setting it again writes the active generations and the
    # retired one still within its window.
    assert client.put("/profiles", json=during | {"w_persona": 0.3}).status_code == 200
    assert persona_models() == {"web": every, "sre": every}
    with psycopg.connect(db_url) as conn:
        (persona_term,) = conn.execute(
            "select count(*) from data.persona_vectors v join data.embedding_models em using (model_id) "
            "where em.status = 'active' and em.namespace = 'prose'"
        ).fetchone()
    assert persona_term == 2  # both personas keep their evidence under the promoted model


def test_the_service_drops_retired_generations_whose_window_ended_never_the_serving_one(
    settings, db_url, logins, models, next_model
):
    with serving(settings, db_url, logins, model_check_s=0.2) as (client, token):
        client.headers["Authorization"] = f"Bearer {token}"
        assert ingest(client, DOCS).status_code == 201
        services = client.app.state.services
        shadow = build_shadow(db_url, models, next_model)
        promote(db_url)
        assert services.following.drop_retired_models() == []  # within the window: kept
        with psycopg.connect(db_url) as conn:  # the window has ended, for both generations' rows
            conn.execute("update data.embedding_models set window_ends_at = now() - interval '1 day'")

        async def run_worker() -> None:
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(model_worker(services), 1.5)

        asyncio.run(run_worker())  # drops at start, and follows the promotion within 0.2 s
        assert services.pipeline.embedders["prose"].name == next_model  # the periodic check followed too
        with psycopg.connect(db_url) as conn:
            rows = {
                r[0]: r[1:]
                for r in conn.execute(
                    "select generation, status, dropped_at is not null, "
                    "(select count(*) from data.embeddings e where e.model_id = em.model_id) "
                    "from data.embedding_models em where namespace = 'prose'"
                ).fetchall()
            }
            indexes = {r[0] for r in conn.execute("select indexname from pg_indexes where schemaname = 'data'")}
        assert rows[1][:2] == ("retired", True) and rows[1][2] == 0
        assert rows[2][:2] == ("active", False) and rows[2][2] > 0  # the serving generation stays
        assert (
            f"embeddings_hnsw_model_{model_id(db_url, 'prose', 1)}" not in indexes
            and f"embeddings_hnsw_model_{shadow}" in indexes
        )
        assert client.post("/contexts/retrieve", json=QUERY).status_code == 200
        assert services.following.drop_retired_models() == []  # dropped once
