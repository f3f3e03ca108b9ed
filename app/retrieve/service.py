"""One retrieval: embed the query, fetch fused candidates (one SQL call), rerank,
compose within the budget, and record the trace. Shared by HTTP, CLI and eval."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

import msgspec
import psycopg

from app.retrieve import rerank
from app.retrieve.blend import BUILT_IN, Profile, blend
from app.retrieve.candidates import (
    Candidate,
    Filters,
    LeftOut,
    admitted,
    context_candidates,
    fetch_candidates,
    linked_fragments,
    list_floors,
    rule_matches,
    validity_left_out,
    version_metadata,
)
from app.retrieve.compose import Composition, compose, compose_linked
from app.retrieve.config import PipelineConfig
from app.retrieve.fusion import fusion_spec
from app.retrieve.query_vectors import QueryEmbedder, QueryVectors
from app.retrieve.relevance import relevance
from app.retrieve.rerank import Scorer
from app.retrieve.trace import candidate_entries, left_out_entries, record_trace
from app.scope import Scope
from app.text.embed import Embedder, model_label
from app.text.versions import CHUNKER_VERSION
from app.wire.retrieve import FragmentOut, PinLeftOut, RetrieveRequest, RetrieveResponse, Superseder

RRF_K = 60
MAX_RULE_CONTEXTS = 16
"""Contexts the workflow rules matching one request may bring (the bound of
api.context_candidates); further matching rules, in rule order, bring nothing."""
CONTEXT_BOOST = 0.5
"""`context_mode: boost`: a member of a named Context closes this share of the gap
between its blended score and 1 (0.4 becomes 0.7): lifted, never past a better fit."""


@dataclass(slots=True)
class Ranking:
    """A retrieval before composition: what the budget and the trace start from."""

    candidates: list[Candidate]
    """Every candidate, in fused order (as the SQL call returned them), then the pins
    outside both lists."""
    ranked: list[Candidate]
    """The top `rerank_top` fused candidates that are not pinned, in final order, each
    with its final score."""
    pinned: list[Candidate]
    """The pinned fragments the request sees, in pin order (earliest pin first), each
    scored like a ranked candidate: composed first, whatever their scores."""
    query_vectors: QueryVectors
    """The query's vector per namespace (empty when the request searched no dense list)."""
    profile: Profile = BUILT_IN
    """The ranking profile the blend used (weights normalised)."""
    ruled: list[Candidate] = field(default_factory=list)
    """The members of the Contexts the workflow rules matching `touching` brought (not
    pinned), best first, each with its rule: composed after the pins (docs/adr/0022)."""


def authority_refreshed_at(candidates: list[Candidate]) -> str | None:
    """When the authority these candidates carry was computed (one refresh for all)."""
    times = [c.authority_refreshed_at for c in candidates if c.authority_refreshed_at is not None]
    return max(times).isoformat() if times else None


def best_fused_score(config: PipelineConfig) -> float:
    """The fused score of a candidate ranked first by both sides."""
    return 2.0 / (config.rrf_k + 1) if config.fusion == "rrf" else 1.0


