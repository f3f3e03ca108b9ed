"""R-RET-1: lexical and dense candidates and their fusion (R-RET-2), in one SQL call."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg

from app.db.rows import dataclass_row
from app.db.sql import json_text
from app.scope import Scope


@dataclass(slots=True)
class Candidate:
    fragment_id: int
    lexical_rank: int | None
    lexical_score: float | None
    dense_rank: int | None
    dense_similarity: float | None
    fused_score: float
    doc_id: int
    doc_version: int
    path: str
    anchor: str
    repo_id: str | None
    namespace: str
    kind: str
    owner: str
    heading_path: list[str]
    symbol: str | None
    text: str
    token_count: int
    chunker_version: str
    embedding_model: str | None
    updated_at: datetime
    lexical_norm: float | None = None
    """BM25 score over the query's best BM25 score (weighted fusion)."""
    dense_norm: float | None = None
    """Cosine over the best cosine of the same model (weighted fusion)."""
    lexical_weight: float | None = None
    dense_weight: float | None = None
    """Weighted fusion: fused_score = lexical_weight * lexical_norm + dense_weight * dense_norm."""
    negative: bool = False
    """An anti-pattern or known trap (data.fragments.negative): "do not do this"."""
    pin_id: int | None = None
    """The pin that makes this fragment composed first (null: not pinned in this scope)."""
    pin_rank: int | None = None
    """1 for the earliest visible pin: the order pins are composed in."""
    persona_similarity: float | None = None
    """Cosine to the centroid of the request's persona's own fragments, floored at 0
    (null when the profile gives the persona term no weight)."""
    authority: float | None = None
    """Citation authority in [0, 1] (data.fragment_authority; 0: nothing cites it; None
    counts as 0)."""
    authority_refreshed_at: datetime | None = None
    """When that authority was computed (null: never refreshed)."""
    valid_from: datetime | None = None
    valid_until: datetime | None = None
    """The fragment's validity window (sql/functions/48_validity.sql; null: unbounded)."""
    reading: bytes | None = None
    """Its text as the learned reranker reads it, written at ingest (data.fragments.reading,
    app.text.stems.reading); null: read from the text when needed."""
    profile: dict | None = None
    """The ranking profile in effect (data._ranking_profile), on the first row only."""
    # The fields so far are the columns of api.retrieve_candidates, and with the next two
    # those of service.context_candidates. Rows are built by column name (app.db.rows); the
    # same order only makes that cheaper (tests/retrieve/test_rows.py).
    context: str | None = None
    """The Context version (`ctx_<id>@<version>`) that brought this fragment, when the
    request named Contexts (service.context_candidates)."""
    context_ordinal: int | None = None
    """Its place in that version (1: first)."""
    linked_from: int | None = None
    link_type: str | None = None
    """A fragment composed by following a link (`expand_links`): the included fragment
    citing it, and how (api.linked_fragments)."""
    rule: int | None = None
    rule_name: str | None = None
    """The workflow rule whose Context brought it (a request `touching` files matched it)."""
    date_match: str | None = None
    """The day or month the query names that this conversation turn is about, when fusion's
    score was lifted for it (app.retrieve.dates)."""
    speaker_match: str | None = None
    """The speaker the query names who said this conversation turn, when its final score
    was lifted for it (app.retrieve.speakers)."""
    twin_of: int | None = None
    """The fragment ranked above this one whose words it repeats, when its final score was
    scaled for it (app.retrieve.twins)."""
    hop_score: float | None = None
    """A conversation turn's similarity to the query's vector moved toward the best turns,
    over the best such similarity (0: the hop did not find it), when the second hop ran:
    a share of its fused score (app.retrieve.hop)."""
    session_score: float | None = None
    """The best fused score among the listed turns of this turn's session, over the best
    of any session, when the second hop ran: a share of its fused score (app.retrieve.hop)."""
    terms: dict[str, float] | None = None
    """Each term of the blended score (app.retrieve.blend), set for ranked candidates."""
    # The scores, one field each, in the order the stages set them (app.retrieve.stages):
    # rerank -> base_score -> blended -> final_score.
    rerank_score: float | None = None
    """The reranker's score, in [0, 1] (None without a reranker, or beyond rerank_top)."""
    rerank_detail: dict | None = None
    """The learned reranker's view of this candidate (trace): its feature values and the
    largest contributions to its raw score, set for the first of the final order
    (app.retrieve.learned.explain)."""
    rerank_row: tuple[Any, int] | None = None
    """The learned reranker's scoring call and this candidate's row in it, which
    `rerank_detail` is computed from."""
    base_score: float | None = None
    """The blend's relevance term (`terms["rerank"]`): `rerank_score`, or without a
    reranker the fused score over the best possible one (app.retrieve.rerank.order)."""
    blended: float | None = None
    """The blend of the base score with freshness, authority, pin and persona
    (app.retrieve.blend), in [0, 1]."""
    final_score: float | None = None
    """What the ranking orders by, composition's `min_score` tests and a response shows:
    `blended`, lifted for a named Context's member in `boost` mode (app.retrieve.stages)."""
    relevance: float | None = None
    """Absolute relevance (app.retrieve.relevance), set for the ranked candidates."""

    @property
    def source(self) -> str:
        return f"{self.path}#{self.anchor}" if self.anchor else self.path


