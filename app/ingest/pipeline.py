"""The ingestion lane end to end: normalize, chunk, deduplicate, embed, write.

Pure-Python preparation (normalize, chunk, SimHash) runs without the database. Then
the chunks that will need a vector are embedded before the org's write lock is taken
(`embed_ahead`: SQL says which chunks match no fragment, without locking anything), so
a large write holds the lock only for its SQL. The write runs inside the caller's
transaction: record the document versions (service.begin_documents, one call for all,
takes the org's lock), ask SQL again which chunks collapse into existing fragments, embed
only what is new and was not embedded ahead (rare: a fragment another writer retired
meanwhile), then write fragments, vectors and source pointers of every version in one
call (service.add_documents: one statement per table, so BM25, references and validity
are kept once for the whole write).
"""

from __future__ import annotations

import base64
import functools
import json
import logging
import selectors
import struct
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TypeVar

import numpy as np
import psycopg
from psycopg import pq
from psycopg.adapt import Dumper, PyFormat
from psycopg.pq import Format
from psycopg.types import TypeInfo

from app.ingest import conversation
from app.ingest.chunk_code import supports
from app.ingest.chunk_conversation import ConversationChunker
from app.ingest.chunk_prose import ProseChunker
from app.ingest.chunk_sql import SqlChunker
from app.ingest.chunks import Chunk
from app.ingest.code_sandbox import SandboxedCodeChunker
from app.ingest.dedupe import simhash64, to_signed
from app.ingest.normalize import (
    VALIDITY_KEYS,
    NormalizedDocument,
    RejectedDocument,
    SourceDocument,
    content_hash,
    normalize,
)
from app.ingest.references import document_references
from app.owners import CODEOWNERS_PATHS, CodeOwners, find_codeowners
from app.readable import in_utc, metadata_problem, time_problem
from app.scope import Scope
from app.settings import Settings
from app.text import expansion
from app.text.embed import Embedder, model_label
from app.text.stems import reading
from app.text.tokens import count_tokens
from app.text.turns import TURN_KINDS
from app.text.versions import CHUNKER_VERSION

log = logging.getLogger(__name__)


class DuplicatePaths(ValueError):
    """Two documents of one ingestion normalize to the same path: the second would
    supersede the first inside the same write."""


@dataclass(frozen=True, slots=True)
class PreparedDocument:
    doc: NormalizedDocument
    namespace: str
    chunks: list[Chunk]


@dataclass(slots=True)
class _Pending:
    """One document version's chunks between matching and writing."""

    path: str
    doc_id: int
    version: int
    rows: list[dict] = field(default_factory=list)
    """add_fragments payload, one per chunk; new chunks get an "embedding" (and, during
    a model upgrade, "generations": {model_id: vector} of the namespace's other live
    generations)."""
    inputs: list[str] = field(default_factory=list)
    is_new: list[bool] = field(default_factory=list)
    expand: bool = False
    """Whether its new chunks get learned expansion terms (conversation turns)."""
    report: bool = True
    """False for re-homed pointers of a document not being ingested now."""


@dataclass(frozen=True, slots=True)
class IngestResult:
    path: str
    doc_id: int
    version: int
    changed: bool
    fragments: int
    created: int
    """Fragments written new; the rest collapsed into existing canonical fragments."""


@dataclass(slots=True)
class EmbeddedAhead:
    """Vectors computed before the write lock is taken, by (model, embedding input): what
    the write then needs no model for. Keyed by the model's name, so vectors of a model
    the namespace no longer serves (a promotion meanwhile) are never written."""

    vectors: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    expansions: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Learned expansion terms by chunk text (conversation turns only: TURN_KINDS)."""
    planned: int = 0
    """Inputs the plan asked for (each embedded with the active model and with every
    other live generation of its namespace)."""


@dataclass(frozen=True, slots=True)
class EmbeddingPlan:
    """What `embed_ahead` will compute: per namespace, the inputs of chunks no stored
    fragment holds exactly, and the embedders of that namespace's live generations."""

    inputs: dict[str, list[str]]
    embedders: dict[str, list[Embedder]]
    expand: list[str] = field(default_factory=list)
    """Texts of new conversation turns to expand (app/text/expansion.py)."""


