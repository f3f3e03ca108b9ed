"""Request and response bodies of the HTTP API, shared by the server (app.api), the
MCP door (app.mcp) and the Python client (app.client): one definition, so what a client
decodes is what the server encodes. Plain msgspec structs, no server imports: the CLI
and the client load this module without Litestar, psycopg or the models."""

from __future__ import annotations

import re
import uuid
from datetime import datetime
from typing import Annotated, Any, Literal

import msgspec
from msgspec import UNSET, UnsetType

from app.readable import metadata_problem, require_readable_time, time_problem
from app.wire.retrieve import (
    CONTEXT_REF_PATTERN,
    IDENTIFIER_PATTERN,
    MAX_TOUCHING,
    FragmentOut,
    Identifier,
    Kind,
    Negatives,
    PinLeftOut,
    RetrieveRequest,
    RetrieveResponse,
    ScopeIn,
    Task,
    Touched,
    check_text,
    check_touched,
    free_text_problem,
    invisible_problem,
)

__all__ = [
    "IDENTIFIER_PATTERN",
    "FragmentOut",
    "Identifier",
    "Kind",
    "RetrieveRequest",
    "RetrieveResponse",
    "ScopeIn",
    "Task",
]

POSITIVE_ID = r"^[1-9][0-9]{0,18}$(?!\n)"
"""A fragment or document id in a path: canonical decimal, 1 to 19 digits."""
UUID_PATTERN = r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$(?!\n)"
MAX_BIGINT = 2**63 - 1
MAX_JSON_ID = 2**53 - 1
"""An id in a JSON body: beyond 2^53 a JSON number is not exact in most clients (nor
in the OpenAPI document's bound, which a float would round past 2^63 - 1)."""


NO_NUL = "^[^\x00]*$"
NO_CONTROL = r"^[^\x00-\x1f\x7f-\x9f]+$(?!\n)"
"""Text without C0 or C1 control characters: what the database refuses as `[[:cntrl:]]`
(a UTF-8 database's C0, DEL and C1), so the document refuses no less."""
NO_C0_CONTROL = r"^[^\x00-\x1f\x7f]+$(?!\n)"
"""A webhook's secret, a rule's glob: no C0 control character or DEL. Patterns that end `$(?!\n)`:
`$` alone also matches before a final newline, in Python and in JSON Schema."""
SIMHASH_PATTERN = r"^[0-9a-f]{16}$(?!\n)"
MAX_METADATA_BYTES = 16 * 1024
"""A document's metadata, as JSON: it is stored again with every version."""
DEFAULT_PAGE, MAX_PAGE = 50, 1000
"""Documents in a page of a listing (api.list_documents refuses more)."""
MAX_INT = 2**31 - 1


RESERVED_METADATA_KEYS = ("promoted_from", "git_commit", "git_blob", "git_renamed_from", "git_added_at")
"""Metadata the service writes itself (a promoted note's provenance) and what `contexts
sync` records of a synced file (its commit and blob, its earlier path, when it was added):
a sync manages the documents whose version names a commit (sql/functions/36_git_sync.sql)
and a file's validity starts when it was added (48_validity.sql). A write that sets one
could pass off a document as what it is not. Other `git_` keys stay the writer's own."""


def reserved_metadata_problem(metadata: dict[str, Any]) -> str | None:
    taken = [key for key in RESERVED_METADATA_KEYS if key in metadata]
    if not taken:
        return None
    if taken[0].startswith("git_"):
        return f"metadata {taken[0]} is written by contexts sync (what it records of a file); a write may not set it"
    return f"metadata {taken[0]} is written by the service (a promoted note's provenance); a write may not set it"


DocumentPath = Annotated[str, msgspec.Meta(min_length=1, max_length=1024)]
PersonName = Annotated[str, msgspec.Meta(max_length=256, pattern=NO_NUL)]


class DocumentIn(msgspec.Struct, forbid_unknown_fields=True):
    path: DocumentPath
    content: str
    kind: Kind | None = None
    author: PersonName | None = None
    owner: PersonName | None = None
    timestamp: Annotated[datetime, msgspec.Meta(tz=True)] | None = None
    """ISO 8601 with a UTC offset; a naive time would be read in the server's zone. From
    0001-01-02 to 9999-12-30 in UTC (what every reader decodes, app/readable.py)."""
    metadata: dict[str, object] = {}
    """Free-form JSON object, at most 16 KiB once encoded, nested at most 32 levels deep."""

    def __post_init__(self) -> None:
        problem = (
            time_problem(self.timestamp, "timestamp")
            or metadata_problem(self.metadata)
            or reserved_metadata_problem(self.metadata)
        )
        if problem is not None:
            raise ValueError(problem)


class IngestRequest(msgspec.Struct, forbid_unknown_fields=True):
    scope: ScopeIn
    documents: Annotated[list[DocumentIn], msgspec.Meta(min_length=1, max_length=1000)]


class DocumentResult(msgspec.Struct):
    path: str
    doc_id: int
    version: int
    changed: bool
    fragments: int
    created: int


