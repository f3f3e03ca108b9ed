"""GET /fragments/{id} and GET /traces/{trace_id}: provenance of what was retrieved."""

from __future__ import annotations

from typing import Annotated
from uuid import UUID

from litestar import Controller, get
from litestar.datastructures import State
from litestar.params import Parameter
from psycopg.rows import dict_row

from app.api.state import Services
from app.retrieve.trace import get_trace


class FragmentsController(Controller):
    path = "/fragments"
    tags = ["provenance"]

    @get("/{fragment_id:int}", sync_to_thread=True, summary="A fragment and all its sources")
    def get_fragment(self, fragment_id: Annotated[int, Parameter(ge=1, le=2**63 - 1)], state: State,
                     token: str) -> dict:
        """A fragment you may read (any other id is a 404, whether or not it exists)."""
        services: Services = state.services
        with services.acting_for(token) as conn, conn.cursor(row_factory=dict_row) as cur:
            row = cur.execute("select * from api.get_fragment(%s)", (fragment_id,)).fetchone()
        row["simhash"] = f"{row['simhash'] & 0xFFFFFFFFFFFFFFFF:016x}"
        return row


class TracesController(Controller):
    path = "/traces"
    tags = ["provenance"]

    @get("/{trace_id:uuid}", sync_to_thread=True, summary="A retrieval trace")
    def get_trace(self, trace_id: UUID, state: State, token: str) -> dict:
        """Request, pipeline versions, and every candidate's lexical rank, dense rank,
        fused score, rerank score, final score, and whether (or why not) it was included.
        Visible to the principal that made it and to its org's auditors, showing what
        the caller's grants let it read now: a candidate it may not read keeps only its
        ranks and scores, a request in a scope it holds no grant on loses its query and
        scope ids, and `redacted` lists what was withheld."""
        services: Services = state.services
        with services.acting_for(token) as conn:
            return get_trace(conn, str(trace_id))