@dataclass(frozen=True, slots=True)
class Filters:
    """Optional narrowing of the candidates (api.retrieve_candidates' filter arguments)."""

    path_prefix: str | None = None
    kinds: list[str] | None = None
    updated_since: datetime | None = None
    updated_until: datetime | None = None
    negatives: str = "include"
    """include, only or exclude negative fragments (anti-patterns)."""
    as_of: datetime | None = None
    """Keep fragments current at this time (None: now)."""
    include_superseded: bool = False
    """Keep fragments outside their validity window too."""


NO_FILTERS = Filters()


def scope_args(scope: Scope) -> dict:
    """A scope as the named arguments of the api functions take it (p_org_id => %(org)s, ...)."""
    return {"org": scope.org_id, "repo": scope.repo_id, "persona": scope.persona_id, "session": scope.session_id}


def filter_args(filters: Filters) -> dict:
    """The filters api.retrieve_candidates and api.validity_left_out share, by name."""
    return {
        "path_prefix": filters.path_prefix,
        "kinds": filters.kinds,
        "updated_since": filters.updated_since,
        "updated_until": filters.updated_until,
        "negatives": filters.negatives,
        "as_of": filters.as_of,
    }


def admitted(filters: Filters, c: Candidate, now: datetime) -> bool:
    """The filters of api.retrieve_candidates, for the members of named Contexts only.

    The usual candidates are filtered in SQL alone (before each list's top k is cut, so
    a filter never leaves a list short). This test is not a second copy of that one for
    the same rows: service.context_candidates takes no filter arguments (a bundle is fetched
    whole, and read by reference it shows every member, expired ones too), so a
    request's path, kind, date, negative and validity filters reach the members of the
    Contexts it names, or that its workflow rules bring, only here, after the fetch.
    Validity is tested at the request's `as_of`, else at `now` (the retrieval's instant,
    where SQL reads its statement time)."""
    if filters.path_prefix is not None and not c.path.startswith(filters.path_prefix):
        return False
    if filters.kinds is not None and c.kind not in filters.kinds:
        return False
    if filters.updated_since is not None and c.updated_at < filters.updated_since:
        return False
    if filters.updated_until is not None and c.updated_at >= filters.updated_until:
        return False
    if filters.negatives != "include" and c.negative != (filters.negatives == "only"):
        return False
    if not filters.include_superseded:
        at = filters.as_of or now
        if (c.valid_from is not None and c.valid_from > at) or (c.valid_until is not None and c.valid_until <= at):
            return False
    return True


def tagged(query_embeddings: dict[str, list[float]], models: dict[str, str] | None) -> dict:
    """The query vectors as SQL takes them: with `models`, the model each namespace's
    vector came from under "_models", which SQL checks against the generation it
    searches (data._query_vectors: 55000 after a promotion)."""
    sent: dict = dict(query_embeddings)
    if models and query_embeddings:
        sent["_models"] = {ns: name for ns, name in models.items() if ns in query_embeddings}
    return sent


