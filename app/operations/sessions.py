"""Sessions: an agent's working session. Opening one returns its context pack (the
scope's pins and the negative fragments (anti-patterns) first, then the fragments best
matching the task, within a budget, structured and as Markdown);
notes written into it are retrievable inside it only and expire with it; a principal
with a write grant on a repo (or the org) promotes a note there as canonical knowledge.

Each function here is what the HTTP endpoint and the MCP tool of the same name run."""

from __future__ import annotations

import hashlib
import uuid
from datetime import UTC, datetime

import msgspec
import psycopg
from psycopg.rows import dict_row

from app.ingest.normalize import RejectedDocument, normalize_path
from app.operations.documents import ingest_documents
from app.operations.errors import Invalid, NotFound
from app.operations.idempotency import IdempotentWrite, once, request_hash
from app.operations.log_fields import note as log_note
from app.operations.services import Services
from app.scope import ID_FORMATS
from app.wire.bodies import (
    RESERVED_METADATA_KEYS,
    ContextPack,
    DocumentIn,
    FragmentOut,
    IngestRequest,
    IngestResponse,
    NotePromote,
    NoteProvenance,
    NoteResult,
    NoteWrite,
    PromotedNote,
    RetrieveRequest,
    ScopeIn,
    SessionOpen,
)
from app.wire.pattern_words import in_words

SESSION_PATTERN = ID_FORMATS["session_id"].pattern
"""data.sessions.session_id's format."""


def new_session_id() -> str:
    return f"s-{uuid.uuid4().hex[:20]}"


def fence(text: str) -> str:
    """A backtick fence longer than any run of backticks in `text`, so the text is
    quoted exactly whatever it holds."""
    longest = run = 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    return "`" * max(3, longest + 1)


def leading(fragment: FragmentOut) -> bool:
    """Pinned or negative: the pack's first section."""
    return fragment.pinned or fragment.negative


def pack_order(fragments: list[FragmentOut]) -> list[FragmentOut]:
    """Pins (in pin order, as composed), then negative fragments, then the rest, each
    group in the retrieval's order."""
    pinned = [f for f in fragments if f.pinned]
    negative = [f for f in fragments if f.negative and not f.pinned]
    return pinned + negative + [f for f in fragments if not leading(f)]


def render_markdown(task: str, session_id: str, fragments: list[FragmentOut], trace_id: str) -> str:
    """One block an agent pastes into its prompt: pins and known traps first, under a
    heading of their own, then the fragments matching the task; each fragment's citation
    (path#anchor, document and version) above its exact text, a negative one marked
    "do not do this"."""
    lines = [f"# Context for: {task}", "", f"Session `{session_id}`; retrieval trace `{trace_id}`.", ""]
    if not fragments:
        lines += ["No stored knowledge matched this task.", ""]
    first = [f for f in fragments if leading(f)]
    sections = [("Pinned, and known traps", first), ("Matching the task", [f for f in fragments if not leading(f)])]
    n = 0
    for title, members in sections:
        if first and members:  # without pins or traps the pack reads as before, unsectioned
            lines += [f"# {title}", ""]
        for f in members:
            n += 1
            where = " > ".join(f.heading_path)
            lines.append(f"## [{n}] {f.source} (document {f.doc_id}, version {f.version})")
            lines.append("")
            marks = (
                (["pinned"] if f.pinned else [])
                + ([f"rule {f.rule} ({f.rule_name}), {f.context}"] if f.rule is not None else [])
                + (["**negative: do not do this**"] if f.negative else [])
            )
            lines.append(
                ", ".join([*marks, f"kind {f.kind}", f"owner {f.owner}", f"relevance {f.relevance:.2f}"])
                + (f", under {where}" if where else "")
            )
            lines.append("")
            quote = fence(f.text)
            lines += [quote, f.text.rstrip("\n"), quote, ""]
    return "\n".join(lines)