class _Vector:
    """A vector in pgvector's binary form (its `vector_recv`: dimensions and a zero as two
    big-endian int16, then big-endian float4s), for service.add_documents."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data

    @classmethod
    def of(cls, values: Iterable[float]) -> _Vector:
        array = np.asarray(values, dtype=">f4")
        return cls(struct.pack(">HH", array.shape[0], 0) + array.tobytes())


def _register_vector_dumper(conn: psycopg.Connection) -> None:
    """Teach `conn` to send _Vector as pgvector's `vector` (and lists of them as
    `vector[]`), in binary; once per connection."""
    try:
        conn.adapters.get_dumper(_Vector, PyFormat.BINARY)
        return
    except psycopg.ProgrammingError:
        pass
    info = TypeInfo.fetch(conn, "extensions.vector")
    if info is None:
        raise RuntimeError("the vector type (pgvector) is not installed in this database")
    info.register(conn)
    vector_oid = info.oid

    class VectorDumper(Dumper):
        format = Format.BINARY
        oid = vector_oid

        def dump(self, obj: _Vector) -> bytes:
            return obj.data

    conn.adapters.register_dumper(_Vector, VectorDumper)


@functools.lru_cache(maxsize=16384)
def _simhash(text: str) -> int:
    """A chunk's SimHash as SQL stores it, computed once: plan_embeddings asks SQL about
    every chunk before the write makes its rows (about a tenth of a write's own time
    went to computing each one twice)."""
    return to_signed(simhash64(text))


def unreadable(doc: NormalizedDocument) -> str | None:
    """Why a normalized document may not be stored (None when it may): its timestamp,
    or a validity bound of its metadata (or front matter), is a time no reader decodes;
    or its metadata is nested too deeply (app/readable.py)."""
    problem = time_problem(doc.timestamp, "timestamp") or metadata_problem(doc.metadata)
    for key in VALIDITY_KEYS:
        value = doc.metadata.get(key)
        if problem is None and isinstance(value, str):
            problem = time_problem(datetime.fromisoformat(value), f"metadata {key}")
    return problem


def embedding_input(path: str, heading_path: Iterable[str], text: str) -> str:
    """What the dense model sees: where the text sits, then the text itself."""
    header = " > ".join((path, *heading_path))
    return f"{header}\n\n{text}"


def lexical_heading(path: str, heading_path: Iterable[str]) -> str:
    return " ".join((path.replace("/", " ").replace(".", " "), *heading_path))


def expanded_heading(heading: str, terms: Iterable[str]) -> str:
    """A fragment's lexical heading followed by its expansion terms."""
    return " ".join((heading, *terms)).strip()


def chunk_row(
    namespace: str,
    owner: str,
    path: str,
    heading_path: list[str],
    symbol: str | None,
    text: str,
    token_count: int,
    chunker_version: str,
    anchor: str,
    start_line: int,
    end_line: int,
    ordinal: int | None = None,
) -> dict:
    row = {
        "namespace": namespace,
        "owner": owner,
        "heading_path": heading_path,
        "lexical_heading": lexical_heading(path, heading_path),
        "symbol": symbol,
        "text": text,
        "content_hash": content_hash(text),
        "token_count": token_count,
        "chunker_version": chunker_version,
        "simhash": _simhash(text),
        # What the learned reranker reads of the text, so retrievals need not tokenize it.
        "reading": base64.b64encode(reading(text)).decode("ascii"),
        "anchor": anchor,
        "start_line": start_line,
        "end_line": end_line,
    }
    if ordinal is not None:
        row["ordinal"] = ordinal
    return row