class IngestResponse(msgspec.Struct):
    documents: list[DocumentResult]


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
    """The current version."""
    language: str | None
    author: str | None
    owner: str | None
    """Named owner of the current version (R-DOC-3)."""
    source_ts: datetime | None
    fragments: int
    """Live fragments of the current version."""
    created_at: datetime
    updated_at: datetime


class DocumentPage(msgspec.Struct):
    documents: list[DocumentSummary]
    next_after: int | None
    """Pass as `after` for the next page; null when this page was the last."""


class DocumentFragment(msgspec.Struct):
    """A fragment a document version was cut into, where it sits (GET /fragments/{id})."""

    fragment_id: int
    anchor: str
    start_line: int
    end_line: int
    live: bool


class DocumentVersion(msgspec.Struct):
    """One version a document has had (every one is kept)."""

    version: int
    content_hash: str
    chars: int
    author: str | None
    source_ts: datetime | None
    created_at: datetime
    current: bool


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
    """The normalized text from `content_offset`, at most `max_chars` characters of it."""
    content_chars: int
    """Length of the whole text, in characters."""
    content_offset: int
    created_at: datetime
    """When this version was stored."""
    updated_at: datetime
    """When the document last changed."""
    fragments: list[DocumentFragment]
    versions: list[DocumentVersion]
    """Every version of the document, oldest first."""


class DocumentQuery(msgspec.Struct, forbid_unknown_fields=True):
    """A page of a listing: GET /documents's parameters, the MCP tool `list_documents`'s arguments."""

    scope: ScopeIn
    path_prefix: Annotated[str, msgspec.Meta(min_length=1, max_length=1024, pattern=NO_NUL)] | None = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=MAX_PAGE)] = DEFAULT_PAGE
    after: Annotated[int, msgspec.Meta(ge=1, le=MAX_BIGINT)] | None = None
    """The last doc_id of the previous page."""
    kind: Kind | None = None
    owner: PersonName | None = None
    updated_since: Annotated[datetime, msgspec.Meta(tz=True)] | None = None
    """Documents changed at or after this time (ISO 8601 with an offset)."""


class DocumentRead(msgspec.Struct, forbid_unknown_fields=True):
    """GET /documents/{id}'s parameters, the MCP tool `read_document`'s arguments."""

    doc_id: Annotated[int, msgspec.Meta(ge=1, le=MAX_BIGINT)]
    version: Annotated[int, msgspec.Meta(ge=1, le=MAX_INT)] | None = None
    """Default: the current version."""
    offset: Annotated[int, msgspec.Meta(ge=0, le=MAX_INT)] = 0
    """First character of the text returned."""
    max_chars: Annotated[int, msgspec.Meta(ge=1, le=MAX_INT)] | None = None
    """Characters of text returned at most (default: to the end)."""


class FragmentSource(msgspec.Struct):
    """Where a fragment is cited from: one version of one document."""

    doc_id: int
    version: int
    path: str
    anchor: str
    start_line: int
    end_line: int
    live: bool
    """False once a later version of the document no longer holds this fragment."""
    exact: bool
    """False when the source holds a near-duplicate of the fragment's text, not the text itself."""


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
    simhash: Annotated[str, msgspec.Meta(pattern=SIMHASH_PATTERN)]
    """The 64-bit SimHash, as 16 hexadecimal digits."""
    active: bool
    created_at: datetime
    updated_at: datetime
    embedding_model: str | None
    """`name@generation` of its newest embedding."""
    sources: list[FragmentSource]


class FragmentLink(msgspec.Struct):
    """One reference of a fragment, or to it (api.fragment_links)."""

    direction: str
    """`out`: this fragment cites the other end; `in`: the other end cites it."""
    link_type: str
    """link, url, import, symbol, adr, metadata, supersedes or superseded_by."""
    target: str
    """The reference as written by the citing fragment."""
    resolved: bool
    """False for an outgoing reference whose target is not (yet) in the index."""
    fragment_id: int | None
    doc_id: int | None
    path: str | None
    anchor: str | None
    """Where the other end is cited from (null while unresolved)."""
    evidence: str | None = None
    """A supersession's grounds: where the citing document declares it and the line as
    written ("line 3: - Status: Superseded by ADR-7", "front matter line 2: ...",
    "metadata supersedes: ..."); null for other references."""


class FragmentLinks(msgspec.Struct):
    fragment_id: int
    outgoing: list[FragmentLink]
    incoming: list[FragmentLink]


