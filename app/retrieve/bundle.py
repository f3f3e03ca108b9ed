"""Reading a Context version in bundle order (GET /contexts/{ref} without a query, the
MCP tool `read_context`, `contexts ctx read`): a pipeline of the retrieval's own stages
with no ranking between them. Gather the members the caller may read now (by reference,
unscored, in bundle order), compose them within the budget (no score floor: every member
is taken while it fits), and trace it like a retrieval (one entry per member, its final
rank its place in the bundle). Reading one ranked against a query is a retrieval
restricted to it (app.retrieve.service)."""

from __future__ import annotations

import time
from dataclasses import dataclass

import psycopg

from app.retrieve.candidates import Candidate, context_candidates
from app.retrieve.compose import compose
from app.retrieve.config import PipelineConfig
from app.retrieve.fusion import fusion_spec
from app.retrieve.service import Retriever, fragments_out
from app.retrieve.trace import candidate_entries, record_trace
from app.scope import Scope
from app.wire.retrieve import FragmentOut


@dataclass(frozen=True, slots=True)
class BundleRead:
    """A Context version read in bundle order, its trace written."""

    fragments: list[FragmentOut]
    """The composed members, in bundle order."""
    trace_id: str
    tokens_used: int
    left_out: int
    """Members the budget left out."""
    members: int
    """Members of the version the caller may read now (a deleted fragment is missing)."""


def members(conn: psycopg.Connection, config: PipelineConfig, org_id: str, ref: str) -> list[Candidate]:
    """The gather stage of a bundle read: the members of `ref` the caller may read now,
    in bundle order, unscored (service.context_candidates without a query, by reference, in
    the org of `org_id` alone; retired Contexts too: reading one is an audit)."""
    return context_candidates(
        conn,
        Scope(org_id),
        [ref],
        None,
        {},
        config.rrf_k,
        fusion_spec(config, ref),
        include_retired=True,
        by_reference=True,
    )


def read_bundle(
    conn: psycopg.Connection,
    retriever: Retriever,
    org_id: str,
    ref: str,
    budget_tokens: int,
    started: float | None = None,
) -> BundleRead:
    """For the principal bound to `conn`'s transaction; the trace is written in the same
    transaction. `ref`: a resolved version (`ctx_<id>@<version>`). `started`: when the
    read began (time.perf_counter), for the trace's duration; now when None."""
    started = time.perf_counter() if started is None else started
    found = members(conn, retriever.config, org_id, ref)
    composition = compose(found, budget_tokens, 0.0)
    entries = candidate_entries(found, [c.fragment_id for c in found], composition)
    trace_id = record_trace(
        conn,
        org_id,
        ref,
        {"context": ref, "scope": {"org_id": org_id}, "budget_tokens": budget_tokens},
        retriever.pipeline_info() | {"context_read": "bundle order"},
        entries,
        (time.perf_counter() - started) * 1000.0,
        folder=retriever.usage_folder,
    )
    return BundleRead(
        fragments_out(composition, {}),
        trace_id,
        composition.tokens_used,
        len(found) - len(composition.included),
        len(found),
    )
