"""GET /fragments/{id} and GET /traces/{trace_id}: provenance of what was retrieved.

Ids are read strictly (canonical decimal, canonical UUID): `+1`, ` 1` or `١` are not
another spelling of fragment 1."""

from __future__ import annotations

import re
from typing import Annotated, Any

from litestar import Controller, get
from litestar.datastructures import State
from litestar.exceptions import ValidationException
from litestar.params import Parameter
from psycopg.rows import dict_row

from app.api.openapi import READ_ERRORS, problems
from app.api.state import Services
from app.retrieve.trace import get_trace

FRAGMENT_ID = r"^[1-9][0-9]{0,18}$"
UUID_PATTERN = r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
MAX_BIGINT = 2**63 - 1


def parse_fragment_id(raw: str) -> int:
    # int() accepts other scripts' digits, signs, spaces and underscores: match ASCII.
    if not re.fullmatch(FRAGMENT_ID, raw) or int(raw) > MAX_BIGINT:
        raise ValidationException(f"fragment id must be a decimal integer from 1 to {MAX_BIGINT}")
    return int(raw)


class FragmentsController(Controller):
    path = "/fragments"
    tags = ["provenance"]

    @get("/{fragment_id:str}", summary="A fragment and all its sources", responses=problems(*READ_ERRORS))
    async def get_fragment(
        self, fragment_id: Annotated[str, Parameter(pattern=FRAGMENT_ID, max_length=19,
                                                    description="A positive decimal integer")],
        state: State, token: str,
    ) -> dict[str, Any]:
        """A fragment you may read (any other id is a 404, whether or not it exists)."""
        number = parse_fragment_id(fragment_id)
        services: Services = state.services

        def run() -> dict[str, Any]:
            with services.acting_for(token) as conn, conn.cursor(row_factory=dict_row) as cur:
                row = cur.execute("select * from api.get_fragment(%s)", (number,)).fetchone()
            assert row is not None  # api.get_fragment raises P0002 instead
            row["simhash"] = f"{row['simhash'] & 0xFFFFFFFFFFFFFFFF:016x}"
            return row

        return await services.read(run)


class TracesController(Controller):
    path = "/traces"
    tags = ["provenance"]

    @get("/{trace_id:str}", summary="A retrieval trace", responses=problems(*READ_ERRORS))
    async def get_trace(
        self, trace_id: Annotated[str, Parameter(pattern=UUID_PATTERN, description="A UUID, 8-4-4-4-12 hex")],
        state: State, token: str,
    ) -> dict[str, Any]:
        """Request, pipeline versions, and every candidate's lexical rank, dense rank,
        fused score, rerank score, final score, and whether (or why not) it was included.
        Visible to the principal that made it and to its org's auditors, showing what
        the caller's grants let it read now: a candidate it may not read keeps only its
        ranks and scores, a request in a scope it holds no grant on loses its query and
        scope ids, and `redacted` lists what was withheld."""
        if not re.fullmatch(UUID_PATTERN, trace_id):
            raise ValidationException("trace id must be a UUID written 8-4-4-4-12 in hexadecimal")
        services: Services = state.services

        def run() -> dict[str, Any]:
            with services.acting_for(token) as conn:
                return get_trace(conn, trace_id.lower())

        return await services.read(run)
