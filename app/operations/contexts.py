"""/contexts: Contexts, named and versioned bundles of fragments, and the subscriptions
that let another repo or org read one without a copy (docs/adr/0018). Each `*_on`
function runs in the caller's transaction (bound to a principal), what `contexts ctx ...`
runs on the database; each async one is an HTTP endpoint's transaction as a key's
principal."""

from __future__ import annotations

import time
from collections.abc import Callable

import msgspec
import psycopg
from psycopg.rows import class_row

from app.operations.errors import NotFound
from app.operations.log_fields import note
from app.operations.services import Services
from app.retrieve.bundle import members as bundle_members
from app.retrieve.bundle import read_bundle
from app.retrieve.service import Retriever
from app.wire.bodies import (
    MAX_BIGINT,
    ContextCreate,
    ContextList,
    ContextOut,
    ContextRead,
    ContextVersionCreate,
    ContextVersionList,
    ContextVersionOut,
    ScopeIn,
    SubscriptionCreate,
    SubscriptionList,
    SubscriptionOut,
)
from app.wire.retrieve import DEFAULT_BUDGET_TOKENS, RetrieveRequest

CONTEXT_ID_PATTERN = r"^(ctx_)?[1-9][0-9]{0,18}$"
"""A Context in a path: `ctx_12` or `12`."""


def parse_context_id(raw: str) -> int:
    """The path parameter matched CONTEXT_ID_PATTERN; an id beyond bigint names nothing (404)."""
    number = int(raw.removeprefix("ctx_"))
    if number > MAX_BIGINT:
        raise NotFound(f"unknown context: {raw}")
    return number


def _one(conn: psycopg.Connection, row_type: type, sql: str, args: tuple) -> object:
    cur: psycopg.Cursor[object]
    with conn.cursor(row_factory=class_row(row_type)) as cur:
        row = cur.execute(sql, args).fetchone()
    assert row is not None  # the function returns its row or raises
    return row


def create_context_on(conn: psycopg.Connection, data: ContextCreate) -> ContextOut:
    s = data.scope
    row = _one(
        conn,
        ContextOut,
        "select * from service.context_create(%s, %s, %s, %s, %s, %s)",
        (s.org_id, s.repo_id, s.persona_id, s.session_id, data.name, data.description),
    )
    assert isinstance(row, ContextOut)
    return row


def get_context_on(conn: psycopg.Connection, context_id: int) -> ContextOut:
    row = _one(conn, ContextOut, "select * from api.context_get(%s)", (context_id,))
    assert isinstance(row, ContextOut)
    return row


def list_contexts_on(conn: psycopg.Connection, scope: ScopeIn, include_retired: bool = False) -> ContextList:
    with conn.cursor(row_factory=class_row(ContextOut)) as cur:
        rows = cur.execute(
            "select * from api.contexts_list(%s, %s, %s, %s, %s)",
            (scope.org_id, scope.repo_id, scope.persona_id, scope.session_id, include_retired),
        ).fetchall()
    return ContextList(rows)


def add_version_on(
    conn: psycopg.Connection, retriever: Retriever | None, context_id: int, data: ContextVersionCreate
) -> ContextVersionOut:
    """A saved query is run here, once, in the Context's own scope, and its composed
    fragments are frozen after the rest. That scope's requests see the scopes above it
    too (an org-wide Context's query, every repo of the org): SQL keeps what lies within
    the Context's scope and counts the others (`query_outside_scope` in `built_from`)."""
    fragment_ids = list(data.fragment_ids)
    found: list[int] = []
    built_from: dict = {}
    if data.query is not None:
        if retriever is None:
            raise ValueError("building from a query needs the retrieval models")
        ctx = get_context_on(conn, context_id)
        request = RetrieveRequest(
            query=data.query.query,
            scope=ScopeIn(ctx.org_id, ctx.repo_id, ctx.persona_id, ctx.session_id),
            budget_tokens=data.query.budget_tokens,
            top_k=data.query.top_k,
        )
        response = retriever.retrieve(conn, request)
        found = [f.id for f in response.fragments]
        built_from["query"] = msgspec.to_builtins(data.query) | {"trace_id": response.trace_id}
    row = _one(
        conn,
        ContextVersionOut,
        "select * from service.context_add_version(p_context_id => %s, p_fragment_ids => %s, p_doc_ids => %s,"
        " p_path_globs => %s, p_note => %s, p_built_from => %s::jsonb, p_query_fragment_ids => %s)",
        (
            context_id,
            fragment_ids,
            list(data.doc_ids),
            list(data.path_globs),
            data.note,
            msgspec.json.encode(built_from).decode(),
            found,
        ),
    )
    assert isinstance(row, ContextVersionOut)
    return row


