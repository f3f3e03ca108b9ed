"""The stages of one retrieval, each a function with a typed input and output:

    Resolved ─ gather ─> Gathered ─ rerank ─> Reranked ─ blend ─> Blended ─ boost ─> Ranking
             ─ compose ─> Composed ─ (left_out) ─ trace ─> Answer (app.retrieve.service)

Every stage reads the request resolved once (app.retrieve.request.Resolved) and writes
its own score on each candidate: SQL the fused score, `rerank` the reranker's score and
the base score, `blend` the blended score and its terms, `boost` the final score. The
Retriever (app.retrieve.service) is their composition; reading a Context in bundle order
(app.retrieve.bundle) is another one, of the gather, compose and trace stages.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import psycopg
from psycopg.rows import dict_row

from app.db.rows import dataclass_row
from app.retrieve import hop as hop_module
from app.retrieve import rerank as rerank_module
from app.retrieve.blend import BUILT_IN, Profile
from app.retrieve.blend import blend as blend_terms
from app.retrieve.candidates import (
    Candidate,
    Filters,
    LeftOut,
    admitted,
    context_candidates,
    fetch_candidates,
    linked_fragments,
    list_floors,
    metadata_of,
    rule_matches,
    validity_left_out_query,
    version_metadata_query,
)
from app.retrieve.compose import Composition, compose_linked
from app.retrieve.compose import compose as compose_budget
from app.retrieve.config import PipelineConfig
from app.retrieve.dates import match_dates
from app.retrieve.features import term_coverage
from app.retrieve.learned import EXPLAINED, explain
from app.retrieve.query_vectors import QueryVectors
from app.retrieve.relevance import relevance
from app.retrieve.request import Resolved
from app.retrieve.rerank import Scorer
from app.retrieve.speakers import match_speaker
from app.retrieve.twins import mark_twins

MAX_RULE_CONTEXTS = 16
"""Contexts the workflow rules matching one request may bring (the bound of
service.context_candidates); further matching rules, in rule order, bring nothing."""
CONTEXT_BOOST = 0.5
"""`context_mode: boost`: a member of a named Context closes this share of the gap
between its blended score and 1 (0.4 becomes 0.7): lifted, never past a better fit."""


# ── gather: the candidates (one SQL call, more for named Contexts and workflow rules) ──


@dataclass(slots=True)
class Gathered:
    """The candidates stage's output: what the ranking starts from."""

    candidates: list[Candidate]
    """Every candidate, in fused order (as the SQL call returned them), then the pins
    outside both lists, then what rules brought that no list reached."""
    pinned: list[Candidate]
    """The pinned fragments the request sees, in pin order (earliest pin first)."""
    ruled: list[Candidate]
    """The members of the Contexts the workflow rules matching `touching` brought (not
    pinned), each with its rule (docs/adr/0022)."""
    rest: list[Candidate]
    """The candidates the ranking orders: neither pinned nor brought by a rule."""
    query_vectors: QueryVectors
    """The query's vector per namespace (empty when the request searched no dense list)."""


def usual_candidates(
    conn: psycopg.Connection, q: Resolved, vectors: QueryVectors, embedders: hop_module.Embedders | None = None
) -> list[Candidate]:
    """The fused lexical and dense lists, filtered in SQL (api.retrieve_candidates); when
    both lists were searched and hold conversation turns, with `embedders` (the query
    lane's models), a second hop over turns and their sessions' share (app.retrieve.hop: one
    more call of the same function); then conversation turns about a date the query names lifted
    (app.retrieve.dates)."""
    fused = fetch_candidates(
        conn, q.scope, q.query, vectors, q.k_lexical, q.k_dense, q.rrf_k, q.fusion, q.filters, q.models
    )
    if embedders is not None and q.k_lexical > 0 and q.k_dense > 0:

        def hop(filters: Filters, hop_vectors: QueryVectors) -> list[Candidate]:
            return fetch_candidates(
                conn, q.scope, q.query, hop_vectors, q.k_lexical, q.k_dense, q.rrf_k, q.fusion, filters, q.models
            )

        fused = hop_module.second_hop(q.filters, fused, vectors, embedders, hop)
    return match_dates(q.query, fused)


def context_members(
    conn: psycopg.Connection, q: Resolved, refs: list[str], vectors: QueryVectors, include_retired: bool = False
) -> list[Candidate]:
    """The members of the Context versions `refs`, scored against the query from the
    bundles alone, that pass the request's filters (`admitted`: SQL takes none for them)."""
    members = context_candidates(conn, q.scope, refs, q.query, vectors, q.rrf_k, q.fusion, include_retired, q.models)
    return [c for c in members if admitted(q.filters, c, q.now)]


