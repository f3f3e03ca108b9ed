"""Request and response bodies of a retrieval, validated at the edge (HTTP and CLI)."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated

import msgspec

CONTROL_CHARACTERS = r"\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029"
"""A class of characters a query may not hold (tab, newline and carriage return it may)."""
_CONTROL = re.compile(f"[{CONTROL_CHARACTERS}]")

DEFAULT_BUDGET_TOKENS = 4000
"""Tokens of fragment text a response may hold, unless the request says otherwise."""
DEFAULT_K_LEXICAL = 100
"""Depth of the BM25 candidate list."""
DEFAULT_K_DENSE = 100
"""Depth of the cosine candidate list."""
DEFAULT_RERANK_TOP = 50
"""Fused candidates the reranker scores."""

IDENTIFIER_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:@/-]*$"
"""An org, repo, persona or session id (1 to 128 characters)."""
Identifier = Annotated[str, msgspec.Meta(min_length=1, max_length=128, pattern=IDENTIFIER_PATTERN)]


class ScopeIn(msgspec.Struct, forbid_unknown_fields=True):
    org_id: Identifier
    repo_id: Identifier | None = None
    persona_id: Identifier | None = None
    session_id: Identifier | None = None


class RetrieveRequest(msgspec.Struct, forbid_unknown_fields=True):
    query: Annotated[str, msgspec.Meta(min_length=1, max_length=4000, pattern=f"^[^{CONTROL_CHARACTERS}]*$")]
    scope: ScopeIn
    budget_tokens: Annotated[int, msgspec.Meta(gt=0, le=200_000)] = DEFAULT_BUDGET_TOKENS
    k_lexical: Annotated[int, msgspec.Meta(ge=0, le=1000)] = DEFAULT_K_LEXICAL
    k_dense: Annotated[int, msgspec.Meta(ge=0, le=1000)] = DEFAULT_K_DENSE
    rerank_top: Annotated[int, msgspec.Meta(ge=1, le=1000)] = DEFAULT_RERANK_TOP
    freshness_halflife_days: Annotated[float, msgspec.Meta(gt=0, le=36500)] | None = None
    min_score: Annotated[float, msgspec.Meta(ge=0, le=1)] = 0.0

    def __post_init__(self) -> None:
        """What the fields mean, beyond their types (msgspec reports these as invalid).
        Control characters are refused by the pattern too (the OpenAPI document states it);
        this also covers a request built without decoding, which skips the pattern."""
        if _CONTROL.search(self.query):
            raise ValueError("query must not contain control characters")
        if not any(ch.isalnum() for ch in self.query):
            raise ValueError("query must contain at least one letter or digit")
        if self.k_lexical == 0 and self.k_dense == 0:
            raise ValueError("k_lexical and k_dense are both 0: nothing would be retrieved")


class FragmentOut(msgspec.Struct):
    id: int
    doc_id: int
    version: int
    score: float
    tokens: int
    source: str
    """path#anchor of the live source this fragment is cited from."""
    updated_at: datetime
    text: str
    heading_path: list[str]
    kind: str
    owner: str


class RetrieveResponse(msgspec.Struct):
    fragments: list[FragmentOut]
    trace_id: str
    tokens_used: int
    budget_tokens: int
