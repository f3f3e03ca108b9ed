"""POST /documents: ingest one or more documents, all or nothing."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

import msgspec
from litestar import Controller, get, post
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.exceptions import ValidationException
from litestar.params import JSONBody, Parameter
from psycopg.rows import dict_row

from app.api.fragments import MAX_BIGINT, POSITIVE_ID, parse_id
from app.api.openapi import BODY_ERRORS, READ_ERRORS, problems
from app.api.request_log import note
from app.api.state import Services
from app.ingest.normalize import SourceDocument
from app.ingest.pipeline import IngestResult, PreparedDocument
from app.retrieve.models import IDENTIFIER_PATTERN, ScopeIn
from app.scope import Scope

NO_NUL = "^[^\x00]*$"
MAX_METADATA_BYTES = 16 * 1024
"""A document's metadata, as JSON: it is stored again with every version."""
DEFAULT_PAGE, MAX_PAGE = 50, 1000
"""Documents in a page of a listing (api.list_documents refuses more)."""
MAX_INT = 2**31 - 1


DocumentPath = Annotated[str, msgspec.Meta(min_length=1, max_length=1024)]
Kind = Annotated[str, msgspec.Meta(pattern=r"^[a-z][a-z0-9-]{0,31}$")]
PersonName = Annotated[str, msgspec.Meta(max_length=256, pattern=NO_NUL)]


class DocumentIn(msgspec.Struct, forbid_unknown_fields=True):
    path: DocumentPath
    content: str
    kind: Kind | None = None
    author: PersonName | None = None
    owner: PersonName | None = None
    timestamp: Annotated[datetime, msgspec.Meta(tz=True)] | None = None
    """ISO 8601 with a UTC offset; a naive time would be read in the server's zone."""
    metadata: dict[str, object] = {}
    """Free-form JSON object, at most 16 KiB once encoded."""


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
    fragments: list[DocumentFragment]


class DocumentQuery(msgspec.Struct, forbid_unknown_fields=True):
    """A page of a listing: GET /documents's parameters, the MCP tool `list_documents`'s arguments."""

    scope: ScopeIn
    path_prefix: Annotated[str, msgspec.Meta(min_length=1, max_length=1024, pattern=NO_NUL)] | None = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=MAX_PAGE)] = DEFAULT_PAGE
    after: Annotated[int, msgspec.Meta(ge=1, le=MAX_BIGINT)] | None = None
    """The last doc_id of the previous page."""


class DocumentRead(msgspec.Struct, forbid_unknown_fields=True):
    """GET /documents/{id}'s parameters, the MCP tool `read_document`'s arguments."""

    doc_id: Annotated[int, msgspec.Meta(ge=1, le=MAX_BIGINT)]
    version: Annotated[int, msgspec.Meta(ge=1, le=MAX_INT)] | None = None
    """Default: the current version."""
    offset: Annotated[int, msgspec.Meta(ge=0, le=MAX_INT)] = 0
    """First character of the text returned."""
    max_chars: Annotated[int, msgspec.Meta(ge=1, le=MAX_INT)] | None = None
    """Characters of text returned at most (default: to the end)."""


def check_metadata(documents: list[DocumentIn]) -> None:
    for index, d in enumerate(documents):
        size = len(msgspec.json.encode(d.metadata))
        if size > MAX_METADATA_BYTES:
            raise ValidationException(
                f"documents[{index}].metadata is {size} bytes as JSON; at most {MAX_METADATA_BYTES} are accepted"
            )


