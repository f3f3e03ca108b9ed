"""The bodies the Contexts HTTP API takes and answers, as msgspec structs.

Generated from the service's own definitions (app.wire) by tests/client/wire_types.py:
do not edit by hand. Field names, types and defaults are the service's; its constraints
(lengths, patterns, bounds) are checked by the service, which answers a problem
(`contexts_client.BadRequest`). Answers may carry fields this version does not know:
they are ignored."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

__all__ = [
    "ContextCreate",
    "ContextList",
    "ContextOut",
    "ContextPack",
    "ContextRead",
    "ContextVersionCreate",
    "ContextVersionList",
    "ContextVersionOut",
    "DocumentDeleted",
    "DocumentDetail",
    "DocumentFragment",
    "DocumentIn",
    "DocumentPage",
    "DocumentResult",
    "DocumentSummary",
    "DocumentVersion",
    "EffectiveProfile",
    "FragmentDetail",
    "FragmentOut",
    "FragmentSource",
    "IngestRequest",
    "IngestResponse",
    "NotePromote",
    "NoteProvenance",
    "NoteResult",
    "NoteWrite",
    "PinCreate",
    "PinLeftOut",
    "PinList",
    "PinOut",
    "PromotedNote",
    "RankingProfileList",
    "RankingProfileOut",
    "RankingProfileSet",
    "RetrieveRequest",
    "RetrieveResponse",
    "RuleCreate",
    "RuleList",
    "RuleOut",
    "SavedQuery",
    "ScopeIn",
    "SessionOpen",
    "SubscriptionCreate",
    "SubscriptionList",
    "SubscriptionOut",
    "Superseder",
    "SyncState",
    "TraceCandidate",
    "TraceLeftOut",
    "TraceOut",
    "WhoamiOut",
]


class RetrieveRequest(msgspec.Struct, forbid_unknown_fields=True):
    query: str
    scope: ScopeIn
    budget_tokens: int = 4000
    k_lexical: int = 100
    k_dense: int = 100
    rerank_top: int = 50
    freshness_halflife_days: float | None = None
    min_score: float = 0.0
    top_k: int | None = None
    min_relevance: float = 0.0
    path_prefix: str | None = None
    kinds: list[str] | None = None
    updated_since: datetime | None = None
    updated_until: datetime | None = None
    negatives: str = "include"
    as_of: datetime | None = None
    include_superseded: bool = False
    expand_links: bool = False
    contexts: list[str] | None = None
    context_mode: str = "restrict"
    touching: list[str] | None = None
    generation: str = "active"


class RetrieveResponse(msgspec.Struct):
    fragments: list[FragmentOut]
    trace_id: str
    tokens_used: int
    budget_tokens: int
    pins_left_out: list[int] = []
    pins_left_out_reasons: list[PinLeftOut] = []


class IngestRequest(msgspec.Struct, forbid_unknown_fields=True):
    scope: ScopeIn
    documents: list[DocumentIn]


class IngestResponse(msgspec.Struct):
    documents: list[DocumentResult]


class DocumentPage(msgspec.Struct):
    documents: list[DocumentSummary]
    next_after: int | None


class DocumentDetail(msgspec.Struct):
    """One version of a document (api.get_document), its text or a slice of it."""

    doc_id: int
    org_id: str
    repo_id: str | None
    persona_id: str | None
    session_id: str | None
    path: str
    kind: str
    version: int
    current_version: int
    language: str | None
    author: str | None
    owner: str | None
    source_ts: datetime | None
    metadata: dict[str, Any]
    content_hash: str
    content: str
    content_chars: int
    content_offset: int
    created_at: datetime
    updated_at: datetime
    fragments: list[DocumentFragment]
    versions: list[DocumentVersion]


class DocumentDeleted(msgspec.Struct):
    """DELETE /documents/{id}: what left retrieval (the history stays, for audit)."""

    doc_id: int
    org_id: str
    path: str
    version: int
    fragments_retired: int
    rehomed: int


class FragmentDetail(msgspec.Struct):
    """A fragment, its provenance and every source pointer, live ones first (api.get_fragment)."""

    fragment_id: int
    org_id: str
    repo_id: str | None
    persona_id: str | None
    session_id: str | None
    doc_id: int | None
    doc_version: int | None
    namespace: str
    kind: str
    owner: str
    heading_path: list[str]
    symbol: str | None
    text: str
    token_count: int
    chunker_version: str
    simhash: str
    active: bool
    created_at: datetime
    updated_at: datetime
    embedding_model: str | None
    sources: list[FragmentSource]


class TraceOut(msgspec.Struct):
    trace_id: uuid.UUID
    org_id: str
    principal_id: str | None
    query: str | None
    request: dict[str, Any]
    pipeline: dict[str, Any]
    candidates: list[TraceCandidate]
    duration_ms: float | None
    created_at: datetime
    redacted: list[str] = []
    left_out: list[TraceLeftOut] = []


class WhoamiOut(msgspec.Struct):
    """api.whoami: who this key acts for and its read grants (expired sessions left out)."""

    org_id: str
    principal_id: str
    org_wide: bool
    repos: list[str]
    personas: list[str]
    sessions: list[str]
    audit: bool


class SessionOpen(msgspec.Struct, forbid_unknown_fields=True):
    """POST /sessions: open (or, with scope.session_id, reuse) a session and get the
    context pack for a task."""

    scope: ScopeIn
    task: str
    budget_tokens: int = 4000
    top_k: int | None = None
    min_relevance: float = 0.0
    negatives: str = "include"
    touching: list[str] | None = None


class ContextPack(msgspec.Struct):
    """A session's opening context, within the budget, structured and rendered as one
    Markdown block with each citation: first the pins the scope sees (`pinned`, in pin
    order, whatever their relevance) and the negative fragments among the matches
    (`negative`: anti-patterns, known traps), then the fragments best matching the task."""

    session_id: str
    org_id: str
    expires_at: datetime | None
    task: str
    fragments: list[FragmentOut]
    markdown: str
    tokens_used: int
    budget_tokens: int
    trace_id: str
    pins_left_out: list[int] = []
    pins_left_out_reasons: list[PinLeftOut] = []


class NoteWrite(msgspec.Struct, forbid_unknown_fields=True):
    """POST /sessions/{id}/notes: a note, stored as a document of the session."""

    text: str
    path: str | None = None
    kind: str = "note"
    owner: str | None = None
    metadata: dict[str, Any] = {}


class NoteResult(msgspec.Struct):
    session_id: str
    doc_id: int
    path: str
    version: int
    changed: bool
    fragments: int
    created: int


class NotePromote(msgspec.Struct, forbid_unknown_fields=True):
    """POST /sessions/{id}/notes/{note}/promote: copy a note to repo or org scope."""

    repo_id: str | None = None
    owner: str | None = None
    path: str | None = None


class PromotedNote(msgspec.Struct):
    """The canonical document the note became (deduplication applied: `created` counts
    fragments new to the target scope, the rest collapsed into existing ones)."""

    doc_id: int
    org_id: str
    repo_id: str | None
    path: str
    version: int
    owner: str
    fragments: int
    created: int
    provenance: NoteProvenance | None
    changed: bool = True


class PinCreate(msgspec.Struct, forbid_unknown_fields=True):
    """POST /pins (and the MCP tool `pin`): pin a fragment to a scope, so every retrieval
    that sees that scope composes it first, whatever its relevance."""

    scope: ScopeIn
    fragment_id: int
    reason: str
    expires_at: datetime | None = None


class PinOut(msgspec.Struct):
    pin_id: int
    org_id: str
    repo_id: str | None
    persona_id: str | None
    session_id: str | None
    fragment_id: int
    pinned_by: str
    reason: str
    created_at: datetime
    expires_at: datetime | None
    kind: str
    negative: bool
    active: bool = True
    expired: bool = False
    superseded: bool = False
    valid_until: datetime | None = None
    superseded_by: list[dict] = []


class PinList(msgspec.Struct):
    pins: list[PinOut]


class RankingProfileSet(msgspec.Struct, forbid_unknown_fields=True):
    """PUT /profiles: the blend of an org (no persona_id: its default) or of a persona,
    replacing what was stored there. A weight left out, or a kind not named in
    `halflife_days`, inherits: persona -> org default -> built-in (docs/adr/0014)."""

    org_id: str
    persona_id: str | None = None
    w_rerank: float | None = None
    w_freshness: float | None = None
    w_authority: float | None = None
    w_pinned: float | None = None
    w_persona: float | None = None
    halflife_days: dict[str, float] = {}
    description: str | None = None


class RankingProfileOut(msgspec.Struct):
    org_id: str
    persona_id: str | None
    w_rerank: float | None
    w_freshness: float | None
    w_authority: float | None
    w_pinned: float | None
    w_persona: float | None
    halflife_days: dict[str, float]
    description: str | None
    updated_by: str | None
    updated_at: datetime | None
    effective: EffectiveProfile


class RankingProfileList(msgspec.Struct):
    profiles: list[RankingProfileOut]


class SyncState(msgspec.Struct):
    """GET /repos/{repo_id}/sync: the last `contexts sync` of a repo (docs/sync.md)."""

    org_id: str
    repo_id: str
    commit_sha: str
    ref: str | None
    synced_at: datetime
    synced_by: str
    written: int
    deleted: int
    full_scan: bool


class ContextCreate(msgspec.Struct, forbid_unknown_fields=True):
    """POST /contexts: a new, empty Context (a named bundle of fragments) in a scope."""

    scope: ScopeIn
    name: str
    description: str = ""


class ContextOut(msgspec.Struct):
    context_id: int
    ref: str
    org_id: str
    repo_id: str | None
    persona_id: str | None
    session_id: str | None
    name: str
    description: str
    created_by: str | None
    created_at: datetime
    retired_at: datetime | None
    latest_version: int | None
    fragment_count: int | None
    subscribed: bool


class ContextList(msgspec.Struct):
    contexts: list[ContextOut]


class ContextRead(msgspec.Struct):
    """GET /contexts/{ref}: a Context version composed within a budget, like a retrieval."""

    context: ContextOut
    ref: str
    fragments: list[FragmentOut]
    trace_id: str
    tokens_used: int
    budget_tokens: int
    left_out: int
    unavailable: int = 0


class ContextVersionCreate(msgspec.Struct, forbid_unknown_fields=True):
    """POST /contexts/{context_id}/versions: freeze a new version from any of fragment
    ids, documents, path globs and a saved query (their union, each fragment once, in
    that order)."""

    fragment_ids: list[int] = []
    doc_ids: list[int] = []
    path_globs: list[str] = []
    query: SavedQuery | None = None
    note: str = ""


class ContextVersionOut(msgspec.Struct):
    context_id: int
    ref: str
    version: int
    fragment_count: int
    built_from: dict[str, Any]
    note: str
    created_by: str | None
    created_at: datetime


class ContextVersionList(msgspec.Struct):
    versions: list[ContextVersionOut]


class SubscriptionCreate(msgspec.Struct, forbid_unknown_fields=True):
    """POST /contexts/{context_id}/subscriptions: publish the Context to another org, or
    another repo of this one, as a revocable grant on the bundle (never a copy)."""

    subscriber_org_id: str
    subscriber_repo_id: str | None = None
    version: int | None = None


class SubscriptionOut(msgspec.Struct):
    subscription_id: int
    context_id: int
    ref: str
    org_id: str
    version: int | None
    subscriber_org_id: str
    subscriber_repo_id: str | None
    state: str
    created_by: str | None
    created_at: datetime
    accepted_at: datetime | None
    accepted_by: str | None
    revoked_at: datetime | None
    revoked_by: str | None


class SubscriptionList(msgspec.Struct):
    subscriptions: list[SubscriptionOut]


class RuleCreate(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """POST /rules: a workflow rule. A retrieval or session start in its scope whose
    `touching` names a file matching one of `path_globs` (or a `path#Symbol` whose symbol
    matches one of `symbol_globs`) gets the members of `context` composed after the pins."""

    org_id: str
    repo_id: str | None = None
    name: str
    context: str
    path_globs: list[str] = []
    symbol_globs: list[str] = []
    expires_at: datetime | None = None
    enabled: bool = True


class RuleOut(msgspec.Struct):
    rule_id: int
    org_id: str
    repo_id: str | None
    name: str
    path_globs: list[str]
    symbol_globs: list[str]
    context_ref: str
    created_by: str
    created_at: datetime
    expires_at: datetime | None
    enabled: bool
    expired: bool


class RuleList(msgspec.Struct):
    rules: list[RuleOut]


class DocumentFragment(msgspec.Struct):
    """A fragment a document version was cut into, where it sits (GET /fragments/{id})."""

    fragment_id: int
    anchor: str
    start_line: int
    end_line: int
    live: bool


class DocumentIn(msgspec.Struct, forbid_unknown_fields=True):
    path: str
    content: str
    kind: str | None = None
    author: str | None = None
    owner: str | None = None
    timestamp: datetime | None = None
    metadata: dict[str, object] = {}


class DocumentResult(msgspec.Struct):
    path: str
    doc_id: int
    version: int
    changed: bool
    fragments: int
    created: int


class DocumentSummary(msgspec.Struct):
    """A document of a listing: its scope, path and current version (api.list_documents)."""

    doc_id: int
    org_id: str
    repo_id: str | None
    persona_id: str | None
    session_id: str | None
    path: str
    kind: str
    version: int
    language: str | None
    author: str | None
    owner: str | None
    source_ts: datetime | None
    fragments: int
    created_at: datetime
    updated_at: datetime


class DocumentVersion(msgspec.Struct):
    """One version a document has had (every one is kept)."""

    version: int
    content_hash: str
    chars: int
    author: str | None
    source_ts: datetime | None
    created_at: datetime
    current: bool


class EffectiveProfile(msgspec.Struct):
    """The profile a retrieval of that scope uses, each weight resolved (not yet
    normalised) and the half-lives merged."""

    source: str
    persona_id: str | None
    w_rerank: float
    w_freshness: float
    w_authority: float
    w_pinned: float
    w_persona: float
    halflife_days: dict[str, float]
    description: str | None = None
    updated_at: datetime | None = None


class FragmentOut(msgspec.Struct):
    id: int
    doc_id: int
    version: int
    score: float
    relevance: float
    tokens: int
    source: str
    updated_at: datetime
    text: str
    heading_path: list[str]
    kind: str
    owner: str
    metadata: dict[str, Any]
    pinned: bool = False
    pin_id: int | None = None
    negative: bool = False
    valid_from: datetime | None = None
    valid_until: datetime | None = None
    linked_from: int | None = None
    link_type: str | None = None
    context: str | None = None
    rule: int | None = None
    rule_name: str | None = None


class FragmentSource(msgspec.Struct):
    """Where a fragment is cited from: one version of one document."""

    doc_id: int
    version: int
    path: str
    anchor: str
    start_line: int
    end_line: int
    live: bool
    exact: bool


class NoteProvenance(msgspec.Struct):
    session_id: str
    note_id: int
    version: int
    author: str | None
    written_at: datetime
    promoted_by: str
    promoted_at: datetime


class PinLeftOut(msgspec.Struct):
    """Why a pin this request sees was not composed."""

    pin_id: int
    fragment_id: int
    reason: str
    detail: str
    superseded_by: list[Superseder] = []
    valid_until: datetime | None = None


class SavedQuery(msgspec.Struct, forbid_unknown_fields=True):
    """A retrieval run once, in the Context's scope, when the version is built: its
    composed fragments are frozen into the version (the query is recorded with it)."""

    query: str
    budget_tokens: int = 4000
    top_k: int | None = None


class ScopeIn(msgspec.Struct, forbid_unknown_fields=True):
    org_id: str
    repo_id: str | None = None
    persona_id: str | None = None
    session_id: str | None = None


class Superseder(msgspec.Struct):
    """A live document superseding a fragment's document, and its declaration."""

    doc_id: int
    path: str
    evidence: str | None = None


