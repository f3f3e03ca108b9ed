"""Embedding model generations, their coverage and replay overlap, for principals with an
org grant (docs/adr/0021; GET /models). Upgrades are long work: they run from the CLI
(`contexts models upgrade`), not as a request."""

from __future__ import annotations

import msgspec
from psycopg.rows import dict_row

from app.operations.services import Services
from app.wire.bodies import ModelGenerationList, ModelGenerationOut

COLUMNS = (
    "model_id, namespace, name, dims, generation, status, created_at, window_ends_at, promoted_at, retired_at,"
    " dropped_at, fragments, vectors, replays, mean_overlap, min_overlap"
)


async def list_models(services: Services, token: str) -> ModelGenerationList:
    """GET /models: every generation of every namespace (403 without an org grant)."""

    def run() -> ModelGenerationList:
        with services.auth.acting_for(token) as conn, conn.cursor(row_factory=dict_row) as cur:
            rows = cur.execute(f"select {COLUMNS} from api.model_generations()").fetchall()
        return ModelGenerationList([msgspec.convert(r, ModelGenerationOut) for r in rows])

    return await services.runtime.read(run)
