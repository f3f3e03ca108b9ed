"""The ingestion lane end to end: normalize, chunk, deduplicate, embed, write.

Pure-Python preparation (normalize, chunk, SimHash) runs without the database; the
write runs inside the caller's transaction: record the document version, ask SQL
which chunks collapse into existing fragments, embed only the new ones (batched over
the whole group of documents), then write fragments and source pointers.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import psycopg

from app.ingest.chunk_code import CodeChunker, supports
from app.ingest.chunk_prose import ProseChunker
from app.ingest.chunks import CHUNKER_VERSION, Chunk
from app.ingest.dedupe import simhash64, to_signed
from app.ingest.embed import Embedder, model_label
from app.ingest.normalize import NormalizedDocument, SourceDocument, normalize
from app.scope import Scope
from app.settings import Settings


@dataclass(frozen=True, slots=True)
class PreparedDocument:
    doc: NormalizedDocument
    namespace: str
    chunks: list[Chunk]


@dataclass(frozen=True, slots=True)
class _Pending:
    """A changed document between matching and writing."""

    prepared: PreparedDocument
    doc_id: int
    version: int
    rows: list[dict]
    """add_fragments payload, one per chunk; new chunks get an "embedding"."""
    inputs: list[str]
    is_new: list[bool]


@dataclass(frozen=True, slots=True)
class IngestResult:
    path: str
    doc_id: int
    version: int
    changed: bool
    fragments: int
    created: int
    """Fragments written new; the rest collapsed into existing canonical fragments."""


def embedding_input(path: str, chunk: Chunk) -> str:
    """What the dense model sees: where the text sits, then the text itself."""
    header = " > ".join((path, *chunk.heading_path))
    return f"{header}\n\n{chunk.text}"


def lexical_heading(path: str, chunk: Chunk) -> str:
    return " ".join((path.replace("/", " ").replace(".", " "), *chunk.heading_path))


class IngestPipeline:
    def __init__(self, settings: Settings, embedders: dict[str, Embedder]) -> None:
        self.settings = settings
        self.embedders = embedders
        self.code_chunker = CodeChunker(settings.max_fragment_tokens, settings.overlap_tokens)
        self.prose_chunker = ProseChunker(settings.max_fragment_tokens, settings.overlap_tokens)

    # -- preparation (no database) -------------------------------------------------

    def prepare(self, source: SourceDocument) -> PreparedDocument:
        doc = normalize(source, max_bytes=self.settings.max_document_bytes)
        if supports(doc.syntax):
            return PreparedDocument(doc, "code", self.code_chunker.chunk(doc.text, doc.syntax))
        return PreparedDocument(doc, "prose", self.prose_chunker.chunk(doc.text, doc.syntax))

    # -- writing (inside the caller's transaction) ------------------------------------

    def register_models(self, conn: psycopg.Connection) -> dict[str, int]:
        return {
            namespace: conn.execute(
                "select api.register_embedding_model(%s, %s, %s)",
                (namespace, model_label(embedder.name), embedder.dims),
            ).fetchone()[0]
            for namespace, embedder in self.embedders.items()
        }

    def write(
        self,
        conn: psycopg.Connection,
        scope: Scope,
        documents: Iterable[PreparedDocument],
        on_document: Callable[[IngestResult], None] | None = None,
    ) -> list[IngestResult]:
        results: list[IngestResult] = []
        begun: list[tuple[PreparedDocument, int, int]] = []
        # Record every version first: retirements happen before any matching, so what
        # SQL says now about duplicates still holds when the fragments are written.
        for prepared in documents:
            doc = prepared.doc
            doc_id, version, changed = conn.execute(
                "select * from api.begin_document(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                (*scope.as_args(), doc.path, doc.kind, doc.text, doc.content_hash, doc.language,
                 doc.author, doc.timestamp, json.dumps(doc.metadata)),
            ).fetchone()
            if changed:
                begun.append((prepared, doc_id, version))
                continue
            result = IngestResult(doc.path, doc_id, version, False, 0, 0)
            results.append(result)
            if on_document:
                on_document(result)

        if begun:  # unchanged documents need no model at all
            self.register_models(conn)
        pending: list[_Pending] = []
        for prepared, doc_id, version in begun:
            rows = [self._chunk_row(prepared, chunk) for chunk in prepared.chunks]
            matches = conn.execute(
                "select ordinal, fragment_id from api.match_fragments(%s, %s, %s, %s, %s, %s, %s)",
                (*scope.as_args(), [r["namespace"] for r in rows],
                 [r["content_hash"] for r in rows], [r["simhash"] for r in rows]),
            ).fetchall()
            is_new = [fragment_id is None for _ordinal, fragment_id in matches]
            inputs = [embedding_input(prepared.doc.path, chunk) for chunk in prepared.chunks]
            pending.append(_Pending(prepared, doc_id, version, rows, inputs, is_new))

        self._embed_new(pending)
        for item in pending:
            written = conn.execute(
                "select ordinal, fragment_id, created from api.add_fragments(%s, %s, %s)",
                (item.doc_id, item.version, json.dumps(item.rows)),
            ).fetchall()
            result = IngestResult(
                item.prepared.doc.path, item.doc_id, item.version, True, len(written), sum(1 for r in written if r[2]))
            results.append(result)
            if on_document:
                on_document(result)
        return results

    def _chunk_row(self, prepared: PreparedDocument, chunk: Chunk) -> dict:
        path = prepared.doc.path
        return {
            "namespace": prepared.namespace,
            "owner": prepared.doc.owner,
            "heading_path": list(chunk.heading_path),
            "lexical_heading": lexical_heading(path, chunk),
            "symbol": chunk.symbol,
            "text": chunk.text,
            "content_hash": hashlib.sha256(chunk.text.encode("utf-8")).hexdigest(),
            "token_count": chunk.token_count,
            "chunker_version": CHUNKER_VERSION,
            "simhash": to_signed(simhash64(chunk.text)),
            "anchor": chunk.anchor,
            "start_line": chunk.start_line,
            "end_line": chunk.end_line,
        }

    def _embed_new(self, pending: list[_Pending]) -> None:
        """Embed the chunks SQL did not match, batched per namespace over all documents."""
        by_namespace: dict[str, list[tuple[dict, str]]] = {}
        for item in pending:
            for row, text, new in zip(item.rows, item.inputs, item.is_new):
                if new:
                    by_namespace.setdefault(row["namespace"], []).append((row, text))
        for namespace, work in by_namespace.items():
            vectors = self.embedders[namespace].embed([text for _row, text in work])
            for (row, _text), vector in zip(work, vectors):
                row["embedding"] = vector