class TraceCandidate(msgspec.Struct, kw_only=True):
    """One candidate of a retrieval and what became of it (app.retrieve.trace). A field
    left out is one withheld from this reader (`redacted`), never a null."""

    fragment_id: int | UnsetType = UNSET
    fused_rank: int | None
    """Place in the fused list; null for a fragment composed by following a link."""
    lexical_rank: int | None
    lexical_score: float | None
    dense_rank: int | None
    dense_similarity: float | None
    fused_score: float
    rerank_score: float | None
    freshness: float | None
    final_score: float | None
    final_rank: int | None = None
    """Place in the final order (after rerank and freshness), 1 first; null beyond
    `rerank_top`, absent in older traces. Included fragments come back in this order."""
    relevance: float | None = None
    """Absolute relevance (docs/adr/0009) of a ranked candidate; absent in older traces."""
    twin_of_rank: int | None | UnsetType = UNSET
    """The final rank of the fragment above whose words this one repeats, in its other
    (sync or async) form or word for word: its final score was scaled by 0.85 for it
    (app.retrieve.twins);
    null when it is no twin, absent in older traces and when withheld."""
    included: bool
    reason: str
    """included, over_budget, below_min_score, below_min_relevance, beyond_top_k,
    beyond_rerank_top or only_boilerplate; for a pinned fragment: pinned (included),
    pin_over_budget or pin_beyond_top_k (left out, listed in the response's
    `pins_left_out`); for one reached by a link (`expand_links`): linked (included),
    linked_over_budget or linked_only_boilerplate; for one a workflow rule brought
    (`touching`): rule (included), rule_over_budget, rule_beyond_top_k or
    rule_only_boilerplate."""
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
    """Weighted fusion: fused_score = lexical_weight * lexical_norm + dense_weight * dense_norm
    (all four are null under reciprocal rank fusion)."""
    pin_id: int | UnsetType = UNSET
    """The pin that put this fragment first (absent: not pinned, or withheld)."""
    negative: bool | UnsetType = UNSET
    """True for an anti-pattern or known trap (absent: not negative, or withheld)."""
    authority: float | None | UnsetType = UNSET
    """Citation authority in [0, 1] (docs/adr/0013); absent in older traces or withheld."""
    terms: dict[str, float] | None | UnsetType = UNSET
    """Each term of the blended score of a ranked or pinned candidate (rerank, freshness,
    authority, pinned, persona; docs/adr/0014): final_score = sum of weight x term, with
    the weights of the trace's pipeline.profile. Absent in older traces."""
    linked_from: int | UnsetType = UNSET
    """Composed because this fragment cites it (`expand_links`); absent otherwise."""
    link_type: str | UnsetType = UNSET
    context: str | UnsetType = UNSET
    """The Context version (`ctx_<id>@<version>`) that brought it; absent otherwise."""
    rule: int | UnsetType = UNSET
    rule_name: str | UnsetType = UNSET
    """The workflow rule whose Context brought it (`touching`); absent otherwise, and
    withheld from a reader who may not read the fragment."""
    rerank_detail: dict | UnsetType = UNSET
    """The learned reranker's view of one of its best-scored candidates (the first
    app.retrieve.learned.EXPLAINED): `features` (each feature's value,
    app.retrieve.features), `contributions` (the largest, in raw-score units) and `raw`
    (the score before calibration). Absent for the other candidates (their
    `rerank_score` stays), for other rerankers, or when withheld."""
    redacted: bool = False
    """True when the reader may not read this fragment now: only its ranks, scores and
    fate are shown (no id, source, document or text)."""


class TraceLeftOut(msgspec.Struct, kw_only=True):
    """A fragment the validity test kept out of a retrieval that it would otherwise have
    held (api.validity_left_out): why, by what, and where it would have ranked. A field
    left out is one withheld from this reader (`redacted`)."""

    fragment_id: int | UnsetType = UNSET
    pin_id: int | UnsetType = UNSET
    """Set for a pin the retrieval could not serve (listed in its `pins_left_out`)."""
    included: bool = False
    reason: str
    """superseded (a live document supersedes it), expired (its valid_until passed) or
    not_yet_valid (its valid_from is after the retrieval's as_of); for a pin also
    retired (its text no longer live) or filtered (outside the request's filters)."""
    lexical_rank: int | None = None
    """Its place in the lexical list had it been a candidate (null: it would not have ranked there)."""
    lexical_score: float | None = None
    dense_rank: int | None = None
    """Its place among its namespace's dense hits had it been a candidate."""
    dense_similarity: float | None = None
    superseded_by: list[dict] | UnsetType = UNSET
    """[{doc_id, path, evidence}]: the live documents superseding it, with where each
    declares it and the line as written."""
    valid_from: str | None | UnsetType = UNSET
    valid_until: str | None | UnsetType = UNSET
    tokens: int | UnsetType = UNSET
    source: str | None | UnsetType = UNSET
    doc_id: int | None | UnsetType = UNSET
    doc_version: int | None | UnsetType = UNSET
    namespace: str | UnsetType = UNSET
    redacted: bool = False


class TraceOut(msgspec.Struct):
    trace_id: uuid.UUID
    org_id: str
    principal_id: str | None
    query: str | None
    """Null when withheld from this reader (listed in `redacted`)."""
    request: dict[str, Any]
    """The retrieval request as it was received, defaults filled in."""
    pipeline: dict[str, Any]
    """Chunker version, embedding models, fusion method and weights, reranker, score basis."""
    candidates: list[TraceCandidate]
    duration_ms: float | None
    created_at: datetime
    redacted: list[str] = []
    """Fields withheld from this reader, e.g. "query", "request.scope.session_id"."""
    left_out: list[TraceLeftOut] = []
    """What validity windows (supersession, expiry) kept out that would otherwise have
    ranked, and the pins the retrieval could not serve, strongest first (at most 20
    fragments): "why didn't the README come back?" (docs/adr/0016)."""


