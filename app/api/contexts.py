"""/contexts: Contexts, named and versioned bundles of fragments, and the subscriptions
that let another repo or org read one without a copy (docs/adr/0018). Each `*_on`
function runs in the caller's transaction (bound to a principal); HTTP, the MCP tool
`read_context` and `contexts ctx ...` all run them."""

from __future__ import annotations

import time
from typing import Annotated

import msgspec
import psycopg
from litestar import Controller, delete, get, post
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.exceptions import NotFoundException, ValidationException
from litestar.params import JSONBody, Parameter, QueryParameter
from psycopg.rows import class_row

from app.api.openapi import BODY_ERRORS, problems
from app.api.request_log import note
from app.api.state import Services
from app.retrieve.bundle import members as bundle_members
from app.retrieve.bundle import read_bundle
from app.retrieve.service import Retriever
from app.wire.bodies import (
    IDENTIFIER_PATTERN,
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
from app.wire.retrieve import CONTEXT_REF_PATTERN, DEFAULT_BUDGET_TOKENS, RetrieveRequest

CONTEXT_ID_PATTERN = r"^(ctx_)?[1-9][0-9]{0,18}$"
"""A Context in a path: `ctx_12` or `12`."""
ContextId = Annotated[str, Parameter(pattern=CONTEXT_ID_PATTERN, max_length=23, description="ctx_<id> or <id>")]
ScopeId = Annotated[str | None, Parameter(pattern=IDENTIFIER_PATTERN, min_length=1, max_length=128)]


def parse_context_id(raw: str) -> int:
    """The path parameter matched CONTEXT_ID_PATTERN; an id beyond bigint names nothing (404)."""
    number = int(raw.removeprefix("ctx_"))
    if number > MAX_BIGINT:
        raise NotFoundException(f"unknown context: {raw}")
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
        "select * from api.context_create(%s, %s, %s, %s, %s, %s)",
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
        "select * from api.context_add_version(p_context_id => %s, p_fragment_ids => %s, p_doc_ids => %s,"
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
    row = _one(conn, ContextOut, "select * from api.context_retire(%s)", (context_id,))
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
        "select * from api.context_subscribe(%s, %s, %s, %s)",
        (context_id, data.subscriber_org_id, data.subscriber_repo_id, data.version),
    )
    assert isinstance(row, SubscriptionOut)
    return row


def unsubscribe_on(conn: psycopg.Connection, subscription_id: int) -> SubscriptionOut:
    row = _one(conn, SubscriptionOut, "select * from api.context_unsubscribe(%s)", (subscription_id,))
    assert isinstance(row, SubscriptionOut)
    return row


def list_subscriptions_on(
    conn: psycopg.Connection, context_id: int | None = None, include_revoked: bool = False
) -> SubscriptionList:
    with conn.cursor(row_factory=class_row(SubscriptionOut)) as cur:
        rows = cur.execute("select * from api.context_subscriptions(%s, %s)", (context_id, include_revoked)).fetchall()
    return SubscriptionList(rows)


async def read_context(
    services: Services, token: str, ref: str, budget_tokens: int, query: str | None = None
) -> ContextRead:
    """GET /contexts/{ref} and the MCP tool `read_context`."""

    def run() -> ContextRead:
        with services.acting_for(token) as conn:
            return read_context_on(conn, services.retriever, ref, budget_tokens, query)

    return await services.read(run)


