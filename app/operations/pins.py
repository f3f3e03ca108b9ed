"""Manual pins. A principal with a write grant on a scope pins a fragment there;
every retrieval (and session pack) that sees that scope composes it first, whatever its
relevance (docs/adr/0012). Each function here is what the HTTP endpoint and the MCP tool
of the same purpose run, and what `contexts pin` runs on the database."""

from __future__ import annotations

import psycopg
from psycopg.rows import class_row

from app.operations.log_fields import note
from app.operations.services import Services
from app.wire.bodies import PinCreate, PinList, PinOut, PinQuery


def add_pin_on(conn: psycopg.Connection, data: PinCreate) -> PinOut:
    """service.pin_add in the caller's transaction (bound to a principal)."""
    scope = data.scope
    with conn.cursor(row_factory=class_row(PinOut)) as cur:
        row = cur.execute(
            "select * from service.pin_add(%s, %s, %s, %s, %s, %s, %s)",
            (
                scope.org_id,
                scope.repo_id,
                scope.persona_id,
                scope.session_id,
                data.fragment_id,
                data.reason,
                data.expires_at,
            ),
        ).fetchone()
    assert row is not None  # service.pin_add returns the pin or raises
    return row


def remove_pin_on(conn: psycopg.Connection, pin_id: int) -> PinOut:
    with conn.cursor(row_factory=class_row(PinOut)) as cur:
        row = cur.execute("select * from service.pin_remove(%s)", (pin_id,)).fetchone()
    assert row is not None  # service.pin_remove returns the pin or raises
    return row


def list_pins_on(conn: psycopg.Connection, query: PinQuery) -> PinList:
    scope = query.scope
    with conn.cursor(row_factory=class_row(PinOut)) as cur:
        rows = cur.execute(
            "select * from api.pins_list(%s, %s, %s, %s, %s)",
            (scope.org_id, scope.repo_id, scope.persona_id, scope.session_id, query.include_expired),
        ).fetchall()
    return PinList(rows)


async def add_pin(services: Services, token: str, data: PinCreate) -> PinOut:
    """POST /pins and the MCP tool `pin`."""

    def run() -> PinOut:
        with services.auth.acting_for(token, write=True) as conn:
            return add_pin_on(conn, data)

    note(repo=data.scope.repo_id, persona=data.scope.persona_id, session=data.scope.session_id)
    return await services.runtime.write(run)


async def remove_pin(services: Services, token: str, pin_id: int) -> PinOut:
    """DELETE /pins/{id} and the MCP tool `unpin`."""

    def run() -> PinOut:
        with services.auth.acting_for(token, write=True) as conn:
            return remove_pin_on(conn, pin_id)

    return await services.runtime.write(run)


async def list_pins(services: Services, token: str, query: PinQuery) -> PinList:
    """GET /pins and the MCP tool `list_pins`."""

    def run() -> PinList:
        with services.auth.acting_for(token) as conn:
            return list_pins_on(conn, query)

    return await services.runtime.read(run)