def context_candidates(
    conn: psycopg.Connection,
    scope: Scope,
    refs: list[str],
    query: str | None,
    query_embeddings: dict[str, list[float]],
    rrf_k: int,
    fusion: dict,
    include_retired: bool = False,
    models: dict[str, str] | None = None,
    by_reference: bool = False,
) -> list[Candidate]:
    """The members of the named Context versions the caller may read now, scored against
    `query` from the bundles alone (service.context_candidates); bundle order without a
    query. A request may name only Contexts within its `scope`; `by_reference` reads
    one as such (GET /contexts/{ref}), where only the org of `scope` counts."""
    with conn.cursor(row_factory=dataclass_row(Candidate)) as cur:
        cur.execute(
            "select * from service.context_candidates(p_org_id => %(org)s, p_refs => %(refs)s, p_query => %(query)s,"
            " p_query_embeddings => %(vectors)s::jsonb, p_fusion => %(fusion)s::jsonb, p_rrf_k => %(rrf_k)s,"
            " p_include_retired => %(retired)s, p_repo_id => %(repo)s, p_persona_id => %(persona)s,"
            " p_session_id => %(session)s, p_scoped => %(scoped)s)",
            {
                **scope_args(scope),
                "refs": refs,
                "query": query,
                "vectors": json_text(tagged(query_embeddings, models)),
                "fusion": json_text(fusion),
                "rrf_k": rrf_k,
                "retired": include_retired,
                "scoped": not by_reference,
            },
        )
        return cur.fetchall()


@dataclass(frozen=True, slots=True)
class RuleMatch:
    """A workflow rule matching a touched entry, and the Context version it brings for
    the caller (api.rule_matches)."""

    rule_id: int
    name: str
    ref: str


def rule_matches(conn: psycopg.Connection, scope: Scope, touching: list[str]) -> list[RuleMatch]:
    with conn.cursor(row_factory=dataclass_row(RuleMatch)) as cur:
        cur.execute(
            "select * from api.rule_matches(p_org_id => %(org)s, p_repo_id => %(repo)s, p_touching => %(touching)s)",
            {"org": scope.org_id, "repo": scope.repo_id, "touching": touching},
        )
        return cur.fetchall()


def fetch_candidates(
    conn: psycopg.Connection,
    scope: Scope,
    query: str,
    query_embeddings: dict[str, list[float]],
    k_lexical: int,
    k_dense: int,
    rrf_k: int,
    fusion: dict,
    filters: Filters = NO_FILTERS,
    models: dict[str, str] | None = None,
) -> list[Candidate]:
    """`fusion` is the p_fusion object of api.retrieve_candidates (method and weights);
    `models`, the model each namespace's query vector came from ({"prose": name}), which
    SQL checks against the generation it searches (data._query_vectors)."""
    with conn.cursor(row_factory=dataclass_row(Candidate)) as cur:
        cur.execute(
            "select * from api.retrieve_candidates(p_org_id => %(org)s, p_query => %(query)s,"
            " p_query_embeddings => %(vectors)s::jsonb, p_repo_id => %(repo)s, p_persona_id => %(persona)s,"
            " p_session_id => %(session)s, p_k_lexical => %(k_lexical)s, p_k_dense => %(k_dense)s,"
            " p_rrf_k => %(rrf_k)s, p_fusion => %(fusion)s::jsonb, p_path_prefix => %(path_prefix)s,"
            " p_kinds => %(kinds)s, p_updated_since => %(updated_since)s, p_updated_until => %(updated_until)s,"
            " p_negatives => %(negatives)s, p_as_of => %(as_of)s, p_include_superseded => %(include_superseded)s)",
            {
                **scope_args(scope),
                "query": query,
                "vectors": json_text(tagged(query_embeddings, models)),
                "k_lexical": k_lexical,
                "k_dense": k_dense,
                "rrf_k": rrf_k,
                "fusion": json_text(fusion),
                **filter_args(filters),
                "include_superseded": filters.include_superseded,
            },
        )
        return cur.fetchall()


def linked_fragments(
    conn: psycopg.Connection, request_scope: Scope, fragment_ids: list[int], filters: Filters
) -> list[Candidate]:
    """The fragments those cite, one hop, in the scope and current (api.linked_fragments)."""
    if not fragment_ids:
        return []
    with conn.cursor(row_factory=dataclass_row(Candidate)) as cur:
        cur.execute(
            "select * from api.linked_fragments(p_org_id => %(org)s, p_fragment_ids => %(ids)s,"
            " p_repo_id => %(repo)s, p_persona_id => %(persona)s, p_session_id => %(session)s,"
            " p_as_of => %(as_of)s, p_include_superseded => %(include_superseded)s)",
            {
                **scope_args(request_scope),
                "ids": fragment_ids,
                "as_of": filters.as_of,
                "include_superseded": filters.include_superseded,
            },
        )
        return cur.fetchall()


