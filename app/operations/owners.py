"""Owners and staleness nudges (R-DOC-3, docs/owners.md): an owner's stale fragments,
bulk reassignment, and the org's nudge webhook. Each function here is what the HTTP
endpoint runs (app.api.owners) and what `contexts stale | owners | webhook` runs on the database."""

from __future__ import annotations

import psycopg
from psycopg.rows import class_row

from app.operations.errors import Invalid
from app.operations.services import Services
from app.webhook_targets import refusal
from app.wire.bodies import (
    NudgeList,
    OwnersReassign,
    OwnersReassigned,
    StaleFragment,
    WebhookIn,
    WebhookOut,
)

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
            "select * from service.owners_reassign(%s, %s, %s, %s, %s)",
            (data.org_id, data.from_owner, data.to_owner, data.repo_id, data.path_prefix),
        ).fetchone()
    assert row is not None
    return row


def webhook_set_on(conn: psycopg.Connection, org_id: str, data: WebhookIn, allow_private: bool = False) -> WebhookOut:
    """Set the org's webhook; one whose host resolves to a loopback, private or
    link-local address is refused unless the operator allows those (app.webhook_targets).
    The address is looked at after SQL has checked the write grant and the URL's form
    (the raise rolls the caller's transaction back): a caller who may not set the
    webhook learns nothing of what a name resolves to."""
    with conn.cursor(row_factory=class_row(WebhookOut)) as cur:
        row = cur.execute(
            "select * from service.webhook_set(%s, %s, %s, %s)", (org_id, data.url, data.secret, data.enabled)
        ).fetchone()
    assert row is not None
    problem = refusal(data.url, allow_private)
    if problem is not None:
        raise Invalid(problem)
    return row


def webhook_get_on(conn: psycopg.Connection, org_id: str, remove: bool = False) -> WebhookOut:
    function = "service.webhook_delete" if remove else "service.webhook_get"
    with conn.cursor(row_factory=class_row(WebhookOut)) as cur:
        row = cur.execute(f"select * from {function}(%s)", (org_id,)).fetchone()
    assert row is not None  # both raise P0002 when the org has no webhook
    return row


async def stale_fragments(
    services: Services,
    token: str,
    org_id: str | None,
    owner: str | None,
    min_retrievals: int | None,
    window_days: int | None,
    stale_after_days: int | None,
) -> NudgeList:
    """GET /owners/{owner}/nudges and GET /stale."""

    def run() -> NudgeList:
        with services.auth.acting_for(token) as conn:
            return stale_on(conn, org_id, owner, min_retrievals, window_days, stale_after_days)

    return await services.runtime.read(run)


async def reassign(services: Services, token: str, data: OwnersReassign) -> OwnersReassigned:
    """POST /owners/reassign: it takes the org's write lock, as ingestion does, in the
    same bounded turn (Runtime.org_turn)."""

    def run(wait_s: float) -> OwnersReassigned:
        with services.auth.writing_for(token, data.org_id, wait_s) as conn:
            return reassign_on(conn, data)

    async with services.runtime.org_turn(data.org_id) as wait_s:
        return await services.runtime.write(run, wait_s)


async def set_webhook(services: Services, token: str, org_id: str, data: WebhookIn) -> WebhookOut:
    """PUT /orgs/{org_id}/webhook."""

    def run() -> WebhookOut:
        with services.auth.acting_for(token, write=True) as conn:
            return webhook_set_on(conn, org_id, data, services.settings.webhook_allow_private)

    return await services.runtime.write(run)


async def get_webhook(services: Services, token: str, org_id: str) -> WebhookOut:
    """GET /orgs/{org_id}/webhook."""

    def run() -> WebhookOut:
        with services.auth.acting_for(token) as conn:
            return webhook_get_on(conn, org_id)

    return await services.runtime.read(run)


async def delete_webhook(services: Services, token: str, org_id: str) -> WebhookOut:
    """DELETE /orgs/{org_id}/webhook."""

    def run() -> WebhookOut:
        with services.auth.acting_for(token, write=True) as conn:
            return webhook_get_on(conn, org_id, remove=True)

    return await services.runtime.write(run)
