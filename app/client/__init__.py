"""The Python client inside the server's distribution: the light client
(app/client/light, shipped on its own as `contexts-client`, import `contexts_client`:
clients/python/) with two differences that keep earlier code working:

- answers decode into the server's own structs (app.wire.bodies), so `isinstance(x,
  app.wire.bodies.SyncState)` and the stricter request checks hold as before;
- the argument orders of earlier releases are still taken where no call can be read two
  ways (`retrieve(query, org_id)`, `open_session(org_id, task)`, `pin(org_id, fragment_id,
  reason)`, `ingest(scope, documents)`, `sync_state(org_id, repo_id)`, an org or org and
  persona given positionally to the listings and profiles): each has more positional
  arguments than the new form takes, so the count tells them apart. They warn
  (DeprecationWarning); new code uses the light client's rule: what the call is about
  positionally, everything else keyword-only.

    from app.client import Client
    with Client("http://127.0.0.1:8000", key="ctx_...") as contexts:
        pack = contexts.open_session("fix the flaky storage test", org_id="acme", repo_id="platform")
        print(pack.markdown)

Imports nothing of the server but app.wire (no Litestar, no database driver, no models):
the CLI's remote commands answer in well under a second.
"""

from __future__ import annotations

import functools
import inspect
import uuid
import warnings
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

import msgspec

from app.client import light
from app.client.light import (
    BadRequest,
    BadResponse,
    Conflict,
    ContextsError,
    Forbidden,
    InvalidCall,
    NotFound,
    RateLimited,
    ServerError,
    ServiceError,
    TimedOut,
    Unauthorized,
    Unreachable,
)
from app.wire import bodies

__all__ = [
    "AsyncClient",
    "BadRequest",
    "BadResponse",
    "Client",
    "Conflict",
    "ContextsError",
    "Forbidden",
    "InvalidCall",
    "NotFound",
    "RateLimited",
    "ServerError",
    "ServiceError",
    "TimedOut",
    "Unauthorized",
    "Unreachable",
]

LEGACY: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # method: (positional arguments now, positional arguments of earlier releases)
    "retrieve": (("query",), ("query", "org_id")),
    "open_session": (("task",), ("org_id", "task")),
    "ingest": (("documents",), ("scope", "documents")),
    "pin": (("fragment_id",), ("org_id", "fragment_id", "reason")),
    "sync_state": (("repo_id",), ("org_id", "repo_id")),
    "list_documents": ((), ("org_id",)),
    "list_pins": ((), ("org_id",)),
    "list_profiles": ((), ("org_id",)),
    "set_profile": ((), ("org_id",)),
    "profile": ((), ("org_id", "persona_id")),
    "delete_profile": ((), ("org_id", "persona_id")),
}


def _new_shape(name: str, args: tuple, kwargs: dict[str, Any]) -> tuple[tuple, dict[str, Any]]:
    """An earlier release's call as today's, or the call unchanged (today's shape, or one
    neither reads: the light client then refuses it with InvalidCall)."""
    now, before = LEGACY[name]
    legacy_scope = name == "ingest" and "scope" in kwargs
    if not (len(now) < len(args) <= len(before)) and not legacy_scope:
        return args, kwargs
    named = dict(zip(before, args))
    if set(named) & set(kwargs):
        return args, kwargs
    named |= kwargs
    if name == "ingest" and "scope" in named:
        scope = named.pop("scope")
        plain = msgspec.to_builtins(scope) if isinstance(scope, msgspec.Struct) else scope
        if not isinstance(plain, dict):
            return args, kwargs
        named |= {k: v for k, v in plain.items() if v is not None}
    moved = [p for p in before if p not in now]
    keywords = "the scope's fields (org_id=, repo_id=, ...)" if moved == ["scope"] else "=, ".join(moved) + "="
    warnings.warn(
        f"{name}: positional {', '.join(moved)} is the form of earlier releases; "
        f"pass {keywords} by keyword: {name}({', '.join([*now, '*'])}, ...)",
        DeprecationWarning,
        stacklevel=3,
    )
    return tuple(named.pop(p) for p in now if p in named), named


def _legacy(method: Callable) -> Callable:
    name = method.__name__
    if inspect.iscoroutinefunction(method):

        @functools.wraps(method)
        async def awaited(self: Any, *args: Any, **kwargs: Any) -> Any:
            args, kwargs = _new_shape(name, args, kwargs)
            return await method(self, *args, **kwargs)

        return awaited

    @functools.wraps(method)
    def called(self: Any, *args: Any, **kwargs: Any) -> Any:
        args, kwargs = _new_shape(name, args, kwargs)
        return method(self, *args, **kwargs)

    return called


