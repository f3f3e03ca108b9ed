"""Owners and staleness nudges (R-DOC-3, docs/owners.md): an owner's stale fragments,
bulk reassignment, and the org's nudge webhook. Each function here is what the HTTP
endpoint runs and what `contexts stale | owners | webhook` runs on the database."""

from __future__ import annotations

from typing import Annotated

import psycopg
from litestar import Controller, delete, get, post, put
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.params import JSONBody, Parameter
from psycopg.rows import class_row

from app.api.openapi import BODY_ERRORS, problems
from app.api.state import Services
from app.wire.bodies import (
    IDENTIFIER_PATTERN,
    NudgeList,
    OwnersReassign,
    OwnersReassigned,
    StaleFragment,
    WebhookIn,
    WebhookOut,
)

OwnerName = Annotated[str, Parameter(min_length=1, max_length=256, pattern=r"^[^\x00-\x1f\x7f]+$")]
OrgId = Annotated[str, Parameter(pattern=IDENTIFIER_PATTERN, min_length=1, max_length=128)]
ReadOrgId = Annotated[
    str | None,
    Parameter(
        pattern=IDENTIFIER_PATTERN,
        min_length=1,
        max_length=128,
        description="The org to read (default: your key's); another org's is a 403, an empty value a 400",
    ),
]
MinRetrievals = Annotated[
    int | None, Parameter(ge=1, le=1_000_000, description="Retrievals in the window; default: the org's")
]
WindowDays = Annotated[
    int | None, Parameter(ge=1, le=36_500, description="Days of retrievals counted; default: the org's")
]
StaleAfterDays = Annotated[
    int | None, Parameter(ge=1, le=36_500, description="Days since the text was edited; default: the org's (182)")
]

STALE_COLUMNS = ", ".join(StaleFragment.__struct_fields__)


def stale_on(
    conn: psycopg.Connection,
    org_id: str | None,
    owner: str | None,
    min_retrievals: int | None = None,
    window_days: int | None = None,
    stale_after_days: int | None = None,
) -> NudgeList:
    """api.stale_fragments for the bound principal (its own org when none is given)."""
    if org_id is None:
        row = conn.execute("select org_id from api.whoami()").fetchone()
        org_id = row[0] if row else None
    settings = conn.execute(
        "select window_days, min_retrievals, stale_after_days from api.owner_settings(%s)", (org_id,)
    ).fetchone()
    assert settings is not None  # api.owner_settings raises for an org the caller may not read
    with conn.cursor(row_factory=class_row(StaleFragment)) as cur:
        rows = cur.execute(
            f"select {STALE_COLUMNS} from api.stale_fragments(%s, %s, %s, %s, %s)",
            (org_id, owner, min_retrievals, window_days, stale_after_days),
        ).fetchall()
    window, least, after = settings
    return NudgeList(
        org_id=org_id or "",
        owner=owner,
        window_days=window_days or window,
        min_retrievals=min_retrievals or least,
        stale_after_days=stale_after_days if stale_after_days is not None else after,
        nudges=rows,
    )


def reassign_on(conn: psycopg.Connection, data: OwnersReassign) -> OwnersReassigned:
    with conn.cursor(row_factory=class_row(OwnersReassigned)) as cur:
        row = cur.execute(
            "select * from api.owners_reassign(%s, %s, %s, %s, %s)",
            (data.org_id, data.from_owner, data.to_owner, data.repo_id, data.path_prefix),
        ).fetchone()
    assert row is not None
    return row


def webhook_set_on(conn: psycopg.Connection, org_id: str, data: WebhookIn) -> WebhookOut:
    with conn.cursor(row_factory=class_row(WebhookOut)) as cur:
        row = cur.execute(
            "select * from api.webhook_set(%s, %s, %s, %s)", (org_id, data.url, data.secret, data.enabled)
        ).fetchone()
    assert row is not None
    return row


def webhook_get_on(conn: psycopg.Connection, org_id: str, remove: bool = False) -> WebhookOut:
    function = "api.webhook_delete" if remove else "api.webhook_get"
    with conn.cursor(row_factory=class_row(WebhookOut)) as cur:
        row = cur.execute(f"select * from {function}(%s)", (org_id,)).fetchone()
    assert row is not None  # both raise P0002 when the org has no webhook
    return row