class Retriever:
    def __init__(
        self,
        embedders: dict[str, Embedder],
        reranker: Scorer | None,
        config: PipelineConfig | None = None,
        query_cache: int = 1024,
        generations: dict[str, int] | None = None,
    ) -> None:
        """`query_cache`: recent query vectors kept (0 for a benchmark, where every
        mode asks the same queries and a cache would hide the model's cost).
        `generations`: namespaces searched with a generation other than the active one
        ({"prose": 2}: a shadow being replayed or gated; docs/adr/0021), whose models
        `embedders` must be."""
        self.query_embedder = QueryEmbedder(embedders, cache_size=query_cache)
        self.embedders = self.query_embedder.embedders
        self.reranker = reranker
        self.config = config or PipelineConfig(rrf_k=RRF_K)
        if reranker is None and self.config.reranker is not None:
            # Reports read the configuration: it says what runs (the default names one).
            self.config = replace(self.config, reranker=None)
        self.generations = dict(generations or {})
        self.models = {ns: model_label(e.name) for ns, e in self.embedders.items()}
        """The model of each namespace's query vectors, as the database names it (sent
        with them: SQL refuses vectors of a model it no longer serves)."""
        self.stage_observer: Callable[[str, float], None] | None = None
        """Told each stage's seconds (the service's metrics); None outside the service."""

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            if self.stage_observer is not None:
                self.stage_observer(name, time.perf_counter() - started)

    @classmethod
    def build(
        cls,
        embedders: dict[str, Embedder],
        config: PipelineConfig,
        threads: int = 1,
        generations: dict[str, int] | None = None,
    ) -> Retriever:
        """With the reranker the configuration names (none: the fused order stands)."""
        return cls(embedders, rerank.build(config.reranker, threads), config, generations=generations)

    def serve_generations(self, conn: psycopg.Connection) -> None:
        """Tell the transaction which generations this retriever searches, when not the
        active ones (data._serving_models reads it; SQL refuses a dropped one, or a
        retired one whose window has ended). Transaction-local: the next retrieval on
        this connection searches the active ones again."""
        if self.generations:
            conn.execute("select set_config('contexts.serve_generations', %s, true)", (json.dumps(self.generations),))

    def query_embeddings(self, query: str) -> QueryVectors:
        """One vector per namespace; concurrent retrievals share embedding calls."""
        return self.query_embedder.vectors(query)

    def pipeline_info(self, query: str | None = None) -> dict:
        """Versions and knobs a trace records; with a query, the fusion it was given."""
        return {
            "chunker_version": CHUNKER_VERSION,
            "embedding_models": dict(self.models),
            **({"generations": dict(sorted(self.generations.items()))} if self.generations else {}),
            "embed_dtype": next(iter(self.embedders.values())).dtype if self.embedders else None,
            "query_embedding": {ns: e.runtime for ns, e in self.embedders.items()},
            "fusion": fusion_spec(self.config, query)
            if query is not None
            else {
                "method": self.config.fusion,
                "dense_weight": self.config.dense_weight,
                "code_lexical_weight": self.config.code_lexical_weight,
                "rrf_k": self.config.rrf_k,
            },
            "reranker": self.reranker.name if self.reranker else None,
            "reranker_version": self.reranker.version if self.reranker else None,
            "score_basis": "rerank_probability" if self.reranker else "fused_score_normalized (no reranker configured)",
        }

    @staticmethod
    def scope_of(request: RetrieveRequest) -> Scope:
        return Scope(request.scope.org_id, request.scope.repo_id, request.scope.persona_id, request.scope.session_id)

    @staticmethod
    def filters_of(request: RetrieveRequest) -> Filters:
        return Filters(
            request.path_prefix,
            request.kinds,
            request.updated_since,
            request.updated_until,
            request.negatives,
            request.as_of,
            request.include_superseded,
        )

    def candidates(
        self,
        conn: psycopg.Connection,
        request: RetrieveRequest,
        vectors: QueryVectors | None = None,
        include_retired: bool = False,
    ) -> list[Candidate]:
        """`vectors`: the query's, when the caller computed them already (the API does,
        before it takes a connection, so that concurrent requests share model calls)."""
        scope = self.scope_of(request)
        if request.generation != "active" and not self.generations:
            # The service answers such a request with a retriever of that generation
            # (Services.previous_retriever): this one would search the active ones.
            raise ValueError(f"this retriever searches the active generations, not the {request.generation} ones")
        if request.k_dense == 0:
            embeddings: QueryVectors = {}
        else:
            embeddings = vectors if vectors is not None else self.query_embeddings(request.query)
        self.serve_generations(conn)
        if request.contexts:
            return self.with_contexts(conn, request, embeddings, include_retired)
        return fetch_candidates(
            conn,
            scope,
            request.query,
            embeddings,
            request.k_lexical,
            request.k_dense,
            self.config.rrf_k,
            fusion_spec(self.config, request.query),
            self.filters_of(request),
            self.models,
        )

    def with_contexts(
        self, conn: psycopg.Connection, request: RetrieveRequest, embeddings: QueryVectors, include_retired: bool
    ) -> list[Candidate]:
        """Candidates of a request naming Contexts (docs/adr/0018). `restrict`: the
        bundles' members alone, scored from the bundles; `boost`: the usual candidates,
        each member among them marked with its Context, then the members the usual lists
        did not reach. Members pass the request's filters like any candidate."""
        assert request.contexts
        fusion = fusion_spec(self.config, request.query)
        members = context_candidates(
            conn,
            self.scope_of(request),
            list(request.contexts),
            request.query,
            embeddings,
            self.config.rrf_k,
            fusion,
            include_retired,
            self.models,
        )
        filters, now = self.filters_of(request), datetime.now(UTC)
        members = [c for c in members if admitted(filters, c, now)]
        if request.context_mode == "restrict":
            return members
        scope = self.scope_of(request)
        usual = fetch_candidates(
            conn,
            scope,
            request.query,
            embeddings,
            request.k_lexical,
            request.k_dense,
            self.config.rrf_k,
            fusion,
            filters,
            self.models,
        )
        by_id = {c.fragment_id: c for c in members}
        for c in usual:
            member = by_id.pop(c.fragment_id, None)
            if member is not None:
                c.context, c.context_ordinal = member.context, member.context_ordinal
        # After the usual candidates (pins among them keep their place after the ranked
        # ones: rank() splits them out), the members no list reached, in bundle order.
        return usual + [c for c in members if c.fragment_id in by_id]

    def rule_candidates(
        self, conn: psycopg.Connection, request: RetrieveRequest, embeddings: QueryVectors
    ) -> list[Candidate]:
        """The members of the Contexts the workflow rules matching `touching` bring
        (docs/adr/0022), scored against the query from those bundles alone, each marked
        with the first rule (lowest id) that brought its Context. A rule whose Context
        the caller may not read matched nothing, as far as anyone can tell (SQL drops it).
        At most MAX_RULE_CONTEXTS Contexts, in rule order."""
        assert request.touching
        matches = rule_matches(conn, self.scope_of(request), list(request.touching))
        by_ref: dict[str, tuple[int, str]] = {}
        for m in matches:
            if m.ref not in by_ref and len(by_ref) < MAX_RULE_CONTEXTS:
                by_ref[m.ref] = (m.rule_id, m.name)
        if not by_ref:
            return []
        members = context_candidates(
            conn,
            self.scope_of(request),
            list(by_ref),
            request.query,
            embeddings,
            self.config.rrf_k,
            fusion_spec(self.config, request.query),
            models=self.models,
        )
        filters, now = self.filters_of(request), datetime.now(UTC)
        out = [c for c in members if admitted(filters, c, now)]
        for c in out:
            assert c.context is not None
            c.rule, c.rule_name = by_ref[c.context]
        return out

    def rank(
        self,
        conn: psycopg.Connection,
        request: RetrieveRequest,
        vectors: QueryVectors | None = None,
        include_retired: bool = False,
    ) -> Ranking:
        """Candidates, rerank and the blend: everything `retrieve` does before the budget."""
        embeddings: QueryVectors = {}
        if request.k_dense > 0:
            if vectors is None:
                with self.stage("embed"):
                    vectors = self.query_embeddings(request.query)
            embeddings = vectors
        with self.stage("candidates"):
            candidates = self.candidates(conn, request, embeddings, include_retired)
        ruled: list[Candidate] = []
        if request.touching:
            with self.stage("rules"):
                ruled = self.rule_candidates(conn, request, embeddings)
            candidates, ruled = merge_ruled(candidates, ruled)
        # Pins take no part in the ranking (without any, it is exactly what it was); they
        # get scores of their own only to show them. So do the fragments rules brought.
        pinned = sorted((c for c in candidates if c.pin_id is not None), key=lambda c: c.pin_rank or 0)
        rest = [c for c in candidates if c.pin_id is None and c.rule is None] if pinned or ruled else candidates
        best = best_fused_score(self.config)
        with self.stage("rerank"):
            ranked = rerank.order(request.query, rest, request.rerank_top, self.reranker, best, pinned + ruled)
        for c in ranked + pinned + ruled:
            c.relevance = relevance(c)
        # The blend (docs/adr/0014), with the profile the SQL call returned on its first row.
        row = candidates[0].profile if candidates else None
        override = request.freshness_halflife_days
        profile = Profile.from_row(row, override) if row else replace(BUILT_IN, halflife_override=override)
        blend(ranked + pinned + ruled, profile, datetime.now(UTC))
        ruled.sort(key=lambda c: -(c.final_score or 0.0))
        if request.contexts and request.context_mode == "boost":
            for c in ranked:
                if c.context is not None and c.final_score is not None:
                    c.final_score += (1.0 - c.final_score) * CONTEXT_BOOST
        # Stable: candidates the blend ties keep the pipeline's order.
        ranked.sort(key=lambda c: -(c.final_score or 0.0))
        return Ranking(candidates, ranked, pinned, embeddings, profile, ruled)

    def retrieve(
        self,
        conn: psycopg.Connection,
        request: RetrieveRequest,
        vectors: QueryVectors | None = None,
        include_retired: bool = False,
        kind: str | None = None,
    ) -> RetrieveResponse:
        """For the principal bound to `conn`'s transaction (see app.access); the trace is
        written in the same transaction. `include_retired`: retired Contexts may be named
        (reading one for audit). `kind`: the door asking, when it is not a plain
        retrieval (`session_pack`), recorded in the trace for replays."""
        return self.answer(conn, request, vectors, include_retired=include_retired, kind=kind).record(conn)

    def answer(
        self,
        conn: psycopg.Connection,
        request: RetrieveRequest,
        vectors: QueryVectors | None = None,
        read: dict | None = None,
        include_retired: bool = False,
        kind: str | None = None,
    ) -> Answer:
        """Everything a retrieval reads, without its trace: a service reading on a replica
        records the trace on the primary afterwards (`Answer.record`), since a standby
        writes nothing. `read`: where the candidates were read, for the trace. The trace
        keeps what a replay needs to run it again as it ran (app.eval.replay):
        `include_retired` and the door's `kind` ("request_kind")."""
        started = time.perf_counter()
        ranking = self.rank(conn, request, vectors, include_retired)
        candidates, ranked = ranking.candidates, ranking.ranked
        with self.stage("compose"):
            composition = compose(
                ranked,
                request.budget_tokens,
                request.min_score,
                request.min_relevance,
                request.top_k,
                ranking.pinned,
                ranking.ruled,
            )
            linked: list[Candidate] = []
            if request.expand_links:
                linked = linked_fragments(
                    conn,
                    self.scope_of(request),
                    [c.fragment_id for c in composition.included],
                    self.filters_of(request),
                )
                compose_linked(composition, linked, request.budget_tokens)
            metadata = version_metadata(conn, composition.included)
        with self.stage("left_out"):
            left_out = self.left_out(conn, request, ranking)
        duration_ms = (time.perf_counter() - started) * 1000.0
        # The final order: pins first, then what rules brought, then the ranked candidates.
        final_order = [c.fragment_id for c in ranking.pinned + ranking.ruled + ranked]
        entries = candidate_entries(candidates, final_order, composition, linked)
        pipeline = self.pipeline_info(request.query) | {
            "profile": ranking.profile.to_trace(),
            "authority_refreshed_at": authority_refreshed_at(candidates),
        }
        if read is not None:
            pipeline["read"] = read
        if include_retired:
            pipeline["include_retired"] = True
        if kind is not None:
            pipeline["request_kind"] = kind
        fragments = fragments_out(composition, metadata)
        return Answer(
            self,
            request,
            pipeline,
            entries,
            duration_ms,
            ranking.query_vectors,
            fragments,
            composition,
            left_out_entries(left_out, candidates),
            pins_left_out(composition, ranking.pinned, left_out),
        )

    def left_out(self, conn: psycopg.Connection, request: RetrieveRequest, ranking: Ranking) -> list[LeftOut]:
        """What validity windows kept out of this retrieval that it would otherwise have
        held (api.validity_left_out): pins it could not serve, and fragments that would
        have ranked in the lexical or dense list. One SQL call, an index probe for an org
        without windows; none for a request keeping superseded fragments or restricted to
        named Contexts (their members are filtered in Python: `admitted`)."""
        if request.include_superseded or (request.contexts and request.context_mode == "restrict"):
            return []
        lexical_floor, dense_floors = list_floors(ranking.candidates, request.k_lexical, request.k_dense)
        return validity_left_out(
            conn,
            self.scope_of(request),
            request.query,
            ranking.query_vectors,
            lexical_floor,
            dense_floors,
            self.filters_of(request),
            self.models,
        )


