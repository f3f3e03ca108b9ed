"""`contexts ...`: the root group (database and principal options) and its commands,
one module per command group:

- admin.py      migrate, org, principal, grant, key, sessions (the operator, as the migrator)
- analysts.py   analyst create | list | password | revoke (SQL logins mapped to principals)
- db.py         db serve (the embedded server open over TCP), psql [--as NAME]
- policy.py     policy check (row-level security and privileges, from the catalog)
- documents.py  ingest PATH..., query TEXT (as a principal)
- owners.py     stale, owners reassign | settings, webhook set | show | delete, nudges deliver
- contexts.py   ctx create | version | list | show | retire | subscribe | unsubscribe | subscriptions
- pins.py       pin add | remove | list (as a principal, or through --url)
- profiles.py   profile set | show | list | delete (ranking profiles, likewise)
- rank.py       rank refresh (citation authority, as the migrator)
- sync.py       sync PATH (a git work tree, incrementally, as a principal)
- serve.py      serve [--demo]
- mcp.py        mcp (the MCP server on stdio, as the key in CONTEXTS_KEY)
- eval.py       eval run | replay | agent | gate
- models.py     models status | upgrade | replay | promote | rollback | abandon | drop-retired
- common.py     what they share: CliError, the stderr console, settings, open_database
"""

from __future__ import annotations

import os

import click

from app.cli import (
    admin,
    analysts,
    contexts,
    db,
    documents,
    mcp,
    models,
    owners,
    pins,
    policy,
    profiles,
    rank,
    rerank,
    rules,
    serve,
    sync,
)
from app.cli import eval as eval_commands
from app.cli.common import CliError, ContextsGroup
from app.settings import Settings


@click.group(cls=ContextsGroup)
@click.option(
    "--db-url",
    envvar="CONTEXTS_DATABASE_URL",
    default=None,
    help="PostgreSQL >= 16 with pgvector. Default: the embedded server under CONTEXTS_HOME.",
)
@click.option(
    "--principal",
    "principal_id",
    envvar="CONTEXTS_PRINCIPAL",
    default=None,
    help="Principal that ingest and query act for. Default: admin (made by `org create`).",
)
@click.pass_context
def main(ctx: click.Context, db_url: str | None, principal_id: str | None) -> None:
    """Contexts: durable, scoped, cited context for AI agents."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        ctx.obj = {"settings": Settings.from_env(database_url=db_url, principal=principal_id)}
    except ValueError as exc:
        raise CliError(str(exc)) from exc


for _module in (
    admin,
    analysts,
    db,
    policy,
    documents,
    pins,
    owners,
    contexts,
    rules,
    profiles,
    rank,
    rerank,
    sync,
    serve,
    mcp,
    eval_commands,
    models,
):
    for _command in _module.COMMANDS:
        main.add_command(_command)

__all__ = ["main"]
