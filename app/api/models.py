"""GET /models: embedding model generations, their coverage and replay overlap, for
principals with an org grant (docs/adr/0021). Upgrades are long work: they run from the
CLI (`contexts models upgrade`), not over HTTP."""

from __future__ import annotations

import msgspec
from litestar import get
from litestar.datastructures import State
from litestar.di import NamedDependency
from psycopg.rows import dict_row

from app.api.openapi import problems
from app.api.state import Services
from app.wire.bodies import ModelGenerationList, ModelGenerationOut

COLUMNS = (
    "model_id, namespace, name, dims, generation, status, created_at, window_ends_at, promoted_at, retired_at,"
    " dropped_at, fragments, vectors, replays, mean_overlap, min_overlap"
)


@get(
    "/models",
    tags=["models"],
    summary="Embedding model generations and their coverage",
    responses=problems(401, 403, 503),
)
async def models_handler(state: State, token: NamedDependency[str]) -> ModelGenerationList:
    """Every generation of every namespace: status (active, shadow, retired), shadow
    window, coverage of the caller's org (vectors over active fragments) and the mean
    top-3 overlap of its replays. Needs an org grant (403 otherwise)."""
    services: Services = state.services

    def run() -> ModelGenerationList:
        with services.acting_for(token) as conn, conn.cursor(row_factory=dict_row) as cur:
            rows = cur.execute(f"select {COLUMNS} from api.model_generations()").fetchall()
        return ModelGenerationList([msgspec.convert(r, ModelGenerationOut) for r in rows])

    return await services.read(run)