async def open_session(services: Services, token: str, data: SessionOpen) -> ContextPack:
    """POST /sessions and the MCP tool `open_session`: opens the session (or joins one
    the key may write: service.open_session) and retrieves for the task in its scope, in one
    transaction, so a refused retrieval (unknown repo, no grant) opens nothing. The
    retrieval is traced like any other."""
    session_id = data.scope.session_id or new_session_id()
    scope = ScopeIn(data.scope.org_id, data.scope.repo_id, data.scope.persona_id, session_id)
    request = RetrieveRequest(
        query=data.task,
        scope=scope,
        budget_tokens=data.budget_tokens,
        top_k=data.top_k,
        min_relevance=data.min_relevance,
        negatives=data.negatives,
        touching=data.touching,
    )

    def run() -> ContextPack:
        with services.auth.acting_for(token) as conn:
            row = conn.execute("select service.open_session(%s)", (session_id,)).fetchone()
            expires_at = row[0] if row else None
            response = services.retriever.retrieve(conn, request, kind="session_pack")
        fragments = pack_order(response.fragments)
        return ContextPack(
            session_id=session_id,
            org_id=scope.org_id,
            expires_at=expires_at,
            task=data.task,
            fragments=fragments,
            markdown=render_markdown(data.task, session_id, fragments, response.trace_id),
            tokens_used=response.tokens_used,
            budget_tokens=response.budget_tokens,
            trace_id=response.trace_id,
            pins_left_out=response.pins_left_out,
            pins_left_out_reasons=response.pins_left_out_reasons,
        )

    log_note(repo=scope.repo_id, persona=scope.persona_id, session=session_id)
    pack = await services.runtime.read(run)
    log_note(trace_id=pack.trace_id, fragments=len(pack.fragments))
    return pack


async def write_note(
    services: Services,
    token: str,
    org_id: str | None,
    session_id: str,
    note: NoteWrite,
    idempotency_key: str | None = None,
) -> tuple[NoteResult, bool]:
    """POST /sessions/{id}/notes and the MCP tool `write_note`: a document of the session,
    through the ingestion path of POST /documents (a session that does not exist yet is
    opened for the writer, as any first write into it). `org_id` None: the key's org.
    With an Idempotency-Key, a retry is answered the first note's result (True: it was)."""
    idempotent = None
    if idempotency_key is not None:
        door = f"POST /sessions/{session_id}/notes {org_id or ''}"
        idempotent = IdempotentWrite(
            idempotency_key,
            request_hash(door, note),
            lambda response: note_result(session_id, response),
            (org_id, None, None, session_id),
        )
    return await once(
        services,
        token,
        idempotent,
        NoteResult,
        lambda: _write_note(services, token, org_id, session_id, note, idempotent),
    )


def note_result(session_id: str, response: IngestResponse) -> NoteResult:
    result = response.documents[0]
    return NoteResult(
        session_id, result.doc_id, result.path, result.version, result.changed, result.fragments, result.created
    )


async def _write_note(
    services: Services,
    token: str,
    org_id: str | None,
    session_id: str,
    note: NoteWrite,
    idempotent: IdempotentWrite | None,
) -> NoteResult:
    key_org, principal_id = await services.runtime.read(services.auth.authenticate, token)
    document = {
        "path": note.path or f"notes/{hashlib.sha256(note.text.encode()).hexdigest()[:16]}.md",
        "content": note.text,
        "kind": note.kind,
        "author": principal_id,
        "owner": note.owner or principal_id,
        "metadata": note.metadata,
    }
    # From plain data, so the request is validated exactly as a POST /documents body is.
    body = {"scope": {"org_id": org_id or key_org, "session_id": session_id}, "documents": [document]}
    try:
        request = msgspec.convert(body, IngestRequest)
    except msgspec.ValidationError as exc:
        raise Invalid(f"invalid note: {in_words(str(exc))}") from None
    return note_result(session_id, await ingest_documents(services, token, request, idempotent))


