"""A retrieval request resolved once: every stage of the pipeline (app.retrieve.stages)
reads this one typed value instead of rebuilding the scope, the filters or the fusion
from the wire body."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from app.retrieve.candidates import Filters
from app.retrieve.config import PipelineConfig
from app.retrieve.fusion import fusion_spec
from app.scope import Scope
from app.wire.retrieve import RetrieveRequest


@dataclass(frozen=True, slots=True)
class Resolved:
    """What one retrieval asks, as the stages read it."""

    request: RetrieveRequest
    """The body as asked (the trace records it as such)."""
    query: str
    scope: Scope
    filters: Filters
    """The request's narrowing (api.retrieve_candidates' filter arguments)."""
    fusion: dict
    """The p_fusion object for this query (app.retrieve.fusion.fusion_spec)."""
    rrf_k: int
    models: dict[str, str]
    """The model of each namespace's query vector, as the database names it."""
    now: datetime
    """When the retrieval runs: the blend's freshness and the validity test of Context
    members (app.retrieve.candidates.admitted) read this one instant."""
    include_retired: bool = False
    """Retired Contexts may be named (reading one for audit)."""

    @property
    def k_lexical(self) -> int:
        return self.request.k_lexical

    @property
    def k_dense(self) -> int:
        return self.request.k_dense

    @property
    def rerank_top(self) -> int:
        """The request's, or its top_k when that asks for more: a top_k above rerank_top
        was cut to rerank_top fragments without a word (the rest were never ranked)."""
        return max(self.request.rerank_top, self.request.top_k or 0)

    @property
    def contexts(self) -> list[str]:
        """The Context versions the request names (none: an empty list)."""
        return list(self.request.contexts or [])

    @property
    def restricted(self) -> bool:
        """Named Contexts bound the retrieval: their members alone are candidates."""
        return bool(self.request.contexts) and self.request.context_mode == "restrict"

    @property
    def boosted(self) -> bool:
        """Named Contexts lift their members among the usual candidates."""
        return bool(self.request.contexts) and self.request.context_mode == "boost"

    @property
    def touching(self) -> list[str]:
        return list(self.request.touching or [])


def scope_of(request: RetrieveRequest) -> Scope:
    s = request.scope
    return Scope(s.org_id, s.repo_id, s.persona_id, s.session_id)


def filters_of(request: RetrieveRequest) -> Filters:
    return Filters(
        path_prefix=request.path_prefix,
        kinds=request.kinds,
        updated_since=request.updated_since,
        updated_until=request.updated_until,
        negatives=request.negatives,
        as_of=request.as_of,
        include_superseded=request.include_superseded,
    )


def resolve(
    request: RetrieveRequest,
    config: PipelineConfig,
    models: dict[str, str],
    include_retired: bool = False,
    now: datetime | None = None,
) -> Resolved:
    """The request as a pipeline with `config` runs it, for query vectors of `models`."""
    return Resolved(
        request=request,
        query=request.query,
        scope=scope_of(request),
        filters=filters_of(request),
        fusion=fusion_spec(config, request.query),
        rrf_k=config.rrf_k,
        models=dict(models),
        now=now or datetime.now(UTC),
        include_retired=include_retired,
    )