@dataclass(slots=True)
class Answer:
    """A retrieval read and composed, its trace not yet written."""

    retriever: Retriever
    request: RetrieveRequest
    pipeline: dict
    entries: list[dict]
    duration_ms: float
    query_vectors: QueryVectors
    fragments: list[FragmentOut]
    composition: Composition
    left_out: list[dict] = field(default_factory=list)
    """What validity windows kept out (trace entries, app.retrieve.trace.left_out_entries)."""
    pins_left_out: list[PinLeftOut] = field(default_factory=list)
    """Every pin the request sees that it did not compose, with its reason."""

    def record(self, conn: psycopg.Connection) -> RetrieveResponse:
        """Write the trace for the principal bound to `conn` (on the primary), then the
        response that names it: an answer is never returned before its trace is stored."""
        with self.retriever.stage("trace"):
            # Query vectors are stored under the searched generation's model (on a replica's
            # primary this is another transaction: it is told again).
            self.retriever.serve_generations(conn)
            trace_id = record_trace(
                conn,
                self.request.scope.org_id,
                self.request.query,
                msgspec.to_builtins(self.request),
                self.pipeline,
                self.entries,
                self.duration_ms,
                self.query_vectors,
                self.left_out,
            )
        return RetrieveResponse(
            fragments=self.fragments,
            trace_id=trace_id,
            tokens_used=self.composition.tokens_used,
            budget_tokens=self.request.budget_tokens,
            pins_left_out=[p.pin_id for p in self.pins_left_out],
            pins_left_out_reasons=self.pins_left_out,
        )