def list_versions_on(conn: psycopg.Connection, context_id: int) -> ContextVersionList:
    with conn.cursor(row_factory=class_row(ContextVersionOut)) as cur:
        rows = cur.execute("select * from api.context_versions(%s)", (context_id,)).fetchall()
    return ContextVersionList(rows)


def retire_context_on(conn: psycopg.Connection, context_id: int) -> ContextOut:
    row = _one(conn, ContextOut, "select * from service.context_retire(%s)", (context_id,))
    assert isinstance(row, ContextOut)
    return row


def read_context_on(
    conn: psycopg.Connection,
    retriever: Retriever,
    ref: str,
    budget_tokens: int = DEFAULT_BUDGET_TOKENS,
    query: str | None = None,
) -> ContextRead:
    """A version composed within the budget like a retrieval (citations, a trace):
    in bundle order, or, for a `query`, ranked against it from the bundle alone.
    Retired Contexts are read too (audit)."""
    started = time.perf_counter()
    row = conn.execute("select ref, context_id from api.context_resolve(%s)", ([ref],)).fetchone()
    assert row is not None  # resolves or raises
    resolved, context_id = row
    context = get_context_on(conn, context_id)
    me = conn.execute("select (data.current_principal()).org_id").fetchone()
    assert me is not None and me[0] is not None  # api.context_resolve raised otherwise
    org_id: str = me[0]
    version = int(resolved.rsplit("@", 1)[1])
    bundled = conn.execute(
        "select fragment_count from api.context_versions(%s) where version = %s", (context_id, version)
    ).fetchone()
    assert bundled is not None  # the version resolved, so the caller may list it
    if query is not None:
        # Read through its own scope, a persona's or session's Context is ranked in a
        # request naming that persona or session (a request may name only Contexts within
        # its scope); a subscribed one in the org's.
        own = not context.subscribed
        request = RetrieveRequest(
            query=query,
            scope=ScopeIn(org_id, None, context.persona_id if own else None, context.session_id if own else None),
            budget_tokens=budget_tokens,
            contexts=[resolved],
            context_mode="restrict",
        )
        response = retriever.retrieve(conn, request, include_retired=True)
        size = context_size(conn, retriever, org_id, resolved)
        return ContextRead(
            context,
            resolved,
            response.fragments,
            response.trace_id,
            response.tokens_used,
            budget_tokens,
            size - len(response.fragments),
            bundled[0] - size,
        )
    bundle = read_bundle(conn, retriever, org_id, resolved, budget_tokens, started)
    return ContextRead(
        context,
        resolved,
        bundle.fragments,
        bundle.trace_id,
        bundle.tokens_used,
        budget_tokens,
        bundle.left_out,
        bundled[0] - bundle.members,
    )


def context_size(conn: psycopg.Connection, retriever: Retriever, org_id: str, ref: str) -> int:
    """Members of the version the caller may read now (a deleted fragment is missing)."""
    return len(bundle_members(conn, retriever.config, org_id, ref))


def subscribe_on(conn: psycopg.Connection, context_id: int, data: SubscriptionCreate) -> SubscriptionOut:
    row = _one(
        conn,
        SubscriptionOut,
        "select * from service.context_subscribe(%s, %s, %s, %s)",
        (context_id, data.subscriber_org_id, data.subscriber_repo_id, data.version),
    )
    assert isinstance(row, SubscriptionOut)
    return row


def unsubscribe_on(conn: psycopg.Connection, subscription_id: int) -> SubscriptionOut:
    row = _one(conn, SubscriptionOut, "select * from service.context_unsubscribe(%s)", (subscription_id,))
    assert isinstance(row, SubscriptionOut)
    return row


def accept_on(conn: psycopg.Connection, subscription_id: int) -> SubscriptionOut:
    row = _one(conn, SubscriptionOut, "select * from service.context_accept(%s)", (subscription_id,))
    assert isinstance(row, SubscriptionOut)
    return row


def list_subscriptions_on(
    conn: psycopg.Connection, context_id: int | None = None, include_revoked: bool = False, state: str | None = None
) -> SubscriptionList:
    with conn.cursor(row_factory=class_row(SubscriptionOut)) as cur:
        rows = cur.execute(
            "select * from api.context_subscriptions(%s, %s) where %s::text is null or state = %s",
            (context_id, include_revoked or state == "revoked", state, state),
        ).fetchall()
    return SubscriptionList(rows)