class TraceCandidate(msgspec.Struct, kw_only=True):
    """One candidate of a retrieval and what became of it (app.retrieve.trace). A field
    left out is one withheld from this reader (`redacted`), never a null."""

    fragment_id: int | UnsetType = UNSET
    fused_rank: int | None
    lexical_rank: int | None
    lexical_score: float | None
    dense_rank: int | None
    dense_similarity: float | None
    fused_score: float
    rerank_score: float | None
    freshness: float | None
    final_score: float | None
    final_rank: int | None = None
    relevance: float | None = None
    twin_of_rank: int | None | UnsetType = UNSET
    included: bool
    reason: str
    tokens: int | UnsetType = UNSET
    source: str | UnsetType = UNSET
    doc_id: int | UnsetType = UNSET
    doc_version: int | UnsetType = UNSET
    namespace: str | UnsetType = UNSET
    chunker_version: str | UnsetType = UNSET
    embedding_model: str | None | UnsetType = UNSET
    lexical_norm: float | None | UnsetType = UNSET
    dense_norm: float | None | UnsetType = UNSET
    lexical_weight: float | None | UnsetType = UNSET
    dense_weight: float | None | UnsetType = UNSET
    pin_id: int | UnsetType = UNSET
    negative: bool | UnsetType = UNSET
    authority: float | None | UnsetType = UNSET
    terms: dict[str, float] | None | UnsetType = UNSET
    linked_from: int | UnsetType = UNSET
    link_type: str | UnsetType = UNSET
    context: str | UnsetType = UNSET
    rule: int | UnsetType = UNSET
    rule_name: str | UnsetType = UNSET
    rerank_detail: dict | UnsetType = UNSET
    redacted: bool = False


class TraceLeftOut(msgspec.Struct, kw_only=True):
    """A fragment the validity test kept out of a retrieval that it would otherwise have
    held (api.validity_left_out): why, by what, and where it would have ranked. A field
    left out is one withheld from this reader (`redacted`)."""

    fragment_id: int | UnsetType = UNSET
    pin_id: int | UnsetType = UNSET
    included: bool = False
    reason: str
    lexical_rank: int | None = None
    lexical_score: float | None = None
    dense_rank: int | None = None
    dense_similarity: float | None = None
    superseded_by: list[dict] | UnsetType = UNSET
    valid_from: str | None | UnsetType = UNSET
    valid_until: str | None | UnsetType = UNSET
    tokens: int | UnsetType = UNSET
    source: str | None | UnsetType = UNSET
    doc_id: int | None | UnsetType = UNSET
    doc_version: int | None | UnsetType = UNSET
    namespace: str | UnsetType = UNSET
    redacted: bool = False
