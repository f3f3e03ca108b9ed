"""/documents: ingest (all or nothing), list with filters, read one with its versions,
delete (the fragments leave retrieval; the history stays)."""

from __future__ import annotations

import time
from datetime import datetime
from typing import Annotated

import msgspec
import psycopg
from litestar import Controller, Response, delete, get, post
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.exceptions import ValidationException
from litestar.params import JSONBody, Parameter

from app.api.fragments import parse_id
from app.api.idempotency import (
    REPLAYED_HEADER,
    REPLAYED_RESPONSE_HEADER,
    IdempotencyKey,
    IdempotentWrite,
    once,
    remember,
    request_hash,
)
from app.api.openapi import BODY_ERRORS, READ_ERRORS, problems
from app.api.queries import list_documents_on, read_document_on
from app.api.request_log import note
from app.api.state import Services
from app.ingest.normalize import SourceDocument
from app.ingest.pipeline import EmbeddedAhead, EmbeddingPlan, IngestPipeline, IngestResult, PreparedDocument
from app.scope import Scope
from app.wire.bodies import (
    DEFAULT_PAGE,
    IDENTIFIER_PATTERN,
    MAX_BIGINT,
    MAX_INT,
    MAX_METADATA_BYTES,
    MAX_PAGE,
    NO_NUL,
    POSITIVE_ID,
    DocumentDeleted,
    DocumentDetail,
    DocumentIn,
    DocumentPage,
    DocumentQuery,
    DocumentRead,
    DocumentResult,
    IngestRequest,
    IngestResponse,
    ScopeIn,
)

KIND_PATTERN = r"^[a-z][a-z0-9-]{0,31}$"


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
        response_headers=[REPLAYED_RESPONSE_HEADER],
    )
    async def ingest(
        self,
        data: JSONBody[IngestRequest],
        state: State,
        token: NamedDependency[str],
        idempotency_key: IdempotencyKey = None,
    ) -> Response[IngestResponse]:
        """Normalize, chunk, deduplicate and embed the documents, in one transaction:
        a document that is refused (binary, empty, too large) stores nothing at all.
        Unchanged documents are reported with `changed: false`. The caller needs write
        grants on the scope (403 otherwise). Another write of the org holding its write
        lock longer than CONTEXTS_WRITE_LOCK_WAIT_S is a 503 with Retry-After (nothing
        stored); with an `Idempotency-Key`, a retry is answered the first response and
        writes nothing."""
        services: Services = state.services
        idempotent = None
        if idempotency_key is not None:
            idempotent = IdempotentWrite(idempotency_key, request_hash("POST /documents", data), lambda r: r)
        response, replayed = await once(
            services, token, idempotent, IngestResponse, lambda: ingest_documents(services, token, data, idempotent)
        )
        return Response(response, status_code=201, headers={REPLAYED_HEADER: "true"} if replayed else None)

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
        kind: Annotated[str | None, Parameter(pattern=KIND_PATTERN, description="Only this kind")] = None,
        owner: Annotated[
            str | None, Parameter(min_length=1, max_length=256, pattern=NO_NUL, description="Only this owner")
        ] = None,
        updated_since: Annotated[
            datetime | None, Parameter(description="Changed at or after (ISO 8601 with an offset)")
        ] = None,
    ) -> DocumentPage:
        """The documents a retrieval in this scope reads from (org-wide ones, the repo's,
        and a persona's or session's only when it is named), those the key may read and
        not deleted, in doc_id order, optionally filtered by path prefix, kind, owner and
        update time; `next_after` is the `after` of the next page (null after the last).
        A repo or persona the org does not have is a 404."""
        if updated_since is not None and updated_since.tzinfo is None:
            raise ValidationException("updated_since needs a UTC offset (e.g. 2026-01-31T00:00:00Z)")
        query = DocumentQuery(
            ScopeIn(org_id, repo_id, persona_id, session_id), path_prefix, limit, after, kind, owner, updated_since
        )
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
        """One version of a document you may read (any other id, or a deleted document,
        is a 404), its text (or the slice `offset`, `max_chars`, in characters), the
        fragments it was cut into, and the list of all its versions."""
        query = DocumentRead(parse_id(doc_id, "document id"), version, offset, max_chars)
        return await read_document(state.services, token, query)

    @delete(
        "/{doc_id:str}",
        status_code=200,
        summary="Delete a document",
        responses=problems(400, 401, 403, 404, 409, 503),
    )
    async def remove(
        self,
        doc_id: Annotated[str, Parameter(pattern=POSITIVE_ID, max_length=19, description="A positive decimal integer")],
        state: State,
        token: NamedDependency[str],
    ) -> DocumentDeleted:
        """Its fragments leave retrieval at once (lexical and dense lists, BM25
        statistics), but for those another document still holds; its versions, source
        pointers and the traces citing it stay for audit. Needs a write grant on its scope
        (403); a document you may not read, or already deleted, is a 404. Writing the
        same path again brings it back as a new version."""
        return await delete_document(state.services, token, parse_id(doc_id, "document id"))


