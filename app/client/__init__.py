"""A typed Python client of the Contexts HTTP API, sync (`Client`) and async
(`AsyncClient`), on httpx. Bodies are the server's own msgspec structs (app.wire.bodies), so
what the client sends is validated as the server validates it, and what it decodes is
exactly what the server encodes. Errors are `ContextsError`, carrying the problem
details the service answered (status, title, detail).

    from app.client import Client
    with Client("http://127.0.0.1:8000", key="ctx_...") as contexts:
        pack = contexts.open_session("acme", "fix the flaky storage test", repo_id="platform")
        print(pack.markdown)

Imports nothing of the server (no Litestar, no database driver, no models): the CLI's
remote commands answer in well under a second.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import datetime
from typing import Any, TypeVar
from urllib.parse import quote

import httpx
import msgspec

from app.wire.bodies import (
    ContextPack,
    DocumentDeleted,
    DocumentDetail,
    DocumentIn,
    DocumentPage,
    FragmentDetail,
    IngestRequest,
    IngestResponse,
    NotePromote,
    NoteResult,
    NoteWrite,
    PinCreate,
    PinList,
    PinOut,
    PromotedNote,
    RankingProfileList,
    RankingProfileOut,
    RankingProfileSet,
    RetrieveRequest,
    RetrieveResponse,
    ScopeIn,
    SessionOpen,
    SyncState,
    TraceOut,
    WhoamiOut,
)

__all__ = ["AsyncClient", "Client", "ContextsError"]

T = TypeVar("T")
DEFAULT_TIMEOUT = 60.0
URL_ENV, KEY_ENV = "CONTEXTS_URL", "CONTEXTS_KEY"


class ContextsError(Exception):
    """A refusal or failure of the service (its problem details), or no answer at all
    (status 0: the service could not be reached)."""

    def __init__(self, status: int, title: str, detail: str, body: Mapping[str, Any] | None = None) -> None:
        super().__init__(f"{title} ({status}): {detail}" if status else detail)
        self.status = status
        self.title = title
        self.detail = detail
        self.body = dict(body or {})


def _error(response: httpx.Response) -> ContextsError:
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and "detail" in body:
        return ContextsError(response.status_code, str(body.get("title", "")), str(body["detail"]), body)
    return ContextsError(response.status_code, response.reason_phrase, response.text[:500] or "no detail")


def _decode(response: httpx.Response, kind: type[T]) -> T:
    if response.status_code >= 400:
        raise _error(response)
    return msgspec.json.decode(response.content, type=kind)


def _body(struct: msgspec.Struct) -> bytes:
    # Validates on the way out too: a struct built in code skips decoding's checks.
    msgspec.convert(msgspec.to_builtins(struct), type(struct))
    return msgspec.json.encode(struct)


def _params(**values: object) -> dict[str, str]:
    out = {}
    for name, value in values.items():
        if value is None:
            continue
        if isinstance(value, bool):
            out[name] = "true" if value else "false"
        else:
            out[name] = value.isoformat() if isinstance(value, datetime) else str(value)
    return out


def _settings(url: str | None, key: str | None) -> tuple[str, str]:
    url = url or os.environ.get(URL_ENV)
    key = key or os.environ.get(KEY_ENV)
    if not url:
        raise ContextsError(0, "", f"no service URL: pass url= or set {URL_ENV}")
    if not key:
        raise ContextsError(0, "", f"no API key: pass key= or set {KEY_ENV}")
    return url.rstrip("/"), key


class _Requests:
    """Each call as (method, path, params, body, result type): one definition for both clients."""

    @staticmethod
    def retrieve(request: RetrieveRequest) -> tuple:
        return "POST", "/contexts/retrieve", None, _body(request), RetrieveResponse

    @staticmethod
    def ingest(scope: ScopeIn, documents: list[DocumentIn]) -> tuple:
        return "POST", "/documents", None, _body(IngestRequest(scope, documents)), IngestResponse

    @staticmethod
    def list_documents(org_id: str, **filters: object) -> tuple:
        return "GET", "/documents", _params(org_id=org_id, **filters), None, DocumentPage

    @staticmethod
    def get_document(doc_id: int, **options: object) -> tuple:
        return "GET", f"/documents/{int(doc_id)}", _params(**options), None, DocumentDetail

    @staticmethod
    def delete_document(doc_id: int) -> tuple:
        return "DELETE", f"/documents/{int(doc_id)}", None, None, DocumentDeleted

    @staticmethod
    def get_fragment(fragment_id: int) -> tuple:
        return "GET", f"/fragments/{int(fragment_id)}", None, None, FragmentDetail

    @staticmethod
    def get_trace(trace_id: str) -> tuple:
        return "GET", f"/traces/{trace_id}", None, None, TraceOut

    @staticmethod
    def whoami() -> tuple:
        return "GET", "/whoami", None, None, WhoamiOut

    @staticmethod
    def open_session(request: SessionOpen) -> tuple:
        return "POST", "/sessions", None, _body(request), ContextPack

    @staticmethod
    def write_note(session_id: str, note: NoteWrite) -> tuple:
        return "POST", f"/sessions/{session_id}/notes", None, _body(note), NoteResult

    @staticmethod
    def promote_note(session_id: str, note_id: int, target: NotePromote) -> tuple:
        path = f"/sessions/{session_id}/notes/{int(note_id)}/promote"
        return "POST", path, None, _body(target), PromotedNote

    @staticmethod
    def pin(request: PinCreate) -> tuple:
        return "POST", "/pins", None, _body(request), PinOut

    @staticmethod
    def unpin(pin_id: int) -> tuple:
        return "DELETE", f"/pins/{int(pin_id)}", None, None, PinOut

    @staticmethod
    def list_pins(org_id: str, **filters: object) -> tuple:
        return "GET", "/pins", _params(org_id=org_id, **filters), None, PinList

    @staticmethod
    def set_profile(request: RankingProfileSet) -> tuple:
        return "PUT", "/profiles", None, _body(request), RankingProfileOut

    @staticmethod
    def profile(org_id: str, persona_id: str | None = None) -> tuple:
        return "GET", "/profiles/effective", _params(org_id=org_id, persona_id=persona_id), None, RankingProfileOut

    @staticmethod
    def list_profiles(org_id: str) -> tuple:
        return "GET", "/profiles", _params(org_id=org_id), None, RankingProfileList

    @staticmethod
    def delete_profile(org_id: str, persona_id: str | None = None) -> tuple:
        return "DELETE", "/profiles", _params(org_id=org_id, persona_id=persona_id), None, RankingProfileOut

    @staticmethod
    def sync_state(org_id: str, repo_id: str) -> tuple:
        return "GET", f"/repos/{quote(repo_id, safe='')}/sync", _params(org_id=org_id), None, SyncState


def _pin_request(org_id: str, fragment_id: int, reason: str, options: dict[str, Any]) -> PinCreate:
    scope: dict[str, Any] = {k: options.pop(k) for k in ("repo_id", "persona_id", "session_id") if k in options}
    body: dict[str, Any] = {"scope": {"org_id": org_id, **scope}, "fragment_id": fragment_id, "reason": reason}
    return msgspec.convert(body | options, PinCreate)


def _retrieve_request(query: str, org_id: str, options: dict[str, Any]) -> RetrieveRequest:
    scope: dict[str, Any] = {k: options.pop(k) for k in ("repo_id", "persona_id", "session_id") if k in options}
    return msgspec.convert({"query": query, "scope": {"org_id": org_id, **scope}, **options}, RetrieveRequest)


def _session_request(org_id: str, task: str, options: dict[str, Any]) -> SessionOpen:
    scope: dict[str, Any] = {k: options.pop(k) for k in ("repo_id", "persona_id", "session_id") if k in options}
    return msgspec.convert({"scope": {"org_id": org_id, **scope}, "task": task, **options}, SessionOpen)


class Client:
    """Synchronous client. `url` and `key` default to CONTEXTS_URL and CONTEXTS_KEY."""

    def __init__(
        self,
        url: str | None = None,
        key: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        base, token = _settings(url, key)
        self._http = httpx.Client(
            base_url=base,
            headers={"Authorization": f"Bearer {token}", "Accept": "application/json"},
            timeout=timeout,
            transport=transport,
            trust_env=False,
        )

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def _call(self, call: tuple) -> Any:
        method, path, params, body, kind = call
        headers = {"Content-Type": "application/json"} if body is not None else None
        try:
            response = self._http.request(method, path, params=params, content=body, headers=headers)
        except httpx.HTTPError as exc:
            raise ContextsError(0, "", f"cannot reach {self._http.base_url}: {exc}") from exc
        return _decode(response, kind)

    def retrieve(self, query: str, org_id: str, **options: Any) -> RetrieveResponse:
        """Options are RetrieveRequest's fields (budget_tokens, top_k, min_relevance, kinds,
        ...) and the scope's repo_id, persona_id, session_id."""
        return self._call(_Requests.retrieve(_retrieve_request(query, org_id, options)))

    def send(self, request: RetrieveRequest) -> RetrieveResponse:
        """A retrieval request built beforehand."""
        return self._call(_Requests.retrieve(request))

    def ingest(self, scope: ScopeIn, documents: list[DocumentIn]) -> IngestResponse:
        return self._call(_Requests.ingest(scope, documents))

    def list_documents(self, org_id: str, **filters: Any) -> DocumentPage:
        """Filters: repo_id, persona_id, session_id, path_prefix, kind, owner, updated_since, limit, after."""
        return self._call(_Requests.list_documents(org_id, **filters))

    def get_document(self, doc_id: int, **options: Any) -> DocumentDetail:
        return self._call(_Requests.get_document(doc_id, **options))

    def delete_document(self, doc_id: int) -> DocumentDeleted:
        return self._call(_Requests.delete_document(doc_id))

    def get_fragment(self, fragment_id: int) -> FragmentDetail:
        return self._call(_Requests.get_fragment(fragment_id))

    def get_trace(self, trace_id: str) -> TraceOut:
        return self._call(_Requests.get_trace(trace_id))

    def whoami(self) -> WhoamiOut:
        return self._call(_Requests.whoami())

    def open_session(self, org_id: str, task: str, **options: Any) -> ContextPack:
        """Options: repo_id, persona_id, session_id (reuse), budget_tokens, top_k, min_relevance,
        negatives."""
        return self._call(_Requests.open_session(_session_request(org_id, task, options)))

    def write_note(self, session_id: str, text: str, **options: Any) -> NoteResult:
        return self._call(_Requests.write_note(session_id, msgspec.convert({"text": text, **options}, NoteWrite)))

    def pin(self, org_id: str, fragment_id: int, reason: str, **options: Any) -> PinOut:
        """options: repo_id, persona_id, session_id (the pin's scope), expires_at."""
        return self._call(_Requests.pin(_pin_request(org_id, fragment_id, reason, options)))

    def unpin(self, pin_id: int) -> PinOut:
        return self._call(_Requests.unpin(pin_id))

    def list_pins(self, org_id: str, **filters: Any) -> PinList:
        return self._call(_Requests.list_pins(org_id, **filters))

    def set_profile(self, org_id: str, **fields: Any) -> RankingProfileOut:
        """fields: persona_id (none: the org default), w_rerank, w_freshness, w_authority,
        w_pinned, w_persona, halflife_days ({kind: days}), description."""
        return self._call(_Requests.set_profile(msgspec.convert({"org_id": org_id, **fields}, RankingProfileSet)))

    def profile(self, org_id: str, persona_id: str | None = None) -> RankingProfileOut:
        return self._call(_Requests.profile(org_id, persona_id))

    def list_profiles(self, org_id: str) -> RankingProfileList:
        return self._call(_Requests.list_profiles(org_id))

    def delete_profile(self, org_id: str, persona_id: str | None = None) -> RankingProfileOut:
        return self._call(_Requests.delete_profile(org_id, persona_id))

    def sync_state(self, org_id: str, repo_id: str) -> SyncState:
        """The repo's last `contexts sync` (ContextsError 404 when never synced)."""
        return self._call(_Requests.sync_state(org_id, repo_id))

    def promote_note(self, session_id: str, note_id: int, **target: Any) -> PromotedNote:
        return self._call(_Requests.promote_note(session_id, note_id, msgspec.convert(target, NotePromote)))


