"""/repos/{repo_id}/sync: the last git sync of a repo (`contexts sync`, docs/sync.md).
The sync itself runs where the work tree is, through the CLI: the service does not read
the server's disk. Reading follows the repo's read rule (row-level security on
data.git_syncs)."""

from __future__ import annotations

from typing import Annotated

import msgspec
import psycopg
from litestar import Controller, get
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.exceptions import NotFoundException
from litestar.params import Parameter
from psycopg.rows import dict_row

from app.api.openapi import problems
from app.api.state import Services
from app.wire.bodies import IDENTIFIER_PATTERN, SyncState

Identifier = Annotated[str, Parameter(pattern=IDENTIFIER_PATTERN, min_length=1, max_length=128)]


def sync_state_on(conn: psycopg.Connection, org_id: str, repo_id: str) -> SyncState | None:
    """api.sync_state in the caller's transaction; None when the repo was never synced."""
    with conn.cursor(row_factory=dict_row) as cur:
        row = cur.execute("select * from api.sync_state(%s, %s)", (org_id, repo_id)).fetchone()
    return None if row is None else msgspec.convert(row, SyncState)


class SyncController(Controller):
    path = "/repos/{repo_id:str}/sync"
    tags = ["sync"]

    @get("/", summary="The last git sync of a repo", responses=problems(400, 401, 403, 404, 503))
    async def sync_state(
        self, state: State, token: NamedDependency[str], repo_id: Identifier, org_id: Identifier
    ) -> SyncState:
        """The commit the repo's synced documents hold, its branch, when and by whom it
        was synced, and what that sync wrote and deleted. An unknown repo, or one never
        synced, is a 404; a repo outside your grants a 403."""
        services: Services = state.services

        def run() -> SyncState | None:
            with services.acting_for(token) as conn:
                return sync_state_on(conn, org_id, repo_id)

        found = await services.read(run)
        if found is None:
            raise NotFoundException(f"repo {repo_id} was never synced")
        return found
