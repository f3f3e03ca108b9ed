"""/rules: workflow rules (docs/adr/0022). A rule maps path or symbol globs to a Context
version; a retrieval or session start in its scope that names the files it is
`touching` gets that Context's members composed after the pins, each marked with the
rule. The HTTP controller of app.operations.rules."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, delete, get, post
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.params import JSONBody, Parameter

from app.api.openapi import BODY_ERRORS, problems
from app.operations.fragments import parse_id
from app.operations.rules import create_rule, delete_rule, list_rules
from app.wire.bodies import IDENTIFIER_PATTERN, POSITIVE_ID, RuleCreate, RuleList, RuleOut

ScopeId = Annotated[str | None, Parameter(pattern=IDENTIFIER_PATTERN, min_length=1, max_length=128)]


class RulesController(Controller):
    path = "/rules"
    tags = ["rules"]

    @post("/", status_code=201, summary="Add a workflow rule", responses=problems(*BODY_ERRORS, 404, 409))
    async def add(self, data: JSONBody[RuleCreate], state: State, token: NamedDependency[str]) -> RuleOut:
        """A retrieval (or session start) in the rule's scope whose `touching` names a
        path matching one of `path_globs`, or a `path#Symbol` whose symbol matches one of
        `symbol_globs`, gets the members of `context` composed after the pins, each marked
        with `rule`. Needs a write grant on the scope (403); a Context you may not read is
        a 404, a retired one a 409, one some reader of the scope could not read a 400; a
        name used in the scope already a 409."""
        return await create_rule(state.services, token, data)

    @get("/", summary="List the workflow rules a scope consults", responses=problems(400, 401, 403, 404, 503))
    async def list_page(
        self,
        state: State,
        token: NamedDependency[str],
        org_id: Annotated[str, Parameter(pattern=IDENTIFIER_PATTERN, min_length=1, max_length=128)],
        repo_id: ScopeId = None,
    ) -> RuleList:
        """The org's rules, and the repo's when `repo_id` is named, as your grants show
        them; expired and disabled ones too, flagged."""
        return await list_rules(state.services, token, org_id, repo_id)

    @delete(
        "/{rule_id:str}", status_code=200, summary="Delete a workflow rule", responses=problems(400, 401, 403, 404, 503)
    )
    async def remove(
        self,
        rule_id: Annotated[
            str, Parameter(pattern=POSITIVE_ID, max_length=19, description="A positive decimal integer")
        ],
        state: State,
        token: NamedDependency[str],
    ) -> RuleOut:
        """Needs a write grant on the rule's scope (403); a rule you may not see is a 404."""
        return await delete_rule(state.services, token, parse_id(rule_id, "rule id"))
