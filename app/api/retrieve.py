"""POST /contexts/retrieve: the HTTP controller of app.operations.retrieve.run_retrieval."""

from __future__ import annotations

from litestar import Controller, post
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.params import JSONBody

from app.api.openapi import BODY_ERRORS, problems
from app.operations.retrieve import run_retrieval
from app.wire.retrieve import RetrieveRequest, RetrieveResponse


class RetrieveController(Controller):
    path = "/contexts"
    tags = ["retrieval"]

    @post(
        "/retrieve",
        status_code=200,
        summary="Retrieve cited fragments for a query",
        responses=problems(*BODY_ERRORS, 404, 409),
    )
    async def retrieve(
        self, data: JSONBody[RetrieveRequest], state: State, token: NamedDependency[str]
    ) -> RetrieveResponse:
        """Hybrid retrieval (BM25 + dense, weighted fusion, optional cross-encoder) within
        a scope and a token budget, over the fragments the caller's grants allow (a scope
        it holds no grant on is a 403). Every call records a trace, returned as `trace_id`.
        `generation: previous` searches the embedding generation the last upgrade replaced,
        while its shadow window lasts (a 409 after it)."""
        return await run_retrieval(state.services, token, data)