T = TypeVar("T")


def _while_sql_runs(
    conn: psycopg.Connection, query: str, params: tuple, work: Callable[[], T]
) -> tuple[list[tuple], T]:
    """Send `query`, do `work` while the server runs it, then read its rows. In pipeline
    mode a query is sent without waiting for its result; the output is flushed first (a
    call larger than the socket's buffer would otherwise wait there, unread by the
    server, until the result is asked for). Plain execute, then `work`, where the client
    library has no pipeline mode."""
    if not psycopg.Pipeline.is_supported():
        rows = conn.execute(query, params).fetchall()
        return rows, work()
    with conn.pipeline():
        cursor = conn.execute(query, params)
        _flush(conn.pgconn)
        done = work()
        return cursor.fetchall(), done


def _flush(pgconn: pq.abc.PGconn) -> None:
    """Send all of a nonblocking connection's output, reading what the server sends
    meanwhile (libpq's advice: a server blocked writing to us would never read on)."""
    with selectors.DefaultSelector() as selector:
        selector.register(pgconn.socket, selectors.EVENT_READ | selectors.EVENT_WRITE)
        while pgconn.flush():
            if any(events & selectors.EVENT_READ for _key, events in selector.select()):
                pgconn.consume_input()


def _versions_json(documents: list[PreparedDocument], owners: list[tuple[str | None, str]]) -> str:
    """service.begin_documents's argument: each document's version and resolved owner."""
    return json.dumps(
        [
            {
                "path": p.doc.path,
                "kind": p.doc.kind,
                "content": p.doc.text,
                "content_hash": p.doc.content_hash,
                "language": p.doc.language,
                "author": p.doc.author,
                "timestamp": in_utc(p.doc.timestamp).isoformat() if p.doc.timestamp else None,
                "metadata": p.doc.metadata,
                "owner": owner,
                "owner_source": owner_source if owner is not None else None,
                # The chunks add_documents will write: fragments of the old version
                # holding one of these texts stay active (no trip out of BM25 and back).
                "namespace": p.namespace,
                "chunk_hashes": [content_hash(c.text) for c in p.chunks],
            }
            for p, (owner, owner_source) in zip(documents, owners)
        ]
    )


def _document_rows(
    documents: list[PreparedDocument], owners: list[tuple[str | None, str]]
) -> list[tuple[list[dict], list[str]]]:
    """Each document's add_fragments rows, with their references, and embedding inputs."""
    made = []
    for prepared, (owner, _source) in zip(documents, owners):
        doc = prepared.doc
        # SQL names its objects schema.name everywhere: read as code, every `data.x` would
        # be a use of the file's own `data.y` (the code rule links a file's names), so its
        # references are read as prose's are (paths and links, in its comments too).
        references = document_references(
            doc.path,
            doc.syntax,
            doc.text,
            prepared.chunks,
            doc.metadata,
            is_code=prepared.namespace == "code" and doc.syntax != "sql",
        )
        rows, inputs = [], []
        for chunk, refs in zip(prepared.chunks, references):
            rows.append(
                chunk_row(
                    prepared.namespace,
                    owner or "",  # service.add_fragments takes the document's resolved owner
                    doc.path,
                    list(chunk.heading_path),
                    chunk.symbol,
                    chunk.text,
                    chunk.token_count,
                    CHUNKER_VERSION,
                    chunk.anchor,
                    chunk.start_line,
                    chunk.end_line,
                )
                # A whole version's rows carry their references (possibly none): SQL
                # replaces the document's links with them (data._record_links).
                | {"references": [r.as_json() for r in refs]}
            )
            inputs.append(embedding_input(doc.path, chunk.heading_path, chunk.text))
        made.append((rows, inputs))
    return made