class WhoamiOut(msgspec.Struct):
    """api.whoami: who this key acts for and its read grants (expired sessions left out)."""

    org_id: str
    principal_id: str
    org_wide: bool
    """True with an org grant: every repo and persona of the org."""
    repos: list[str]
    personas: list[str]
    sessions: list[str]
    audit: bool
    """True when it may read the retrieval traces of its whole org."""


class DocumentRef(msgspec.Struct, forbid_unknown_fields=True):
    """A document by id: the MCP tool `delete_document`'s arguments."""

    doc_id: Annotated[int, msgspec.Meta(ge=1, le=MAX_BIGINT)]


class DocumentDeleted(msgspec.Struct):
    """DELETE /documents/{id}: what left retrieval (the history stays, for audit)."""

    doc_id: int
    org_id: str
    path: str
    version: int
    """The version that was current."""
    fragments_retired: int
    """Fragments it held; those no other document holds left every index."""
    rehomed: int
    """Near-duplicate pointers of other documents written again as fragments of their own."""


# -- pins -------------------------------------------------------------------------


class PinCreate(msgspec.Struct, forbid_unknown_fields=True):
    """POST /pins (and the MCP tool `pin`): pin a fragment to a scope, so every retrieval
    that sees that scope composes it first, whatever its relevance."""

    scope: ScopeIn
    """Where the pin applies: org_id alone pins org-wide (needs an org write grant); a
    repo, persona or session narrows it (a write grant there)."""
    fragment_id: Annotated[int, msgspec.Meta(ge=1, le=MAX_JSON_ID)]
    """A fragment you may read, visible in that scope."""
    reason: Annotated[str, msgspec.Meta(min_length=1, max_length=1000, pattern=NO_NUL)]
    """Why it must come first, for whoever reads the pin list."""
    expires_at: Annotated[datetime, msgspec.Meta(tz=True)] | None = None
    """After this time the pin is ignored (ISO 8601 with an offset; default: never)."""

    def __post_init__(self) -> None:
        problem = free_text_problem("reason", self.reason)
        if problem is not None:
            raise ValueError(problem)
        require_readable_time(self.expires_at, "expires_at")


class PinOut(msgspec.Struct):
    pin_id: int
    org_id: str
    repo_id: str | None
    persona_id: str | None
    session_id: str | None
    fragment_id: int
    pinned_by: str
    """The principal that pinned it."""
    reason: str
    created_at: datetime
    expires_at: datetime | None
    kind: str
    """The pinned fragment's document kind."""
    negative: bool
    """The pinned fragment is an anti-pattern or known trap."""
    active: bool = True
    """False when the fragment left retrieval (its documents were deleted): the pin shows nothing."""
    expired: bool = False
    superseded: bool = False
    """True when the pinned fragment is outside its validity window now (superseded,
    expired or not yet valid, docs/adr/0016): retrievals leave it out and list the pin in
    `pins_left_out` with the reason, unless they ask for superseded fragments or for a
    time it was current."""
    valid_until: datetime | None = None
    """When the pinned fragment stopped being current (null: it still is, or was never bounded)."""
    superseded_by: list[dict] = []
    """[{doc_id, path, evidence}]: the live documents superseding it."""


class PinQuery(msgspec.Struct, forbid_unknown_fields=True):
    """GET /pins (and the MCP tool `list_pins`): the pins a retrieval in this scope sees."""

    scope: ScopeIn
    include_expired: bool = False


class PinList(msgspec.Struct):
    pins: list[PinOut]
    """Earliest first: the order they are composed in."""


class PinRef(msgspec.Struct, forbid_unknown_fields=True):
    """A pin by id: the MCP tool `unpin`'s arguments."""

    pin_id: Annotated[int, msgspec.Meta(ge=1, le=MAX_JSON_ID)]


# -- ranking profiles ---------------------------------------------------------------

Weight = Annotated[float, msgspec.Meta(ge=0, le=1000)]
"""A blend weight: the service normalises the weights in effect to sum to 1."""
HalfLife = Annotated[float, msgspec.Meta(gt=0, le=36500)]
"""A freshness half-life in days."""
BLEND_WEIGHTS = ("w_rerank", "w_freshness", "w_authority", "w_pinned", "w_persona")