async def read_context(
    services: Services, token: str, ref: str, budget_tokens: int, query: str | None = None
) -> ContextRead:
    """GET /contexts/{ref} and the MCP tool `read_context`."""

    def run() -> ContextRead:
        with services.auth.acting_for(token) as conn:
            return read_context_on(conn, services.retriever, ref, budget_tokens, query)

    return await services.runtime.read(run)


async def create_context(services: Services, token: str, data: ContextCreate) -> ContextOut:
    """POST /contexts."""

    def run() -> ContextOut:
        with services.auth.acting_for(token, write=True) as conn:
            return create_context_on(conn, data)

    note(repo=data.scope.repo_id, persona=data.scope.persona_id, session=data.scope.session_id)
    return await services.runtime.write(run)


async def list_contexts(services: Services, token: str, scope: ScopeIn, include_retired: bool = False) -> ContextList:
    """GET /contexts."""

    def run() -> ContextList:
        with services.auth.acting_for(token) as conn:
            return list_contexts_on(conn, scope, include_retired)

    return await services.runtime.read(run)


async def add_version(services: Services, token: str, context_id: int, data: ContextVersionCreate) -> ContextVersionOut:
    """POST /contexts/{id}/versions."""

    def run() -> ContextVersionOut:
        with services.auth.acting_for(token, write=True) as conn:
            return add_version_on(conn, services.retriever, context_id, data)

    return await services.runtime.write(run)


async def list_versions(services: Services, token: str, context_id: int) -> ContextVersionList:
    """GET /contexts/{id}/versions."""

    def run() -> ContextVersionList:
        with services.auth.acting_for(token) as conn:
            return list_versions_on(conn, context_id)

    return await services.runtime.read(run)


async def retire_context(services: Services, token: str, context_id: int) -> ContextOut:
    """DELETE /contexts/{id}."""

    def run() -> ContextOut:
        with services.auth.acting_for(token, write=True) as conn:
            return retire_context_on(conn, context_id)

    return await services.runtime.write(run)


async def subscribe(services: Services, token: str, context_id: int, data: SubscriptionCreate) -> SubscriptionOut:
    """POST /contexts/{id}/subscriptions."""

    def run() -> SubscriptionOut:
        with services.auth.acting_for(token, write=True) as conn:
            return subscribe_on(conn, context_id, data)

    return await services.runtime.write(run)


async def list_subscriptions(
    services: Services, token: str, context_id: int, include_revoked: bool = False
) -> SubscriptionList:
    """GET /contexts/{id}/subscriptions: a Context the caller may neither read nor has been
    offered is a 404 (an offer is listed to the subscriber scope before it reads anything)."""

    def run() -> SubscriptionList:
        with services.auth.acting_for(token) as conn:
            listed = list_subscriptions_on(conn, context_id, include_revoked)
            if not listed.subscriptions:
                get_context_on(conn, context_id)
            return listed

    return await services.runtime.read(run)


async def unsubscribe(services: Services, token: str, context_id: int, subscription_id: int) -> SubscriptionOut:
    """DELETE /contexts/{id}/subscriptions/{sid}: a subscription of another Context (or
    one the caller may not see) is a 404."""

    return await _write_subscription(services, token, context_id, subscription_id, unsubscribe_on)


async def list_all_subscriptions(
    services: Services, token: str, include_revoked: bool = False, state: str | None = None
) -> SubscriptionList:
    """GET /subscriptions: offers to the caller's scopes (pending ones among them) and
    what its org publishes, of every Context."""

    def run() -> SubscriptionList:
        with services.auth.acting_for(token) as conn:
            return list_subscriptions_on(conn, None, include_revoked, state)

    return await services.runtime.read(run)


async def accept(services: Services, token: str, context_id: int, subscription_id: int) -> SubscriptionOut:
    """POST /contexts/{id}/subscriptions/{sid}/accept: a subscription of another Context (or
    one the caller may not see) is a 404."""

    return await _write_subscription(services, token, context_id, subscription_id, accept_on)


async def _write_subscription(
    services: Services,
    token: str,
    context_id: int,
    subscription_id: int,
    act: Callable[[psycopg.Connection, int], SubscriptionOut],
) -> SubscriptionOut:
    """`act` on a subscription the path names by its Context and id: one of another
    Context, or one the caller may not see, is a 404."""

    def run() -> SubscriptionOut:
        with services.auth.acting_for(token, write=True) as conn:
            listed = list_subscriptions_on(conn, context_id, include_revoked=True).subscriptions
            if subscription_id not in {s.subscription_id for s in listed}:
                raise NotFound(f"unknown subscription of ctx_{context_id}: {subscription_id}")
            return act(conn, subscription_id)

    return await services.runtime.write(run)
