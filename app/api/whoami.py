"""GET /whoami: the principal of the caller's key and the scopes it may read, so an
agent learns its org (every other call names it) without being told."""

from __future__ import annotations

import msgspec
from litestar import get
from litestar.datastructures import State
from litestar.di import NamedDependency
from psycopg.rows import dict_row

from app.api.openapi import problems
from app.api.state import Services
from app.wire.bodies import WhoamiOut


@get("/whoami", tags=["access"], summary="The key's principal and read grants", responses=problems(401, 503))
async def whoami_handler(state: State, token: NamedDependency[str]) -> WhoamiOut:
    """The org and principal of the API key, and the scopes it may read."""
    return await whoami(state.services, token)


async def whoami(services: Services, token: str) -> WhoamiOut:
    """GET /whoami and the MCP tool `whoami`."""

    def run() -> WhoamiOut:
        with services.acting_for(token) as conn, conn.cursor(row_factory=dict_row) as cur:
            row = cur.execute("select * from api.whoami()").fetchone()
        return msgspec.convert(row, WhoamiOut)

    return await services.read(run)