async def ingest_documents(
    services: Services, token: str, data: IngestRequest, idempotent: IdempotentWrite | None = None
) -> IngestResponse:
    """POST /documents and the MCP tool `write_note`: key and grants first, then chunk
    and embed holding no lock (nor any connection while the model runs), then the SQL
    writes in one transaction in the org's turn, waited for at most
    CONTEXTS_WRITE_LOCK_WAIT_S (503 with Retry-After otherwise, nothing stored). With
    `idempotent`, the response is stored under its key in that same transaction."""
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

    def plan(pipeline: IngestPipeline, prepared: list[PreparedDocument]) -> EmbeddingPlan:
        # A short read transaction: which chunks no stored fragment holds (no lock taken).
        with services.acting_for(token) as conn:
            return pipeline.plan_embeddings(conn, scope, prepared)

    def write(
        pipeline: IngestPipeline, prepared: list[PreparedDocument], ahead: EmbeddedAhead, wait_s: float
    ) -> list[IngestResult]:
        with services.writing_for(token, scope.org_id, wait_s) as conn:
            results = pipeline.write(conn, scope, prepared, ahead=ahead)
            if idempotent is not None:
                remember(conn, idempotent, response_of(results))
            return results

    started = time.perf_counter()
    pipeline = services.pipeline
    prepared = await services.prepare(prepare)
    ahead = await services.prepare(pipeline.embed_planned, await services.read(plan, pipeline, prepared))
    async with services.org_turn(scope.org_id) as wait_s:  # waiting here holds no thread
        try:
            results = await services.write(write, pipeline, prepared, ahead, wait_s)
        except psycopg.errors.ObjectNotInPrerequisiteState:
            # The namespace was promoted to another model: follow it, and write once more
            # (its vectors computed in this turn: those embedded ahead are the old model's).
            await services.read(services.follow_models_quietly)
            if services.pipeline is pipeline:
                raise
            results = await services.write(write, services.pipeline, prepared, EmbeddedAhead(), wait_s)
    if any(r.changed for r in results):
        services.authority.poke()
    if services.metrics is not None:
        fragments = sum(r.fragments for r in results)
        services.metrics.ingested(scope.org_id, len(results), fragments, time.perf_counter() - started)
    note(repo=scope.repo_id, persona=scope.persona_id, session=scope.session_id, documents=len(results))
    return response_of(results)


def response_of(results: list[IngestResult]) -> IngestResponse:
    return IngestResponse(
        [DocumentResult(r.path, r.doc_id, r.version, r.changed, r.fragments, r.created) for r in results]
    )


async def list_documents(services: Services, token: str, query: DocumentQuery) -> DocumentPage:
    """GET /documents and the MCP tool `list_documents`: one api.list_documents call."""
    scope = query.scope

    def run() -> DocumentPage:
        with services.acting_for(token) as conn:
            return list_documents_on(conn, query)

    note(repo=scope.repo_id, persona=scope.persona_id, session=scope.session_id)
    return await services.read(run)


async def read_document(services: Services, token: str, query: DocumentRead) -> DocumentDetail:
    """GET /documents/{id} and the MCP tool `read_document`: P0002 (404) unless readable."""

    def run() -> DocumentDetail:
        with services.acting_for(token) as conn:
            return read_document_on(conn, query)

    return await services.read(run)


def delete_on(conn: psycopg.Connection, pipeline: IngestPipeline, doc_id: int) -> DocumentDeleted:
    """api.delete_document in the caller's transaction (bound to a principal), then the
    near-duplicate pointers it detached written again: what HTTP, MCP and the CLI run."""
    row = conn.execute("select * from api.delete_document(%s)", (doc_id,)).fetchone()
    assert row is not None  # the function returns one row or raises
    deleted_id, org_id, path, version, retired, detached = row
    scope_row = conn.execute(
        "select repo_id, persona_id, session_id from data.documents where doc_id = %s", (deleted_id,)
    ).fetchone()
    rehomed = 0
    if detached and scope_row is not None:
        rehomed = pipeline.rehome(conn, Scope(org_id, *scope_row), detached)
    return DocumentDeleted(deleted_id, org_id, path, version, retired, rehomed)


async def delete_document(services: Services, token: str, doc_id: int) -> DocumentDeleted:
    """DELETE /documents/{id} and the MCP tool `delete_document`: a write (the org's
    writers take turns, as for ingestion, waiting at most CONTEXTS_WRITE_LOCK_WAIT_S)."""
    org_id, _ = await services.read(services.authenticate, token)

    def run(wait_s: float) -> DocumentDeleted:
        with services.writing_for(token, org_id, wait_s) as conn:
            return delete_on(conn, services.pipeline, doc_id)

    async with services.org_turn(org_id) as wait_s:
        deleted = await services.write(run, wait_s)
    services.authority.poke()
    note(documents=1)
    return deleted
