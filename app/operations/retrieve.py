"""A retrieval as a key's principal: what POST /contexts/retrieve and the MCP tool
`retrieve` run."""

from __future__ import annotations

import psycopg

from app.generations.serving import NoPreviousGeneration
from app.operations.errors import Conflict
from app.operations.log_fields import note
from app.operations.services import Services
from app.retrieve.query_vectors import QueryVectors
from app.retrieve.service import Retriever
from app.wire.retrieve import RetrieveRequest, RetrieveResponse


async def run_retrieval(services: Services, token: str, data: RetrieveRequest) -> RetrieveResponse:
    """A retrieval for the key's principal: what POST /contexts/retrieve and the MCP tool
    `retrieve` both run. The key is checked first (an unknown key costs no model time; a
    key that authenticated a moment ago is not checked twice), the query embedded next
    without holding a connection (concurrent requests share one model call), then
    candidates, composition and trace in one read transaction; with a read replica,
    candidates and composition there and the trace on the primary. A namespace promoted
    to another model meanwhile (55000) is followed (ModelFollowing.follow_models) and the
    retrieval run once more with it. A request asking for the previous generation gets
    its retriever (ModelFollowing.previous_retriever), or a 409 saying why there is none."""
    if data.generation == "previous":
        return await _previous_generation(services, token, data)
    retriever = services.retriever
    try:
        return await _retrieve_with(services, retriever, token, data)
    except psycopg.errors.ObjectNotInPrerequisiteState:
        await services.runtime.read(services.following.follow_models_quietly)
        if services.retriever is retriever:
            raise
        return await _retrieve_with(services, services.retriever, token, data)


async def _previous_generation(services: Services, token: str, data: RetrieveRequest) -> RetrieveResponse:
    await services.auth.precheck(token)  # the key before any model is loaded for it
    try:
        retriever = await services.runtime.read(services.following.previous_retriever)
    except NoPreviousGeneration as exc:
        raise Conflict(str(exc)) from exc
    return await _retrieve_with(services, retriever, token, data)


async def _retrieve_with(
    services: Services, retriever: Retriever, token: str, data: RetrieveRequest
) -> RetrieveResponse:
    def run(vectors: QueryVectors | None) -> RetrieveResponse:
        if services.runtime.replica is None:
            with services.auth.acting_for(token) as conn:
                return retriever.retrieve(conn, data, vectors)
        # Read on the replica (or the primary, see Authentication.reading_for), then write the
        # trace on the primary and commit it before answering (docs/adr/0020).
        with services.auth.reading_for(token, scope.org_id, scope.session_id) as (conn, source):
            answer = retriever.answer(conn, data, vectors, read=source.to_trace())
        note(read=source.server)
        with services.auth.acting_for(token) as conn:
            return answer.record(conn)

    scope = data.scope
    note(repo=scope.repo_id, persona=scope.persona_id, session=scope.session_id)
    vectors = None
    if data.k_dense > 0:
        # The key before the model's CPU. With a replica too, the trace's transaction on
        # the primary checks the key again, so one revoked there never gets an answer
        # even while a lagging replica still holds it.
        await services.auth.precheck(token)
        with retriever.stage("embed"):
            vectors = await services.following.query_vectors(data.query, retriever)
    response = await services.runtime.read(run, vectors)
    note(trace_id=response.trace_id, fragments=len(response.fragments))
    return response
