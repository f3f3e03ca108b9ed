"""The last git sync of a repo (GET /repos/{repo_id}/sync; `contexts sync`, docs/sync.md).
The sync itself runs where the work tree is, through the CLI: the service does not read
the server's disk. Reading follows the repo's read rule (row-level security on
data.git_syncs)."""

from __future__ import annotations

import msgspec
import psycopg
from psycopg.rows import dict_row

from app.operations.errors import NotFound
from app.operations.services import Services
from app.wire.bodies import SyncState


def sync_state_on(conn: psycopg.Connection, org_id: str, repo_id: str) -> SyncState | None:
    """api.sync_state in the caller's transaction; None when the repo was never synced."""
    with conn.cursor(row_factory=dict_row) as cur:
        row = cur.execute("select * from api.sync_state(%s, %s)", (org_id, repo_id)).fetchone()
    return None if row is None else msgspec.convert(row, SyncState)


async def sync_state(services: Services, token: str, org_id: str, repo_id: str) -> SyncState:
    """GET /repos/{repo_id}/sync: a repo never synced (or unknown) is a 404."""

    def run() -> SyncState | None:
        with services.auth.acting_for(token) as conn:
            return sync_state_on(conn, org_id, repo_id)

    found = await services.runtime.read(run)
    if found is None:
        raise NotFound(f"repo {repo_id} was never synced")
    return found
