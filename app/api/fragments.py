"""GET /fragments/{id} and GET /traces/{trace_id}: provenance of what was retrieved.

Ids are read strictly (canonical decimal, canonical UUID): `+1`, ` 1` or `١` are not
another spelling of fragment 1."""

from __future__ import annotations

from typing import Annotated

import msgspec
from litestar import Controller, get
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.exceptions import NotFoundException
from litestar.params import Parameter
from psycopg.rows import dict_row

from app.api.openapi import READ_ERRORS, problems
from app.api.state import Services
from app.retrieve.trace import get_trace
from app.wire.bodies import MAX_BIGINT, POSITIVE_ID, UUID_PATTERN, FragmentDetail, FragmentLink, FragmentLinks, TraceOut


def parse_id(raw: str, what: str = "fragment id") -> int:
    """The path parameter already matched POSITIVE_ID (ASCII digits only: int() alone
    would take other scripts' digits, signs and spaces). 19 digits may still exceed
    bigint: the pattern allows it, and no such id can exist, so it is unknown (404),
    as the document promises for any well-formed id."""
    number = int(raw)
    if number > MAX_BIGINT:
        raise NotFoundException(f"unknown {what}: {raw}")
    return number


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


async def read_fragment(services: Services, token: str, fragment_id: int) -> FragmentDetail:
    """GET /fragments/{id} and the MCP tool `get_fragment`: P0002 (404) unless readable."""

    def run() -> FragmentDetail:
        with services.acting_for(token) as conn, conn.cursor(row_factory=dict_row) as cur:
            row = cur.execute("select * from api.get_fragment(%s)", (fragment_id,)).fetchone()
        assert row is not None  # api.get_fragment raises P0002 instead
        row["simhash"] = f"{row['simhash'] & 0xFFFFFFFFFFFFFFFF:016x}"
        return msgspec.convert(row, FragmentDetail)

    return await services.read(run)


async def read_links(services: Services, token: str, fragment_id: int) -> FragmentLinks:
    """GET /fragments/{id}/links: P0002 (404) unless readable."""

    def run() -> FragmentLinks:
        with services.acting_for(token) as conn, conn.cursor(row_factory=dict_row) as cur:
            rows = cur.execute("select * from api.fragment_links(%s)", (fragment_id,)).fetchall()
        links = [msgspec.convert(row, FragmentLink) for row in rows]
        return FragmentLinks(
            fragment_id,
            [link for link in links if link.direction == "out"],
            [link for link in links if link.direction == "in"],
        )

    return await services.read(run)


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


async def read_trace(services: Services, token: str, trace_id: str) -> TraceOut:
    """GET /traces/{id} and the MCP tool `get_trace` (`trace_id` already a UUID's text)."""

    def run() -> TraceOut:
        with services.acting_for(token) as conn:
            return msgspec.convert(get_trace(conn, trace_id.lower()), TraceOut)

    return await services.read(run)
