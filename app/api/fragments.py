"""GET /fragments/{id} and GET /traces/{trace_id}: provenance of what was retrieved (the
operations are app.operations.fragments).

Ids are read strictly (canonical decimal, canonical UUID): `+1`, ` 1` or `١` are not
another spelling of fragment 1."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, get
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.params import Parameter

from app.api.openapi import READ_ERRORS, problems
from app.operations.fragments import parse_id, read_fragment, read_links, read_trace
from app.wire.bodies import POSITIVE_ID, UUID_PATTERN, FragmentDetail, FragmentLinks, TraceOut


class FragmentsController(Controller):
    path = "/fragments"
    tags = ["provenance"]

    @get("/{fragment_id:str}", summary="A fragment and all its sources", responses=problems(*READ_ERRORS))
    async def get_fragment(
        self,
        fragment_id: Annotated[
            str, Parameter(pattern=POSITIVE_ID, max_length=19, description="A positive decimal integer")
        ],
        state: State,
        token: NamedDependency[str],
    ) -> FragmentDetail:
        """A fragment you may read (any other id is a 404, whether or not it exists)."""
        return await read_fragment(state.services, token, parse_id(fragment_id))

    @get(
        "/{fragment_id:str}/links", summary="What a fragment cites and what cites it", responses=problems(*READ_ERRORS)
    )
    async def get_links(
        self,
        fragment_id: Annotated[
            str, Parameter(pattern=POSITIVE_ID, max_length=19, description="A positive decimal integer")
        ],
        state: State,
        token: NamedDependency[str],
    ) -> FragmentLinks:
        """The references a fragment you may read makes (`outgoing`, resolved or still
        waiting for their target) and those made to it (`incoming`), with the fragment at
        the other end and where it is cited from: links resolved on demand, one hop. Only
        links whose both ends you may read are shown; any other fragment id is a 404."""
        return await read_links(state.services, token, parse_id(fragment_id))


class TracesController(Controller):
    path = "/traces"
    tags = ["provenance"]

    @get("/{trace_id:str}", summary="A retrieval trace", responses=problems(*READ_ERRORS))
    async def get_trace(
        self,
        trace_id: Annotated[str, Parameter(pattern=UUID_PATTERN, description="A UUID, 8-4-4-4-12 hex")],
        state: State,
        token: NamedDependency[str],
    ) -> TraceOut:
        """Request, pipeline versions, and every candidate's lexical rank, dense rank,
        fused score, rerank score, final score, and whether (or why not) it was included.
        Visible to the principal that made it and to its org's auditors, showing what
        the caller's grants let it read now: a candidate it may not read keeps only its
        ranks and scores, a request in a scope it holds no grant on loses its query and
        scope ids, and `redacted` lists what was withheld."""
        return await read_trace(state.services, token, trace_id)