class OwnersController(Controller):
    tags = ["owners"]

    @get(
        "/owners/{owner:str}/nudges",
        summary="An owner's stale fragments",
        responses=problems(400, 401, 403, 404, 503),
    )
    async def nudges(
        self,
        owner: OwnerName,
        state: State,
        token: NamedDependency[str],
        org_id: ReadOrgId = None,
        min_retrievals: MinRetrievals = None,
        window_days: WindowDays = None,
        stale_after_days: StaleAfterDays = None,
    ) -> NudgeList:
        """The fragments of `owner` (in `org_id`, by default your key's org) that
        retrievals return often but whose text has not been edited for long: at least
        `min_retrievals` retrievals within `window_days`, text older than
        `stale_after_days` (each the org's setting unless given). Only fragments you may
        read; most retrieved first."""
        return await _read(state.services, token, org_id, owner, min_retrievals, window_days, stale_after_days)

    @get("/stale", summary="Stale fragments of every owner", responses=problems(400, 401, 403, 404, 503))
    async def stale(
        self,
        state: State,
        token: NamedDependency[str],
        org_id: ReadOrgId = None,
        owner: Annotated[str | None, Parameter(min_length=1, max_length=256, pattern=r"^[^\x00-\x1f\x7f]+$")] = None,
        min_retrievals: MinRetrievals = None,
        window_days: WindowDays = None,
        stale_after_days: StaleAfterDays = None,
    ) -> NudgeList:
        """As GET /owners/{owner}/nudges, for every owner (or the one given)."""
        return await _read(state.services, token, org_id, owner, min_retrievals, window_days, stale_after_days)

    @post(
        "/owners/reassign",
        status_code=200,
        summary="Reassign ownership in bulk",
        responses=problems(*BODY_ERRORS, 404, 409),
    )
    async def reassign(
        self, data: JSONBody[OwnersReassign], state: State, token: NamedDependency[str]
    ) -> OwnersReassigned:
        """Documents owned by `from_owner` (in `repo_id`, under `path_prefix`, when given)
        and the fragments they hold pass to `to_owner`. Needs a write grant on the repo
        (an org write grant without one). No document version is written; the move is
        audited (data.owner_reassignments)."""
        services: Services = state.services

        def run(wait_s: float) -> OwnersReassigned:
            with services.writing_for(token, data.org_id, wait_s) as conn:
                return reassign_on(conn, data)

        # It takes the org's write lock, as ingestion does: the same bounded turn.
        async with services.org_turn(data.org_id) as wait_s:
            return await services.write(run, wait_s)

    @put(
        "/orgs/{org_id:str}/webhook",
        summary="Set the org's nudge webhook",
        responses=problems(*BODY_ERRORS, 404, 409),
    )
    async def webhook_set(
        self, org_id: OrgId, data: JSONBody[WebhookIn], state: State, token: NamedDependency[str]
    ) -> WebhookOut:
        """Stale fragments of the org are POSTed there, one nudge per fragment and period,
        at least once (retried with backoff until a 2xx), signed with `secret`
        (`X-Contexts-Signature: sha256=<hex HMAC-SHA256 of the body>`). http or https, no
        credentials in the URL. Needs an org write grant. The secret is never returned."""
        services: Services = state.services

        def run() -> WebhookOut:
            with services.acting_for(token, write=True) as conn:
                return webhook_set_on(conn, org_id, data)

        return await services.write(run)

    @get("/orgs/{org_id:str}/webhook", summary="The org's nudge webhook", responses=problems(400, 401, 403, 404, 503))
    async def webhook_get(self, org_id: OrgId, state: State, token: NamedDependency[str]) -> WebhookOut:
        """URL, whether a secret is set, enabled; never the secret. Needs an org write grant."""
        services: Services = state.services

        def run() -> WebhookOut:
            with services.acting_for(token) as conn:
                return webhook_get_on(conn, org_id)

        return await services.read(run)

    @delete(
        "/orgs/{org_id:str}/webhook",
        status_code=200,
        summary="Remove the org's nudge webhook",
        responses=problems(400, 401, 403, 404, 503),
    )
    async def webhook_delete(self, org_id: OrgId, state: State, token: NamedDependency[str]) -> WebhookOut:
        """Nudges still owed stay queued for the next webhook. Needs an org write grant."""
        services: Services = state.services

        def run() -> WebhookOut:
            with services.acting_for(token, write=True) as conn:
                return webhook_get_on(conn, org_id, remove=True)

        return await services.write(run)


async def _read(
    services: Services,
    token: str,
    org_id: str | None,
    owner: str | None,
    min_retrievals: int | None,
    window_days: int | None,
    stale_after_days: int | None,
) -> NudgeList:
    def run() -> NudgeList:
        with services.acting_for(token) as conn:
            return stale_on(conn, org_id, owner, min_retrievals, window_days, stale_after_days)

    return await services.read(run)
