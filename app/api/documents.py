"""POST /documents: ingest one or more documents, all or nothing."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import msgspec
from litestar import Controller, post
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.exceptions import ValidationException
from litestar.params import JSONBody

from app.api.openapi import BODY_ERRORS, problems
from app.api.request_log import note
from app.api.state import Services
from app.ingest.normalize import SourceDocument
from app.ingest.pipeline import IngestResult, PreparedDocument
from app.retrieve.models import ScopeIn
from app.scope import Scope

NO_NUL = "^[^\x00]*$"
MAX_METADATA_BYTES = 16 * 1024
"""A document's metadata, as JSON: it is stored again with every version."""


class DocumentIn(msgspec.Struct, forbid_unknown_fields=True):
    path: Annotated[str, msgspec.Meta(min_length=1, max_length=1024)]
    content: str
    kind: Annotated[str, msgspec.Meta(pattern=r"^[a-z][a-z0-9-]{0,31}$")] | None = None
    author: Annotated[str, msgspec.Meta(max_length=256, pattern=NO_NUL)] | None = None
    owner: Annotated[str, msgspec.Meta(max_length=256, pattern=NO_NUL)] | None = None
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