class RankingProfileSet(msgspec.Struct, forbid_unknown_fields=True):
    """PUT /profiles: the blend of an org (no persona_id: its default) or of a persona,
    replacing what was stored there. A weight left out, or a kind not named in
    `halflife_days`, inherits: persona -> org default -> built-in (docs/adr/0014)."""

    org_id: Identifier
    persona_id: Identifier | None = None
    """The persona this profile is for (a write grant on it); none: the org default
    (a write grant on the org)."""
    w_rerank: Weight | None = None
    """Relevance: the reranker's probability, else the normalised fused score (built-in 0.75)."""
    w_freshness: Weight | None = None
    """Freshness: 0.5 ** (age in days / the kind's half-life) (built-in 0.1)."""
    w_authority: Weight | None = None
    """Citation authority from the citation graph, docs/adr/0013 (built-in 0.1)."""
    w_pinned: Weight | None = None
    """1 for a pinned fragment (built-in 0.05; pins are composed first whatever their score)."""
    w_persona: Weight | None = None
    """Cosine to the centroid of the persona's own fragments (built-in 0)."""
    halflife_days: dict[Kind, HalfLife] = {}
    """Half-life in days per document kind; "default" for kinds not named (built-in:
    {"default": 90, "policy": 365})."""
    description: Annotated[str, msgspec.Meta(max_length=2000, pattern=NO_NUL)] | None = None
    """What this persona cares about, for whoever reads the profile list."""

    def __post_init__(self) -> None:
        problem = free_text_problem("description", self.description)
        if problem is not None:
            raise ValueError(problem)
        weights = [getattr(self, name) for name in BLEND_WEIGHTS]
        if all(w is not None for w in weights) and sum(weights) <= 0:
            raise ValueError("the weights are all 0: nothing would rank")


class EffectiveProfile(msgspec.Struct):
    """The profile a retrieval of that scope uses, each weight resolved (not yet
    normalised) and the half-lives merged."""

    source: str
    """"persona", "org" or "built-in": the most specific stored profile that applies."""
    persona_id: str | None
    w_rerank: float
    w_freshness: float
    w_authority: float
    w_pinned: float
    w_persona: float
    halflife_days: dict[str, float]
    description: str | None = None
    updated_at: datetime | None = None


class RankingProfileOut(msgspec.Struct):
    org_id: str
    persona_id: str | None
    """None: the org default."""
    w_rerank: float | None
    w_freshness: float | None
    w_authority: float | None
    w_pinned: float | None
    w_persona: float | None
    halflife_days: dict[str, float]
    description: str | None
    updated_by: str | None
    """The principal that set it (None: nothing stored for this scope)."""
    updated_at: datetime | None
    effective: EffectiveProfile


class RankingProfileList(msgspec.Struct):
    profiles: list[RankingProfileOut]
    """Stored profiles you may read, the org default first."""


# -- git sync ---------------------------------------------------------------------


class SyncState(msgspec.Struct):
    """GET /repos/{repo_id}/sync: the last `contexts sync` of a repo (docs/sync.md)."""

    org_id: str
    repo_id: str
    commit_sha: str
    """The commit whose tracked files the repo's synced documents hold."""
    ref: str | None
    """The branch HEAD was on; None on a detached HEAD."""
    synced_at: datetime
    synced_by: str
    """The principal that ran it."""
    written: int
    """Files that sync read and ingested (unchanged content included)."""
    deleted: int
    """Documents it deleted (files deleted, or renamed away)."""
    full_scan: bool
    """True when it compared every tracked file with what is stored (a first sync, or
    the previous commit was gone from the repository)."""


# -- sessions ---------------------------------------------------------------------


class SessionOpen(msgspec.Struct, forbid_unknown_fields=True):
    """POST /sessions: open (or, with scope.session_id, reuse) a session and get the
    context pack for a task."""

    scope: ScopeIn
    """org_id, optionally repo_id and persona_id; session_id reuses that session (one you
    may write), absent opens a new one."""
    task: Task
    """What the agent is about to do: the pack is retrieved for it."""
    budget_tokens: Annotated[int, msgspec.Meta(gt=0, le=200_000)] = 4000
    top_k: Annotated[int, msgspec.Meta(ge=1, le=1000)] | None = None
    min_relevance: Annotated[float, msgspec.Meta(ge=0, le=1)] = 0.0
    negatives: Negatives = "include"
    """The scope's anti-patterns and known traps: "include" (default, in a section of
    their own first), "only" (a pack of what not to do) or "exclude"."""
    touching: Annotated[list[Touched], msgspec.Meta(min_length=1, max_length=MAX_TOUCHING)] | None = None
    """Files (or `path#Symbol`) the session's first step touches: the Contexts of the
    matching workflow rules are composed after the pins, marked with `rule` (docs/adr/0022)."""

    def __post_init__(self) -> None:
        check_text("task", self.task)
        for value in self.touching or ():
            check_touched(value)


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
    """The fragments in order, each under its citation (path#anchor, document version)
    and its exact text in a fence; with pins or negative fragments, under two headings
    ("Pinned, and known traps", then "Matching the task")."""
    tokens_used: int
    budget_tokens: int
    trace_id: str
    """The pack's retrieval trace (GET /traces/{id})."""
    pins_left_out: list[int] = []
    """Pins of the scope the pack did not compose: over the budget (earlier pins win), or
    their fragment superseded or expired; `pins_left_out_reasons` says which."""
    pins_left_out_reasons: list[PinLeftOut] = []
    """Each pin of `pins_left_out`, in the same order, with its reason."""


class NoteWrite(msgspec.Struct, forbid_unknown_fields=True):
    """POST /sessions/{id}/notes: a note, stored as a document of the session."""

    text: Annotated[str, msgspec.Meta(min_length=1)]
    """Markdown or plain text; normalized, chunked and indexed like any document."""
    path: DocumentPath | None = None
    """Its name in citations. Default: notes/<hash of the text>.md, so writing the same
    note twice stores it once; a path already used in the session makes a new version."""
    kind: Kind = "note"
    owner: PersonName | None = None
    """Default: the principal of the key (also recorded as the author)."""
    metadata: dict[str, Any] = {}

    def __post_init__(self) -> None:
        problem = invisible_problem("text", self.text) or reserved_metadata_problem(self.metadata)
        if problem is not None:
            raise ValueError(problem)


