"""The calls, one definition each (`_Calls`: method, path, query, body, answer type),
made by the sync `Client` and the async `AsyncClient`.

The rule for arguments, every method alike: what the call is about comes first and
positionally (the query, the task, the note's text, or the ids in the URL path: a
session's id, a document's id); everything else is keyword-only, `org_id` included, which
defaults to the client's `org_id=` or else the key's own org (asked once, from /whoami)."""

from __future__ import annotations

import functools
import inspect
import os
import re
import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, ParamSpec, TypeVar
from urllib.parse import quote

import httpx
import msgspec

from . import types
from .errors import BadResponse, ContextsError, InvalidCall, TimedOut, Unreachable, service_error

P = ParamSpec("P")
R = TypeVar("R")
DEFAULT_TIMEOUT = 60.0
URL_ENV, KEY_ENV = "CONTEXTS_URL", "CONTEXTS_KEY"
SCOPE = ("repo_id", "persona_id", "session_id")
RULE = (
    "what the call is about (query, task, text, or the ids in the path) is positional; "
    "everything else, org_id included, is keyword-only"
)

Call = tuple[str, str, dict[str, str] | None, bytes | None, str]
"""(method, path, query parameters, JSON body, name of the answer's type)."""


def checked(method: Callable[P, R]) -> Callable[P, R]:
    """Binds a call to `method`'s signature first: a missing, extra or misplaced argument
    is an InvalidCall naming the method's signature and the rule, not a bare TypeError."""
    signature = inspect.signature(method)
    parameters = list(signature.parameters.values())[1:]  # without self

    def check(args: tuple, kwargs: dict) -> None:
        try:
            signature.bind(*args, **kwargs)
        except TypeError as exc:
            plain = [p.replace(annotation=p.empty) for p in parameters]
            shown = str(signature.replace(parameters=plain, return_annotation=signature.empty))
            raise InvalidCall(f"{method.__name__}{shown}: {exc} ({RULE})") from None

    if inspect.iscoroutinefunction(method):

        @functools.wraps(method)
        async def awaited(*args: Any, **kwargs: Any) -> Any:
            check(args, kwargs)
            return await method(*args, **kwargs)

        return awaited  # type: ignore[return-value]

    @functools.wraps(method)
    def called(*args: P.args, **kwargs: P.kwargs) -> R:
        check(args, kwargs)
        return method(*args, **kwargs)

    return called


