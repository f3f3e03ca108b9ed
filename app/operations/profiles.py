"""Ranking profiles, the blend's weights and freshness half-lives of an org
(its default) or of a persona (docs/adr/0014). Setting one needs a write grant on the
org or the persona; reading follows the read rule. Each function here is what the HTTP
endpoint runs, and what `contexts profile` runs on the database."""

from __future__ import annotations

import json

import msgspec
import psycopg
from psycopg.rows import dict_row

from app.ingest.pipeline import IngestPipeline
from app.operations.log_fields import note
from app.operations.services import Services
from app.text.embed import Embedder
from app.wire.bodies import RankingProfileList, RankingProfileOut, RankingProfileSet

COLUMNS = (
    "org_id, persona_id, w_rerank, w_freshness, w_authority, w_pinned, w_persona, halflife_days, description,"
    " updated_by, updated_at, effective"
)


def _rows(conn: psycopg.Connection, sql: str, args: tuple) -> list[RankingProfileOut]:
    with conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(sql, args).fetchall()
    return [msgspec.convert(row, RankingProfileOut) for row in rows]


def has_description(data: RankingProfileSet) -> bool:
    """A persona profile with a description: what description_vectors embeds (the CLI
    asks first, so that it loads the models only then)."""
    return data.persona_id is not None and bool((data.description or "").strip())


def description_vectors(embedders: dict[str, Embedder], data: RankingProfileSet) -> dict[str, list[float]] | None:
    """A persona profile's description embedded with each namespace's model, as its
    fragments are: evidence of what the persona cares about (docs/adr/0014). None for
    the org default or without a description. Computed before a connection is taken;
    namespaces sharing a model share one call."""
    if not has_description(data):
        return None
    assert data.description is not None
    by_model: dict[str, list[float]] = {}
    for e in embedders.values():
        if e.name not in by_model:
            by_model[e.name] = e.embed([data.description])[0]
    return {namespace: by_model[e.name] for namespace, e in embedders.items()}


def generation_vectors(conn: psycopg.Connection, pipeline: IngestPipeline, description: str) -> dict[str, list[float]]:
    """The description embedded with each live generation besides the active ones,
    keyed by model id (empty outside an upgrade's window)."""
    out: dict[str, list[float]] = {}
    for generations in pipeline.secondary_models(conn).values():
        for model_id, embedder in generations:
            if str(model_id) not in out:
                out[str(model_id)] = embedder.embed([description])[0]
    return out


def set_profile_on(
    conn: psycopg.Connection,
    data: RankingProfileSet,
    vectors: dict[str, list[float]] | None = None,
    pipeline: IngestPipeline | None = None,
) -> RankingProfileOut:
    """service.ranking_profile_set in the caller's transaction (bound to a principal), then
    service.persona_vectors_set with `vectors` (description_vectors) when there are any.
    With `pipeline`, the description is embedded for the other live generations too (a
    shadow window, docs/adr/0021), so a promotion or a rollback keeps the persona term."""
    (row,) = _rows(
        conn,
        f"select {COLUMNS} from service.ranking_profile_set(%s, %s, %s, %s, %s, %s, %s, %s::jsonb, %s)",
        (
            data.org_id,
            data.persona_id,
            data.w_rerank,
            data.w_freshness,
            data.w_authority,
            data.w_pinned,
            data.w_persona,
            json.dumps(data.halflife_days),
            data.description,
        ),
    )
    if vectors:
        payload: dict[str, object] = dict(vectors)
        if pipeline is not None and data.description:
            payload["_generations"] = generation_vectors(conn, pipeline, data.description)
        conn.execute(
            "select service.persona_vectors_set(%s, %s, %s, %s::jsonb)",
            (data.org_id, data.persona_id, data.description, json.dumps(payload)),
        )
    return row


def get_profile_on(conn: psycopg.Connection, org_id: str, persona_id: str | None) -> RankingProfileOut:
    (row,) = _rows(conn, f"select {COLUMNS} from api.ranking_profile(%s, %s)", (org_id, persona_id))
    return row


def list_profiles_on(conn: psycopg.Connection, org_id: str) -> RankingProfileList:
    return RankingProfileList(_rows(conn, f"select {COLUMNS} from api.ranking_profiles(%s)", (org_id,)))


def delete_profile_on(conn: psycopg.Connection, org_id: str, persona_id: str | None) -> RankingProfileOut:
    (row,) = _rows(conn, f"select {COLUMNS} from service.ranking_profile_delete(%s, %s)", (org_id, persona_id))
    return row


async def set_profile(services: Services, token: str, data: RankingProfileSet) -> RankingProfileOut:
    """PUT /profiles: a persona's description is embedded on the write thread, before
    the transaction."""
    note(persona=data.persona_id)

    def run() -> RankingProfileOut:
        vectors = description_vectors(services.pipeline.embedders, data)
        with services.auth.acting_for(token, write=True) as conn:
            return set_profile_on(conn, data, vectors, services.pipeline)

    return await services.runtime.write(run)


async def list_profiles(services: Services, token: str, org_id: str) -> RankingProfileList:
    """GET /profiles."""

    def run() -> RankingProfileList:
        with services.auth.acting_for(token) as conn:
            return list_profiles_on(conn, org_id)

    return await services.runtime.read(run)


async def get_profile(services: Services, token: str, org_id: str, persona_id: str | None) -> RankingProfileOut:
    """GET /profiles/effective."""

    def run() -> RankingProfileOut:
        with services.auth.acting_for(token) as conn:
            return get_profile_on(conn, org_id, persona_id)

    return await services.runtime.read(run)


async def delete_profile(services: Services, token: str, org_id: str, persona_id: str | None) -> RankingProfileOut:
    """DELETE /profiles."""

    def run() -> RankingProfileOut:
        with services.auth.acting_for(token, write=True) as conn:
            return delete_profile_on(conn, org_id, persona_id)

    return await services.runtime.write(run)