class NoteResult(msgspec.Struct):
    session_id: str
    doc_id: int
    """The note's id: a document id (GET /documents/{id}), the `note` to promote."""
    path: str
    version: int
    changed: bool
    fragments: int
    created: int


class NotePromote(msgspec.Struct, forbid_unknown_fields=True):
    """POST /sessions/{id}/notes/{note}/promote: copy a note to repo or org scope."""

    repo_id: Identifier | None = None
    """Target repo; absent: org-wide knowledge (needs an org write grant)."""
    owner: PersonName | None = None
    """Named owner of the promoted knowledge. Default: the promoting principal."""
    path: DocumentPath | None = None
    """Its path in the target scope. Default: the note's path."""


class NoteProvenance(msgspec.Struct):
    session_id: str
    note_id: int
    version: int
    author: str | None
    written_at: datetime
    promoted_by: str
    promoted_at: datetime


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
    """Also stored in the new version's metadata under `promoted_from`. When the target
    already held this text (`changed` false: nothing was written), the provenance its
    current version carries: an earlier promotion's, or null when it was not promoted."""
    changed: bool = True
    """False when the target document already held this text: no new version."""


# -- owners and staleness nudges (docs/owners.md) -------------------------------------

OwnerSource = str
"""Where an owner came from: document, codeowners, default, reassigned, none."""


class StaleFragment(msgspec.Struct):
    """A fragment often retrieved whose text has not been edited for long (R-DOC-3)."""

    fragment_id: int
    org_id: str
    repo_id: str | None
    owner: str
    owner_source: OwnerSource
    kind: str
    doc_id: int
    path: str
    anchor: str | None
    heading_path: list[str]
    retrievals: int
    """Retrievals of the org that returned it within the window."""
    last_retrieved_at: datetime
    last_edited_at: datetime
    """When its text was last written (its source's timestamp, e.g. the git commit)."""
    days_since_edit: int


class NudgeList(msgspec.Struct):
    """GET /owners/{owner}/nudges and GET /stale."""

    org_id: str
    owner: str | None
    window_days: int
    min_retrievals: int
    stale_after_days: int
    nudges: list[StaleFragment]
    """Most retrieved first; only fragments you may read."""


class OwnersReassign(msgspec.Struct, forbid_unknown_fields=True):
    """POST /owners/reassign: move ownership in bulk (no new document version)."""

    org_id: Identifier
    from_owner: Annotated[str, msgspec.Meta(min_length=1, max_length=256, pattern=NO_NUL)]
    to_owner: Annotated[str, msgspec.Meta(min_length=1, max_length=256, pattern=NO_CONTROL)]
    repo_id: Identifier | None = None
    """Only this repo's documents (needs a write grant on it); none: the whole org (an org write grant)."""
    path_prefix: Annotated[str, msgspec.Meta(min_length=1, max_length=1024, pattern=NO_CONTROL)] | None = None


class OwnersReassigned(msgspec.Struct):
    reassignment_id: int
    """Its row in data.owner_reassignments (the audit)."""
    documents: int
    fragments: int


WEBHOOK_URL = r"^[Hh][Tt][Tt][Pp][Ss]?://[^/?#@\s\x00-\x1f\x7f-\x9f]+([/?#][^\s\x00-\x1f\x7f-\x9f]*)?$(?!\n)"
"""http or https in any case (RFC 3986: a scheme is case-insensitive), a host, no
credentials (no @ before the path), no spaces or controls (C1 ones included: the
database's check refuses them)."""


class WebhookIn(msgspec.Struct, forbid_unknown_fields=True):
    """PUT /orgs/{org_id}/webhook."""

    url: Annotated[str, msgspec.Meta(max_length=2048, pattern=WEBHOOK_URL)]
    """http:// or https:// with a host (the pattern bounds it below: a length floor said
    only "length >= 10" of `ftp://x`); `HTTPS://` is taken, and stored as `https://`
    (service.webhook_set)."""
    secret: Annotated[str, msgspec.Meta(min_length=16, max_length=256, pattern=NO_C0_CONTROL)] | None = None
    """Signs each delivery (HMAC-SHA256); never returned. Omitted: the current one stays."""
    enabled: bool = True


class WebhookOut(msgspec.Struct):
    org_id: str
    url: str
    has_secret: bool
    enabled: bool
    updated_by: str
    updated_at: datetime


# -- Contexts: versioned bundles and subscriptions (docs/adr/0018) --------------------

CONTEXT_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:/ -]{0,127}$(?!\n)"
PathGlob = Annotated[str, msgspec.Meta(min_length=1, max_length=1024, pattern=NO_NUL)]
"""A document path glob: `**` any run of characters, `*` within one path segment, `?` one."""
ContextNote = Annotated[str, msgspec.Meta(max_length=2000, pattern=NO_NUL)]
JsonId = Annotated[int, msgspec.Meta(ge=1, le=MAX_JSON_ID)]