class Client(light.Client):
    """The light client's `Client`, answering the server's structs and taking the
    argument orders of earlier releases (with a DeprecationWarning)."""

    bodies = bodies

    if TYPE_CHECKING:  # the same calls, answering the server's structs

        def __enter__(self) -> Client: ...

        def whoami(self) -> bodies.WhoamiOut: ...  # type: ignore[override]

        def retrieve(  # type: ignore[override]
            self,
            query: str,
            *,
            org_id: str | None = None,
            repo_id: str | None = None,
            persona_id: str | None = None,
            session_id: str | None = None,
            **options: Any,
        ) -> bodies.RetrieveResponse: ...

        def send(self, request: bodies.RetrieveRequest | Mapping[str, Any]) -> bodies.RetrieveResponse: ...  # type: ignore[override]

        def ingest(  # type: ignore[override]
            self,
            documents: Sequence[bodies.DocumentIn | Mapping[str, Any]],
            *,
            org_id: str | None = None,
            repo_id: str | None = None,
            persona_id: str | None = None,
            session_id: str | None = None,
        ) -> bodies.IngestResponse: ...

        def list_documents(  # type: ignore[override]
            self,
            *,
            org_id: str | None = None,
            repo_id: str | None = None,
            persona_id: str | None = None,
            session_id: str | None = None,
            path_prefix: str | None = None,
            kind: str | None = None,
            owner: str | None = None,
            updated_since: datetime | None = None,
            limit: int | None = None,
            after: int | None = None,
        ) -> bodies.DocumentPage: ...

        def get_document(  # type: ignore[override]
            self, doc_id: int, *, version: int | None = None, offset: int | None = None, max_chars: int | None = None
        ) -> bodies.DocumentDetail: ...

        def delete_document(self, doc_id: int) -> bodies.DocumentDeleted: ...  # type: ignore[override]

        def get_fragment(self, fragment_id: int) -> bodies.FragmentDetail: ...  # type: ignore[override]

        def get_trace(self, trace_id: str | uuid.UUID) -> bodies.TraceOut: ...  # type: ignore[override]

        def open_session(  # type: ignore[override]
            self,
            task: str,
            *,
            org_id: str | None = None,
            repo_id: str | None = None,
            persona_id: str | None = None,
            session_id: str | None = None,
            **options: Any,
        ) -> bodies.ContextPack: ...

        def write_note(self, session_id: str, text: str, **options: Any) -> bodies.NoteResult: ...  # type: ignore[override]

        def promote_note(  # type: ignore[override]
            self,
            session_id: str,
            note_id: int,
            *,
            repo_id: str | None = None,
            owner: str | None = None,
            path: str | None = None,
        ) -> bodies.PromotedNote: ...

        def pin(  # type: ignore[override]
            self,
            fragment_id: int,
            *,
            reason: str,
            org_id: str | None = None,
            repo_id: str | None = None,
            persona_id: str | None = None,
            session_id: str | None = None,
            expires_at: datetime | None = None,
        ) -> bodies.PinOut: ...

        def unpin(self, pin_id: int) -> bodies.PinOut: ...  # type: ignore[override]

        def list_pins(  # type: ignore[override]
            self,
            *,
            org_id: str | None = None,
            repo_id: str | None = None,
            persona_id: str | None = None,
            session_id: str | None = None,
            include_expired: bool = False,
        ) -> bodies.PinList: ...

        def set_profile(self, *, org_id: str | None = None, **fields: Any) -> bodies.RankingProfileOut: ...  # type: ignore[override]

        def profile(self, *, org_id: str | None = None, persona_id: str | None = None) -> bodies.RankingProfileOut: ...  # type: ignore[override]

        def list_profiles(self, *, org_id: str | None = None) -> bodies.RankingProfileList: ...  # type: ignore[override]

        def delete_profile(  # type: ignore[override]
            self, *, org_id: str | None = None, persona_id: str | None = None
        ) -> bodies.RankingProfileOut: ...

        def sync_state(self, repo_id: str, *, org_id: str | None = None) -> bodies.SyncState: ...  # type: ignore[override]

        def create_context(  # type: ignore[override]
            self,
            name: str,
            *,
            org_id: str | None = None,
            repo_id: str | None = None,
            persona_id: str | None = None,
            session_id: str | None = None,
            description: str = "",
        ) -> bodies.ContextOut: ...

        def list_contexts(  # type: ignore[override]
            self,
            *,
            org_id: str | None = None,
            repo_id: str | None = None,
            persona_id: str | None = None,
            session_id: str | None = None,
            include_retired: bool = False,
        ) -> bodies.ContextList: ...

        def read_context(  # type: ignore[override]
            self, ref: int | str, *, budget_tokens: int | None = None, query: str | None = None
        ) -> bodies.ContextRead: ...

        def add_context_version(self, context_id: int | str, **members: Any) -> bodies.ContextVersionOut: ...  # type: ignore[override]

        def list_context_versions(self, context_id: int | str) -> bodies.ContextVersionList: ...  # type: ignore[override]

        def retire_context(self, context_id: int | str) -> bodies.ContextOut: ...  # type: ignore[override]

        def subscribe(  # type: ignore[override]
            self,
            context_id: int | str,
            subscriber_org_id: str,
            *,
            subscriber_repo_id: str | None = None,
            version: int | None = None,
        ) -> bodies.SubscriptionOut: ...

        def list_context_subscriptions(  # type: ignore[override]
            self, context_id: int | str, *, include_revoked: bool = False
        ) -> bodies.SubscriptionList: ...

        def accept_subscription(self, context_id: int | str, subscription_id: int) -> bodies.SubscriptionOut: ...  # type: ignore[override]

        def revoke_subscription(self, context_id: int | str, subscription_id: int) -> bodies.SubscriptionOut: ...  # type: ignore[override]

        def list_subscriptions(  # type: ignore[override]
            self, *, state: str | None = None, include_revoked: bool = False
        ) -> bodies.SubscriptionList: ...

        def add_rule(  # type: ignore[override]
            self,
            name: str,
            context: int | str,
            *,
            org_id: str | None = None,
            repo_id: str | None = None,
            **options: Any,
        ) -> bodies.RuleOut: ...

        def list_rules(self, *, org_id: str | None = None, repo_id: str | None = None) -> bodies.RuleList: ...  # type: ignore[override]

        def delete_rule(self, rule_id: int) -> bodies.RuleOut: ...  # type: ignore[override]


class AsyncClient(light.AsyncClient):
    """The light client's `AsyncClient`, answering the server's structs and taking the
    argument orders of earlier releases (with a DeprecationWarning)."""

    bodies = bodies


for _name in LEGACY:
    setattr(Client, _name, _legacy(getattr(light.Client, _name)))
    setattr(AsyncClient, _name, _legacy(getattr(light.AsyncClient, _name)))
