"""GET /whoami: the principal of the caller's key and the scopes it may read, so an
agent learns its org (every other call names it) without being told (app.operations.whoami)."""

from __future__ import annotations

from litestar import get
from litestar.datastructures import State
from litestar.di import NamedDependency

from app.api.openapi import problems
from app.operations.whoami import whoami
from app.wire.bodies import WhoamiOut


@get("/whoami", tags=["access"], summary="The key's principal and read grants", responses=problems(401, 503))
async def whoami_handler(state: State, token: NamedDependency[str]) -> WhoamiOut:
    """The org and principal of the API key, and the scopes it may read."""
    return await whoami(state.services, token)
