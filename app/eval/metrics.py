"""Ranking metrics, standard TREC / BEIR definitions (as pytrec_eval computes them).

- Relevance comes from qrels: a grade > 0 is relevant; grade 0 or absent is not.
- nDCG@k: DCG = sum over ranks i = 1..k of grade(doc_i) / log2(i + 1) (linear gain,
  log2 discount); the ideal DCG sorts *all* of the query's relevant grades, best
  first, and takes its top k.
- MRR@k: 1 / rank of the first relevant document within the top k, else 0.
- recall@k: relevant documents in the top k / all relevant documents of the query.
- A query with no relevant document in the qrels is skipped (it has no ideal DCG).

A ranking is a list of corpus ids, one per rank position: documents (a document counts
once, at its best fragment), or, for a set labelled per fragment, what each fragment
stands for (fragment_ranking).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from app.eval.beir import fragment_label

METRICS = ("ndcg@10", "mrr@10", "recall@10", "recall@100")


def dedupe(ranking: Sequence[str]) -> list[str]:
    """First occurrence of each document, in order (a document counts at its best rank)."""
    seen: set[str] = set()
    out: list[str] = []
    for doc in ranking:
        if doc not in seen:
            seen.add(doc)
            out.append(doc)
    return out


Span = tuple[str, int, int]
"""(corpus id, first line, last line) of one source of a fragment."""


def satisfies(spans: Sequence[Span], label: str) -> bool:
    """Whether a fragment with these sources' spans is what `label` names: a fragment
    label `ID#L<n>` wants a source of ID whose line range holds n, a document label
    any source of that document."""
    fragment = fragment_label(label)
    if fragment is None:
        return any(doc == label for doc, _, _ in spans)
    return any(doc == fragment[0] and start <= fragment[1] <= end for doc, start, end in spans)


def fragment_grade(spans: Sequence[Span], qrels: Mapping[str, int]) -> int:
    """A fragment's own grade: the best grade of the labels it satisfies (0: none); what
    training pairs drawn from a fragment-labelled set grade a candidate by."""
    return max((grade for label, grade in qrels.items() if satisfies(spans, label)), default=0)


def fragment_ranking(fragments: Sequence[tuple[str, Sequence[Span]]], qrels: Mapping[str, int]) -> list[str]:
    """Rank positions of a fragment list scored per fragment: each fragment (its own key,
    its sources' spans) is one position, standing for the best-graded relevant label it
    satisfies that no earlier fragment took, else for its own key (a miss). A fragment
    label `ID#L<n>` is satisfied by a fragment with a source of document ID whose line
    range holds n; a document label by any fragment of that document (only its first)."""
    wanted = [label for label, _ in sorted(relevant(qrels).items(), key=lambda item: (-item[1], item[0]))]
    taken: set[str] = set()
    out: list[str] = []
    for key, spans in fragments:
        stand = next((label for label in wanted if label not in taken and satisfies(spans, label)), key)
        taken.add(stand)
        out.append(stand)
    return out


def relevant(qrels: Mapping[str, int]) -> dict[str, int]:
    return {doc: grade for doc, grade in qrels.items() if grade > 0}


def ndcg_at_k(ranking: Sequence[str], qrels: Mapping[str, int], k: int) -> float:
    rel = relevant(qrels)
    ideal = sorted(rel.values(), reverse=True)[:k]
    idcg = sum(grade / math.log2(i + 2) for i, grade in enumerate(ideal))
    if idcg == 0:
        raise ValueError("nDCG is undefined for a query without relevant documents")
    dcg = sum(rel.get(doc, 0) / math.log2(i + 2) for i, doc in enumerate(dedupe(ranking)[:k]))
    return dcg / idcg


def mrr_at_k(ranking: Sequence[str], qrels: Mapping[str, int], k: int) -> float:
    rel = relevant(qrels)
    for i, doc in enumerate(dedupe(ranking)[:k]):
        if doc in rel:
            return 1.0 / (i + 1)
    return 0.0


def recall_at_k(ranking: Sequence[str], qrels: Mapping[str, int], k: int) -> float:
    rel = relevant(qrels)
    if not rel:
        raise ValueError("recall is undefined for a query without relevant documents")
    return len(rel.keys() & set(dedupe(ranking)[:k])) / len(rel)


def score_query(ranking: Sequence[str], qrels: Mapping[str, int]) -> dict[str, float] | None:
    """Every metric of METRICS for one query; None when the query has nothing relevant."""
    if not relevant(qrels):
        return None
    return {
        "ndcg@10": ndcg_at_k(ranking, qrels, 10),
        "mrr@10": mrr_at_k(ranking, qrels, 10),
        "recall@10": recall_at_k(ranking, qrels, 10),
        "recall@100": recall_at_k(ranking, qrels, 100),
    }


def mean(per_query: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """Macro average over queries (each query weighs the same)."""
    if not per_query:
        return {m: 0.0 for m in METRICS}
    return {m: sum(q[m] for q in per_query) / len(per_query) for m in METRICS}
