"""Request and response bodies of a retrieval, validated at the edge (HTTP, MCP and CLI);
the retriever (app.retrieve.service) takes and answers them."""

from __future__ import annotations

import re
import unicodedata
from datetime import datetime
from typing import Annotated, Any, Literal

import msgspec

from app.readable import BIDI_CONTROL, SURROGATE

CONTROL_CHARACTERS = r"\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029"
"""A class of characters a query may not hold (tab, newline and carriage return it may)."""
_CONTROL = re.compile(f"[{CONTROL_CHARACTERS}]")
_TOUCHED_REFUSED = re.compile(f"[{CONTROL_CHARACTERS}\t\n\r]")

DEFAULT_BUDGET_TOKENS = 4000
"""Tokens of fragment text a response may hold, unless the request says otherwise."""
DEFAULT_K_LEXICAL = 100
"""Depth of the BM25 candidate list."""
DEFAULT_K_DENSE = 100
"""Depth of the cosine candidate list."""
DEFAULT_RERANK_TOP = 50
"""Fused candidates the reranker scores (with the first of each list: app.retrieve.rerank.head_and_tail)."""

IDENTIFIER_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:@/-]*$(?!\n)"
"""An org, repo, persona or session id (1 to 128 characters). `(?!\n)`: msgspec searches
with Python's `re`, whose `$` also matches before a final newline (`"acme\n"` passed)."""
Identifier = Annotated[str, msgspec.Meta(min_length=1, max_length=128, pattern=IDENTIFIER_PATTERN)]


KIND_PATTERN = r"^[a-z][a-z0-9-]{0,31}$(?!\n)"
"""A document kind: 1 to 32 lowercase letters, digits or '-', starting with a letter."""
Kind = Annotated[str, msgspec.Meta(pattern=KIND_PATTERN)]
"""A document kind: code, adr, runbook, policy, note, ..."""
Task = Annotated[str, msgspec.Meta(min_length=1, max_length=4000, pattern=f"^[^{CONTROL_CHARACTERS}]*$")]
"""A query, or the task a session pack is retrieved for."""
MAX_TOP_K = 1000
Negatives = Literal["include", "only", "exclude"]
CONTEXT_REF_PATTERN = r"^ctx_[1-9][0-9]{0,17}@([1-9][0-9]{0,8}|latest)$(?!\n)"
"""A Context version: `ctx_<id>@<version>`, or `ctx_<id>@latest` (the newest you may read)."""
ContextRef = Annotated[str, msgspec.Meta(pattern=CONTEXT_REF_PATTERN, max_length=40)]
ContextMode = Literal["restrict", "boost"]
Generation = Literal["active", "previous"]
"""The embedding generation a retrieval's dense lists search (docs/models.md)."""
MAX_TOUCHING = 64
"""Touched entries a request may name (docs/adr/0022)."""
TOUCHED_PATTERN = f"^[^{CONTROL_CHARACTERS}\t\n\r]+$(?!\n)"
Touched = Annotated[str, msgspec.Meta(min_length=1, max_length=1024, pattern=TOUCHED_PATTERN)]
"""A file the step touches, relative to the repo root (`src/payments/stripe.py`), or one
symbol in it (`src/payments/stripe.py#StripeClient.charge`)."""
"""Named Contexts either bound the retrieval (`restrict`) or lift their members (`boost`)."""
"""Negative fragments (anti-patterns, known traps): kept, kept alone, or left out."""


def check_touched(value: str) -> None:
    """A touched path is relative and stays inside the repo: no `..` segment, no
    leading slash, no control characters (also for a request built without decoding)."""
    path = value.split("#", 1)[0]
    if not path or path.startswith("/") or ".." in path.split("/") or _TOUCHED_REFUSED.search(value):
        raise ValueError(f"touching: {value[:64]!r} is not a relative path inside the repo (no '..', no leading '/')")


def check_text(name: str, value: str) -> None:
    """What a query means beyond its pattern (msgspec reports these as invalid).
    Control characters are refused by the pattern too (the OpenAPI document states it);
    this also covers a request built without decoding, which skips the pattern."""
    if _CONTROL.search(value):
        raise ValueError(f"{name} must not contain control characters")
    if SURROGATE.search(value):  # from a command line's undecodable bytes, or a lax parser
        raise ValueError(
            f"{name} holds a lone UTF-16 surrogate (bytes that are not UTF-8, or an escape such as \\ud800): "
            "send valid Unicode text"
        )
    if not any(ch.isalnum() for ch in value):
        raise ValueError(f"{name} must contain at least one letter or digit")


_LONE_CR = re.compile("\r(?!\n)")
"""A carriage return that ends no line: a terminal prints what follows over the line."""
BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")
"""Hangul fillers and the blank braille pattern: letters and symbols by their category
that show nothing."""