def candidates(
    conn: psycopg.Connection, q: Resolved, vectors: QueryVectors, embedders: hop_module.Embedders | None = None
) -> list[Candidate]:
    """A request naming no Context: the usual candidates. Naming Contexts (docs/adr/0018):
    `restrict`, the bundles' members alone, scored from the bundles; `boost`, the usual
    candidates, each member among them marked with its Context, then the members the
    usual lists did not reach, in bundle order."""
    if not q.contexts:
        return usual_candidates(conn, q, vectors, embedders)
    members = context_members(conn, q, q.contexts, vectors, q.include_retired)
    if q.restricted:
        return members
    usual = usual_candidates(conn, q, vectors, embedders)
    by_id = {c.fragment_id: c for c in members}
    for c in usual:
        member = by_id.pop(c.fragment_id, None)
        if member is not None:
            c.context, c.context_ordinal = member.context, member.context_ordinal
    # After the usual candidates (pins among them keep their place after the ranked
    # ones: `gathered` splits them out), the members no list reached, in bundle order.
    return usual + [c for c in members if c.fragment_id in by_id]


def rule_candidates(conn: psycopg.Connection, q: Resolved, vectors: QueryVectors) -> list[Candidate]:
    """The members of the Contexts the workflow rules matching `touching` bring
    (docs/adr/0022), scored against the query from those bundles alone, each marked
    with the first rule (lowest id) that brought its Context. A rule whose Context
    the caller may not read matched nothing, as far as anyone can tell (SQL drops it).
    At most MAX_RULE_CONTEXTS Contexts, in rule order."""
    by_ref: dict[str, tuple[int, str]] = {}
    for m in rule_matches(conn, q.scope, q.touching):
        if m.ref not in by_ref and len(by_ref) < MAX_RULE_CONTEXTS:
            by_ref[m.ref] = (m.rule_id, m.name)
    if not by_ref:
        return []
    out = context_members(conn, q, list(by_ref), vectors)
    for c in out:
        assert c.context is not None
        c.rule, c.rule_name = by_ref[c.context]
    return out


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


def gathered(candidates: list[Candidate], ruled: list[Candidate], vectors: QueryVectors) -> Gathered:
    """Split the pins and what rules brought from the candidates the ranking orders.
    Pins take no part in the ranking (without any, it is exactly what it was); they get
    scores of their own only to show them. So do the fragments rules brought."""
    if ruled:
        candidates, ruled = merge_ruled(candidates, ruled)
    pinned = sorted((c for c in candidates if c.pin_id is not None), key=lambda c: c.pin_rank or 0)
    rest = [c for c in candidates if c.pin_id is None and c.rule is None] if pinned or ruled else candidates
    return Gathered(candidates, pinned, ruled, rest, vectors)


# ── rerank: the reranker's score (or the scaled fused score) of the head ──


@dataclass(slots=True)
class Reranked:
    """The rerank stage's output: the head, each candidate with its `base_score`."""

    gathered: Gathered
    ranked: list[Candidate]
    """The top `rerank_top` of `gathered.rest`, in the reranker's order (the fused order
    without a reranker)."""


def best_fused_score(config: PipelineConfig) -> float:
    """The fused score of a candidate ranked first by both sides."""
    return 2.0 / (config.rrf_k + 1) if config.fusion == "rrf" else 1.0


def rerank(q: Resolved, g: Gathered, reranker: Scorer | None, best_possible: float) -> Reranked:
    """The pins and rule-brought fragments are scored in one list with the head
    (app.retrieve.rerank.order), and every scored one gets its absolute relevance."""
    ranked = rerank_module.order(q.query, g.rest, q.rerank_top, reranker, best_possible, g.pinned + g.ruled)
    scored = ranked + g.pinned + g.ruled
    for c, coverage in zip(scored, term_coverage(q.query, scored).tolist()):
        c.relevance = relevance(c, coverage)
    return Reranked(g, ranked)


# ── blend: the ranking profile's terms and the blended score ──


@dataclass(slots=True)
class Blended:
    """The blend stage's output: each scored candidate with its `terms` and `blended`."""

    reranked: Reranked
    profile: Profile
    """The ranking profile the blend used (weights normalised)."""


def profile_of(q: Resolved, g: Gathered) -> Profile:
    """The profile the SQL call returned on its first row, with the request's half-life;
    the built-in one when there was no candidate to carry it. Read from whichever
    candidate carries it: a stage that reorders the list (a date lift, the second hop)
    may have moved that row down."""
    row = next((c.profile for c in g.candidates if c.profile is not None), None)
    override = q.request.freshness_halflife_days
    return Profile.from_row(row, override) if row else replace(BUILT_IN, halflife_override=override)


def blend(q: Resolved, r: Reranked) -> Blended:
    """docs/adr/0014: the ranked, pinned and rule-brought candidates."""
    profile = profile_of(q, r.gathered)
    blend_terms(r.ranked + r.gathered.pinned + r.gathered.ruled, profile, q.now)
    return Blended(r, profile)


# ── boost: the final score and the final order ──


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


