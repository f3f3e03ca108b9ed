"""/profiles: ranking profiles, the blend's weights and freshness half-lives of an org
(its default) or of a persona (docs/adr/0014). Setting one needs a write grant on the
org or the persona; reading follows the read rule. The HTTP controller of
app.operations.profiles."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, delete, get, put
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.params import JSONBody, Parameter

from app.api.openapi import BODY_ERRORS, problems
from app.operations import profiles as operations
from app.wire.bodies import IDENTIFIER_PATTERN, RankingProfileList, RankingProfileOut, RankingProfileSet

OrgId = Annotated[str, Parameter(pattern=IDENTIFIER_PATTERN, min_length=1, max_length=128)]


PersonaId = Annotated[
    str | None,
    Parameter(pattern=IDENTIFIER_PATTERN, min_length=1, max_length=128, description="None: the org default"),
]


class ProfilesController(Controller):
    path = "/profiles"
    tags = ["profiles"]

    @put("/", summary="Set the ranking profile of an org or persona", responses=problems(*BODY_ERRORS, 404))
    async def set_profile(
        self, data: JSONBody[RankingProfileSet], state: State, token: NamedDependency[str]
    ) -> RankingProfileOut:
        """Replaces the profile stored for `org_id` (no `persona_id`: the org default;
        a write grant on the org) or for `persona_id` (a write grant on the persona):
        the weights of the blended score and the freshness half-life per document kind.
        A persona's `description` is embedded with each namespace's model and counts as
        evidence of what the persona cares about (the persona term). What it leaves out
        inherits. Negative weights, weights in effect all 0, or a
        half-life <= 0 are a 400; an unknown persona a 404."""
        return await operations.set_profile(state.services, token, data)

    @get("/", summary="List the stored ranking profiles", responses=problems(400, 401, 403, 404, 503))
    async def list_profiles(self, state: State, token: NamedDependency[str], org_id: OrgId) -> RankingProfileList:
        """The org default and the persona profiles you may read, each with the
        profile in effect."""
        return await operations.list_profiles(state.services, token, org_id)

    @get("/effective", summary="The ranking profile a scope uses", responses=problems(400, 401, 403, 404, 503))
    async def effective(
        self, state: State, token: NamedDependency[str], org_id: OrgId, persona_id: PersonaId = None
    ) -> RankingProfileOut:
        """What is stored for the org default (or `persona_id`), and the profile a
        retrieval there uses (`effective`: persona, else org default, else built-in)."""
        return await operations.get_profile(state.services, token, org_id, persona_id)

    @delete("/", status_code=200, summary="Remove a ranking profile", responses=problems(400, 401, 403, 404, 503))
    async def remove(
        self, state: State, token: NamedDependency[str], org_id: OrgId, persona_id: PersonaId = None
    ) -> RankingProfileOut:
        """The scope inherits again. Needs the same write grant as setting it (403);
        no stored profile there is a 404."""
        return await operations.delete_profile(state.services, token, org_id, persona_id)
