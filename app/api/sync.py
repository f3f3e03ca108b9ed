"""/repos/{repo_id}/sync: the last git sync of a repo (`contexts sync`, docs/sync.md); and
/sync?repo_id=, the same for a repo whose id holds a `/` (`acme/payments`), which no path
segment can name (the server decodes `%2F` before routing).
The sync itself runs where the work tree is, through the CLI: the service does not read
the server's disk. Reading follows the repo's read rule (row-level security on
data.git_syncs)."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, get
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.params import Parameter

from app.api.openapi import problems
from app.operations.sync import sync_state
from app.wire.bodies import IDENTIFIER_PATTERN, SyncState

Identifier = Annotated[str, Parameter(pattern=IDENTIFIER_PATTERN, min_length=1, max_length=128)]


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
        return await sync_state(state.services, token, org_id, repo_id)


@get(
    "/sync",
    summary="The last git sync of a repo named in the query",
    tags=["sync"],
    responses=problems(400, 401, 403, 404, 503),
)
async def sync_state_by_query(
    state: State, token: NamedDependency[str], org_id: Identifier, repo_id: Identifier
) -> SyncState:
    """As GET /repos/{repo_id}/sync, for any repo id, a `/` in it included."""
    return await sync_state(state.services, token, org_id, repo_id)