class IngestPipeline:
    def __init__(self, settings: Settings, embedders: dict[str, Embedder]) -> None:
        self.settings = settings
        self.embedders = embedders
        self.code_chunker = SandboxedCodeChunker(settings.max_fragment_tokens, settings.overlap_tokens)
        self.sql_chunker = SqlChunker(settings.max_fragment_tokens, settings.overlap_tokens)
        self.prose_chunker = ProseChunker(settings.max_fragment_tokens, settings.overlap_tokens)
        self.conversation_chunker = ConversationChunker(settings.max_fragment_tokens, settings.overlap_tokens)
        self.expander = expansion.shared(settings.torch_threads)
        """Loads its model on first use: only conversations need it."""
        self._secondary: dict[str, Embedder] = {}
        """Embedders of other live generations (an upgrade's shadow), by what loads them."""

    # -- preparation (no database) -------------------------------------------------

    def prepare(self, source: SourceDocument) -> PreparedDocument:
        return self.chunk(self.normalize(source))

    def normalize(self, source: SourceDocument) -> NormalizedDocument:
        """The first half of `prepare` (about a tenth of its cost): enough to know
        whether the document changed. A document holding a time no reader could decode
        is refused here, before any chunking or embedding (SQL refuses it too)."""
        doc = normalize(source, max_bytes=self.settings.max_document_bytes)
        problem = unreadable(doc)
        if problem is not None:
            raise RejectedDocument(f"{doc.path}: {problem}")
        if doc.kind == conversation.KIND:
            # A transcript that cannot be read as turns is refused before anything is
            # stored, saying which line is wrong and what is expected.
            try:
                self.conversation_chunker.read(doc.text)
            except conversation.NotATranscript as exc:
                raise RejectedDocument(f"{doc.path}: not a conversation transcript: {exc}") from None
        return doc

    def chunk(self, doc: NormalizedDocument) -> PreparedDocument:
        if doc.kind == conversation.KIND:
            prepared = PreparedDocument(doc, "prose", self.conversation_chunker.chunk(doc.text))
        elif doc.syntax == "sql":
            prepared = PreparedDocument(doc, "code", self.sql_chunker.chunk(doc.text))
        elif supports(doc.syntax):
            prepared = PreparedDocument(doc, "code", self.code_chunker.chunk(doc.text, doc.syntax, doc.path))
        else:
            prepared = PreparedDocument(doc, "prose", self.prose_chunker.chunk(doc.text, doc.syntax))
        limit = self.settings.max_document_fragments
        if len(prepared.chunks) > limit:
            raise RejectedDocument(
                f"{doc.path}: cut into {len(prepared.chunks):,} fragments, over the limit of {limit:,} "
                "(CONTEXTS_MAX_DOCUMENT_FRAGMENTS): split it into several documents"
            )
        return prepared

    # -- writing (inside the caller's transaction) ------------------------------------

    def register_models(self, conn: psycopg.Connection) -> dict[str, int]:
        """Administrators (the migrator): create each namespace's model and its index."""
        return self._models(conn, "service.register_embedding_model")

    def model_ids(self, conn: psycopg.Connection) -> dict[str, int]:
        """The registered models, checked against ours (what a writer may call)."""
        return self._models(conn, "service.active_model")

    def _models(self, conn: psycopg.Connection, function: str) -> dict[str, int]:
        ids = {}
        for namespace, embedder in self.embedders.items():
            row = conn.execute(
                f"select {function}(%s, %s, %s)", (namespace, model_label(embedder.name), embedder.dims)
            ).fetchone()
            assert row is not None
            ids[namespace] = row[0]
        return ids

    def unchanged(
        self, conn: psycopg.Connection, scope: Scope, docs: list[NormalizedDocument]
    ) -> dict[str, IngestResult]:
        """The documents the scope holds already as they are (text, kind, metadata and
        named owner), as `write` would report them, asked in one call (the bound
        principal needs write grants)."""
        written = [
            {"path": d.path, "content_hash": d.content_hash, "kind": d.kind, "metadata": d.metadata, "owner": d.owner}
            for d in docs
        ]
        rows = conn.execute(
            "select path, doc_id, version from service.unchanged_documents(%s, %s, %s, %s, %s::jsonb)",
            (*scope.as_args(), json.dumps(written)),
        ).fetchall()
        return {path: IngestResult(path, doc_id, version, False, 0, 0) for path, doc_id, version in rows}

    @staticmethod
    def _check_paths(documents: list[PreparedDocument]) -> None:
        paths = [p.doc.path for p in documents]
        repeated = sorted({p for p in paths if paths.count(p) > 1})
        if repeated:
            raise DuplicatePaths(f"each document path may appear once per ingestion: {', '.join(repeated)}")

    def plan_embeddings(
        self, conn: psycopg.Connection, scope: Scope, documents: Iterable[PreparedDocument]
    ) -> EmbeddingPlan:
        """Which chunks the write will need vectors for, asked without taking the org's
        write lock (the bound principal needs write grants): those of documents that
        changed which no stored fragment holds exactly. A near-duplicate match counts as
        new: it is most often the document's own previous text, which this write retires
        (its fragment then leaves, and the chunk becomes a fragment of its own)."""
        documents = list(documents)
        self._check_paths(documents)
        unchanged = self.unchanged(conn, scope, [p.doc for p in documents]) if documents else {}
        changed = [p for p in documents if p.doc.path not in unchanged]
        chunks = [
            (p.namespace, embedding_input(p.doc.path, c.heading_path, c.text), c.text, p.doc.kind in TURN_KINDS)
            for p in changed
            for c in p.chunks
        ]
        if not chunks:
            return EmbeddingPlan({}, {})
        matches = conn.execute(
            "select ordinal, fragment_id, exact from service.match_fragments(%s, %s, %s, %s, %s, %s, %s)",
            (
                *scope.as_args(),
                [namespace for namespace, _input, _text, _expand in chunks],
                [content_hash(text) for _namespace, _input, text, _expand in chunks],
                [_simhash(text) for _namespace, _input, text, _expand in chunks],
            ),
        ).fetchall()
        inputs: dict[str, list[str]] = {}
        expand: list[str] = []
        for (namespace, text, chunk, turn), (_ordinal, fragment_id, exact) in zip(chunks, matches):
            if fragment_id is None or not exact:
                inputs.setdefault(namespace, []).append(text)
                if turn:
                    expand.append(chunk)
        secondary = self.secondary_models(conn) if inputs else {}
        embedders = {
            namespace: [self.embedders[namespace], *(e for _id, e in secondary.get(namespace, []))]
            for namespace in inputs
        }
        return EmbeddingPlan(
            {ns: list(dict.fromkeys(texts)) for ns, texts in inputs.items()}, embedders, list(dict.fromkeys(expand))
        )

    def embed_planned(self, plan: EmbeddingPlan) -> EmbeddedAhead:
        """Compute what `plan` names (CPU only: no connection is needed or held)."""
        ahead = EmbeddedAhead()
        if plan.expand:
            ahead.expansions = dict(zip(plan.expand, self.expander.expand(plan.expand)))
        for namespace, texts in plan.inputs.items():
            ahead.planned += len(texts)
            for embedder in plan.embedders[namespace]:
                for text, vector in zip(texts, embedder.embed(texts)):
                    ahead.vectors[(embedder.name, text)] = vector
        return ahead

    def embed_ahead(
        self, conn: psycopg.Connection, scope: Scope, documents: Iterable[PreparedDocument]
    ) -> EmbeddedAhead:
        """plan_embeddings, then embed_planned, on the caller's connection (which holds no
        lock meanwhile): what `write` does first when it is given nothing embedded."""
        return self.embed_planned(self.plan_embeddings(conn, scope, documents))

    def write(
        self,
        conn: psycopg.Connection,
        scope: Scope,
        documents: Iterable[PreparedDocument],
        on_document: Callable[[IngestResult], None] | None = None,
        ahead: EmbeddedAhead | None = None,
    ) -> list[IngestResult]:
        """Write `documents` in the caller's transaction. Their new chunks are embedded
        first, before service.begin_documents takes the org's write lock, unless `ahead`
        holds them already (the service embeds in another thread, holding no connection)."""
        documents = list(documents)
        self._check_paths(documents)
        if ahead is None:
            ahead = self.embed_ahead(conn, scope, documents)
        results: list[IngestResult] = []
        pending: list[_Pending] = []
        detached: list[dict] = []
        rules = self.codeowners(conn, scope, documents)
        # Record every version first (one call for all): retirements happen before any
        # matching, so what SQL says now about duplicates still holds when the fragments
        # are written.
        owners: list[tuple[str | None, str]] = []
        for prepared in documents:
            doc = prepared.doc
            owner, owner_source = doc.owner, "document"
            if owner is None and rules is not None:
                owner, owner_source = rules.owner_of(doc.path), "codeowners"
            owners.append((owner, owner_source))
        # The chunk rows (references, hashes, readings: CPU only) are made while SQL
        # records the versions (service.begin_documents, which takes the org's write
        # lock): the call is sent whole first, then read once the rows are made. The two
        # overlapped were about a sixth of a group's write, measured on two cores. A row
        # made for a document found unchanged is dropped (rare: a group is filtered for
        # unchanged documents before it is chunked).
        begun_rows, made = (
            _while_sql_runs(
                conn,
                "select doc_id, version, changed, rehome from service.begin_documents(%s, %s, %s, %s, %s)",
                (*scope.as_args(), _versions_json(documents, owners)),
                lambda: _document_rows(documents, owners),
            )
            if documents
            else ([], [])
        )
        for prepared, begun, (rows, inputs) in zip(documents, begun_rows, made):
            doc = prepared.doc
            doc_id, version, changed, rehome = begun
            detached.extend(rehome)
            if not changed:
                result = IngestResult(doc.path, doc_id, version, False, 0, 0)
                results.append(result)
                if on_document:
                    on_document(result)
                continue
            item = _Pending(doc.path, doc_id, version, expand=doc.kind in TURN_KINDS)
            item.rows, item.inputs = rows, inputs
            pending.append(item)
        pending.extend(self._rehomed(detached, {p.doc_id: p.version for p in pending}))
        if pending:
            results.extend(self._write_pending(conn, scope, pending, on_document, ahead))
        if any(r.changed and r.path in CODEOWNERS_PATHS for r in results):
            self.resolve_owners(conn, scope, self.codeowners(conn, scope, []))
        return results

    @staticmethod
    def codeowners(conn: psycopg.Connection, scope: Scope, documents: list[PreparedDocument]) -> CodeOwners | None:
        """The CODEOWNERS rules of the scope's repo: a CODEOWNERS file among the documents
        written now, else the one the repo holds (GitHub's order of places either way).
        Persona and session documents have none: CODEOWNERS is a repo's."""
        if scope.repo_id is None or scope.persona_id is not None or scope.session_id is not None:
            return None
        files: dict[str, str | bytes] = {
            path: content
            for path, content in conn.execute(
                "select path, content from api.codeowners_file(%s, %s)", (scope.org_id, scope.repo_id)
            ).fetchall()
        }
        files |= {p.doc.path: p.doc.text for p in documents if p.doc.path in CODEOWNERS_PATHS}
        return find_codeowners(files)

    @staticmethod
    def resolve_owners(conn: psycopg.Connection, scope: Scope, rules: CodeOwners | None) -> int:
        """Give the repo's documents that name no owner the one `rules` names now (the
        org's default where none): a changed CODEOWNERS moves ownership without writing
        any version. Returns the documents whose owner changed."""
        rows = conn.execute(
            "select doc_id, path from service.owners_unnamed(%s, %s)", (scope.org_id, scope.repo_id)
        ).fetchall()
        if not rows:
            return 0
        owners = [rules.owner_of(path) if rules else None for _doc_id, path in rows]
        row = conn.execute(
            "select service.owners_resolve(%s, %s, %s, %s)",
            (scope.org_id, scope.repo_id, [doc_id for doc_id, _path in rows], owners),
        ).fetchone()
        assert row is not None
        return row[0]

    def rehome(self, conn: psycopg.Connection, scope: Scope, detached: list[dict]) -> int:
        """Write again, as chunks of their own document versions, the near-duplicate
        pointers a retirement detached (service.delete_document returns them as a new version
        does); `scope` is the retired document's, which deduplication shares with them.
        Returns the pointers written."""
        pending = self._rehomed(detached, {})
        if pending:
            self._write_pending(conn, scope, pending, None, None)
        return sum(len(item.rows) for item in pending)

    def _write_pending(
        self,
        conn: psycopg.Connection,
        scope: Scope,
        pending: list[_Pending],
        on_document: Callable[[IngestResult], None] | None,
        ahead: EmbeddedAhead | None,
    ) -> list[IngestResult]:
        results: list[IngestResult] = []
        self.model_ids(conn)  # unchanged documents need no model at all
        secondary = self.secondary_models(conn)
        # One question for every chunk of the write: nothing is written before all are
        # matched, so asking per document would get the same answers in more round trips.
        # Only an exact match is sure: a near one (a different text, even at distance 0,
        # SimHash ignoring case and spacing) may be a fragment this write retired that
        # service.begin_documents left active (its text announced), which add_documents
        # matches as retired; such a chunk carries its vector (planned ahead: the plan
        # counts near matches as new) and SQL decides.
        rows = [row for item in pending for row in item.rows]
        matches = conn.execute(
            "select ordinal, fragment_id, exact from service.match_fragments(%s, %s, %s, %s, %s, %s, %s)",
            (
                *scope.as_args(),
                [r["namespace"] for r in rows],
                [r["content_hash"] for r in rows],
                [r["simhash"] for r in rows],
            ),
        ).fetchall()
        is_new = [fragment_id is None or not exact for _ordinal, fragment_id, exact in matches]
        start = 0
        for item in pending:
            item.is_new = is_new[start : start + len(item.rows)]
            start += len(item.rows)

        embedded_now = self._embed_new(pending, secondary, ahead)
        self._expand_new(pending, ahead)
        if embedded_now and ahead is not None and ahead.planned:
            log.info("%d chunks embedded under the write lock of %s (not planned ahead)", embedded_now, scope.org_id)
        # Every version in one call (one statement per table, so BM25 indexes the whole
        # write at once): the same rows as one service.add_fragments call per version.
        # The vectors travel apart, in pgvector's binary form (as JSON they took about a
        # sixth of the write: printing, then parsing each number as a numeric).
        vectors: list[_Vector | None] = []
        versions = []
        for item in pending:
            chunks = []
            for row in item.rows:
                vector = row.get("embedding")
                vectors.append(_Vector.of(vector) if vector is not None else None)
                chunks.append({k: v for k, v in row.items() if k != "embedding"})
            versions.append({"doc_id": item.doc_id, "version": item.version, "chunks": chunks})
        _register_vector_dumper(conn)
        written = conn.execute(
            "select doc_id, created from service.add_documents(%s, %b)", (json.dumps(versions), vectors)
        ).fetchall()
        start = 0
        for item in pending:
            rows_of = written[start : start + len(item.rows)]
            start += len(item.rows)
            if not item.report:
                continue
            result = IngestResult(
                item.path, item.doc_id, item.version, True, len(rows_of), sum(1 for _doc, new in rows_of if new)
            )
            results.append(result)
            if on_document:
                on_document(result)
        return results

    @staticmethod
    def _rehomed(detached: list[dict], written_now: dict[int, int]) -> list[_Pending]:
        """Near-duplicate pointers whose canonical text left with a changed document are
        written again as chunks of their own document version, with their own text."""
        by_version: dict[tuple[int, int], _Pending] = {}
        for d in detached:
            if written_now.get(d["doc_id"], d["doc_version"]) != d["doc_version"]:
                continue  # that document gets a new version in this same write
            key = (d["doc_id"], d["doc_version"])
            item = by_version.setdefault(key, _Pending(d["path"], d["doc_id"], d["doc_version"], report=False))
            item.rows.append(
                chunk_row(
                    d["namespace"],
                    d["owner"],
                    d["path"],
                    d["heading_path"],
                    d["symbol"],
                    d["text"],
                    count_tokens(d["text"]),
                    d["chunker_version"],
                    d["anchor"],
                    d["start_line"],
                    d["end_line"],
                    ordinal=d["ordinal"],
                )
            )
            item.inputs.append(embedding_input(d["path"], d["heading_path"], d["text"]))
        return list(by_version.values())

    def secondary_models(self, conn: psycopg.Connection) -> dict[str, list[tuple[int, Embedder]]]:
        """Per namespace, the generations besides the active one that new fragments need
        vectors of (a shadow being built, a retired one within its window: docs/adr/0021),
        each with the embedder that computes them."""
        out: dict[str, list[tuple[int, Embedder]]] = {}
        for model_id, namespace, source in conn.execute(
            "select model_id, namespace, source from service.secondary_models()"
        ).fetchall():
            if namespace not in self.embedders:
                continue
            if source not in self._secondary:
                self._secondary[source] = replace(self.embedders[namespace], name=source)
            out.setdefault(namespace, []).append((model_id, self._secondary[source]))
        return out

    def _expand_new(self, pending: list[_Pending], ahead: EmbeddedAhead | None) -> None:
        """Append learned expansion terms to the lexical text of the new chunks of
        conversation turns (those expanded ahead are looked up, the rest expanded now).
        The reader's text is unchanged: only what BM25 indexes grows."""
        work = [row for item in pending if item.expand for row, new in zip(item.rows, item.is_new) if new]
        if not work:
            return
        known = ahead.expansions if ahead is not None else {}
        missing = list(dict.fromkeys(row["text"] for row in work if row["text"] not in known))
        terms = known | dict(zip(missing, self.expander.expand(missing)))
        for row in work:
            row["lexical_heading"] = expanded_heading(row["lexical_heading"], terms[row["text"]])

    def _embed_new(
        self,
        pending: list[_Pending],
        secondary: dict[str, list[tuple[int, Embedder]]],
        ahead: EmbeddedAhead | None,
    ) -> int:
        """Give the chunks SQL did not match their vectors, with the active model and
        every other live generation of their namespace: those embedded ahead are looked
        up, the rest embedded now (batched per namespace over all documents). Returns the
        inputs embedded now, under the org's write lock."""
        by_namespace: dict[str, list[tuple[dict, str]]] = {}
        for item in pending:
            for row, text, new in zip(item.rows, item.inputs, item.is_new):
                if new:
                    by_namespace.setdefault(row["namespace"], []).append((row, text))
        known = ahead.vectors if ahead is not None else {}
        embedded_now = 0
        for namespace, work in by_namespace.items():
            models = [(None, self.embedders[namespace]), *secondary.get(namespace, [])]
            for model_id, embedder in models:
                missing = list(dict.fromkeys(text for _row, text in work if (embedder.name, text) not in known))
                vectors = dict(zip(missing, embedder.embed(missing))) if missing else {}
                if model_id is None:
                    embedded_now += len(missing)
                for row, text in work:
                    vector = vectors[text] if text in vectors else known[(embedder.name, text)]
                    if model_id is None:
                        row["embedding"] = vector
                    else:
                        row.setdefault("generations", {})[str(model_id)] = vector
        return embedded_now
