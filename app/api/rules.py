"""/rules: workflow rules (docs/adr/0022). A rule maps path or symbol globs to a Context
version; a retrieval or session start in its scope that names the files it is
`touching` gets that Context's members composed after the pins, each marked with the
rule. Each `*_on` function runs in the caller's transaction (bound to a principal);
HTTP and `contexts rules ...` both run them."""

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
from app.wire.bodies import IDENTIFIER_PATTERN, POSITIVE_ID, RuleCreate, RuleList, RuleOut

ScopeId = Annotated[str | None, Parameter(pattern=IDENTIFIER_PATTERN, min_length=1, max_length=128)]


def create_rule_on(conn: psycopg.Connection, data: RuleCreate) -> RuleOut:
    """api.rule_create in the caller's transaction."""
    with conn.cursor(row_factory=class_row(RuleOut)) as cur:
        row = cur.execute(
            "select * from api.rule_create(%s, %s, %s, %s, %s, %s, %s, %s)",
            (
                data.org_id,
                data.repo_id,
                data.name,
                data.context,
                list(data.path_globs),
                list(data.symbol_globs),
                data.expires_at,
                data.enabled,
            ),
        ).fetchone()
    assert row is not None  # api.rule_create returns the rule or raises
    return row


def delete_rule_on(conn: psycopg.Connection, rule_id: int) -> RuleOut:
    with conn.cursor(row_factory=class_row(RuleOut)) as cur:
        row = cur.execute("select * from api.rule_delete(%s)", (rule_id,)).fetchone()
    assert row is not None  # api.rule_delete returns the rule or raises
    return row


def list_rules_on(conn: psycopg.Connection, org_id: str, repo_id: str | None = None) -> RuleList:
    with conn.cursor(row_factory=class_row(RuleOut)) as cur:
        rows = cur.execute("select * from api.rules_list(%s, %s)", (org_id, repo_id)).fetchall()
    return RuleList(rows)


async def create_rule(services: Services, token: str, data: RuleCreate) -> RuleOut:
    def run() -> RuleOut:
        with services.acting_for(token, write=True) as conn:
            return create_rule_on(conn, data)

    note(repo=data.repo_id)
    return await services.write(run)


async def delete_rule(services: Services, token: str, rule_id: int) -> RuleOut:
    def run() -> RuleOut:
        with services.acting_for(token, write=True) as conn:
            return delete_rule_on(conn, rule_id)

    return await services.write(run)


async def list_rules(services: Services, token: str, org_id: str, repo_id: str | None) -> RuleList:
    def run() -> RuleList:
        with services.acting_for(token) as conn:
            return list_rules_on(conn, org_id, repo_id)

    return await services.read(run)


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
