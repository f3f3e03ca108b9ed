"""One retrieval: resolve the request, embed the query, then the stages of
app.retrieve.stages (gather, rerank, blend, boost, compose) and the trace. Shared by
HTTP, MCP, CLI and eval."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

import msgspec
import psycopg

from app.retrieve import rerank, stages
from app.retrieve.candidates import Candidate, Filters, LeftOut
from app.retrieve.compose import Composition
from app.retrieve.config import PipelineConfig
from app.retrieve.fusion import fusion_spec
from app.retrieve.query_vectors import QueryEmbedder, QueryVectors
from app.retrieve.request import Resolved, resolve
from app.retrieve.rerank import Scorer
from app.retrieve.stages import Ranking, best_fused_score
from app.retrieve.trace import candidate_entries, left_out_entries, record_trace
from app.retrieve.usage_fold import UsageFolder
from app.text.embed import Embedder, model_label
from app.text.versions import CHUNKER_VERSION
from app.wire.retrieve import FragmentOut, PinLeftOut, RetrieveRequest, RetrieveResponse, Superseder

RRF_K = 60


def authority_refreshed_at(candidates: list[Candidate]) -> str | None:
    """When the authority these candidates carry was computed (one refresh for all)."""
    times = [c.authority_refreshed_at for c in candidates if c.authority_refreshed_at is not None]
    return max(times).isoformat() if times else None


def score_basis(reranker: Scorer | None) -> str:
    """What a candidate's relevance term is, as the trace says it."""
    if reranker is None:
        return "fused_score_normalized (no reranker configured)"
    share = reranker.fused_share
    if share <= 0.0:
        return "rerank_probability"
    return f"rerank_probability x {1 - share:.2f} + fused score / best of the head x {share:.2f}"


def calibration(reranker: Scorer | None) -> str | None:
    """How a learned reranker's raw score becomes its probability (None for a scorer
    that gives probabilities itself): the trace page shows it next to each raw score."""
    pair = getattr(reranker, "calibration", None)
    if not pair:
        return None
    a, b = pair
    return f"rerank_probability = sigmoid({a:.4f} x raw {'-' if b < 0 else '+'} {abs(b):.4f})"


class Retriever:
    """One retrieval as a composition of stages (app.retrieve.stages): the request is
    resolved once, then gathered, reranked, blended, boosted, composed and traced."""

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
        self.usage_folder: UsageFolder | None = None
        """Woken when a trace write makes a fold of the usage roll-ups due: it folds in a
        transaction of its own, off the retrieval (app.retrieve.usage_fold). None: the
        write only lists its trace (a backlog of four batches is folded by a write)."""

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

    def resolve(self, request: RetrieveRequest, include_retired: bool = False) -> Resolved:
        """The request as this retriever runs it, resolved once for every stage."""
        return resolve(request, self.config, self.models, include_retired)

    def pipeline_info(self, query: str | Resolved | None = None) -> dict:
        """Versions and knobs a trace records; with a query, the fusion it was given."""
        fusion = fusion_spec(self.config, query) if isinstance(query, str) else query.fusion if query else None
        return {
            "chunker_version": CHUNKER_VERSION,
            "embedding_models": dict(self.models),
            **({"generations": dict(sorted(self.generations.items()))} if self.generations else {}),
            "embed_dtype": next(iter(self.embedders.values())).dtype if self.embedders else None,
            "query_embedding": {ns: e.runtime for ns, e in self.embedders.items()},
            "fusion": fusion
            or {
                "method": self.config.fusion,
                "dense_weight": self.config.dense_weight,
                "code_lexical_weight": self.config.code_lexical_weight,
                "rrf_k": self.config.rrf_k,
            },
            "reranker": self.reranker.name if self.reranker else None,
            "reranker_version": self.reranker.version if self.reranker else None,
            "score_basis": score_basis(self.reranker),
            **({"reranker_calibration": calibrated} if (calibrated := calibration(self.reranker)) else {}),
        }

    def vectors(self, q: Resolved, vectors: QueryVectors | None) -> QueryVectors:
        """The query's vectors (none when the request searches no dense list); `vectors`:
        the caller's, when it computed them already (the API does, before it takes a
        connection, so that concurrent requests share model calls)."""
        if q.k_dense == 0:
            return {}
        if vectors is None:
            with self.stage("embed"):
                vectors = self.query_embeddings(q.query)
        return vectors

    def check_generation(self, q: Resolved) -> None:
        if q.request.generation != "active" and not self.generations:
            # The service answers such a request with a retriever of that generation
            # (ModelFollowing.previous_retriever, app/operations/following.py): this one would search the active ones.
            raise ValueError(f"this retriever searches the active generations, not the {q.request.generation} ones")

    def candidates(
        self,
        conn: psycopg.Connection,
        request: RetrieveRequest | Resolved,
        vectors: QueryVectors | None = None,
        include_retired: bool = False,
    ) -> list[Candidate]:
        """The candidates stage alone (stages.candidates): the fused lists, or the
        members of the Contexts the request names."""
        q = request if isinstance(request, Resolved) else self.resolve(request, include_retired)
        self.check_generation(q)
        embeddings = self.vectors(q, vectors)
        self.serve_generations(conn)
        return stages.candidates(conn, q, embeddings, self.query_embedder.embedders)

    def gather(self, conn: psycopg.Connection, q: Resolved, vectors: QueryVectors | None = None) -> stages.Gathered:
        embeddings = self.vectors(q, vectors)
        with self.stage("candidates"):
            candidates = self.candidates(conn, q, embeddings)
        ruled: list[Candidate] = []
        if q.touching:
            with self.stage("rules"):
                ruled = stages.rule_candidates(conn, q, embeddings)
        return stages.gathered(candidates, ruled, embeddings)

    def rank(
        self,
        conn: psycopg.Connection,
        request: RetrieveRequest | Resolved,
        vectors: QueryVectors | None = None,
        include_retired: bool = False,
    ) -> Ranking:
        """Gather, rerank, blend and boost: everything `retrieve` does before the budget."""
        q = request if isinstance(request, Resolved) else self.resolve(request, include_retired)
        gathered = self.gather(conn, q, vectors)
        with self.stage("rerank"):
            reranked = stages.rerank(q, gathered, self.reranker, best_fused_score(self.config))
        return stages.boost(q, stages.blend(q, reranked))

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
        q = self.resolve(request, include_retired)
        ranking = self.rank(conn, q, vectors)
        with self.stage("compose"):
            composed = stages.compose(conn, q, ranking)
        duration_ms = (time.perf_counter() - started) * 1000.0
        pipeline = self.pipeline_info(q) | {
            "profile": ranking.profile.to_trace(),
            "authority_refreshed_at": authority_refreshed_at(ranking.candidates),
        }
        if read is not None:
            pipeline["read"] = read
        if include_retired:
            pipeline["include_retired"] = True
        if kind is not None:
            pipeline["request_kind"] = kind
        return answer_of(self, q, ranking, composed, pipeline, duration_ms)


