"""Every retrieval leaves a trace that explains each candidate's score (R-AUD-1)."""

from __future__ import annotations

import psycopg
from psycopg.rows import dict_row

from app.db.sql import json_text, scalar
from app.retrieve.candidates import Candidate, LeftOut
from app.retrieve.compose import Composition
from app.retrieve.usage_fold import UsageFolder


def candidate_entries(
    candidates: list[Candidate], ranked_ids: list[int], composition: Composition, linked: list[Candidate] | None = None
) -> list[dict]:
    """One entry per candidate, in fused order; `ranked_ids` are the reranked candidates
    in final order (a candidate's `final_rank` is its place there, null beyond
    `rerank_top`); `terms` are the blend's terms of a ranked or pinned candidate, which
    with the trace's pipeline.profile.weights give its final score. Readers get them
    through SQL, which
    keeps only the ranks, scores and fate of a candidate the reader may not read (an
    allow-list in sql/functions/50_traces.sql: a key added here is withheld from such
    readers unless it is added there)."""
    final_ranks = {fragment_id: rank for rank, fragment_id in enumerate(ranked_ids, start=1)}
    entries = [_entry(c, position, final_ranks, composition) for position, c in enumerate(candidates, start=1)]
    # Composed by following a link (expand_links): never ranked, so no fused rank.
    entries += [_entry(c, None, final_ranks, composition) for c in linked or []]
    return entries


def _entry(c: Candidate, fused_rank: int | None, final_ranks: dict[int, int], composition: Composition) -> dict:
    decision = composition.decisions.get(c.fragment_id)
    ranked = c.fragment_id in final_ranks
    return {
        "fragment_id": c.fragment_id,
        "fused_rank": fused_rank,
        "lexical_rank": c.lexical_rank,
        "lexical_score": c.lexical_score,
        "dense_rank": c.dense_rank,
        "dense_similarity": c.dense_similarity,
        "lexical_norm": c.lexical_norm,
        "dense_norm": c.dense_norm,
        "lexical_weight": c.lexical_weight,
        "dense_weight": c.dense_weight,
        "fused_score": c.fused_score,
        "date_match": c.date_match,
        "speaker_match": c.speaker_match,
        # A rank, not the twin's id: a reader who may read this fragment may not read that one.
        "twin_of_rank": final_ranks.get(c.twin_of) if c.twin_of is not None else None,
        "hop_score": c.hop_score,
        "session_score": c.session_score,
        "rerank_score": c.rerank_score,
        "freshness": c.terms["freshness"] if c.terms else None,
        "terms": c.terms if ranked else None,
        "authority": c.authority,
        "final_rank": final_ranks.get(c.fragment_id),
        "final_score": c.final_score if ranked else None,
        "relevance": c.relevance if ranked else None,
        "included": bool(decision and decision.included),
        "reason": decision.reason if decision else "beyond_rerank_top",
        "tokens": decision.tokens if decision else c.token_count,
        "source": c.source,
        "doc_id": c.doc_id,
        "doc_version": c.doc_version,
        "namespace": c.namespace,
        "chunker_version": c.chunker_version,
        "embedding_model": c.embedding_model,
        **({"pin_id": c.pin_id} if c.pin_id is not None else {}),
        **({"negative": True} if c.negative else {}),
        **({"rerank_detail": c.rerank_detail} if c.rerank_detail is not None else {}),
        **({"linked_from": c.linked_from, "link_type": c.link_type} if c.linked_from is not None else {}),
        **({"context": c.context} if c.context is not None else {}),
        **({"rule": c.rule, "rule_name": c.rule_name} if c.rule is not None else {}),
    }