def boost(q: Resolved, b: Blended) -> Ranking:
    """The final score is the blended one, but lifted for a conversation turn said by the
    speaker the query names (app.retrieve.speakers: the other turns scaled alike), and
    for a named Context's member in `boost` mode by CONTEXT_BOOST; the ranked candidates
    and the rule-brought ones are ordered by it (stable: candidates the blend ties keep the pipeline's order).
    The first EXPLAINED of that order, and of the pins and rule-brought ones, carry the
    learned reranker's reasons (app.retrieve.learned.explain)."""
    g, ranked = b.reranked.gathered, b.reranked.ranked
    for c in ranked + g.pinned + g.ruled:
        c.final_score = c.blended
    match_speaker(q.query, ranked)
    g.ruled.sort(key=lambda c: -(c.final_score or 0.0))
    if q.boosted:
        for c in ranked:
            if c.context is not None and c.final_score is not None:
                c.final_score += (1.0 - c.final_score) * CONTEXT_BOOST
    ranked.sort(key=lambda c: -(c.final_score or 0.0))
    mark_twins(ranked)
    # The trace explains what a reader sees first: the final order's, after the blend.
    explain(ranked[:EXPLAINED] + (g.pinned + g.ruled)[:EXPLAINED])
    return Ranking(g.candidates, ranked, g.pinned, g.query_vectors, b.profile, g.ruled)


# ── compose: the budget, linked fragments, the cited versions' metadata, and what
#    validity windows left out ──


@dataclass(slots=True)
class Composed:
    """The compose stage's output."""

    composition: Composition
    linked: list[Candidate]
    """Fragments composed by following a link (`expand_links`)."""
    metadata: dict[tuple[int, int], dict]
    """The stored metadata of each composed document version."""
    left_out: list[LeftOut] = field(default_factory=list)
    """What validity windows kept out (`left_out_query`)."""


def compose(conn: psycopg.Connection, q: Resolved, ranking: Ranking) -> Composed:
    """Pins, then rule-brought fragments, then the ranked ones (app.retrieve.compose),
    then what they cite when the request expands links; then, in one round trip, the
    composed versions' metadata and what validity windows left out (`cited_and_left_out`)."""
    request = q.request
    composition = compose_budget(
        ranking.ranked,
        request.budget_tokens,
        request.min_score,
        request.min_relevance,
        request.top_k,
        ranking.pinned,
        ranking.ruled,
    )
    linked: list[Candidate] = []
    if request.expand_links:
        linked = linked_fragments(conn, q.scope, [c.fragment_id for c in composition.included], q.filters)
        compose_linked(composition, linked, request.budget_tokens)
    metadata, left = cited_and_left_out(conn, q, ranking, composition.included)
    return Composed(composition, linked, metadata, left)


def left_out_query(q: Resolved, ranking: Ranking) -> tuple[str, dict] | None:
    """What validity windows kept out of this retrieval that it would otherwise have
    held (api.validity_left_out): pins it could not serve, and fragments that would
    have ranked in the lexical or dense list. An index probe for an org without
    windows or pins. A request keeping superseded fragments asks only for its pins
    (retired, or outside its filters: windows keep nothing out of it); None (nothing to
    ask) for one restricted to named Contexts (their members are filtered in Python:
    `admitted`)."""
    if q.restricted:
        return None
    if q.filters.include_superseded:
        return validity_left_out_query(
            q.scope, q.query, ranking.query_vectors, None, None, q.filters, q.models, limit=0
        )
    lexical_floor, dense_floors = list_floors(ranking.candidates, q.k_lexical, q.k_dense)
    return validity_left_out_query(
        q.scope, q.query, ranking.query_vectors, lexical_floor, dense_floors, q.filters, q.models
    )


def cited_and_left_out(
    conn: psycopg.Connection, q: Resolved, ranking: Ranking, included: list[Candidate]
) -> tuple[dict[tuple[int, int], dict], list[LeftOut]]:
    """The stored metadata of the composed document versions (api.version_metadata: read
    for the few fragments of an answer, not for every candidate, as metadata may be
    16 KiB a version) and `left_out_query`'s rows, sent together in one pipeline: one
    round trip where they took two, on every retrieval's path."""
    metadata_sql = version_metadata_query(included) if included else None
    left_sql = left_out_query(q, ranking)
    if metadata_sql is None and left_sql is None:
        return {}, []
    with (
        conn.cursor(row_factory=dict_row) as metadata_cur,
        conn.cursor(row_factory=dataclass_row(LeftOut)) as left_cur,
    ):
        with conn.pipeline():
            if metadata_sql is not None:
                metadata_cur.execute(*metadata_sql)
            if left_sql is not None:
                left_cur.execute(*left_sql)
        metadata = metadata_of(metadata_cur.fetchall()) if metadata_sql is not None else {}
        left = left_cur.fetchall() if left_sql is not None else []
    if q.filters.include_superseded:
        left = [x for x in left if x.reason in PIN_ONLY_REASONS]
    return metadata, left


PIN_ONLY_REASONS = frozenset({"retired", "filtered"})
"""Why a pin is not served that no validity window decides."""