PIN_REASONS = {"pin_over_budget": "over the token budget", "pin_beyond_top_k": "beyond top_k"}


def pins_left_out(composition: Composition, pinned: list[Candidate], left_out: list[LeftOut]) -> list[PinLeftOut]:
    """Each pin the request sees that it did not compose, earliest first (by pin id):
    those the budget or top_k left out (earlier pins won), and those whose fragment is
    outside its validity window at the request's as_of, with what superseded it."""
    out = [
        PinLeftOut(
            c.pin_id,
            c.fragment_id,
            composition.decisions[c.fragment_id].reason,  # type: ignore[arg-type]
            PIN_REASONS.get(composition.decisions[c.fragment_id].reason, composition.decisions[c.fragment_id].reason),
        )
        for c in pinned
        if c.pin_id is not None and c.pin_id in composition.pins_left_out
    ]
    for x in left_out:
        if x.pin_id is None:
            continue
        by = [Superseder(s["doc_id"], s["path"], s.get("evidence")) for s in x.superseded_by]
        if x.reason == "superseded":
            detail = "superseded by " + ", ".join(s.path for s in by)
        elif x.reason == "not_yet_valid":
            detail = f"not valid before {x.valid_from.isoformat() if x.valid_from else 'its start'}"
        else:
            detail = f"expired at {x.valid_until.isoformat() if x.valid_until else 'its end'}"
        out.append(PinLeftOut(x.pin_id, x.fragment_id, x.reason, detail, by, x.valid_until))  # type: ignore[arg-type]
    return sorted(out, key=lambda p: p.pin_id)