class AsyncClient:
    """The same calls as `Client`, awaited."""

    def __init__(
        self,
        url: str | None = None,
        key: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        base, token = _settings(url, key)
        self._http = httpx.AsyncClient(
            base_url=base,
            headers={"Authorization": f"Bearer {token}", "Accept": "application/json"},
            timeout=timeout,
            transport=transport,
            trust_env=False,
        )

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _call(self, call: tuple) -> Any:
        method, path, params, body, kind = call
        headers = {"Content-Type": "application/json"} if body is not None else None
        try:
            response = await self._http.request(method, path, params=params, content=body, headers=headers)
        except httpx.HTTPError as exc:
            raise ContextsError(0, "", f"cannot reach {self._http.base_url}: {exc}") from exc
        return _decode(response, kind)

    async def retrieve(self, query: str, org_id: str, **options: Any) -> RetrieveResponse:
        return await self._call(_Requests.retrieve(_retrieve_request(query, org_id, options)))

    async def send(self, request: RetrieveRequest) -> RetrieveResponse:
        return await self._call(_Requests.retrieve(request))

    async def ingest(self, scope: ScopeIn, documents: list[DocumentIn]) -> IngestResponse:
        return await self._call(_Requests.ingest(scope, documents))

    async def list_documents(self, org_id: str, **filters: Any) -> DocumentPage:
        return await self._call(_Requests.list_documents(org_id, **filters))

    async def get_document(self, doc_id: int, **options: Any) -> DocumentDetail:
        return await self._call(_Requests.get_document(doc_id, **options))

    async def delete_document(self, doc_id: int) -> DocumentDeleted:
        return await self._call(_Requests.delete_document(doc_id))

    async def get_fragment(self, fragment_id: int) -> FragmentDetail:
        return await self._call(_Requests.get_fragment(fragment_id))

    async def get_trace(self, trace_id: str) -> TraceOut:
        return await self._call(_Requests.get_trace(trace_id))

    async def whoami(self) -> WhoamiOut:
        return await self._call(_Requests.whoami())

    async def open_session(self, org_id: str, task: str, **options: Any) -> ContextPack:
        return await self._call(_Requests.open_session(_session_request(org_id, task, options)))

    async def write_note(self, session_id: str, text: str, **options: Any) -> NoteResult:
        note = msgspec.convert({"text": text, **options}, NoteWrite)
        return await self._call(_Requests.write_note(session_id, note))

    async def pin(self, org_id: str, fragment_id: int, reason: str, **options: Any) -> PinOut:
        return await self._call(_Requests.pin(_pin_request(org_id, fragment_id, reason, options)))

    async def unpin(self, pin_id: int) -> PinOut:
        return await self._call(_Requests.unpin(pin_id))

    async def list_pins(self, org_id: str, **filters: Any) -> PinList:
        return await self._call(_Requests.list_pins(org_id, **filters))

    async def sync_state(self, org_id: str, repo_id: str) -> SyncState:
        return await self._call(_Requests.sync_state(org_id, repo_id))

    async def promote_note(self, session_id: str, note_id: int, **target: Any) -> PromotedNote:
        return await self._call(_Requests.promote_note(session_id, note_id, msgspec.convert(target, NotePromote)))