class ContextCreate(msgspec.Struct, forbid_unknown_fields=True):
    """POST /contexts: a new, empty Context (a named bundle of fragments) in a scope."""

    scope: ScopeIn
    """Its scope: org_id alone for an org-wide Context (an org write grant), or a repo,
    persona or session (a write grant there). Its versions hold fragments of that scope
    and of the scopes above it; its readers are those who may read that scope, and
    subscribers."""
    name: Annotated[str, msgspec.Meta(pattern=CONTEXT_NAME_PATTERN)]
    """Unique among the live Contexts of the scope."""
    description: ContextNote = ""

    def __post_init__(self) -> None:
        problem = free_text_problem("description", self.description)
        if problem is not None:
            raise ValueError(problem)


class ContextOut(msgspec.Struct):
    context_id: int
    ref: str
    """`ctx_<id>`: add `@<version>` or `@latest` to name a version."""
    org_id: str
    repo_id: str | None
    persona_id: str | None
    session_id: str | None
    name: str
    description: str
    created_by: str | None
    """The principal that created it (null for a subscriber: it stays in the publisher's org)."""
    created_at: datetime
    retired_at: datetime | None
    """Retired: out of listings and retrieval, still readable by reference."""
    latest_version: int | None
    """The newest version you may read (a subscriber pinned to a version: that one)."""
    fragment_count: int | None
    """Fragments in that version."""
    subscribed: bool
    """You read it through a subscription, not by its scope."""


class ContextList(msgspec.Struct):
    contexts: list[ContextOut]


class SavedQuery(msgspec.Struct, forbid_unknown_fields=True):
    """A retrieval run once, in the Context's scope, when the version is built: its
    composed fragments are frozen into the version (the query is recorded with it)."""

    query: Task
    budget_tokens: Annotated[int, msgspec.Meta(gt=0, le=200_000)] = 4000
    top_k: Annotated[int, msgspec.Meta(ge=1, le=200)] | None = None

    def __post_init__(self) -> None:
        check_text("query", self.query)


class ContextVersionCreate(msgspec.Struct, forbid_unknown_fields=True):
    """POST /contexts/{context_id}/versions: freeze a new version from any of fragment
    ids, documents, path globs and a saved query (their union, each fragment once, in
    that order)."""

    fragment_ids: Annotated[list[JsonId], msgspec.Meta(max_length=2000)] = []
    doc_ids: Annotated[list[JsonId], msgspec.Meta(max_length=1000)] = []
    """Whole documents: the live fragments of their current version."""
    path_globs: Annotated[list[PathGlob], msgspec.Meta(max_length=32)] = []
    """The live fragments of every document you may read in the Context's scope whose path matches."""
    query: SavedQuery | None = None
    note: ContextNote = ""

    def __post_init__(self) -> None:
        problem = free_text_problem("note", self.note)
        if problem is not None:
            raise ValueError(problem)
        if not (self.fragment_ids or self.doc_ids or self.path_globs or self.query):
            raise ValueError("name fragment_ids, doc_ids, path_globs or a query to build the version from")


class ContextVersionOut(msgspec.Struct):
    context_id: int
    ref: str
    """`ctx_<id>@<version>`: how retrievals and subscriptions name it."""
    version: int
    fragment_count: int
    built_from: dict[str, Any]
    """What it was frozen from (fragment ids, documents, path globs, a saved query and its
    trace); empty for a subscriber."""
    note: str
    created_by: str | None
    """Null for a subscriber."""
    created_at: datetime


class ContextVersionList(msgspec.Struct):
    versions: list[ContextVersionOut]
    """Newest first; a subscriber sees the versions it is subscribed to only."""


class ContextRead(msgspec.Struct):
    """GET /contexts/{ref}: a Context version composed within a budget, like a retrieval."""

    context: ContextOut
    ref: str
    """The version read (`@latest` resolved)."""
    fragments: list[FragmentOut]
    """In bundle order, or best first for a `query`; each cites the document version it was bundled from."""
    trace_id: str
    tokens_used: int
    budget_tokens: int
    left_out: int
    """Members that did not fit the budget."""
    unavailable: int = 0
    """Members of the version you may no longer read: their documents were deleted or
    changed since it was built, or their session expired. A version is frozen, but never
    serves a fragment its reader could not read now."""


class SubscriptionCreate(msgspec.Struct, forbid_unknown_fields=True):
    """POST /contexts/{context_id}/subscriptions: publish the Context to another org, or
    another repo of this one, as a revocable grant on the bundle (never a copy)."""

    subscriber_org_id: Identifier
    subscriber_repo_id: Identifier | None = None
    """Only principals that may read this repo of the subscriber org (default: all of its principals)."""
    version: Annotated[int, msgspec.Meta(ge=1, le=MAX_INT)] | None = None
    """A pinned version (default: follow the newest)."""


SubscriptionState = Literal["pending", "live", "revoked"]


