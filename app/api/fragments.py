"""GET /fragments/{id} and GET /traces/{trace_id}: provenance of what was retrieved.

Ids are read strictly (canonical decimal, canonical UUID): `+1`, ` 1` or `١` are not
another spelling of fragment 1."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Any

import msgspec
from litestar import Controller, get
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.exceptions import ValidationException
from litestar.params import Parameter
from msgspec import UNSET, UnsetType
from psycopg.rows import dict_row

from app.api.openapi import READ_ERRORS, problems
from app.api.state import Services
from app.retrieve.trace import get_trace

POSITIVE_ID = r"^[1-9][0-9]{0,18}$"
"""A fragment or document id in a path: canonical decimal, 1 to 19 digits."""
UUID_PATTERN = r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
MAX_BIGINT = 2**63 - 1


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
    simhash: Annotated[str, msgspec.Meta(pattern="^[0-9a-f]{16}$")]
    """The 64-bit SimHash, as 16 hexadecimal digits."""
    active: bool
    created_at: datetime
    updated_at: datetime
    embedding_model: str | None
    """`name@generation` of its newest embedding."""
    sources: list[FragmentSource]


class TraceCandidate(msgspec.Struct, kw_only=True):
    """One candidate of a retrieval and what became of it (app.retrieve.trace). A field
    left out is one withheld from this reader (`redacted`), never a null."""

    fragment_id: int | UnsetType = UNSET
    fused_rank: int
    lexical_rank: int | None
    lexical_score: float | None
    dense_rank: int | None
    dense_similarity: float | None
    fused_score: float
    rerank_score: float | None
    freshness: float | None
    final_score: float | None
    included: bool
    reason: str
    """included, over_budget, below_min_score, beyond_rerank_top or only_boilerplate."""
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
    redacted: bool = False
    """True when the reader may not read this fragment now: only its ranks, scores and
    fate are shown (no id, source, document or text)."""


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


def parse_id(raw: str, what: str = "fragment id") -> int:
    """The path parameter already matched POSITIVE_ID (ASCII digits only: int() alone
    would take other scripts' digits, signs and spaces); 19 digits may still exceed bigint."""
    number = int(raw)
    if number > MAX_BIGINT:
        raise ValidationException(f"{what} must be a decimal integer from 1 to {MAX_BIGINT}")
    return number


class FragmentsController(Controller):
    path = "/fragments"
    tags = ["provenance"]

    @get("/{fragment_id:str}", summary="A fragment and all its sources", responses=problems(*READ_ERRORS))
    async def get_fragment(
        self,
        fragment_id: Annotated[
            str, Parameter(pattern=POSITIVE_ID, max_length=19, description="A positive decimal integer")
        ],
        state: State,
        token: NamedDependency[str],
    ) -> FragmentDetail:
        """A fragment you may read (any other id is a 404, whether or not it exists)."""
        return await read_fragment(state.services, token, parse_id(fragment_id))


async def read_fragment(services: Services, token: str, fragment_id: int) -> FragmentDetail:
    """GET /fragments/{id} and the MCP tool `get_fragment`: P0002 (404) unless readable."""

    def run() -> FragmentDetail:
        with services.acting_for(token) as conn, conn.cursor(row_factory=dict_row) as cur:
            row = cur.execute("select * from api.get_fragment(%s)", (fragment_id,)).fetchone()
        assert row is not None  # api.get_fragment raises P0002 instead
        row["simhash"] = f"{row['simhash'] & 0xFFFFFFFFFFFFFFFF:016x}"
        return msgspec.convert(row, FragmentDetail)

    return await services.read(run)


class TracesController(Controller):
    path = "/traces"
    tags = ["provenance"]

    @get("/{trace_id:str}", summary="A retrieval trace", responses=problems(*READ_ERRORS))
    async def get_trace(
        self,
        trace_id: Annotated[str, Parameter(pattern=UUID_PATTERN, description="A UUID, 8-4-4-4-12 hex")],
        state: State,
        token: NamedDependency[str],
    ) -> TraceOut:
        """Request, pipeline versions, and every candidate's lexical rank, dense rank,
        fused score, rerank score, final score, and whether (or why not) it was included.
        Visible to the principal that made it and to its org's auditors, showing what
        the caller's grants let it read now: a candidate it may not read keeps only its
        ranks and scores, a request in a scope it holds no grant on loses its query and
        scope ids, and `redacted` lists what was withheld."""
        return await read_trace(state.services, token, trace_id)


async def read_trace(services: Services, token: str, trace_id: str) -> TraceOut:
    """GET /traces/{id} and the MCP tool `get_trace` (`trace_id` already a UUID's text)."""

    def run() -> TraceOut:
        with services.acting_for(token) as conn:
            return msgspec.convert(get_trace(conn, trace_id.lower()), TraceOut)

    return await services.read(run)
