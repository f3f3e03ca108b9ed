"""The principal of the caller's key and the scopes it may read, so an
agent learns its org (every other call names it) without being told (GET /whoami, the MCP tool `whoami`)."""

from __future__ import annotations

import msgspec
from psycopg.rows import dict_row

from app.operations.services import Services
from app.wire.bodies import WhoamiOut


async def whoami(services: Services, token: str) -> WhoamiOut:
    """GET /whoami and the MCP tool `whoami`."""

    def run() -> WhoamiOut:
        with services.auth.acting_for(token) as conn, conn.cursor(row_factory=dict_row) as cur:
            row = cur.execute("select * from api.whoami()").fetchone()
        return msgspec.convert(row, WhoamiOut)

    return await services.runtime.read(run)