class SubscriptionOut(msgspec.Struct):
    subscription_id: int
    context_id: int
    ref: str
    """`ctx_<id>@<version>`, or `@latest` when it follows the newest."""
    org_id: str
    """The publisher's org."""
    version: int | None
    subscriber_org_id: str
    subscriber_repo_id: str | None
    state: SubscriptionState
    """pending (offered: gives nothing until a writer of the subscriber scope accepts it),
    live (accepted) or revoked."""
    created_by: str | None
    """The publisher's principal that made it (null for the subscriber side)."""
    created_at: datetime
    accepted_at: datetime | None
    accepted_by: str | None
    """`org/principal` that accepted it: a writer of the subscriber scope, or its maker when
    it may write that scope itself (`migration 0046` for those live before consent). A
    principal of another org than yours shows as its org alone."""
    revoked_at: datetime | None
    revoked_by: str | None
    """`org/principal` that revoked it (either side); another org's principal shows as its org alone."""


class SubscriptionList(msgspec.Struct):
    subscriptions: list[SubscriptionOut]


class ModelGenerationOut(msgspec.Struct):
    """api.model_generations: one embedding model generation of a namespace
    (docs/adr/0021), counted over what the caller may read."""

    model_id: int
    namespace: str
    name: str
    dims: int
    generation: int
    status: str
    """active (serves queries), shadow (being built or in its window) or retired (replaced;
    within its window it answers retrievals asking for `"generation": "previous"`)."""
    created_at: datetime
    window_ends_at: datetime | None
    """End of the shadow window; a retired generation is kept, and queryable, until then."""
    promoted_at: datetime | None
    retired_at: datetime | None
    dropped_at: datetime | None
    fragments: int
    """Active fragments of the namespace."""
    vectors: int
    """Of those, the ones with a vector of this generation (coverage = vectors / fragments)."""
    replays: int
    """Recorded retrievals replayed on this generation (`contexts models replay`)."""
    mean_overlap: float | None
    """Mean top-3 token overlap of those replays with the active generation."""
    min_overlap: float | None


class ModelGenerationList(msgspec.Struct):
    generations: list[ModelGenerationOut]


# -- Workflow rules (docs/adr/0022) ---------------------------------------------------

RULE_NAME_PATTERN = CONTEXT_NAME_PATTERN
RULE_GLOB_REFUSED = re.compile(r"[\x00-\x1f\x7f]")
"""What service.rule_create refuses in a glob (the pattern says it too)."""
RuleGlob = Annotated[str, msgspec.Meta(min_length=1, max_length=1024, pattern=NO_C0_CONTROL)]


class RuleCreate(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """POST /rules: a workflow rule. A retrieval or session start in its scope whose
    `touching` names a file matching one of `path_globs` (or a `path#Symbol` whose symbol
    matches one of `symbol_globs`) gets the members of `context` composed after the pins."""

    org_id: Identifier
    repo_id: Identifier | None = None
    """Only retrievals in this repo (default: every retrieval of the org). A write grant
    on this scope is needed (403)."""
    name: Annotated[str, msgspec.Meta(pattern=RULE_NAME_PATTERN, max_length=128)]
    """Why, as a short name ("stripe code pulls the payments runbook"); unique per scope (409)."""
    context: Annotated[str, msgspec.Meta(pattern=CONTEXT_REF_PATTERN, max_length=40)]
    """`ctx_<id>@<version>` (pinned) or `ctx_<id>@latest` (the newest the reader may
    read). One you may read (404), not retired (409), and readable by everyone who
    reads the rule's scope: a Context of that scope or above it, or one its org (or
    repo) subscribes to (400)."""
    path_globs: Annotated[list[RuleGlob], msgspec.Meta(max_length=32)] = []
    """Globs over touched paths: `**` any run of characters, `*` within one path segment, `?` one."""
    symbol_globs: Annotated[list[RuleGlob], msgspec.Meta(max_length=32)] = []
    """Globs over the symbol of a touched `path#Symbol` (`Stripe*`, `*.charge`): `*` any run but a slash."""
    expires_at: Annotated[datetime, msgspec.Meta(tz=True)] | None = None
    """After this time the rule matches nothing (default: never)."""
    enabled: bool = True

    def __post_init__(self) -> None:
        if not (self.path_globs or self.symbol_globs):
            raise ValueError("a rule needs path_globs or symbol_globs")
        if len(self.path_globs) + len(self.symbol_globs) > 32:
            raise ValueError("a rule has at most 32 globs")
        if any(RULE_GLOB_REFUSED.search(g) for g in self.path_globs + self.symbol_globs):
            raise ValueError("a glob must not contain control characters")
        require_readable_time(self.expires_at, "expires_at")


class RuleOut(msgspec.Struct):
    rule_id: int
    org_id: str
    repo_id: str | None
    name: str
    path_globs: list[str]
    symbol_globs: list[str]
    context_ref: str
    """The Context version it brings (`@latest`: the newest the reader may read)."""
    created_by: str
    created_at: datetime
    expires_at: datetime | None
    enabled: bool
    expired: bool


class RuleList(msgspec.Struct):
    rules: list[RuleOut]
    """In rule order (the lowest id first marks a fragment two rules bring)."""
