"""`contexts ctx create | version | list | show | retire | subscribe | accept |
unsubscribe | subscriptions`: Contexts (versioned bundles of fragments) and their subscriptions, as
--principal on the database: its grants apply exactly as over HTTP (docs/adr/0018)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from app.cli.common import (
    ID,
    MAX_ID,
    as_principal,
    console,
    context_settings,
    echo,
    print_json,
    required_org,
    validated,
)
from app.wire.bodies import (
    ContextCreate,
    ContextOut,
    ContextVersionCreate,
    SubscriptionCreate,
    SubscriptionOut,
)
from app.wire.retrieve import DEFAULT_BUDGET_TOKENS

if TYPE_CHECKING:
    from app.retrieve.service import Retriever
    from app.settings import Settings


def _retriever(settings: Settings) -> Retriever:
    """Loads the embedding models (seconds): only to build from or rank by a query."""
    from app.retrieve.config import PipelineConfig
    from app.retrieve.service import Retriever
    from app.text.embed import embedders

    return Retriever.build(embedders(settings), PipelineConfig(reranker=settings.reranker), settings.torch_threads)


def _context_id(raw: str) -> int:
    digits = raw.removeprefix("ctx_")
    if not digits.isascii() or not digits.isdigit() or not 1 <= int(digits) <= MAX_ID:
        raise click.BadParameter(f"{raw!r} is not a context id (ctx_<id> or <id>)")
    return int(digits)


def _scope_label(c: ContextOut) -> str:
    return "/".join(x for x in (c.repo_id, c.persona_id, c.session_id) if x) or "org"


def _fragments(count: int) -> str:
    return f"{count} fragment" + ("" if count == 1 else "s")


def _line(c: ContextOut) -> str:
    version = f"@{c.latest_version} ({_fragments(c.fragment_count or 0)})" if c.latest_version else " (no version yet)"
    flags = ", ".join(f for f, on in (("subscribed", c.subscribed), ("retired", c.retired_at is not None)) if on)
    return f"{c.ref}{version}\t{c.org_id}:{_scope_label(c)}\t{c.name}{f'  [{flags}]' if flags else ''}"


def _sub_line(s: SubscriptionOut) -> str:
    who = s.subscriber_org_id + (f"/{s.subscriber_repo_id}" if s.subscriber_repo_id else "")
    if s.revoked_at:
        state = f"revoked {s.revoked_at:%Y-%m-%d %H:%M} by {s.revoked_by}"
    elif s.accepted_at is None:
        state = "pending: a writer of the subscriber scope accepts it with `contexts ctx accept`"
    else:
        state = "live"
    return f"{s.subscription_id}\t{s.ref}\tfrom {s.org_id} -> {who}\t{state}"


@click.group("ctx")
def ctx() -> None:
    """Contexts: named, versioned bundles of fragments, and who subscribes to them."""


@ctx.command("create")
@click.argument("name")
@click.option("--org", "org_id", required=True)
@click.option("--repo", default=None, help="Scope it to this repo (default: org-wide).")
@click.option("--persona", default=None)
@click.option("--session", default=None)
@click.option("--description", default="")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def ctx_create(
    cli: click.Context,
    name: str,
    org_id: str,
    repo: str | None,
    persona: str | None,
    session: str | None,
    description: str,
    as_json: bool,
) -> None:
    """Create Context NAME in a scope (POST /contexts)."""
    from app.operations.contexts import create_context_on

    payload = {
        "scope": {"org_id": org_id, "repo_id": repo, "persona_id": persona, "session_id": session},
        "name": name,
        "description": description,
    }
    request = validated(payload, ContextCreate)
    created = as_principal(context_settings(cli), org_id, lambda conn: create_context_on(conn, request))
    if as_json:
        print_json(created)
        return
    echo(_line(created))


@ctx.command("version")
@click.argument("context_id")
@click.option("--org", "org_id", default=None, help="Org of --principal.")
@click.option("--fragment", "fragment_ids", type=ID, multiple=True, help="A fragment id (repeatable).")
@click.option("--doc", "doc_ids", type=ID, multiple=True, help="A document id: its live fragments (repeatable).")
@click.option("--glob", "path_globs", multiple=True, help="A path glob, e.g. 'runbooks/**' (repeatable).")
@click.option("--query", default=None, help="Run this retrieval now, in the Context's scope, and freeze its result.")
@click.option("--top-k", type=int, default=None, help="With --query: at most this many fragments.")
@click.option("--note", default="")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def ctx_version(
    cli: click.Context,
    context_id: str,
    org_id: str | None,
    fragment_ids: tuple[int, ...],
    doc_ids: tuple[int, ...],
    path_globs: tuple[str, ...],
    query: str | None,
    top_k: int | None,
    note: str,
    as_json: bool,
) -> None:
    """Freeze a new version of CONTEXT_ID (POST /contexts/{id}/versions)."""
    from app.operations.contexts import add_version_on

    payload: dict = {
        "fragment_ids": list(fragment_ids),
        "doc_ids": list(doc_ids),
        "path_globs": list(path_globs),
        "note": note,
    }
    if query is not None:
        payload["query"] = {"query": query, "top_k": top_k}
    request = validated(payload, ContextVersionCreate)
    settings = context_settings(cli)
    retriever = _retriever(settings) if query is not None else None
    number = _context_id(context_id)
    made = as_principal(settings, required_org(org_id), lambda conn: add_version_on(conn, retriever, number, request))
    if as_json:
        print_json(made)
        return
    console.print(f"{made.ref}: {_fragments(made.fragment_count)}")


@ctx.command("list")
@click.option("--org", "org_id", required=True)
@click.option("--repo", default=None)
@click.option("--persona", default=None)
@click.option("--session", default=None)
@click.option("--all", "include_retired", is_flag=True, help="Retired Contexts too.")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def ctx_list(
    cli: click.Context,
    org_id: str,
    repo: str | None,
    persona: str | None,
    session: str | None,
    include_retired: bool,
    as_json: bool,
) -> None:
    """The Contexts a scope may name, subscribed ones included (GET /contexts)."""
    from app.operations.contexts import list_contexts_on
    from app.wire.bodies import ScopeIn

    scope = validated({"org_id": org_id, "repo_id": repo, "persona_id": persona, "session_id": session}, ScopeIn)
    listed = as_principal(context_settings(cli), org_id, lambda conn: list_contexts_on(conn, scope, include_retired))
    if as_json:
        print_json(listed)
        return
    for c in listed.contexts:
        echo(_line(c))
    if not listed.contexts:
        console.print("no contexts")


@ctx.command("show")
@click.argument("ref")
@click.option("--org", "org_id", default=None, help="Org of --principal.")
@click.option("--budget", "budget_tokens", type=int, default=DEFAULT_BUDGET_TOKENS, show_default=True)
@click.option("--query", default=None, help="Rank the members against this query (default: bundle order).")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def ctx_show(
    cli: click.Context, ref: str, org_id: str | None, budget_tokens: int, query: str | None, as_json: bool
) -> None:
    """Read REF (ctx_<id>@<version> or @latest) composed within a budget (GET /contexts/{ref})."""
    from app.operations.contexts import read_context_on
    from app.retrieve.config import PipelineConfig
    from app.retrieve.service import Retriever

    settings = context_settings(cli)
    # Bundle order needs no model: a retriever without embedders composes and traces.
    retriever = _retriever(settings) if query is not None else Retriever({}, None, PipelineConfig())
    read = as_principal(
        settings, required_org(org_id), lambda conn: read_context_on(conn, retriever, ref, budget_tokens, query)
    )
    if as_json:
        print_json(read)
        return
    console.print(
        f"{read.ref}  {read.context.name}  ({read.tokens_used}/{read.budget_tokens} tokens, trace {read.trace_id})"
    )
    for f in read.fragments:
        echo(f"\n--- {f.source}  (fragment {f.id}, {f.tokens} tokens)\n{f.text}")
    if read.left_out:
        console.print(f"\n{read.left_out} more fragments did not fit the budget")


@ctx.command("retire")
@click.argument("context_id")
@click.option("--org", "org_id", default=None, help="Org of --principal.")
@click.pass_context
def ctx_retire(cli: click.Context, context_id: str, org_id: str | None) -> None:
    """Retire CONTEXT_ID: out of listings and retrieval, still readable (DELETE /contexts/{id})."""
    from app.operations.contexts import retire_context_on

    number = _context_id(context_id)
    retired = as_principal(context_settings(cli), required_org(org_id), lambda conn: retire_context_on(conn, number))
    console.print(f"retired {retired.ref} ({retired.name})")


@ctx.command("subscribe")
@click.argument("context_id")
@click.option("--org", "org_id", default=None, help="Org of --principal (the publisher's).")
@click.option("--to-org", "subscriber_org_id", required=True, help="The subscriber org.")
@click.option("--to-repo", "subscriber_repo_id", default=None, help="Only this repo of it (default: the whole org).")
@click.option("--version", type=int, default=None, help="Pin a version (default: follow the newest).")
@click.pass_context
def ctx_subscribe(
    cli: click.Context,
    context_id: str,
    org_id: str | None,
    subscriber_org_id: str,
    subscriber_repo_id: str | None,
    version: int | None,
) -> None:
    """Offer CONTEXT_ID to another org or repo: a revocable grant, not a copy, that gives
    nothing until a writer of that scope accepts it (`contexts ctx accept`), unless you
    may write that scope yourself."""
    from app.operations.contexts import subscribe_on

    payload = {"subscriber_org_id": subscriber_org_id, "subscriber_repo_id": subscriber_repo_id, "version": version}
    request = validated(payload, SubscriptionCreate)
    number = _context_id(context_id)
    made = as_principal(context_settings(cli), required_org(org_id), lambda conn: subscribe_on(conn, number, request))
    echo(_sub_line(made))


@ctx.command("accept")
@click.argument("subscription_id", type=ID)
@click.option("--org", "org_id", default=None, help="Org of --principal (the subscriber's).")
@click.pass_context
def ctx_accept(cli: click.Context, subscription_id: int, org_id: str | None) -> None:
    """Accept subscription SUBSCRIPTION_ID offered to your org or repo (a write grant on
    that scope): from then on its readers read the Context it gives."""
    from app.operations.contexts import accept_on

    accepted = as_principal(context_settings(cli), required_org(org_id), lambda conn: accept_on(conn, subscription_id))
    echo(_sub_line(accepted))


@ctx.command("unsubscribe")
@click.argument("subscription_id", type=ID)
@click.option("--org", "org_id", default=None, help="Org of --principal (publisher or subscriber).")
@click.pass_context
def ctx_unsubscribe(cli: click.Context, subscription_id: int, org_id: str | None) -> None:
    """Revoke subscription SUBSCRIPTION_ID (the publisher, or a writer of the subscriber scope)."""
    from app.operations.contexts import unsubscribe_on

    revoked = as_principal(
        context_settings(cli), required_org(org_id), lambda conn: unsubscribe_on(conn, subscription_id)
    )
    echo(_sub_line(revoked))


@ctx.command("subscriptions")
@click.option("--org", "org_id", default=None, help="Org of --principal.")
@click.option("--context", "context_id", default=None, help="Only this Context's.")
@click.option("--all", "include_revoked", is_flag=True, help="Revoked ones too.")
@click.option("--pending", is_flag=True, help="Only those waiting for a writer of the subscriber scope to accept them.")
@click.pass_context
def ctx_subscriptions(
    cli: click.Context, org_id: str | None, context_id: str | None, include_revoked: bool, pending: bool
) -> None:
    """Subscriptions you publish, and those offered to your scopes (pending until accepted)."""
    from app.operations.contexts import list_subscriptions_on

    number = _context_id(context_id) if context_id else None
    state = "pending" if pending else None
    listed = as_principal(
        context_settings(cli),
        required_org(org_id),
        lambda conn: list_subscriptions_on(conn, number, include_revoked, state),
    )
    for s in listed.subscriptions:
        echo(_sub_line(s))
    if not listed.subscriptions:
        console.print("no subscriptions")


COMMANDS = (ctx,)
