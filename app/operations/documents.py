"""Documents: ingest (all or nothing), list with filters, read one with its versions,
delete (the fragments leave retrieval; the history stays). What POST, GET and DELETE
/documents, the MCP tools of the same names and `contexts documents` run."""

from __future__ import annotations

import time

import msgspec
import psycopg

from app.ingest.normalize import SourceDocument
from app.ingest.pipeline import EmbeddedAhead, EmbeddingPlan, IngestPipeline, IngestResult, PreparedDocument
from app.operations.errors import Invalid
from app.operations.idempotency import IdempotentWrite, once, remember, request_hash
from app.operations.log_fields import note
from app.operations.queries import list_documents_on, read_document_on
from app.operations.services import Services
from app.scope import Scope
from app.wire.bodies import (
    MAX_METADATA_BYTES,
    DocumentDeleted,
    DocumentDetail,
    DocumentIn,
    DocumentPage,
    DocumentQuery,
    DocumentRead,
    DocumentResult,
    IngestRequest,
    IngestResponse,
)


def check_metadata(documents: list[DocumentIn]) -> None:
    for index, d in enumerate(documents):
        size = len(msgspec.json.encode(d.metadata))
        if size > MAX_METADATA_BYTES:
            raise Invalid(
                f"documents[{index}].metadata is {size} bytes as JSON; at most {MAX_METADATA_BYTES} are accepted"
            )


async def ingest_documents(
    services: Services, token: str, data: IngestRequest, idempotent: IdempotentWrite | None = None
) -> IngestResponse:
    """POST /documents and the MCP tool `write_note`: key and grants first, then chunk
    and embed holding no lock (nor any connection while the model runs) in a turn at the
    preparers, then the SQL writes in one transaction in the org's turn, each turn waited
    for at most CONTEXTS_WRITE_LOCK_WAIT_S (503 with Retry-After otherwise, nothing stored). With
    `idempotent`, the response is stored under its key in that same transaction."""
    scope = Scope(data.scope.org_id, data.scope.repo_id, data.scope.persona_id, data.scope.session_id)
    check_metadata(data.documents)
    # Key and grants first: an unauthorised body costs no parsing or chunking.
    await services.runtime.read(services.auth.authorize_write, token, scope)

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
        with services.auth.acting_for(token) as conn:
            return pipeline.plan_embeddings(conn, scope, prepared)

    def write(
        pipeline: IngestPipeline, prepared: list[PreparedDocument], ahead: EmbeddedAhead, wait_s: float
    ) -> list[IngestResult]:
        with services.auth.writing_for(token, scope.org_id, wait_s) as conn:
            results = pipeline.write(conn, scope, prepared, ahead=ahead)
            if idempotent is not None:
                remember(conn, idempotent, response_of(results))
            return results

    started = time.perf_counter()
    pipeline = services.pipeline
    async with services.runtime.prepare_turn(scope.org_id):
        prepared = await services.runtime.prepare(prepare)
        ahead = await services.runtime.prepare(
            pipeline.embed_planned, await services.runtime.read(plan, pipeline, prepared)
        )
    async with services.runtime.org_turn(scope.org_id) as wait_s:  # waiting here holds no thread
        try:
            results = await services.runtime.write(write, pipeline, prepared, ahead, wait_s)
        except psycopg.errors.ObjectNotInPrerequisiteState:
            # The namespace was promoted to another model: follow it, and write once more
            # (its vectors computed in this turn: those embedded ahead are the old model's).
            await services.runtime.read(services.following.follow_models_quietly)
            if services.pipeline is pipeline:
                raise
            results = await services.runtime.write(write, services.pipeline, prepared, EmbeddedAhead(), wait_s)
    if any(r.changed for r in results):
        services.authority.poke()
    if services.metrics is not None:
        fragments = sum(r.fragments for r in results)
        services.metrics.ingested(scope.org_id, len(results), fragments, time.perf_counter() - started)
    note(repo=scope.repo_id, persona=scope.persona_id, session=scope.session_id, documents=len(results))
    return response_of(results)


async def ingest(
    services: Services, token: str, data: IngestRequest, idempotency_key: str | None = None
) -> tuple[IngestResponse, bool]:
    """POST /documents: ingest_documents once per Idempotency-Key; (its response, False),
    or (the response stored under the key, True) for a retry of a request answered
    before."""
    idempotent = None
    if idempotency_key is not None:
        target = (data.scope.org_id, data.scope.repo_id, data.scope.persona_id, data.scope.session_id)
        idempotent = IdempotentWrite(idempotency_key, request_hash("POST /documents", data), lambda r: r, target)
    return await once(
        services, token, idempotent, IngestResponse, lambda: ingest_documents(services, token, data, idempotent)
    )


def response_of(results: list[IngestResult]) -> IngestResponse:
    return IngestResponse(
        [DocumentResult(r.path, r.doc_id, r.version, r.changed, r.fragments, r.created) for r in results]
    )


async def list_documents(services: Services, token: str, query: DocumentQuery) -> DocumentPage:
    """GET /documents and the MCP tool `list_documents`: one api.list_documents call."""
    scope = query.scope

    def run() -> DocumentPage:
        with services.auth.acting_for(token) as conn:
            return list_documents_on(conn, query)

    note(repo=scope.repo_id, persona=scope.persona_id, session=scope.session_id)
    return await services.runtime.read(run)


async def read_document(services: Services, token: str, query: DocumentRead) -> DocumentDetail:
    """GET /documents/{id} and the MCP tool `read_document`: P0002 (404) unless readable."""

    def run() -> DocumentDetail:
        with services.auth.acting_for(token) as conn:
            return read_document_on(conn, query)

    return await services.runtime.read(run)


def delete_on(conn: psycopg.Connection, pipeline: IngestPipeline, doc_id: int) -> DocumentDeleted:
    """service.delete_document in the caller's transaction (bound to a principal), then the
    near-duplicate pointers it detached written again: what HTTP, MCP and the CLI run."""
    row = conn.execute("select * from service.delete_document(%s)", (doc_id,)).fetchone()
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
    org_id, _ = await services.runtime.read(services.auth.authenticate, token)

    def run(wait_s: float) -> DocumentDeleted:
        with services.auth.writing_for(token, org_id, wait_s) as conn:
            return delete_on(conn, services.pipeline, doc_id)

    async with services.runtime.org_turn(org_id) as wait_s:
        deleted = await services.runtime.write(run, wait_s)
    services.authority.poke()
    note(documents=1)
    return deleted
