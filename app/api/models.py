"""GET /models: embedding model generations, their coverage and replay overlap, for
principals with an org grant (docs/adr/0021). Upgrades are long work: they run from the
CLI (`contexts models upgrade`), not over HTTP."""

from __future__ import annotations

from litestar import get
from litestar.datastructures import State
from litestar.di import NamedDependency

from app.api.openapi import problems
from app.operations.models import list_models
from app.wire.bodies import ModelGenerationList


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
    return await list_models(state.services, token)