def invisible_problem(name: str, value: str | None) -> str | None:
    """Free text made only of what shows nothing (spaces, zero-width and bidi controls,
    lone combining marks, fillers: `"\u202e"`, `"\u200b "`, `"\u3164"`) reads as blank to
    whoever lists it: refused. Empty or absent is left to the field's own rule."""
    if not value or any(unicodedata.category(ch)[0] in "LNPS" and ch not in BLANK_LETTERS for ch in value):
        return None
    return f"{name} holds no visible character (only spaces, invisible or direction marks): write it in words"


def free_text_problem(name: str, value: str | None) -> str | None:
    """A short text written for people who list it (a pin's reason, a description, a
    version's note): no control character but tab and line breaks (an escape sequence
    retitles or clears the terminal that prints it), no bidi embedding, override or
    isolate, and something visible."""
    if not value:
        return None
    control = _CONTROL.search(value) or _LONE_CR.search(value)
    if control is not None:
        return f"{name} holds a control character (U+{ord(control.group()):04X}): write plain text"
    bidi = BIDI_CONTROL.search(value)
    if bidi is not None:
        return (
            f"{name} holds a bidirectional embedding, override or isolate character (U+{ord(bidi.group()):04X}): "
            "text holding one displays other than it reads"
        )
    return invisible_problem(name, value)


class ScopeIn(msgspec.Struct, forbid_unknown_fields=True):
    org_id: Identifier
    repo_id: Identifier | None = None
    persona_id: Identifier | None = None
    session_id: Identifier | None = None


class RetrieveRequest(msgspec.Struct, forbid_unknown_fields=True):
    query: Task
    scope: ScopeIn
    budget_tokens: Annotated[int, msgspec.Meta(gt=0, le=200_000)] = DEFAULT_BUDGET_TOKENS
    k_lexical: Annotated[int, msgspec.Meta(ge=0, le=1000)] = DEFAULT_K_LEXICAL
    k_dense: Annotated[int, msgspec.Meta(ge=0, le=1000)] = DEFAULT_K_DENSE
    rerank_top: Annotated[int, msgspec.Meta(ge=1, le=1000)] = DEFAULT_RERANK_TOP
    """Fused candidates the reranker scores and ranks; at least `top_k` when that is set."""
    freshness_halflife_days: Annotated[float, msgspec.Meta(gt=0, le=36500)] | None = None
    """One freshness half-life for every kind, instead of the ranking profile's per kind."""
    min_score: Annotated[float, msgspec.Meta(ge=0, le=1)] = 0.0
    top_k: Annotated[int, msgspec.Meta(ge=1, le=MAX_TOP_K)] | None = None
    """At most this many fragments, besides the token budget (default: as many as fit)."""
    min_relevance: Annotated[float, msgspec.Meta(ge=0, le=1)] = 0.0
    """Floor on `relevance`, the absolute score (docs/adr/0009): unlike `min_score` it
    means the same for every query, so a query with nothing relevant gets nothing."""
    path_prefix: Annotated[str, msgspec.Meta(min_length=1, max_length=1024, pattern="^[^\x00]*$")] | None = None
    """Only fragments with a live source under this document path prefix."""
    kinds: Annotated[list[Kind], msgspec.Meta(min_length=1, max_length=32)] | None = None
    """Only fragments of these document kinds."""
    updated_since: Annotated[datetime, msgspec.Meta(tz=True)] | None = None
    """Only fragments updated at or after this time (ISO 8601 with an offset)."""
    updated_until: Annotated[datetime, msgspec.Meta(tz=True)] | None = None
    """Only fragments updated before this time (a window that ends before it starts holds nothing)."""
    negatives: Negatives = "include"
    """Negative fragments (anti-patterns, known traps, `negative: true`): `include` them
    (default), return `only` them, or `exclude` them. Applies to pins too."""
    as_of: Annotated[datetime, msgspec.Meta(tz=True)] | None = None
    """What was current at this time (ISO 8601 with an offset; default now): fragments
    whose validity window holds it, superseded ones included if they were current then
    (docs/adr/0016). Applies to pins too."""
    include_superseded: bool = False
    """Keep fragments outside their validity window (superseded or expired) as well;
    each carries its window (`valid_from`, `valid_until`) so they can be told apart."""
    expand_links: bool = False
    """Follow the links of the composed fragments one hop (their citations, within the
    scope and your grants) and compose what they cite in the budget left, after them,
    each with `linked_from` (docs/adr/0016). `top_k` bounds the ranked fragments only."""

    contexts: Annotated[list[ContextRef], msgspec.Meta(min_length=1, max_length=16)] | None = None
    """Context versions (`ctx_12@3`, `ctx_7@latest`) you may read, by scope or subscription
    (docs/adr/0018): an unknown or unreadable one is a 404, a retired one a 409."""
    context_mode: ContextMode = "restrict"
    """`restrict`: only the members of `contexts`, scored against the query from those
    bundles alone; `boost`: the usual retrieval, with their members added and lifted
    (each marked with `context`)."""
    touching: Annotated[list[Touched], msgspec.Meta(min_length=1, max_length=MAX_TOUCHING)] | None = None
    """Files (`src/payments/stripe.py`) or symbols (`src/payments/stripe.py#charge`) the
    step touches: the Contexts of the workflow rules matching them (in this scope, that
    you may read) are composed after the pins, each fragment marked with `rule`
    (docs/adr/0022)."""
    generation: Generation = "active"
    """`previous`: search the embedding generation each namespace's last promotion
    replaced, while its shadow window lasts (docs/models.md), to compare an upgrade's
    answers with the old model's; a namespace never upgraded is searched with its active
    one. A 409 when no namespace has such a generation left (the window ended). The
    trace's pipeline names the generations searched (`generations`)."""

    def __post_init__(self) -> None:
        check_text("query", self.query)
        for value in self.touching or ():
            check_touched(value)
        if self.k_lexical == 0 and self.k_dense == 0:
            raise ValueError("k_lexical and k_dense are both 0: nothing would be retrieved")