class ContextsController(Controller):
    path = "/contexts"
    tags = ["contexts"]

    @post("/", status_code=201, summary="Create a Context", responses=problems(*BODY_ERRORS, 404, 409))
    async def create(self, data: JSONBody[ContextCreate], state: State, token: NamedDependency[str]) -> ContextOut:
        """A named bundle of fragments in a scope, empty until its first version. Needs a
        write grant on the scope (403); a name taken by a live Context of the scope is a 409."""
        services = state.services

        def run() -> ContextOut:
            with services.acting_for(token, write=True) as conn:
                return create_context_on(conn, data)

        note(repo=data.scope.repo_id, persona=data.scope.persona_id, session=data.scope.session_id)
        return await services.write(run)

    @get("/", summary="List the Contexts a scope may name", responses=problems(400, 401, 403, 404, 503))
    async def list_page(
        self,
        state: State,
        token: NamedDependency[str],
        org_id: Annotated[str, Parameter(pattern=IDENTIFIER_PATTERN, min_length=1, max_length=128)],
        repo_id: ScopeId = None,
        persona_id: ScopeId = None,
        session_id: ScopeId = None,
        include_retired: Annotated[bool, Parameter(description="Retired Contexts too")] = False,
    ) -> ContextList:
        """The org's Contexts within the scope (an org-wide one shows in every repo), and
        those subscribed to from other repos or orgs, with the newest version you may read."""
        services = state.services
        scope = ScopeIn(org_id, repo_id, persona_id, session_id)

        def run() -> ContextList:
            with services.acting_for(token) as conn:
                return list_contexts_on(conn, scope, include_retired)

        return await services.read(run)

    @get("/{ref:str}", summary="Read a Context version, composed", responses=problems(400, 401, 404, 503))
    async def read(
        self,
        state: State,
        token: NamedDependency[str],
        ref: Annotated[
            str, Parameter(pattern=CONTEXT_REF_PATTERN, max_length=40, description="ctx_<id>@<version> or @latest")
        ],
        budget_tokens: Annotated[int, Parameter(gt=0, le=200_000)] = DEFAULT_BUDGET_TOKENS,
        ranked_by: Annotated[
            str | None,
            QueryParameter(
                name="query",
                min_length=1,
                max_length=4000,
                pattern=r"^[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]*$",
                description="Rank the members against this query (default: bundle order)",
            ),
        ] = None,
    ) -> ContextRead:
        """Its fragments within `budget_tokens`, each citing the document version it was
        bundled from, in bundle order (or best first for `query`, scored from the bundle
        alone), with a trace like a retrieval's. Readable by whoever may read the
        Context's scope, and by subscribers (their version only); retired ones stay
        readable. Anything else is a 404."""
        if ranked_by is not None and not any(ch.isalnum() for ch in ranked_by):
            raise ValidationException("query must contain at least one letter or digit")
        return await read_context(state.services, token, ref, budget_tokens, ranked_by)

    @post(
        "/{context_id:str}/versions",
        status_code=201,
        summary="Freeze a new version of a Context",
        responses=problems(*BODY_ERRORS, 404, 409),
    )
    async def add_version(
        self, context_id: ContextId, data: JSONBody[ContextVersionCreate], state: State, token: NamedDependency[str]
    ) -> ContextVersionOut:
        """An immutable list of fragment references (fragment id and the document version
        it came from), from fragment ids, documents, path globs and a saved query (run
        now, in the Context's scope, and frozen). Needs a write grant on the Context's
        scope (403); an id you may not read is a 404, one outside its scope a 400, a
        retired Context a 409."""
        services = state.services
        number = parse_context_id(context_id)

        def run() -> ContextVersionOut:
            with services.acting_for(token, write=True) as conn:
                return add_version_on(conn, services.retriever, number, data)

        return await services.write(run)

    @get("/{context_id:str}/versions", summary="List a Context's versions", responses=problems(400, 401, 404, 503))
    async def versions(self, context_id: ContextId, state: State, token: NamedDependency[str]) -> ContextVersionList:
        """Newest first: every version for readers of its scope, the subscribed one for a subscriber."""
        services = state.services
        number = parse_context_id(context_id)

        def run() -> ContextVersionList:
            with services.acting_for(token) as conn:
                return list_versions_on(conn, number)

        return await services.read(run)

    @delete(
        "/{ref:str}",
        status_code=200,
        summary="Retire a Context",
        responses=problems(400, 401, 403, 404, 409, 503),
    )
    async def retire(
        self,
        ref: Annotated[str, Parameter(pattern=CONTEXT_ID_PATTERN, max_length=23, description="ctx_<id> or <id>")],
        state: State,
        token: NamedDependency[str],
    ) -> ContextOut:
        """Out of listings and retrieval; still readable by reference, with its versions
        and subscriptions (audit). Needs a write grant on its scope; retiring twice is a 409.
        (The path names the Context, `ctx_<id>`, not a version.)"""
        services = state.services
        number = parse_context_id(ref)

        def run() -> ContextOut:
            with services.acting_for(token, write=True) as conn:
                return retire_context_on(conn, number)

        return await services.write(run)

    @post(
        "/{context_id:str}/subscriptions",
        status_code=201,
        summary="Publish a Context to another org or repo",
        responses=problems(*BODY_ERRORS, 404, 409),
    )
    async def subscribe(
        self, context_id: ContextId, data: JSONBody[SubscriptionCreate], state: State, token: NamedDependency[str]
    ) -> SubscriptionOut:
        """A grant on the bundle, not a copy: the subscriber org's principals (of one
        repo, or all) read exactly the members of the pinned version, or of the newest,
        until it is revoked. Needs a write grant on the Context's scope (403)."""
        services = state.services
        number = parse_context_id(context_id)

        def run() -> SubscriptionOut:
            with services.acting_for(token, write=True) as conn:
                return subscribe_on(conn, number, data)

        return await services.write(run)

    @get(
        "/{context_id:str}/subscriptions",
        summary="List a Context's subscriptions",
        responses=problems(400, 401, 404, 503),
    )
    async def subscriptions(
        self,
        context_id: ContextId,
        state: State,
        token: NamedDependency[str],
        include_revoked: Annotated[bool, Parameter(description="Revoked subscriptions too")] = False,
    ) -> SubscriptionList:
        """All of them for its publisher, a subscriber's own for a subscriber."""
        services = state.services
        number = parse_context_id(context_id)

        def run() -> SubscriptionList:
            with services.acting_for(token) as conn:
                get_context_on(conn, number)
                return list_subscriptions_on(conn, number, include_revoked)

        return await services.read(run)

    @delete(
        "/{context_id:str}/subscriptions/{subscription_id:str}",
        status_code=200,
        summary="Revoke a subscription",
        responses=problems(400, 401, 403, 404, 409, 503),
    )
    async def unsubscribe(
        self,
        context_id: ContextId,
        subscription_id: Annotated[str, Parameter(pattern=r"^[1-9][0-9]{0,18}$", max_length=19)],
        state: State,
        token: NamedDependency[str],
    ) -> SubscriptionOut:
        """By the publisher (a write grant on the Context's scope) or the subscriber (a
        write grant on its subscriber scope). The row stays, revoked (audit)."""
        services = state.services
        number = parse_context_id(context_id)
        sid = parse_context_id(subscription_id)

        def run() -> SubscriptionOut:
            with services.acting_for(token, write=True) as conn:
                listed = list_subscriptions_on(conn, number, include_revoked=True).subscriptions
                if sid not in {s.subscription_id for s in listed}:
                    raise NotFoundException(f"unknown subscription of ctx_{number}: {sid}")
                return unsubscribe_on(conn, sid)

        return await services.write(run)