class DocumentsController(Controller):
    path = "/documents"
    tags = ["ingestion"]

    @post(
        "/",
        status_code=201,
        summary="Ingest documents",
        responses=problems(*BODY_ERRORS, 404, 409, 422),
        response_description="Stored, or found unchanged: one result per document",
    )
    async def ingest(self, data: JSONBody[IngestRequest], state: State, token: NamedDependency[str]) -> IngestResponse:
        """Normalize, chunk, deduplicate and embed the documents, in one transaction:
        a document that is refused (binary, empty, too large) stores nothing at all.
        Unchanged documents are reported with `changed: false`. The caller needs write
        grants on the scope (403 otherwise)."""
        return await ingest_documents(state.services, token, data)

    @get(
        "/",
        summary="List documents",
        responses=problems(400, 401, 403, 404, 503),
    )
    async def list_page(
        self,
        state: State,
        token: NamedDependency[str],
        org_id: Annotated[str, Parameter(pattern=IDENTIFIER_PATTERN, min_length=1, max_length=128)],
        repo_id: Annotated[str | None, Parameter(pattern=IDENTIFIER_PATTERN, min_length=1, max_length=128)] = None,
        persona_id: Annotated[str | None, Parameter(pattern=IDENTIFIER_PATTERN, min_length=1, max_length=128)] = None,
        session_id: Annotated[str | None, Parameter(pattern=IDENTIFIER_PATTERN, min_length=1, max_length=128)] = None,
        path_prefix: Annotated[str | None, Parameter(min_length=1, max_length=1024, pattern=NO_NUL)] = None,
        limit: Annotated[int, Parameter(ge=1, le=MAX_PAGE)] = DEFAULT_PAGE,
        after: Annotated[
            int | None, Parameter(ge=1, le=MAX_BIGINT, description="Last doc_id of the previous page")
        ] = None,
    ) -> DocumentPage:
        """The documents a retrieval in this scope reads from (org-wide ones, the repo's,
        and a persona's or session's only when it is named), those the key may read, in
        doc_id order; `next_after` is the `after` of the next page (null after the last)."""
        query = DocumentQuery(ScopeIn(org_id, repo_id, persona_id, session_id), path_prefix, limit, after)
        return await list_documents(state.services, token, query)

    @get("/{doc_id:str}", summary="A document's text and fragments", responses=problems(*READ_ERRORS))
    async def read(
        self,
        doc_id: Annotated[str, Parameter(pattern=POSITIVE_ID, max_length=19, description="A positive decimal integer")],
        state: State,
        token: NamedDependency[str],
        version: Annotated[int | None, Parameter(ge=1, le=MAX_INT, description="Default: the current one")] = None,
        offset: Annotated[int, Parameter(ge=0, le=MAX_INT, description="First character returned")] = 0,
        max_chars: Annotated[int | None, Parameter(ge=1, le=MAX_INT, description="Default: to the end")] = None,
    ) -> DocumentDetail:
        """One version of a document you may read (any other id is a 404), its text (or
        the slice `offset`, `max_chars`, in characters) and the fragments it was cut into."""
        query = DocumentRead(parse_id(doc_id, "document id"), version, offset, max_chars)
        return await read_document(state.services, token, query)


async def ingest_documents(services: Services, token: str, data: IngestRequest) -> IngestResponse:
    """POST /documents and the MCP tool `write_note`: key and grants first, then prepare
    (chunk, embed) and write in one transaction, the org's writers taking turns."""
    scope = Scope(data.scope.org_id, data.scope.repo_id, data.scope.persona_id, data.scope.session_id)
    check_metadata(data.documents)
    # Key and grants first: an unauthorised body costs no parsing or chunking.
    await services.read(services.authorize_write, token, scope)

    def prepare() -> list[PreparedDocument]:
        return [
            services.pipeline.prepare(
                SourceDocument(
                    path=d.path,
                    content=d.content,
                    kind=d.kind,
                    author=d.author,
                    owner=d.owner,
                    timestamp=d.timestamp,
                    metadata=d.metadata,
                )
            )
            for d in data.documents
        ]

    def write(prepared: list[PreparedDocument]) -> list[IngestResult]:
        with services.acting_for(token, write=True) as conn:
            return services.pipeline.write(conn, scope, prepared)

    prepared = await services.write(prepare)
    async with services.org_lock(scope.org_id):  # waiting here holds no thread
        results = await services.write(write, prepared)
    note(repo=scope.repo_id, persona=scope.persona_id, session=scope.session_id, documents=len(results))
    return IngestResponse(
        [DocumentResult(r.path, r.doc_id, r.version, r.changed, r.fragments, r.created) for r in results]
    )


async def list_documents(services: Services, token: str, query: DocumentQuery) -> DocumentPage:
    """GET /documents and the MCP tool `list_documents`: one api.list_documents call."""
    scope = query.scope

    def run() -> DocumentPage:
        with services.acting_for(token) as conn, conn.cursor(row_factory=dict_row) as cur:
            rows = cur.execute(
                "select * from api.list_documents(%s, %s, %s, %s, %s, %s, %s)",
                (
                    scope.org_id,
                    scope.repo_id,
                    scope.persona_id,
                    scope.session_id,
                    query.path_prefix,
                    query.limit,
                    query.after,
                ),
            ).fetchall()
        documents = [msgspec.convert(row, DocumentSummary) for row in rows]
        return DocumentPage(documents, documents[-1].doc_id if len(documents) == query.limit else None)

    note(repo=scope.repo_id, persona=scope.persona_id, session=scope.session_id)
    return await services.read(run)


async def read_document(services: Services, token: str, query: DocumentRead) -> DocumentDetail:
    """GET /documents/{id} and the MCP tool `read_document`: P0002 (404) unless readable."""

    def run() -> DocumentDetail:
        with services.acting_for(token) as conn, conn.cursor(row_factory=dict_row) as cur:
            row = cur.execute(
                "select * from api.get_document(%s, %s, %s, %s)",
                (query.doc_id, query.version, query.offset, query.max_chars),
            ).fetchone()
        assert row is not None  # api.get_document raises P0002 instead
        return msgspec.convert(row, DocumentDetail)

    return await services.read(run)
