"""/contexts: Contexts, named and versioned bundles of fragments, and the subscriptions
that let another repo or org read one without a copy (docs/adr/0018): the HTTP
controller of the operations in app.operations.contexts."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, delete, get, post
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.exceptions import ValidationException
from litestar.params import JSONBody, Parameter, QueryParameter

from app.api.openapi import BODY_ERRORS, problems
from app.operations import contexts as operations
from app.operations.contexts import (
    CONTEXT_ID_PATTERN,
    parse_context_id,
    read_context,
)
from app.operations.fragments import parse_id
from app.wire.bodies import (
    IDENTIFIER_PATTERN,
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
    SubscriptionState,
)
from app.wire.retrieve import CONTEXT_REF_PATTERN, DEFAULT_BUDGET_TOKENS

ContextId = Annotated[str, Parameter(pattern=CONTEXT_ID_PATTERN, max_length=23, description="ctx_<id> or <id>")]


SubscriptionId = Annotated[str, Parameter(pattern=r"^[1-9][0-9]{0,18}$", max_length=19)]
ScopeId = Annotated[str | None, Parameter(pattern=IDENTIFIER_PATTERN, min_length=1, max_length=128)]


class ContextsController(Controller):
    path = "/contexts"
    tags = ["contexts"]

    @post("/", status_code=201, summary="Create a Context", responses=problems(*BODY_ERRORS, 404, 409))
    async def create(self, data: JSONBody[ContextCreate], state: State, token: NamedDependency[str]) -> ContextOut:
        """A named bundle of fragments in a scope, empty until its first version. Needs a
        write grant on the scope (403); a name taken by a live Context of the scope is a 409."""
        return await operations.create_context(state.services, token, data)

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
        scope = ScopeIn(org_id, repo_id, persona_id, session_id)
        return await operations.list_contexts(state.services, token, scope, include_retired)

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
        return await operations.add_version(state.services, token, parse_context_id(context_id), data)

    @get("/{context_id:str}/versions", summary="List a Context's versions", responses=problems(400, 401, 404, 503))
    async def versions(self, context_id: ContextId, state: State, token: NamedDependency[str]) -> ContextVersionList:
        """Newest first: every version for readers of its scope, the subscribed one for a subscriber."""
        return await operations.list_versions(state.services, token, parse_context_id(context_id))

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
        return await operations.retire_context(state.services, token, parse_context_id(ref))

    @post(
        "/{context_id:str}/subscriptions",
        status_code=201,
        summary="Publish a Context to another org or repo",
        responses=problems(*BODY_ERRORS, 404, 409),
    )
    async def subscribe(
        self, context_id: ContextId, data: JSONBody[SubscriptionCreate], state: State, token: NamedDependency[str]
    ) -> SubscriptionOut:
        """A grant on the bundle, not a copy: once a writer of the subscriber scope accepts
        it, the subscriber org's principals (of one repo, or all) read exactly the members
        of the pinned version, or of the newest, until it is revoked. Made by a principal
        that may write the subscriber scope itself, it is live at once; otherwise `pending`.
        Needs a write grant on the Context's scope (403)."""
        return await operations.subscribe(state.services, token, parse_context_id(context_id), data)

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
        return await operations.list_subscriptions(state.services, token, parse_context_id(context_id), include_revoked)

    @post(
        "/{context_id:str}/subscriptions/{subscription_id:str}/accept",
        status_code=200,
        summary="Accept a subscription offered to your scope",
        responses=problems(400, 401, 403, 404, 409, 415, 503),
    )
    async def accept(
        self,
        context_id: ContextId,
        subscription_id: SubscriptionId,
        state: State,
        token: NamedDependency[str],
    ) -> SubscriptionOut:
        """A subscription gives nothing until a writer of its subscriber scope (its repo, or
        the org for an org-wide one) accepts it; `GET /subscriptions?state=pending` lists the
        offers. Accepting one that is live or revoked is a 409."""
        number = parse_context_id(context_id)
        return await operations.accept(state.services, token, number, parse_id(subscription_id, "subscription"))

    @delete(
        "/{context_id:str}/subscriptions/{subscription_id:str}",
        status_code=200,
        summary="Revoke a subscription",
        responses=problems(400, 401, 403, 404, 409, 503),
    )
    async def unsubscribe(
        self,
        context_id: ContextId,
        subscription_id: SubscriptionId,
        state: State,
        token: NamedDependency[str],
    ) -> SubscriptionOut:
        """By the publisher (a write grant on the Context's scope) or the subscriber (a
        write grant on its subscriber scope). The row stays, revoked (audit)."""
        number = parse_context_id(context_id)
        return await operations.unsubscribe(state.services, token, number, parse_id(subscription_id, "subscription"))


class SubscriptionsController(Controller):
    path = "/subscriptions"
    tags = ["contexts"]

    @get("/", summary="List the subscriptions you may see", responses=problems(400, 401, 503))
    async def list_all(
        self,
        state: State,
        token: NamedDependency[str],
        include_revoked: Annotated[bool, Parameter(description="Revoked subscriptions too")] = False,
        subscription_state: Annotated[
            SubscriptionState | None, QueryParameter(name="state", description="Only pending, live or revoked ones")
        ] = None,
    ) -> SubscriptionList:
        """Those offered to your scopes (pending until a writer of that scope accepts them)
        and those of the Contexts you publish, of every Context."""
        return await operations.list_all_subscriptions(state.services, token, include_revoked, subscription_state)