def answer_of(
    retriever: Retriever,
    q: Resolved,
    ranking: Ranking,
    composed: stages.Composed,
    pipeline: dict,
    duration_ms: float,
) -> Answer:
    """The trace stage's input: the trace entries (final order: pins first, then what
    rules brought, then the ranked candidates) and the response's fragments."""
    final_order = [c.fragment_id for c in ranking.pinned + ranking.ruled + ranking.ranked]
    entries = candidate_entries(ranking.candidates, final_order, composed.composition, composed.linked)
    return Answer(
        retriever,
        q.request,
        pipeline,
        entries,
        duration_ms,
        ranking.query_vectors,
        fragments_out(composed.composition, composed.metadata),
        composed.composition,
        left_out_entries(composed.left_out, ranking.candidates),
        pins_left_out(composed.composition, ranking.pinned, composed.left_out, q.filters),
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
                self.retriever.usage_folder,
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


def pins_left_out(
    composition: Composition, pinned: list[Candidate], left_out: list[LeftOut], filters: Filters
) -> list[PinLeftOut]:
    """Each pin the request sees that it did not compose, earliest first (by pin id):
    those the budget or top_k left out (earlier pins won), those whose fragment is
    retired (its document deleted or its text changed) or outside the request's
    filters, and those outside their validity window at the request's as_of, with what
    superseded them."""
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
        if x.reason == "retired":
            detail = (
                f"its text is no longer live in {x.path} (deleted or changed since it was pinned)"
                if x.path
                else "its text is no longer live (its document was deleted or changed since it was pinned)"
            )
        elif x.reason == "filtered":
            detail = "outside one of this request's filters (" + ", ".join(set_filters(filters)) + ")"
        elif x.reason == "superseded":
            detail = "superseded by " + ", ".join(s.path for s in by)
        elif x.reason == "not_yet_valid":
            detail = f"not valid before {x.valid_from.isoformat() if x.valid_from else 'its start'}"
        else:
            detail = f"expired at {x.valid_until.isoformat() if x.valid_until else 'its end'}"
        out.append(PinLeftOut(x.pin_id, x.fragment_id, x.reason, detail, by, x.valid_until))  # type: ignore[arg-type]
    return sorted(out, key=lambda p: p.pin_id)


def set_filters(filters: Filters) -> list[str]:
    """The filters a request narrowed its candidates by, as the request names them."""
    named = {
        "path_prefix": filters.path_prefix is not None,
        "kinds": filters.kinds is not None,
        "updated_since": filters.updated_since is not None,
        "updated_until": filters.updated_until is not None,
        "negatives": filters.negatives != "include",
    }
    return [name for name, used in named.items() if used] or ["none set"]


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
