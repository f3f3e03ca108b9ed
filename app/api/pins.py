"""/pins: manual pins. A principal with a write grant on a scope pins a fragment there;
every retrieval (and session pack) that sees that scope composes it first, whatever its
relevance (docs/adr/0012). Each function here is what the HTTP endpoint and the MCP tool
of the same purpose run, and what `contexts pin` runs on the database."""

from __future__ import annotations

from typing import Annotated

import psycopg
from litestar import Controller, delete, get, post
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.params import JSONBody, Parameter
from psycopg.rows import class_row

from app.api.fragments import parse_id
from app.api.openapi import BODY_ERRORS, problems
from app.api.request_log import note
from app.api.state import Services
from app.wire.bodies import IDENTIFIER_PATTERN, POSITIVE_ID, PinCreate, PinList, PinOut, PinQuery, ScopeIn

ScopeId = Annotated[str | None, Parameter(pattern=IDENTIFIER_PATTERN, min_length=1, max_length=128)]


def add_pin_on(conn: psycopg.Connection, data: PinCreate) -> PinOut:
    """api.pin_add in the caller's transaction (bound to a principal)."""
    scope = data.scope
    with conn.cursor(row_factory=class_row(PinOut)) as cur:
        row = cur.execute(
            "select * from api.pin_add(%s, %s, %s, %s, %s, %s, %s)",
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
    assert row is not None  # api.pin_add returns the pin or raises
    return row


def remove_pin_on(conn: psycopg.Connection, pin_id: int) -> PinOut:
    with conn.cursor(row_factory=class_row(PinOut)) as cur:
        row = cur.execute("select * from api.pin_remove(%s)", (pin_id,)).fetchone()
    assert row is not None  # api.pin_remove returns the pin or raises
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
        with services.acting_for(token, write=True) as conn:
            return add_pin_on(conn, data)

    note(repo=data.scope.repo_id, persona=data.scope.persona_id, session=data.scope.session_id)
    return await services.write(run)


async def remove_pin(services: Services, token: str, pin_id: int) -> PinOut:
    """DELETE /pins/{id} and the MCP tool `unpin`."""

    def run() -> PinOut:
        with services.acting_for(token, write=True) as conn:
            return remove_pin_on(conn, pin_id)

    return await services.write(run)


async def list_pins(services: Services, token: str, query: PinQuery) -> PinList:
    """GET /pins and the MCP tool `list_pins`."""

    def run() -> PinList:
        with services.acting_for(token) as conn:
            return list_pins_on(conn, query)

    return await services.read(run)


class PinsController(Controller):
    path = "/pins"
    tags = ["pins"]

    @post("/", status_code=201, summary="Pin a fragment to a scope", responses=problems(*BODY_ERRORS, 404, 409))
    async def add(self, data: JSONBody[PinCreate], state: State, token: NamedDependency[str]) -> PinOut:
        """Every retrieval and session pack that sees `scope` (the scope itself, or a
        narrower one: an org-wide pin shows in every repo) composes the fragment first,
        flagged `pinned`, whatever its relevance, earlier pins first, within the token
        budget. Needs a write grant on `scope` (403). A fragment you may not read is a
        404; one not visible in that scope (e.g. another repo's) a 400; the same
        fragment pinned twice to one scope a 409."""
        return await add_pin(state.services, token, data)

    @get("/", summary="List the pins a scope sees", responses=problems(400, 401, 403, 404, 503))
    async def list_page(
        self,
        state: State,
        token: NamedDependency[str],
        org_id: Annotated[str, Parameter(pattern=IDENTIFIER_PATTERN, min_length=1, max_length=128)],
        repo_id: ScopeId = None,
        persona_id: ScopeId = None,
        session_id: ScopeId = None,
        include_expired: Annotated[bool, Parameter(description="Expired pins too")] = False,
    ) -> PinList:
        """The pins a retrieval in this scope sees, earliest first (the order they are
        composed in); expired ones only with `include_expired`."""
        return await list_pins(
            state.services, token, PinQuery(ScopeIn(org_id, repo_id, persona_id, session_id), include_expired)
        )

    @delete("/{pin_id:str}", status_code=200, summary="Remove a pin", responses=problems(400, 401, 403, 404, 503))
    async def remove(
        self,
        pin_id: Annotated[str, Parameter(pattern=POSITIVE_ID, max_length=19, description="A positive decimal integer")],
        state: State,
        token: NamedDependency[str],
    ) -> PinOut:
        """Needs a write grant on the pin's scope (403); a pin you may not read is a 404."""
        return await remove_pin(state.services, token, parse_id(pin_id, "pin id"))
