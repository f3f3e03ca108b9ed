"""/profiles: ranking profiles, the blend's weights and freshness half-lives of an org
(its default) or of a persona (docs/adr/0014). Setting one needs a write grant on the
org or the persona; reading follows the read rule. Each function here is what the HTTP
endpoint runs, and what `contexts profile` runs on the database."""

from __future__ import annotations

import json
from typing import Annotated

import msgspec
import psycopg
from litestar import Controller, delete, get, put
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.params import JSONBody, Parameter
from psycopg.rows import dict_row

from app.api.openapi import BODY_ERRORS, problems
from app.api.request_log import note
from app.api.state import Services
from app.ingest.pipeline import IngestPipeline
from app.text.embed import Embedder
from app.wire.bodies import IDENTIFIER_PATTERN, RankingProfileList, RankingProfileOut, RankingProfileSet

OrgId = Annotated[str, Parameter(pattern=IDENTIFIER_PATTERN, min_length=1, max_length=128)]
PersonaId = Annotated[
    str | None,
    Parameter(pattern=IDENTIFIER_PATTERN, min_length=1, max_length=128, description="None: the org default"),
]
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
    """api.ranking_profile_set in the caller's transaction (bound to a principal), then
    api.persona_vectors_set with `vectors` (description_vectors) when there are any.
    With `pipeline`, the description is embedded for the other live generations too (a
    shadow window, docs/adr/0021), so a promotion or a rollback keeps the persona term."""
    (row,) = _rows(
        conn,
        f"select {COLUMNS} from api.ranking_profile_set(%s, %s, %s, %s, %s, %s, %s, %s::jsonb, %s)",
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
            "select api.persona_vectors_set(%s, %s, %s, %s::jsonb)",
            (data.org_id, data.persona_id, data.description, json.dumps(payload)),
        )
    return row


def get_profile_on(conn: psycopg.Connection, org_id: str, persona_id: str | None) -> RankingProfileOut:
    (row,) = _rows(conn, f"select {COLUMNS} from api.ranking_profile(%s, %s)", (org_id, persona_id))
    return row


def list_profiles_on(conn: psycopg.Connection, org_id: str) -> RankingProfileList:
    return RankingProfileList(_rows(conn, f"select {COLUMNS} from api.ranking_profiles(%s)", (org_id,)))


def delete_profile_on(conn: psycopg.Connection, org_id: str, persona_id: str | None) -> RankingProfileOut:
    (row,) = _rows(conn, f"select {COLUMNS} from api.ranking_profile_delete(%s, %s)", (org_id, persona_id))
    return row


class ProfilesController(Controller):
    path = "/profiles"
    tags = ["profiles"]

    @put("/", summary="Set the ranking profile of an org or persona", responses=problems(*BODY_ERRORS, 404))
    async def set_profile(
        self, data: JSONBody[RankingProfileSet], state: State, token: NamedDependency[str]
    ) -> RankingProfileOut:
        """Replaces the profile stored for `org_id` (no `persona_id`: the org default;
        a write grant on the org) or for `persona_id` (a write grant on the persona):
        the weights of the blended score and the freshness half-life per document kind.
        A persona's `description` is embedded with each namespace's model and counts as
        evidence of what the persona cares about (the persona term). What it leaves out
        inherits. Negative weights, weights in effect all 0, or a
        half-life <= 0 are a 400; an unknown persona a 404."""
        services: Services = state.services
        note(persona=data.persona_id)

        def run() -> RankingProfileOut:
            vectors = description_vectors(services.pipeline.embedders, data)
            with services.acting_for(token, write=True) as conn:
                return set_profile_on(conn, data, vectors, services.pipeline)

        return await services.write(run)

    @get("/", summary="List the stored ranking profiles", responses=problems(400, 401, 403, 404, 503))
    async def list_profiles(self, state: State, token: NamedDependency[str], org_id: OrgId) -> RankingProfileList:
        """The org default and the persona profiles you may read, each with the
        profile in effect."""
        services: Services = state.services

        def run() -> RankingProfileList:
            with services.acting_for(token) as conn:
                return list_profiles_on(conn, org_id)

        return await services.read(run)

    @get("/effective", summary="The ranking profile a scope uses", responses=problems(400, 401, 403, 404, 503))
    async def effective(
        self, state: State, token: NamedDependency[str], org_id: OrgId, persona_id: PersonaId = None
    ) -> RankingProfileOut:
        """What is stored for the org default (or `persona_id`), and the profile a
        retrieval there uses (`effective`: persona, else org default, else built-in)."""
        services: Services = state.services

        def run() -> RankingProfileOut:
            with services.acting_for(token) as conn:
                return get_profile_on(conn, org_id, persona_id)

        return await services.read(run)

    @delete("/", status_code=200, summary="Remove a ranking profile", responses=problems(400, 401, 403, 404, 503))
    async def remove(
        self, state: State, token: NamedDependency[str], org_id: OrgId, persona_id: PersonaId = None
    ) -> RankingProfileOut:
        """The scope inherits again. Needs the same write grant as setting it (403);
        no stored profile there is a 404."""
        services: Services = state.services

        def run() -> RankingProfileOut:
            with services.acting_for(token, write=True) as conn:
                return delete_profile_on(conn, org_id, persona_id)

        return await services.write(run)