def left_out_entries(left_out: list[LeftOut], candidates: list[Candidate]) -> list[dict]:
    """One entry per fragment the validity test kept out (api.validity_left_out), in its
    order (pins first): why (`reason`: superseded, expired, not_yet_valid; for a pin
    also retired or filtered), by what
    (`superseded_by`), and the place it would have had in each candidate list
    (`lexical_rank` among the lexical list's scores, `dense_rank` among its namespace's
    dense hits; null where it would not have ranked). Readers get them through SQL,
    redacted like the candidates (sql/functions/50_traces.sql)."""
    lexical = sorted(
        (c.lexical_score for c in candidates if c.lexical_rank is not None and c.lexical_score), reverse=True
    )
    dense: dict[str, list[float]] = {}
    for c in candidates:
        if c.dense_rank is not None and c.dense_similarity is not None:
            dense.setdefault(c.namespace, []).append(c.dense_similarity)
    entries = []
    for x in left_out:
        lexical_rank = (
            1 + sum(1 for s in lexical if s > x.lexical_score) if x.lexical_score and x.pin_id is None else None
        )
        ranked_dense = x.dense_similarity is not None and x.pin_id is None
        dense_rank = (
            1 + sum(1 for s in dense.get(x.namespace, []) if s > (x.dense_similarity or 0)) if ranked_dense else None
        )
        entries.append(
            {
                "fragment_id": x.fragment_id,
                **({"pin_id": x.pin_id} if x.pin_id is not None else {}),
                "included": False,
                "reason": x.reason,
                "lexical_rank": lexical_rank,
                "lexical_score": x.lexical_score,
                "dense_rank": dense_rank,
                "dense_similarity": x.dense_similarity,
                "superseded_by": x.superseded_by,
                "valid_from": x.valid_from.isoformat() if x.valid_from else None,
                "valid_until": x.valid_until.isoformat() if x.valid_until else None,
                "tokens": x.token_count,
                "source": x.source,
                "doc_id": x.doc_id,
                "doc_version": x.doc_version,
                "namespace": x.namespace,
            }
        )
    return entries


def record_trace(
    conn: psycopg.Connection,
    org_id: str,
    query: str,
    request: dict,
    pipeline: dict,
    entries: list[dict],
    duration_ms: float,
    query_vectors: dict[str, list[float]] | None = None,
    left_out: list[dict] | None = None,
    folder: UsageFolder | None = None,
) -> str:
    """Recorded for the principal bound to the transaction (the database stamps it),
    with the query vectors the retrieval searched with ({namespace: vector}; the
    database keeps one per distinct model), so SQL can run the query again
    (api.retrieve), and what validity windows left out (`left_out_entries`). When this
    write made a fold of the usage roll-ups due, `folder` is woken: it folds in a
    transaction of its own, never in this one (app.retrieve.usage_fold)."""
    with conn.cursor(row_factory=dict_row) as cur:
        # The setting is read after the insert's trigger ran: the subquery is scanned first.
        row = cur.execute(
            "select t.trace_id, current_setting('contexts.usage_fold_due', true) = 'on' as fold_due"
            " from (select service.record_trace(p_org_id => %(org)s, p_query => %(query)s,"
            " p_request => %(request)s, p_pipeline => %(pipeline)s, p_candidates => %(entries)s,"
            " p_duration_ms => %(duration_ms)s, p_query_vectors => %(vectors)s, p_left_out => %(left_out)s)"
            " as trace_id offset 0) t",
            {
                "org": org_id,
                "query": query,
                "request": json_text(request),
                "pipeline": json_text(pipeline),
                "entries": json_text(entries),
                "duration_ms": duration_ms,
                "vectors": json_text(distinct_vectors(query_vectors)) if query_vectors else None,
                "left_out": json_text(left_out) if left_out else None,
            },
        ).fetchone()
    assert row is not None  # the function returns the new id or raises
    if row["fold_due"] and folder is not None:
        folder.wake()
    return str(row["trace_id"])


def distinct_vectors(query_vectors: dict[str, list[float]]) -> dict[str, list[float]]:
    """One namespace per vector object. Namespaces sharing a model share one vector
    (app.retrieve.query_vectors hands them the same list) and the database stores a
    vector once per model, so the others would only cost parsing (~0.1 ms each). Equal
    values from two models (the same weights under two names) are both kept: each is
    stored under its own model."""
    seen: set[int] = set()
    out: dict[str, list[float]] = {}
    for namespace, vector in sorted(query_vectors.items()):
        if id(vector) not in seen:
            seen.add(id(vector))
            out[namespace] = vector
    return out


def get_trace(conn: psycopg.Connection, trace_id: str) -> dict:
    """The trace as the principal bound to `conn` may see it now (redacted in SQL; the
    withheld fields are listed under "redacted"). P0002 when it may not see it at all."""
    return scalar(conn, "select api.get_trace(p_trace_id => %(trace_id)s::uuid)", {"trace_id": trace_id})
