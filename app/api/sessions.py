"""/sessions: an agent's working session. Opening one returns its context pack (the
scope's pins and the negative fragments (anti-patterns) first, then the fragments best
matching the task, within a budget, structured and as Markdown);
notes written into it are retrievable inside it only and expire with it; a principal
with a write grant on a repo (or the org) promotes a note there as canonical knowledge.

The HTTP controller of app.operations.sessions (which the MCP tools of the same
names run too)."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, Response, post
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.params import JSONBody, Parameter

from app.api.idempotency import REPLAYED_RESPONSE_HEADER, IdempotencyKey
from app.api.openapi import BODY_ERRORS, problems
from app.operations.fragments import parse_id
from app.operations.idempotency import REPLAYED_HEADER
from app.operations.sessions import SESSION_PATTERN, open_session, promote_note, write_note
from app.wire.bodies import (
    POSITIVE_ID,
    ContextPack,
    NotePromote,
    NoteResult,
    NoteWrite,
    PromotedNote,
    SessionOpen,
)

SessionId = Annotated[str, Parameter(pattern=SESSION_PATTERN, min_length=1, max_length=128)]


class SessionsController(Controller):
    path = "/sessions"
    tags = ["sessions"]

    @post(
        "/",
        status_code=200,
        summary="Open a session and get its context pack",
        responses=problems(*BODY_ERRORS, 404, 409),
    )
    async def open(self, data: JSONBody[SessionOpen], state: State, token: NamedDependency[str]) -> ContextPack:
        """Opens a new session (or, with `scope.session_id`, joins one the key may write;
        opening needs some write grant: 403 otherwise) and returns the fragments best
        matching `task` within `budget_tokens`, structured and as one Markdown block with
        each citation. The scope's pins come first (whatever their relevance), then the
        negative fragments (anti-patterns, "do not do this"), then the rest; pins over the
        budget are listed in `pins_left_out`. An unknown repo or persona is a 404.
        Recorded as a retrieval trace."""
        return await open_session(state.services, token, data)

    @post(
        "/{session_id:str}/notes",
        status_code=201,
        summary="Write a note into a session",
        responses=problems(*BODY_ERRORS, 404, 409, 422),
        response_headers=[REPLAYED_RESPONSE_HEADER],
    )
    async def notes(
        self,
        session_id: SessionId,
        data: JSONBody[NoteWrite],
        state: State,
        token: NamedDependency[str],
        idempotency_key: IdempotencyKey = None,
    ) -> Response[NoteResult]:
        """Stored as a document of the session (in the key's org), indexed at once,
        retrievable only in that session and expiring with it. A session that does not
        exist yet is opened for the writer; one it may not write is a 403. Writes of the
        org take turns as for POST /documents (503 with Retry-After past
        CONTEXTS_WRITE_LOCK_WAIT_S), and an `Idempotency-Key` makes a retry safe."""
        result, replayed = await write_note(state.services, token, None, session_id, data, idempotency_key)
        return Response(result, status_code=201, headers={REPLAYED_HEADER: "true"} if replayed else None)

    @post(
        "/{session_id:str}/notes/{note_id:str}/promote",
        status_code=201,
        summary="Promote a session note to repo or org scope",
        responses=problems(*BODY_ERRORS, 404, 409, 422),
    )
    async def promote(
        self,
        session_id: SessionId,
        note_id: Annotated[str, Parameter(pattern=POSITIVE_ID, max_length=19, description="The note's document id")],
        data: JSONBody[NotePromote],
        state: State,
        token: NamedDependency[str],
    ) -> PromotedNote:
        """Copies the note into `repo_id` (or org-wide without one) as a document of that
        scope: canonical fragments there, near-duplicates collapsed, with an owner and
        its provenance (session, note, author, when written, who promoted it and when).
        Needs a write grant on the target (403); a note not readable in that session is
        a 404."""
        return await promote_note(state.services, token, session_id, parse_id(note_id, "note id"), data)
