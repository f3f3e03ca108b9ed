"""/pins: manual pins. A principal with a write grant on a scope pins a fragment there;
every retrieval (and session pack) that sees that scope composes it first, whatever its
relevance (docs/adr/0012). The HTTP controller of app.operations.pins."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, delete, get, post
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.params import JSONBody, Parameter

from app.api.openapi import BODY_ERRORS, problems
from app.operations.fragments import parse_id
from app.operations.pins import add_pin, list_pins, remove_pin
from app.wire.bodies import IDENTIFIER_PATTERN, POSITIVE_ID, PinCreate, PinList, PinOut, PinQuery, ScopeIn

ScopeId = Annotated[str | None, Parameter(pattern=IDENTIFIER_PATTERN, min_length=1, max_length=128)]


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