class FragmentOut(msgspec.Struct):
    id: int
    doc_id: int
    version: int
    score: float
    """The blended score in [0, 1] (docs/adr/0014): relevance relative to this query's
    candidates (docs/adr/0005), freshness, authority, pinned and persona, weighed by the
    ranking profile; see `relevance`."""
    relevance: float
    """Absolute, in [0, 1], from the raw cosine and BM25 against fixed reference points
    (docs/adr/0009): comparable across queries."""
    tokens: int
    source: str
    """path#anchor of the live source this fragment is cited from."""
    updated_at: datetime
    text: str
    heading_path: list[str]
    kind: str
    owner: str
    metadata: dict[str, Any]
    """The cited document version's metadata, as stored at ingestion."""
    pinned: bool = False
    """Pinned to a scope this request sees: composed first, whatever its relevance."""
    pin_id: int | None = None
    """The pin (DELETE /pins/{id} removes it); null when not pinned."""
    negative: bool = False
    """An anti-pattern or known trap: render it as "do not do this"."""
    valid_from: datetime | None = None
    """Current from this time (null: always was), from the document's metadata."""
    valid_until: datetime | None = None
    """Current until this time (null: still is): the document's `valid_until`, or when
    a document superseding it starts."""
    linked_from: int | None = None
    """Composed because this fragment of the response cites it (`expand_links`); its
    score and relevance are then 0: it was not ranked."""
    link_type: str | None = None
    """How it is cited: link, url, import, symbol, adr, metadata, supersedes, superseded_by."""
    context: str | None = None
    """The Context version (`ctx_<id>@<version>`) that brought it, when the request
    named `contexts` or read a Context."""
    rule: int | None = None
    """The workflow rule (GET /rules) whose Context brought it, for a request naming
    the files it is `touching`; `rule_name` says why."""
    rule_name: str | None = None


class Superseder(msgspec.Struct):
    """A live document superseding a fragment's document, and its declaration."""

    doc_id: int
    path: str
    evidence: str | None = None
    """Where it declares the supersession and the line as written (null: recorded before
    migration 0025)."""


class PinLeftOut(msgspec.Struct):
    """Why a pin this request sees was not composed."""

    pin_id: int
    fragment_id: int
    reason: Literal[
        "pin_over_budget", "pin_beyond_top_k", "retired", "filtered", "superseded", "expired", "not_yet_valid"
    ]
    """`pin_over_budget` / `pin_beyond_top_k`: earlier pins took the room; `retired`: the
    pinned text is no longer live (its document was deleted, or changed that text);
    `filtered`: outside the request's filters (path prefix, kinds, updated window,
    negatives); `superseded`, `expired`, `not_yet_valid`: its fragment is outside its
    validity window at the request's `as_of` (docs/adr/0016)."""
    detail: str
    """The reason in words: "superseded by docs/adr/0007-kafka.md", "over the token budget"."""
    superseded_by: list[Superseder] = []
    valid_until: datetime | None = None


class RetrieveResponse(msgspec.Struct):
    fragments: list[FragmentOut]
    trace_id: str
    tokens_used: int
    budget_tokens: int
    pins_left_out: list[int] = []
    """Pins this request sees that it did not compose, earliest first: those that did not
    fit the budget (or top_k; earlier pins win), those whose text is no longer live
    (retired), those outside the request's filters (filtered) and those whose fragment
    is outside its validity window (superseded, expired). `pins_left_out_reasons` says
    why, for each."""
    pins_left_out_reasons: list[PinLeftOut] = []
    """Each pin of `pins_left_out`, in the same order, with its reason."""
