"""Reads of documents in an open transaction (bound to a principal): what the HTTP
endpoints, the MCP tools and the CLI's database mode all run."""

from __future__ import annotations

import msgspec
import psycopg
from psycopg.rows import dict_row

from app.wire.bodies import DocumentDetail, DocumentPage, DocumentQuery, DocumentRead, DocumentSummary


def list_documents_on(conn: psycopg.Connection, query: DocumentQuery) -> DocumentPage:
    """One api.list_documents call: a page, and the `after` of the next one."""
    scope = query.scope
    with conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(
            "select * from api.list_documents(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
            (
                scope.org_id,
                scope.repo_id,
                scope.persona_id,
                scope.session_id,
                query.path_prefix,
                query.limit,
                query.after,
                query.kind,
                query.owner,
                query.updated_since,
            ),
        ).fetchall()
    documents = [msgspec.convert(row, DocumentSummary) for row in rows]
    return DocumentPage(documents, documents[-1].doc_id if len(documents) == query.limit else None)


def read_document_on(conn: psycopg.Connection, query: DocumentRead) -> DocumentDetail:
    """api.get_document: P0002 (404) unless readable and not deleted."""
    with conn.cursor(row_factory=dict_row) as cur:
        row = cur.execute(
            "select * from api.get_document(%s, %s, %s, %s)",
            (query.doc_id, query.version, query.offset, query.max_chars),
        ).fetchone()
    assert row is not None  # api.get_document raises P0002 instead
    return msgspec.convert(row, DocumentDetail)
