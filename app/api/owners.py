"""Owners and staleness nudges (R-DOC-3, docs/owners.md): an owner's stale fragments,
bulk reassignment, and the org's nudge webhook: the HTTP controller of
app.operations.owners."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, delete, get, post, put
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.params import JSONBody, Parameter

from app.api.openapi import BODY_ERRORS, problems
from app.operations import owners as operations
from app.wire.bodies import (
    IDENTIFIER_PATTERN,
    NudgeList,
    OwnersReassign,
    OwnersReassigned,
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
        return await operations.stale_fragments(
            state.services, token, org_id, owner, min_retrievals, window_days, stale_after_days
        )

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
        return await operations.stale_fragments(
            state.services, token, org_id, owner, min_retrievals, window_days, stale_after_days
        )

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
        return await operations.reassign(state.services, token, data)

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
        return await operations.set_webhook(state.services, token, org_id, data)

    @get("/orgs/{org_id:str}/webhook", summary="The org's nudge webhook", responses=problems(400, 401, 403, 404, 503))
    async def webhook_get(self, org_id: OrgId, state: State, token: NamedDependency[str]) -> WebhookOut:
        """URL, whether a secret is set, enabled; never the secret. Needs an org write grant."""
        return await operations.get_webhook(state.services, token, org_id)

    @delete(
        "/orgs/{org_id:str}/webhook",
        status_code=200,
        summary="Remove the org's nudge webhook",
        responses=problems(400, 401, 403, 404, 503),
    )
    async def webhook_delete(self, org_id: OrgId, state: State, token: NamedDependency[str]) -> WebhookOut:
        """Nudges still owed stay queued for the next webhook. Needs an org write grant."""
        return await operations.delete_webhook(state.services, token, org_id)