def _text(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise InvalidCall(f"{name} must be a str, got {type(value).__name__} {value!r:.80}")
    if not value.strip():
        raise InvalidCall(f"{name} must not be empty")
    return value


MAX_ID = 2**63 - 1
"""Ids are PostgreSQL bigints."""


def _id(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidCall(f"{name} must be an int, got {type(value).__name__} {value!r:.80}")
    if not 1 <= value <= MAX_ID:
        raise InvalidCall(f"{name} must be a positive int of at most 2**63 - 1, got {value}")
    return value


def _segment(name: str, value: object) -> str:
    """A string id placed in the URL path, escaped. `.` and `..` are refused: the URL
    would be resolved to another endpoint (`/contexts/../subscriptions`); so is `/`,
    which the service decodes before routing."""
    if isinstance(value, uuid.UUID):
        value = str(value)
    text = _text(name, value)
    if text in (".", "..") or "/" in text:
        raise InvalidCall(f"{name} {text!r:.80} cannot be named in a URL path (no '/', '.' or '..')")
    return quote(text, safe="")


CONTEXT_ID = re.compile(r"(?:ctx_)?[1-9][0-9]{0,17}")
CONTEXT_REF = re.compile(r"(ctx_[1-9][0-9]{0,17})(@(?:[1-9][0-9]{0,8}|latest))?")


def _context_ref(name: str, value: object, versioned: bool = False) -> str:
    """A Context named by its id (12) or as the service writes it (`ctx_12`); with
    `versioned`, a version (`ctx_12@3`, `ctx_12@latest`), an id alone meaning its newest."""
    if isinstance(value, int) and not isinstance(value, bool):
        return f"ctx_{_id(name, value)}" + ("@latest" if versioned else "")
    if not isinstance(value, str):
        raise InvalidCall(f"{name} must be an int or a str such as 'ctx_12', got {type(value).__name__} {value!r:.80}")
    if not versioned:
        if CONTEXT_ID.fullmatch(value) is None:
            raise InvalidCall(f"{name} must be a Context id such as 12 or 'ctx_12', got {value!r:.80}")
        return value
    found = CONTEXT_REF.fullmatch(value)
    if found is None:
        raise InvalidCall(f"{name} must be 'ctx_<id>@<version>', 'ctx_<id>@latest' or an id, got {value!r:.80}")
    return value if found.group(2) else value + "@latest"


def _context(name: str, value: object, versioned: bool = False) -> str:
    """_context_ref, escaped for the URL path."""
    return quote(_context_ref(name, value, versioned), safe="")


def _flag(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise InvalidCall(f"{name} must be a bool, got {type(value).__name__} {value!r:.80}")
    return value


def _count(name: str, value: object) -> int | None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        raise InvalidCall(f"{name} must be an int, got {type(value).__name__} {value!r:.80}")
    return value


def _maybe_text(name: str, value: object) -> str | None:
    return None if value is None else _text(name, value)


def _convert(payload: object, kind: type[R], what: str) -> R:
    try:
        return msgspec.convert(payload, kind)
    except msgspec.ValidationError as exc:
        raise InvalidCall(f"{what}: {exc}") from None


def _plain(value: object, what: str) -> object:
    """A struct or a mapping as builtins, for converting into this client's types."""
    if isinstance(value, msgspec.Struct):
        return msgspec.to_builtins(value)
    if isinstance(value, Mapping):
        return dict(value)
    raise InvalidCall(f"{what} must be a mapping or a msgspec struct, got {type(value).__name__}")


def _body(payload: object, kind: type, what: str) -> bytes:
    return msgspec.json.encode(_convert(payload, kind, what))


def _params(**values: object) -> dict[str, str]:
    out = {}
    for name, value in values.items():
        if value is None:
            continue
        if isinstance(value, bool):
            out[name] = "true" if value else "false"
        elif isinstance(value, datetime):
            out[name] = value.isoformat()
        elif isinstance(value, str | int | float):
            out[name] = str(value)
        else:
            raise InvalidCall(f"{name} must be a str, int, float, bool or datetime, got {type(value).__name__}")
    return out


def _options(options: dict[str, Any], *taken: str) -> dict[str, Any]:
    """Keyword options, none of which may replace what the method's own arguments set."""
    clash = sorted(set(options) & {"scope", "org_id", *SCOPE, *taken})
    if clash:
        raise InvalidCall(f"{', '.join(clash)}: set by the method's own arguments, not an option")
    return options


def _scope(org_id: str, scope: Mapping[str, object]) -> dict[str, object]:
    named: dict[str, object] = {k: _text(k, v) for k, v in scope.items() if v is not None}
    return {"org_id": org_id} | named


class _Calls:
    """Each endpoint once: the request it makes, for a resolved org."""

    def __init__(self, bodies: Any) -> None:
        self.bodies = bodies

    def retrieve(self, query: str, org_id: str, scope: dict, options: dict) -> Call:
        payload = {"query": _text("query", query), "scope": _scope(org_id, scope), **_options(options, "query")}
        return (
            "POST",
            "/contexts/retrieve",
            None,
            _body(payload, self.bodies.RetrieveRequest, "retrieve"),
            "RetrieveResponse",
        )

    def send(self, request: object) -> Call:
        payload = _plain(request, "request")
        return (
            "POST",
            "/contexts/retrieve",
            None,
            _body(payload, self.bodies.RetrieveRequest, "send"),
            "RetrieveResponse",
        )

    def ingest(self, documents: object, org_id: str, scope: dict) -> Call:
        if isinstance(documents, str | bytes | Mapping | msgspec.Struct) or not isinstance(documents, Sequence):
            raise InvalidCall(f"documents must be a list of documents, got {type(documents).__name__}")
        items = [_plain(d, f"documents[{i}]") for i, d in enumerate(documents)]
        payload = {"scope": _scope(org_id, scope), "documents": items}
        return "POST", "/documents", None, _body(payload, self.bodies.IngestRequest, "ingest"), "IngestResponse"

    def list_documents(self, org_id: str, filters: dict) -> Call:
        return "GET", "/documents", _params(org_id=org_id, **filters), None, "DocumentPage"

    def get_document(self, doc_id: int, options: dict) -> Call:
        return "GET", f"/documents/{_id('doc_id', doc_id)}", _params(**options), None, "DocumentDetail"

    def delete_document(self, doc_id: int) -> Call:
        return "DELETE", f"/documents/{_id('doc_id', doc_id)}", None, None, "DocumentDeleted"

    def get_fragment(self, fragment_id: int) -> Call:
        return "GET", f"/fragments/{_id('fragment_id', fragment_id)}", None, None, "FragmentDetail"

    def get_trace(self, trace_id: str | uuid.UUID) -> Call:
        return "GET", f"/traces/{_segment('trace_id', trace_id)}", None, None, "TraceOut"

    def whoami(self) -> Call:
        return "GET", "/whoami", None, None, "WhoamiOut"

    def open_session(self, task: str, org_id: str, scope: dict, options: dict) -> Call:
        payload = {"scope": _scope(org_id, scope), "task": _text("task", task), **_options(options, "task")}
        return "POST", "/sessions", None, _body(payload, self.bodies.SessionOpen, "open_session"), "ContextPack"

    def write_note(self, session_id: str, text: str, options: dict) -> Call:
        payload = {"text": _text("text", text), **_options(options, "text", "session_id")}
        path = f"/sessions/{_segment('session_id', session_id)}/notes"
        return "POST", path, None, _body(payload, self.bodies.NoteWrite, "write_note"), "NoteResult"

    def promote_note(self, session_id: str, note_id: int, target: dict) -> Call:
        path = f"/sessions/{_segment('session_id', session_id)}/notes/{_id('note_id', note_id)}/promote"
        return "POST", path, None, _body(target, self.bodies.NotePromote, "promote_note"), "PromotedNote"

    def pin(self, fragment_id: int, reason: str, org_id: str, scope: dict, expires_at: datetime | None) -> Call:
        payload = {
            "scope": _scope(org_id, scope),
            "fragment_id": _id("fragment_id", fragment_id),
            "reason": _text("reason", reason),
            "expires_at": expires_at,
        }
        return "POST", "/pins", None, _body(payload, self.bodies.PinCreate, "pin"), "PinOut"

    def unpin(self, pin_id: int) -> Call:
        return "DELETE", f"/pins/{_id('pin_id', pin_id)}", None, None, "PinOut"

    def list_pins(self, org_id: str, filters: dict) -> Call:
        return "GET", "/pins", _params(org_id=org_id, **filters), None, "PinList"

    def set_profile(self, org_id: str, fields: dict) -> Call:
        payload = {"org_id": org_id, **fields}
        return (
            "PUT",
            "/profiles",
            None,
            _body(payload, self.bodies.RankingProfileSet, "set_profile"),
            "RankingProfileOut",
        )

    def profile(self, org_id: str, persona_id: str | None) -> Call:
        return "GET", "/profiles/effective", _params(org_id=org_id, persona_id=persona_id), None, "RankingProfileOut"

    def list_profiles(self, org_id: str) -> Call:
        return "GET", "/profiles", _params(org_id=org_id), None, "RankingProfileList"

    def delete_profile(self, org_id: str, persona_id: str | None) -> Call:
        return "DELETE", "/profiles", _params(org_id=org_id, persona_id=persona_id), None, "RankingProfileOut"

    def sync_state(self, repo_id: str, org_id: str) -> Call:
        # The query form: a repo id may hold a `/`, which no path segment can carry.
        return "GET", "/sync", _params(org_id=org_id, repo_id=_text("repo_id", repo_id)), None, "SyncState"

    def create_context(self, name: str, org_id: str, scope: dict, description: str) -> Call:
        payload = {"scope": _scope(org_id, scope), "name": _text("name", name), "description": description}
        return "POST", "/contexts", None, _body(payload, self.bodies.ContextCreate, "create_context"), "ContextOut"

    def list_contexts(self, org_id: str, scope: dict, include_retired: bool) -> Call:
        params = _params(**_scope(org_id, scope), include_retired=_flag("include_retired", include_retired))
        return "GET", "/contexts", params, None, "ContextList"

    def read_context(self, ref: object, budget_tokens: int | None, query: str | None) -> Call:
        params = _params(budget_tokens=_count("budget_tokens", budget_tokens), query=_maybe_text("query", query))
        return "GET", f"/contexts/{_context('ref', ref, versioned=True)}", params, None, "ContextRead"

    def add_context_version(self, context_id: object, members: dict) -> Call:
        path = f"/contexts/{_context('context_id', context_id)}/versions"
        body = _body(members, self.bodies.ContextVersionCreate, "add_context_version")
        return "POST", path, None, body, "ContextVersionOut"

    def list_context_versions(self, context_id: object) -> Call:
        return "GET", f"/contexts/{_context('context_id', context_id)}/versions", None, None, "ContextVersionList"

    def retire_context(self, context_id: object) -> Call:
        return "DELETE", f"/contexts/{_context('context_id', context_id)}", None, None, "ContextOut"

    def subscribe(self, context_id: object, subscriber_org_id: str, options: dict) -> Call:
        payload = {"subscriber_org_id": _text("subscriber_org_id", subscriber_org_id), **options}
        path = f"/contexts/{_context('context_id', context_id)}/subscriptions"
        return "POST", path, None, _body(payload, self.bodies.SubscriptionCreate, "subscribe"), "SubscriptionOut"

    def list_context_subscriptions(self, context_id: object, include_revoked: bool) -> Call:
        path = f"/contexts/{_context('context_id', context_id)}/subscriptions"
        return "GET", path, _params(include_revoked=_flag("include_revoked", include_revoked)), None, "SubscriptionList"

    def accept_subscription(self, context_id: object, subscription_id: int) -> Call:
        path = (
            f"/contexts/{_context('context_id', context_id)}/subscriptions/"
            f"{_id('subscription_id', subscription_id)}/accept"
        )
        return "POST", path, None, None, "SubscriptionOut"

    def revoke_subscription(self, context_id: object, subscription_id: int) -> Call:
        path = f"/contexts/{_context('context_id', context_id)}/subscriptions/{_id('subscription_id', subscription_id)}"
        return "DELETE", path, None, None, "SubscriptionOut"

    def list_subscriptions(self, state: str | None, include_revoked: bool) -> Call:
        params = _params(state=_maybe_text("state", state), include_revoked=_flag("include_revoked", include_revoked))
        return "GET", "/subscriptions", params, None, "SubscriptionList"

    def add_rule(self, name: str, context: object, org_id: str, repo_id: str | None, options: dict) -> Call:
        payload = {
            "org_id": org_id,
            "repo_id": _maybe_text("repo_id", repo_id),
            "name": _text("name", name),
            "context": _context_ref("context", context, versioned=True),
            **options,
        }
        return "POST", "/rules", None, _body(payload, self.bodies.RuleCreate, "add_rule"), "RuleOut"

    def list_rules(self, org_id: str, repo_id: str | None) -> Call:
        return "GET", "/rules", _params(org_id=org_id, repo_id=_maybe_text("repo_id", repo_id)), None, "RuleList"

    def delete_rule(self, rule_id: int) -> Call:
        return "DELETE", f"/rules/{_id('rule_id', rule_id)}", None, None, "RuleOut"


def _settings(url: str | None, key: str | None, org_id: str | None) -> tuple[str, str, str | None]:
    url = url or os.environ.get(URL_ENV)
    key = key or os.environ.get(KEY_ENV)
    if not url:
        raise InvalidCall(f"no service URL: pass url= or set {URL_ENV}")
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise InvalidCall(f"url must be an http:// or https:// URL, got {url!r:.80}")
    if not key:
        raise InvalidCall(f"no API key: pass key= or set {KEY_ENV}")
    if not isinstance(key, str):
        raise InvalidCall(f"key must be a str, got {type(key).__name__}")
    if org_id is not None:
        _text("org_id", org_id)
    return url.rstrip("/"), key, org_id


def _failure(exc: httpx.HTTPError | httpx.InvalidURL, base: httpx.URL) -> ContextsError:
    if isinstance(exc, httpx.InvalidURL):
        return InvalidCall(f"{base}: {exc}")
    if isinstance(exc, httpx.TimeoutException):
        return TimedOut(f"no answer from {base} within the timeout ({type(exc).__name__})")
    if isinstance(exc, httpx.TransportError):
        return Unreachable(f"cannot reach {base}: {exc or type(exc).__name__}")
    return Unreachable(f"{base}: {exc or type(exc).__name__}")


def _answer(response: httpx.Response, kind: type[R]) -> R:
    """The decoded answer, or the ContextsError it means."""
    if response.status_code >= 400:
        try:
            body = msgspec.json.decode(response.content)
        except msgspec.DecodeError:
            body = None
        if isinstance(body, dict) and "detail" in body:
            title = str(body.get("title") or response.reason_phrase)
            error = service_error(response.status_code, title, str(body["detail"]), body)
        else:
            detail = response.text[:500].strip() or "no detail"
            error = service_error(response.status_code, response.reason_phrase, detail, None)
        try:
            error.retry_after = float(response.headers.get("Retry-After", ""))
        except ValueError:
            pass
        raise error
    try:
        return msgspec.json.decode(response.content, type=kind)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        kind_of = response.headers.get("content-type", "no content type")
        detail = (
            f"{response.request.method} {response.request.url.path} answered {kind_of}, not a {kind.__name__}: {exc}"
        )
        raise BadResponse(response.status_code, "Unexpected answer", detail) from None


class _Base:
    """What both clients share: settings, the calls, the answer types."""

    bodies: Any = types
    """Where the request and answer structs come from (app.client uses the server's)."""

    def __init__(self, url: str | None, key: str | None, org_id: str | None) -> None:
        self._url, self._key, self._org_id = _settings(url, key, org_id)
        self._calls = _Calls(self.bodies)

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._key}", "Accept": "application/json"}

    def _kind(self, name: str) -> type:
        return getattr(self.bodies, name)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._url!r}, org_id={self._org_id!r})"


