"""/documents: ingest (all or nothing), list with filters, read one with its versions,
delete (the fragments leave retrieval; the history stays): the HTTP controller of
app.operations.documents."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from litestar import Controller, Response, delete, get, post
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.exceptions import ValidationException
from litestar.params import JSONBody, Parameter

from app.api.idempotency import REPLAYED_RESPONSE_HEADER, IdempotencyKey
from app.api.openapi import BODY_ERRORS, READ_ERRORS, problems
from app.operations import documents as operations
from app.operations.documents import delete_document, list_documents, read_document
from app.operations.fragments import parse_id
from app.operations.idempotency import REPLAYED_HEADER
from app.wire.bodies import (
    DEFAULT_PAGE,
    IDENTIFIER_PATTERN,
    MAX_BIGINT,
    MAX_INT,
    MAX_PAGE,
    NO_NUL,
    POSITIVE_ID,
    DocumentDeleted,
    DocumentDetail,
    DocumentPage,
    DocumentQuery,
    DocumentRead,
    IngestRequest,
    IngestResponse,
    ScopeIn,
)
from app.wire.retrieve import KIND_PATTERN


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
        response, replayed = await operations.ingest(state.services, token, data, idempotency_key)
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
