"""Provenance of what was retrieved: a fragment, its links, a retrieval trace (GET
/fragments/{id}, GET /traces/{trace_id} and the MCP tools `get_fragment`,
`get_fragment_links`, `get_trace`).

Ids are read strictly (canonical decimal, canonical UUID): `+1`, ` 1` or `١` are not
another spelling of fragment 1."""

from __future__ import annotations

import msgspec
from psycopg.rows import dict_row

from app.operations.errors import NotFound
from app.operations.services import Services
from app.retrieve.trace import get_trace
from app.wire.bodies import MAX_BIGINT, FragmentDetail, FragmentLink, FragmentLinks, TraceOut


def parse_id(raw: str, what: str = "fragment id") -> int:
    """The path parameter already matched POSITIVE_ID (ASCII digits only: int() alone
    would take other scripts' digits, signs and spaces). 19 digits may still exceed
    bigint: the pattern allows it, and no such id can exist, so it is unknown (404),
    as the document promises for any well-formed id."""
    number = int(raw)
    if number > MAX_BIGINT:
        raise NotFound(f"unknown {what}: {raw}")
    return number


async def read_fragment(services: Services, token: str, fragment_id: int) -> FragmentDetail:
    """GET /fragments/{id} and the MCP tool `get_fragment`: P0002 (404) unless readable."""

    def run() -> FragmentDetail:
        with services.auth.acting_for(token) as conn, conn.cursor(row_factory=dict_row) as cur:
            row = cur.execute("select * from api.get_fragment(%s)", (fragment_id,)).fetchone()
        assert row is not None  # api.get_fragment raises P0002 instead
        row["simhash"] = f"{row['simhash'] & 0xFFFFFFFFFFFFFFFF:016x}"
        return msgspec.convert(row, FragmentDetail)

    return await services.runtime.read(run)


async def read_links(services: Services, token: str, fragment_id: int) -> FragmentLinks:
    """GET /fragments/{id}/links: P0002 (404) unless readable."""

    def run() -> FragmentLinks:
        with services.auth.acting_for(token) as conn, conn.cursor(row_factory=dict_row) as cur:
            rows = cur.execute("select * from api.fragment_links(%s)", (fragment_id,)).fetchall()
        links = [msgspec.convert(row, FragmentLink) for row in rows]
        return FragmentLinks(
            fragment_id,
            [link for link in links if link.direction == "out"],
            [link for link in links if link.direction == "in"],
        )

    return await services.runtime.read(run)


async def read_trace(services: Services, token: str, trace_id: str) -> TraceOut:
    """GET /traces/{id} and the MCP tool `get_trace` (`trace_id` already a UUID's text)."""

    def run() -> TraceOut:
        with services.auth.acting_for(token) as conn:
            return msgspec.convert(get_trace(conn, trace_id.lower()), TraceOut)

    return await services.runtime.read(run)