class Client(_Base):
    """Synchronous client. `url` and `key` default to CONTEXTS_URL and CONTEXTS_KEY;
    `org_id` (keyword) to the key's own org."""

    def __init__(
        self,
        url: str | None = None,
        key: str | None = None,
        *,
        org_id: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        super().__init__(url, key, org_id)
        try:
            self._http = httpx.Client(
                base_url=self._url, headers=self._headers(), timeout=timeout, transport=transport, trust_env=False
            )
        except httpx.InvalidURL as exc:
            raise InvalidCall(f"url {self._url!r:.80}: {exc}") from None

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def _call(self, call: Call) -> Any:
        method, path, params, body, kind = call
        headers = {"Content-Type": "application/json"} if body is not None else None
        try:
            response = self._http.request(method, path, params=params, content=body, headers=headers)
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            raise _failure(exc, self._http.base_url) from exc
        return _answer(response, self._kind(kind))

    def _prepare(self, org_id: str | None, build: Callable[[str], Call]) -> Call:
        """The call for the org given, the client's, or the key's: checked before /whoami
        is first asked, so a call refused is refused without a request."""
        if org_id is None and self._org_id is None:
            build("org")
        return build(self._org(org_id))

    def _org(self, org_id: str | None) -> str:
        if org_id is not None:
            return _text("org_id", org_id)
        if self._org_id is None:
            self._org_id = self.whoami().org_id
        return self._org_id

    @checked
    def whoami(self) -> types.WhoamiOut:
        """The key's principal: its org, and the scopes it may read."""
        return self._call(self._calls.whoami())

    @checked
    def retrieve(
        self,
        query: str,
        *,
        org_id: str | None = None,
        repo_id: str | None = None,
        persona_id: str | None = None,
        session_id: str | None = None,
        **options: Any,
    ) -> types.RetrieveResponse:
        """Cited fragments for `query`, within a token budget. Options are RetrieveRequest's
        fields: budget_tokens, top_k, min_relevance, kinds, path_prefix, updated_since, ..."""
        scope = {"repo_id": repo_id, "persona_id": persona_id, "session_id": session_id}
        return self._call(self._prepare(org_id, lambda org: self._calls.retrieve(query, org, scope, options)))

    @checked
    def send(self, request: types.RetrieveRequest | Mapping[str, Any]) -> types.RetrieveResponse:
        """A retrieval request built beforehand (a RetrieveRequest, or its fields as a dict)."""
        return self._call(self._calls.send(request))

    @checked
    def ingest(
        self,
        documents: Sequence[types.DocumentIn | Mapping[str, Any]],
        *,
        org_id: str | None = None,
        repo_id: str | None = None,
        persona_id: str | None = None,
        session_id: str | None = None,
    ) -> types.IngestResponse:
        """Writes documents ({"path", "content", "kind", "owner", ...}) into a scope; an
        unchanged document is not written again."""
        scope = {"repo_id": repo_id, "persona_id": persona_id, "session_id": session_id}
        return self._call(self._prepare(org_id, lambda org: self._calls.ingest(documents, org, scope)))

    @checked
    def list_documents(
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
    ) -> types.DocumentPage:
        """A page of documents (`after`: the previous page's `next_after`)."""
        filters: dict[str, object] = dict(
            repo_id=repo_id, persona_id=persona_id, session_id=session_id, path_prefix=path_prefix
        )
        filters |= dict(kind=kind, owner=owner, updated_since=updated_since, limit=limit, after=after)
        return self._call(self._prepare(org_id, lambda org: self._calls.list_documents(org, filters)))

    @checked
    def get_document(
        self, doc_id: int, *, version: int | None = None, offset: int | None = None, max_chars: int | None = None
    ) -> types.DocumentDetail:
        options = {"version": version, "offset": offset, "max_chars": max_chars}
        return self._call(self._calls.get_document(doc_id, options))

    @checked
    def delete_document(self, doc_id: int) -> types.DocumentDeleted:
        return self._call(self._calls.delete_document(doc_id))

    @checked
    def get_fragment(self, fragment_id: int) -> types.FragmentDetail:
        return self._call(self._calls.get_fragment(fragment_id))

    @checked
    def get_trace(self, trace_id: str | uuid.UUID) -> types.TraceOut:
        return self._call(self._calls.get_trace(trace_id))

    @checked
    def open_session(
        self,
        task: str,
        *,
        org_id: str | None = None,
        repo_id: str | None = None,
        persona_id: str | None = None,
        session_id: str | None = None,
        **options: Any,
    ) -> types.ContextPack:
        """Opens (or, with session_id, reopens) a session and answers its context pack for
        `task`. Options: budget_tokens, top_k, min_relevance, negatives, touching."""
        scope = {"repo_id": repo_id, "persona_id": persona_id, "session_id": session_id}
        return self._call(self._prepare(org_id, lambda org: self._calls.open_session(task, org, scope, options)))

    @checked
    def write_note(self, session_id: str, text: str, **options: Any) -> types.NoteResult:
        """A note in the session's scope. Options: path, kind, owner, metadata."""
        return self._call(self._calls.write_note(session_id, text, options))

    @checked
    def promote_note(
        self,
        session_id: str,
        note_id: int,
        *,
        repo_id: str | None = None,
        owner: str | None = None,
        path: str | None = None,
    ) -> types.PromotedNote:
        """Copies a session note to repo scope (repo_id) or org scope (none)."""
        target = {k: v for k, v in {"repo_id": repo_id, "owner": owner, "path": path}.items() if v is not None}
        return self._call(self._calls.promote_note(session_id, note_id, target))

    @checked
    def pin(
        self,
        fragment_id: int,
        *,
        reason: str,
        org_id: str | None = None,
        repo_id: str | None = None,
        persona_id: str | None = None,
        session_id: str | None = None,
        expires_at: datetime | None = None,
    ) -> types.PinOut:
        """Pins a fragment to the top of a scope."""
        scope = {"repo_id": repo_id, "persona_id": persona_id, "session_id": session_id}
        return self._call(
            self._prepare(org_id, lambda org: self._calls.pin(fragment_id, reason, org, scope, expires_at))
        )

    @checked
    def unpin(self, pin_id: int) -> types.PinOut:
        return self._call(self._calls.unpin(pin_id))

    @checked
    def list_pins(
        self,
        *,
        org_id: str | None = None,
        repo_id: str | None = None,
        persona_id: str | None = None,
        session_id: str | None = None,
        include_expired: bool = False,
    ) -> types.PinList:
        filters = dict(repo_id=repo_id, persona_id=persona_id, session_id=session_id, include_expired=include_expired)
        return self._call(self._prepare(org_id, lambda org: self._calls.list_pins(org, filters)))

    @checked
    def set_profile(self, *, org_id: str | None = None, **fields: Any) -> types.RankingProfileOut:
        """Fields: persona_id (none: the org default), w_rerank, w_freshness, w_authority,
        w_pinned, w_persona, halflife_days ({kind: days}), description."""
        return self._call(self._prepare(org_id, lambda org: self._calls.set_profile(org, fields)))

    @checked
    def profile(self, *, org_id: str | None = None, persona_id: str | None = None) -> types.RankingProfileOut:
        """The ranking profile a persona (or the org) uses."""
        return self._call(self._prepare(org_id, lambda org: self._calls.profile(org, persona_id)))

    @checked
    def list_profiles(self, *, org_id: str | None = None) -> types.RankingProfileList:
        return self._call(self._prepare(org_id, lambda org: self._calls.list_profiles(org)))

    @checked
    def delete_profile(self, *, org_id: str | None = None, persona_id: str | None = None) -> types.RankingProfileOut:
        return self._call(self._prepare(org_id, lambda org: self._calls.delete_profile(org, persona_id)))

    @checked
    def sync_state(self, repo_id: str, *, org_id: str | None = None) -> types.SyncState:
        """The repo's last `contexts sync` (NotFound when never synced)."""
        return self._call(self._prepare(org_id, lambda org: self._calls.sync_state(repo_id, org)))

    @checked
    def create_context(
        self,
        name: str,
        *,
        org_id: str | None = None,
        repo_id: str | None = None,
        persona_id: str | None = None,
        session_id: str | None = None,
        description: str = "",
    ) -> types.ContextOut:
        """A named, versioned bundle of fragments in a scope (org_id alone: org-wide)."""
        scope = {"repo_id": repo_id, "persona_id": persona_id, "session_id": session_id}
        return self._call(self._prepare(org_id, lambda org: self._calls.create_context(name, org, scope, description)))

    @checked
    def list_contexts(
        self,
        *,
        org_id: str | None = None,
        repo_id: str | None = None,
        persona_id: str | None = None,
        session_id: str | None = None,
        include_retired: bool = False,
    ) -> types.ContextList:
        """The Contexts the scope may name, its own and those it subscribes to."""
        scope = {"repo_id": repo_id, "persona_id": persona_id, "session_id": session_id}
        return self._call(self._prepare(org_id, lambda org: self._calls.list_contexts(org, scope, include_retired)))

    @checked
    def read_context(
        self, ref: int | str, *, budget_tokens: int | None = None, query: str | None = None
    ) -> types.ContextRead:
        """A version composed: `ctx_12@3`, `ctx_12@latest`, or an id (its newest version
        you may read); with `query`, its members best first for it."""
        return self._call(self._calls.read_context(ref, budget_tokens, query))

    @checked
    def add_context_version(self, context_id: int | str, **members: Any) -> types.ContextVersionOut:
        """Freezes a new version from any of fragment_ids, doc_ids, path_globs and a saved
        query ({"query": ..., "budget_tokens": ..., "top_k": ...}); `note` says why."""
        return self._call(self._calls.add_context_version(context_id, members))

    @checked
    def list_context_versions(self, context_id: int | str) -> types.ContextVersionList:
        return self._call(self._calls.list_context_versions(context_id))

    @checked
    def retire_context(self, context_id: int | str) -> types.ContextOut:
        return self._call(self._calls.retire_context(context_id))

    @checked
    def subscribe(
        self,
        context_id: int | str,
        subscriber_org_id: str,
        *,
        subscriber_repo_id: str | None = None,
        version: int | None = None,
    ) -> types.SubscriptionOut:
        """Publishes the Context to another org, or another repo of this one: a grant on
        the bundle, pending until a writer of the subscriber scope accepts it."""
        options = {"subscriber_repo_id": subscriber_repo_id, "version": version}
        return self._call(self._calls.subscribe(context_id, subscriber_org_id, options))

    @checked
    def list_context_subscriptions(
        self, context_id: int | str, *, include_revoked: bool = False
    ) -> types.SubscriptionList:
        return self._call(self._calls.list_context_subscriptions(context_id, include_revoked))

    @checked
    def accept_subscription(self, context_id: int | str, subscription_id: int) -> types.SubscriptionOut:
        return self._call(self._calls.accept_subscription(context_id, subscription_id))

    @checked
    def revoke_subscription(self, context_id: int | str, subscription_id: int) -> types.SubscriptionOut:
        return self._call(self._calls.revoke_subscription(context_id, subscription_id))

    @checked
    def list_subscriptions(self, *, state: str | None = None, include_revoked: bool = False) -> types.SubscriptionList:
        """The subscriptions you may see (`state`: pending, live or revoked)."""
        return self._call(self._calls.list_subscriptions(state, include_revoked))

    @checked
    def add_rule(
        self,
        name: str,
        context: int | str,
        *,
        org_id: str | None = None,
        repo_id: str | None = None,
        **options: Any,
    ) -> types.RuleOut:
        """A workflow rule: a retrieval whose `touching` matches path_globs or symbol_globs
        gets the Context's members (`ctx_12@3`, or an id: its newest version); options:
        path_globs, symbol_globs, expires_at, enabled."""
        return self._call(self._prepare(org_id, lambda org: self._calls.add_rule(name, context, org, repo_id, options)))

    @checked
    def list_rules(self, *, org_id: str | None = None, repo_id: str | None = None) -> types.RuleList:
        return self._call(self._prepare(org_id, lambda org: self._calls.list_rules(org, repo_id)))

    @checked
    def delete_rule(self, rule_id: int) -> types.RuleOut:
        return self._call(self._calls.delete_rule(rule_id))


class AsyncClient(_Base):
    """The same calls as `Client`, awaited."""

    def __init__(
        self,
        url: str | None = None,
        key: str | None = None,
        *,
        org_id: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        super().__init__(url, key, org_id)
        try:
            self._http = httpx.AsyncClient(
                base_url=self._url, headers=self._headers(), timeout=timeout, transport=transport, trust_env=False
            )
        except httpx.InvalidURL as exc:
            raise InvalidCall(f"url {self._url!r:.80}: {exc}") from None

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _call(self, call: Call) -> Any:
        method, path, params, body, kind = call
        headers = {"Content-Type": "application/json"} if body is not None else None
        try:
            response = await self._http.request(method, path, params=params, content=body, headers=headers)
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            raise _failure(exc, self._http.base_url) from exc
        return _answer(response, self._kind(kind))

    async def _prepare(self, org_id: str | None, build: Callable[[str], Call]) -> Call:
        if org_id is None and self._org_id is None:
            build("org")
        return build(await self._org(org_id))

    async def _org(self, org_id: str | None) -> str:
        if org_id is not None:
            return _text("org_id", org_id)
        if self._org_id is None:
            self._org_id = (await self.whoami()).org_id
        return self._org_id

    @checked
    async def whoami(self) -> types.WhoamiOut:
        """The key's principal: its org, and the scopes it may read."""
        return await self._call(self._calls.whoami())

    @checked
    async def retrieve(
        self,
        query: str,
        *,
        org_id: str | None = None,
        repo_id: str | None = None,
        persona_id: str | None = None,
        session_id: str | None = None,
        **options: Any,
    ) -> types.RetrieveResponse:
        """Cited fragments for `query`, within a token budget. Options are RetrieveRequest's
        fields: budget_tokens, top_k, min_relevance, kinds, path_prefix, updated_since, ..."""
        scope = {"repo_id": repo_id, "persona_id": persona_id, "session_id": session_id}
        return await self._call(
            await self._prepare(org_id, lambda org: self._calls.retrieve(query, org, scope, options))
        )

    @checked
    async def send(self, request: types.RetrieveRequest | Mapping[str, Any]) -> types.RetrieveResponse:
        """A retrieval request built beforehand (a RetrieveRequest, or its fields as a dict)."""
        return await self._call(self._calls.send(request))

    @checked
    async def ingest(
        self,
        documents: Sequence[types.DocumentIn | Mapping[str, Any]],
        *,
        org_id: str | None = None,
        repo_id: str | None = None,
        persona_id: str | None = None,
        session_id: str | None = None,
    ) -> types.IngestResponse:
        """Writes documents ({"path", "content", "kind", "owner", ...}) into a scope; an
        unchanged document is not written again."""
        scope = {"repo_id": repo_id, "persona_id": persona_id, "session_id": session_id}
        return await self._call(await self._prepare(org_id, lambda org: self._calls.ingest(documents, org, scope)))

    @checked
    async def list_documents(
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
    ) -> types.DocumentPage:
        """A page of documents (`after`: the previous page's `next_after`)."""
        filters: dict[str, object] = dict(
            repo_id=repo_id, persona_id=persona_id, session_id=session_id, path_prefix=path_prefix
        )
        filters |= dict(kind=kind, owner=owner, updated_since=updated_since, limit=limit, after=after)
        return await self._call(await self._prepare(org_id, lambda org: self._calls.list_documents(org, filters)))

    @checked
    async def get_document(
        self, doc_id: int, *, version: int | None = None, offset: int | None = None, max_chars: int | None = None
    ) -> types.DocumentDetail:
        options = {"version": version, "offset": offset, "max_chars": max_chars}
        return await self._call(self._calls.get_document(doc_id, options))

    @checked
    async def delete_document(self, doc_id: int) -> types.DocumentDeleted:
        return await self._call(self._calls.delete_document(doc_id))

    @checked
    async def get_fragment(self, fragment_id: int) -> types.FragmentDetail:
        return await self._call(self._calls.get_fragment(fragment_id))

    @checked
    async def get_trace(self, trace_id: str | uuid.UUID) -> types.TraceOut:
        return await self._call(self._calls.get_trace(trace_id))

    @checked
    async def open_session(
        self,
        task: str,
        *,
        org_id: str | None = None,
        repo_id: str | None = None,
        persona_id: str | None = None,
        session_id: str | None = None,
        **options: Any,
    ) -> types.ContextPack:
        """Opens (or, with session_id, reopens) a session and answers its context pack for
        `task`. Options: budget_tokens, top_k, min_relevance, negatives, touching."""
        scope = {"repo_id": repo_id, "persona_id": persona_id, "session_id": session_id}
        return await self._call(
            await self._prepare(org_id, lambda org: self._calls.open_session(task, org, scope, options))
        )

    @checked
    async def write_note(self, session_id: str, text: str, **options: Any) -> types.NoteResult:
        """A note in the session's scope. Options: path, kind, owner, metadata."""
        return await self._call(self._calls.write_note(session_id, text, options))

    @checked
    async def promote_note(
        self,
        session_id: str,
        note_id: int,
        *,
        repo_id: str | None = None,
        owner: str | None = None,
        path: str | None = None,
    ) -> types.PromotedNote:
        """Copies a session note to repo scope (repo_id) or org scope (none)."""
        target = {k: v for k, v in {"repo_id": repo_id, "owner": owner, "path": path}.items() if v is not None}
        return await self._call(self._calls.promote_note(session_id, note_id, target))

    @checked
    async def pin(
        self,
        fragment_id: int,
        *,
        reason: str,
        org_id: str | None = None,
        repo_id: str | None = None,
        persona_id: str | None = None,
        session_id: str | None = None,
        expires_at: datetime | None = None,
    ) -> types.PinOut:
        """Pins a fragment to the top of a scope."""
        scope = {"repo_id": repo_id, "persona_id": persona_id, "session_id": session_id}
        return await self._call(
            await self._prepare(org_id, lambda org: self._calls.pin(fragment_id, reason, org, scope, expires_at))
        )

    @checked
    async def unpin(self, pin_id: int) -> types.PinOut:
        return await self._call(self._calls.unpin(pin_id))

    @checked
    async def list_pins(
        self,
        *,
        org_id: str | None = None,
        repo_id: str | None = None,
        persona_id: str | None = None,
        session_id: str | None = None,
        include_expired: bool = False,
    ) -> types.PinList:
        filters = dict(repo_id=repo_id, persona_id=persona_id, session_id=session_id, include_expired=include_expired)
        return await self._call(await self._prepare(org_id, lambda org: self._calls.list_pins(org, filters)))

    @checked
    async def set_profile(self, *, org_id: str | None = None, **fields: Any) -> types.RankingProfileOut:
        """Fields: persona_id (none: the org default), w_rerank, w_freshness, w_authority,
        w_pinned, w_persona, halflife_days ({kind: days}), description."""
        return await self._call(await self._prepare(org_id, lambda org: self._calls.set_profile(org, fields)))

    @checked
    async def profile(self, *, org_id: str | None = None, persona_id: str | None = None) -> types.RankingProfileOut:
        """The ranking profile a persona (or the org) uses."""
        return await self._call(await self._prepare(org_id, lambda org: self._calls.profile(org, persona_id)))

    @checked
    async def list_profiles(self, *, org_id: str | None = None) -> types.RankingProfileList:
        return await self._call(await self._prepare(org_id, lambda org: self._calls.list_profiles(org)))

    @checked
    async def delete_profile(
        self, *, org_id: str | None = None, persona_id: str | None = None
    ) -> types.RankingProfileOut:
        return await self._call(await self._prepare(org_id, lambda org: self._calls.delete_profile(org, persona_id)))

    @checked
    async def sync_state(self, repo_id: str, *, org_id: str | None = None) -> types.SyncState:
        """The repo's last `contexts sync` (NotFound when never synced)."""
        return await self._call(await self._prepare(org_id, lambda org: self._calls.sync_state(repo_id, org)))

    @checked
    async def create_context(
        self,
        name: str,
        *,
        org_id: str | None = None,
        repo_id: str | None = None,
        persona_id: str | None = None,
        session_id: str | None = None,
        description: str = "",
    ) -> types.ContextOut:
        """A named, versioned bundle of fragments in a scope (org_id alone: org-wide)."""
        scope = {"repo_id": repo_id, "persona_id": persona_id, "session_id": session_id}
        return await self._call(
            await self._prepare(org_id, lambda org: self._calls.create_context(name, org, scope, description))
        )

    @checked
    async def list_contexts(
        self,
        *,
        org_id: str | None = None,
        repo_id: str | None = None,
        persona_id: str | None = None,
        session_id: str | None = None,
        include_retired: bool = False,
    ) -> types.ContextList:
        """The Contexts the scope may name, its own and those it subscribes to."""
        scope = {"repo_id": repo_id, "persona_id": persona_id, "session_id": session_id}
        return await self._call(
            await self._prepare(org_id, lambda org: self._calls.list_contexts(org, scope, include_retired))
        )

    @checked
    async def read_context(
        self, ref: int | str, *, budget_tokens: int | None = None, query: str | None = None
    ) -> types.ContextRead:
        """A version composed: `ctx_12@3`, `ctx_12@latest`, or an id (its newest version
        you may read); with `query`, its members best first for it."""
        return await self._call(self._calls.read_context(ref, budget_tokens, query))

    @checked
    async def add_context_version(self, context_id: int | str, **members: Any) -> types.ContextVersionOut:
        """Freezes a new version from any of fragment_ids, doc_ids, path_globs and a saved
        query ({"query": ..., "budget_tokens": ..., "top_k": ...}); `note` says why."""
        return await self._call(self._calls.add_context_version(context_id, members))

    @checked
    async def list_context_versions(self, context_id: int | str) -> types.ContextVersionList:
        return await self._call(self._calls.list_context_versions(context_id))

    @checked
    async def retire_context(self, context_id: int | str) -> types.ContextOut:
        return await self._call(self._calls.retire_context(context_id))

    @checked
    async def subscribe(
        self,
        context_id: int | str,
        subscriber_org_id: str,
        *,
        subscriber_repo_id: str | None = None,
        version: int | None = None,
    ) -> types.SubscriptionOut:
        """Publishes the Context to another org, or another repo of this one: a grant on
        the bundle, pending until a writer of the subscriber scope accepts it."""
        options = {"subscriber_repo_id": subscriber_repo_id, "version": version}
        return await self._call(self._calls.subscribe(context_id, subscriber_org_id, options))

    @checked
    async def list_context_subscriptions(
        self, context_id: int | str, *, include_revoked: bool = False
    ) -> types.SubscriptionList:
        return await self._call(self._calls.list_context_subscriptions(context_id, include_revoked))

    @checked
    async def accept_subscription(self, context_id: int | str, subscription_id: int) -> types.SubscriptionOut:
        return await self._call(self._calls.accept_subscription(context_id, subscription_id))

    @checked
    async def revoke_subscription(self, context_id: int | str, subscription_id: int) -> types.SubscriptionOut:
        return await self._call(self._calls.revoke_subscription(context_id, subscription_id))

    @checked
    async def list_subscriptions(
        self, *, state: str | None = None, include_revoked: bool = False
    ) -> types.SubscriptionList:
        """The subscriptions you may see (`state`: pending, live or revoked)."""
        return await self._call(self._calls.list_subscriptions(state, include_revoked))

    @checked
    async def add_rule(
        self,
        name: str,
        context: int | str,
        *,
        org_id: str | None = None,
        repo_id: str | None = None,
        **options: Any,
    ) -> types.RuleOut:
        """A workflow rule: a retrieval whose `touching` matches path_globs or symbol_globs
        gets the Context's members (`ctx_12@3`, or an id: its newest version); options:
        path_globs, symbol_globs, expires_at, enabled."""
        return await self._call(
            await self._prepare(org_id, lambda org: self._calls.add_rule(name, context, org, repo_id, options))
        )

    @checked
    async def list_rules(self, *, org_id: str | None = None, repo_id: str | None = None) -> types.RuleList:
        return await self._call(await self._prepare(org_id, lambda org: self._calls.list_rules(org, repo_id)))

    @checked
    async def delete_rule(self, rule_id: int) -> types.RuleOut:
        return await self._call(self._calls.delete_rule(rule_id))