@dataclass(slots=True)
class LeftOut:
    """A fragment the validity test kept out of a retrieval (api.validity_left_out): a pin
    the request sees (pin_id set), or a fragment that would have ranked."""

    fragment_id: int
    pin_id: int | None
    reason: str
    """superseded, expired or not_yet_valid (at the request's as_of); for a pin also
    retired (its text no longer live) or filtered (outside the request's filters)."""
    lexical_score: float | None
    dense_similarity: float | None
    namespace: str
    doc_id: int | None
    doc_version: int | None
    path: str | None
    anchor: str | None
    token_count: int
    valid_from: datetime | None
    valid_until: datetime | None
    superseded_by: list[dict]
    """[{doc_id, path, evidence}]: the live documents superseding it."""

    @property
    def source(self) -> str | None:
        if self.path is None:
            return None
        return f"{self.path}#{self.anchor}" if self.anchor else self.path


LEFT_OUT_LIMIT = 20
"""Fragments a trace names as left out by validity windows (the strongest first)."""


def validity_left_out_query(
    scope: Scope,
    query: str,
    query_embeddings: dict[str, list[float]],
    lexical_floor: float | None,
    dense_floors: dict[str, float] | None,
    filters: Filters = NO_FILTERS,
    models: dict[str, str] | None = None,
    limit: int = LEFT_OUT_LIMIT,
) -> tuple[str, dict]:
    """What the validity test kept out of a retrieval that it would otherwise have held
    (api.validity_left_out), as a statement and its parameters (rows: LeftOut): the pins
    it sees whose fragment is not current, then the fragments that would have ranked in
    a list (a score at or above the floor: the list's last score when it is full; None
    skips a side). Sent in one pipeline with the metadata's statement
    (app.retrieve.stages.cited_and_left_out)."""
    return (
        "select * from api.validity_left_out(p_org_id => %(org)s, p_query => %(query)s,"
        " p_query_embeddings => %(vectors)s::jsonb, p_repo_id => %(repo)s, p_persona_id => %(persona)s,"
        " p_session_id => %(session)s, p_lexical_floor => %(lexical_floor)s,"
        " p_dense_floors => %(dense_floors)s::jsonb, p_path_prefix => %(path_prefix)s, p_kinds => %(kinds)s,"
        " p_updated_since => %(updated_since)s, p_updated_until => %(updated_until)s,"
        " p_negatives => %(negatives)s, p_as_of => %(as_of)s, p_limit => %(limit)s)",
        {
            **scope_args(scope),
            "query": query,
            "vectors": json_text(tagged(query_embeddings, models)),
            "lexical_floor": lexical_floor,
            "dense_floors": None if dense_floors is None else json_text(dense_floors),
            **filter_args(filters),
            "limit": limit,
        },
    )


def list_floors(
    candidates: list[Candidate], k_lexical: int, k_dense: int
) -> tuple[float | None, dict[str, float] | None]:
    """What a fragment left out of the candidate lists needed to rank in them: the
    lexical list's last BM25 when the list is full (else any match: 0), and per
    namespace the last cosine of its dense hits when the dense list is full (else any);
    None for a list not searched."""
    lexical = [c.lexical_score for c in candidates if c.lexical_rank is not None and c.lexical_score is not None]
    lexical_floor = None if k_lexical == 0 else (min(lexical) if len(lexical) >= k_lexical else 0.0)
    if k_dense == 0:
        return lexical_floor, None
    dense = [c for c in candidates if c.dense_rank is not None and c.dense_similarity is not None]
    floors: dict[str, float] = {}
    if len(dense) >= k_dense:
        for c in dense:
            assert c.dense_similarity is not None
            floors[c.namespace] = min(floors.get(c.namespace, c.dense_similarity), c.dense_similarity)
    return lexical_floor, floors


def version_metadata_query(candidates: list[Candidate]) -> tuple[str, dict]:
    """The stored metadata of the document versions these candidates are cited from
    (api.version_metadata), as a statement and its parameters; its rows are read with
    `metadata_of`. Asked for the few fragments of an answer, not for every candidate
    (metadata may be 16 KiB a version)."""
    return (
        "select doc_id, version, metadata from api.version_metadata(p_doc_ids => %(doc_ids)s,"
        " p_versions => %(versions)s)",
        {"doc_ids": [c.doc_id for c in candidates], "versions": [c.doc_version for c in candidates]},
    )


def metadata_of(rows: list[dict]) -> dict[tuple[int, int], dict]:
    """{(doc_id, version): metadata} from the rows of `version_metadata_query`."""
    return {(row["doc_id"], row["version"]): row["metadata"] for row in rows}
