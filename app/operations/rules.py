"""Workflow rules (docs/adr/0022). A rule maps path or symbol globs to a Context
version; a retrieval or session start in its scope that names the files it is
`touching` gets that Context's members composed after the pins, each marked with the
rule. Each `*_on` function runs in the caller's transaction (bound to a principal);
HTTP and `contexts rules ...` both run them."""

from __future__ import annotations

import psycopg
from psycopg.rows import class_row

from app.operations.log_fields import note
from app.operations.services import Services
from app.wire.bodies import RuleCreate, RuleList, RuleOut


def create_rule_on(conn: psycopg.Connection, data: RuleCreate) -> RuleOut:
    """service.rule_create in the caller's transaction."""
    with conn.cursor(row_factory=class_row(RuleOut)) as cur:
        row = cur.execute(
            "select * from service.rule_create(%s, %s, %s, %s, %s, %s, %s, %s)",
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
    assert row is not None  # service.rule_create returns the rule or raises
    return row


def delete_rule_on(conn: psycopg.Connection, rule_id: int) -> RuleOut:
    with conn.cursor(row_factory=class_row(RuleOut)) as cur:
        row = cur.execute("select * from service.rule_delete(%s)", (rule_id,)).fetchone()
    assert row is not None  # service.rule_delete returns the rule or raises
    return row


def list_rules_on(conn: psycopg.Connection, org_id: str, repo_id: str | None = None) -> RuleList:
    with conn.cursor(row_factory=class_row(RuleOut)) as cur:
        rows = cur.execute("select * from api.rules_list(%s, %s)", (org_id, repo_id)).fetchall()
    return RuleList(rows)


async def create_rule(services: Services, token: str, data: RuleCreate) -> RuleOut:
    def run() -> RuleOut:
        with services.auth.acting_for(token, write=True) as conn:
            return create_rule_on(conn, data)

    note(repo=data.repo_id)
    return await services.runtime.write(run)


async def delete_rule(services: Services, token: str, rule_id: int) -> RuleOut:
    def run() -> RuleOut:
        with services.auth.acting_for(token, write=True) as conn:
            return delete_rule_on(conn, rule_id)

    return await services.runtime.write(run)


async def list_rules(services: Services, token: str, org_id: str, repo_id: str | None) -> RuleList:
    def run() -> RuleList:
        with services.auth.acting_for(token) as conn:
            return list_rules_on(conn, org_id, repo_id)

    return await services.runtime.read(run)