def merge_ruled(candidates: list[Candidate], ruled: list[Candidate]) -> tuple[list[Candidate], list[Candidate]]:
    """The candidates with what rules brought: a pinned fragment stays a pin; one the
    usual lists reached keeps its ranks (and its trace entry) and takes the rule's mark;
    the others follow the candidates, as pins outside both lists do. Returns the
    candidates and the rule-brought ones (pins left out)."""
    by_id = {c.fragment_id: c for c in candidates}
    out: list[Candidate] = []
    for member in ruled:
        usual = by_id.get(member.fragment_id)
        if usual is None:
            candidates.append(member)
            by_id[member.fragment_id] = member
            out.append(member)
        elif usual.pin_id is None and usual.rule is None:
            usual.rule, usual.rule_name = member.rule, member.rule_name
            usual.context = usual.context or member.context
            out.append(usual)
    return candidates, out


def fragments_out(composition: Composition, metadata: dict[tuple[int, int], dict]) -> list[FragmentOut]:
    """The composed fragments as a response lists them, in composed order."""
    return [
        FragmentOut(
            id=c.fragment_id,
            doc_id=c.doc_id,
            version=c.doc_version,
            score=round(c.final_score or 0.0, 6),
            relevance=round(c.relevance or 0.0, 6),
            tokens=composition.decisions[c.fragment_id].tokens,
            source=c.source,
            updated_at=c.updated_at,
            text=composition.decisions[c.fragment_id].text or c.text,
            heading_path=list(c.heading_path),
            kind=c.kind,
            owner=c.owner,
            metadata=metadata.get((c.doc_id, c.doc_version), {}),
            pinned=c.pin_id is not None,
            pin_id=c.pin_id,
            negative=c.negative,
            valid_from=c.valid_from,
            valid_until=c.valid_until,
            linked_from=c.linked_from,
            link_type=c.link_type,
            context=c.context,
            rule=c.rule,
            rule_name=c.rule_name,
        )
        for c in composition.included
    ]