async def promote_note(
    services: Services, token: str, session_id: str, note_id: int, data: NotePromote
) -> PromotedNote:
    """POST /sessions/{id}/notes/{note}/promote and the MCP tool `promote_note`. The note
    must be readable in that session (404 otherwise); the copy is ingested into the
    target scope like any document (write grant there, or 403), so deduplication applies
    and its fragments are canonical there, with an owner and the provenance in the new
    version's metadata (`promoted_from`)."""
    org_id, principal_id = await services.runtime.read(services.auth.authenticate, token)

    def read() -> dict:
        with services.auth.acting_for(token) as conn, conn.cursor(row_factory=dict_row) as cur:
            row = cur.execute(
                "select session_id, path, kind, author, content, metadata, version, created_at, source_ts"
                " from api.get_document(%s)",
                (note_id,),
            ).fetchone()
            assert row is not None  # api.get_document raises P0002 instead
            if row["session_id"] != session_id:
                raise NotFound(f"no note {note_id} in session {session_id}")
            row["promoted"] = _promoted_before(cur, org_id, data.repo_id, data.path or row["path"], row["version"])
        return row

    def _promoted_before(
        cur: psycopg.Cursor[dict], org_id: str, repo_id: str | None, path: str, version: int
    ) -> NoteProvenance | None:
        """The provenance the document at the target path carries when this version of
        this note was promoted there before: given again, the same text and metadata are
        no new version (the time of a promotion is no change of the document)."""
        try:
            path = normalize_path(path)
        except RejectedDocument:
            return None  # the write refuses it, with its reason
        found = cur.execute(
            "select v.metadata -> 'promoted_from' as earlier from data.documents d join data.document_versions v"
            " on v.org_id = d.org_id and v.doc_id = d.doc_id and v.version = d.current_version"
            " where d.org_id = %s and d.repo_id is not distinct from %s and d.persona_id is null"
            " and d.session_id is null and d.path = %s and d.deleted_at is null",
            (org_id, repo_id, path),
        ).fetchone()
        earlier = found["earlier"] if found else None
        if not isinstance(earlier, dict):
            return None
        if (earlier.get("session_id"), earlier.get("note_id"), earlier.get("version")) != (
            session_id,
            note_id,
            version,
        ):
            return None
        return msgspec.convert(earlier, NoteProvenance)

    row = await services.runtime.read(read)
    provenance = row["promoted"] or NoteProvenance(
        session_id=session_id,
        note_id=note_id,
        version=row["version"],
        author=row["author"],
        written_at=row["source_ts"] or row["created_at"],
        promoted_by=principal_id,
        promoted_at=datetime.now(UTC),
    )
    owner = data.owner or principal_id
    document = DocumentIn(
        path=data.path or row["path"],
        content=row["content"],
        kind=row["kind"],
        author=row["author"],
        owner=owner,
        timestamp=provenance.written_at,
        # A note stored before the key was reserved may hold it: the promotion's own wins.
        metadata={k: v for k, v in row["metadata"].items() if k not in RESERVED_METADATA_KEYS},
    )
    # The service's own key, which no write may set (bodies.RESERVED_METADATA_KEYS): added
    # after the body's checks.
    document.metadata["promoted_from"] = msgspec.to_builtins(provenance)
    request = IngestRequest(scope=ScopeIn(org_id, data.repo_id), documents=[document])
    result = (await ingest_documents(services, token, request)).documents[0]
    stored: NoteProvenance | None = provenance
    if not result.changed:
        # The target already holds this text: nothing was written, so the provenance is
        # the one its current version carries (none when it was not a promotion).
        def stored_provenance() -> NoteProvenance | None:
            with services.auth.acting_for(token) as conn:
                metadata = conn.execute("select metadata from api.get_document(%s)", (result.doc_id,)).fetchone()
            found = (metadata[0] or {}).get("promoted_from") if metadata else None
            return msgspec.convert(found, NoteProvenance) if isinstance(found, dict) else None

        stored = await services.runtime.read(stored_provenance)
    return PromotedNote(
        doc_id=result.doc_id,
        org_id=org_id,
        repo_id=data.repo_id,
        path=result.path,
        version=result.version,
        owner=owner,
        fragments=result.fragments,
        created=result.created,
        provenance=stored,
        changed=result.changed,
    )
