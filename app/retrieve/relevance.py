"""An absolute relevance score: the same number means the same thing for every query.

The fused score (docs/adr/0005) is relative: each side is divided by this query's best,
so even an unrelated query gets a top score near 1. Relevance instead maps the raw
signals onto fixed reference points, then blends them:

    dense   = clamp((cosine - 0.30) / (0.60 - 0.30))   cosine with the namespace's model
    lexical = clamp((bm25 - 2.0) / (10.0 - 2.0))        Okapi BM25, k1 = 1.2, b = 0.75
    relevance = 0.6 * dense + 0.4 * lexical             (only the sides the request ran)

The points are where unrelated top hits stop and clearly relevant ones start with
all-MiniLM-L6-v2 on the test corpus (docs/adr/0009-absolute-relevance.md has the
figures): a floor of 0.3 (`min_relevance`) kept every relevant top hit there and no
unrelated one. Another embedding model needs its own points.
"""

from __future__ import annotations

from app.retrieve.candidates import Candidate

DENSE_FLOOR, DENSE_CEILING = 0.30, 0.60
"""Cosine at or below the floor: no semantic evidence; at or above the ceiling: full."""
LEXICAL_FLOOR, LEXICAL_CEILING = 2.0, 10.0
"""BM25 of a stray common-word match, and of a match on several rare query terms."""
DENSE_SHARE = 0.6
"""The dense side's share when both sides ran (lexical evidence alone is weaker)."""


def _clamp(value: float) -> float:
    return min(1.0, max(0.0, value))


def relevance(candidate: Candidate) -> float:
    """In [0, 1]. A side the request did not run (k = 0), or that did not score this
    candidate (reciprocal rank fusion outside that side's top k), is left out and the
    other side counts alone."""
    parts: list[tuple[float, float]] = []
    if candidate.dense_similarity is not None:
        dense = (candidate.dense_similarity - DENSE_FLOOR) / (DENSE_CEILING - DENSE_FLOOR)
        parts.append((DENSE_SHARE, _clamp(dense)))
    if candidate.lexical_score is not None:
        lexical = (candidate.lexical_score - LEXICAL_FLOOR) / (LEXICAL_CEILING - LEXICAL_FLOOR)
        parts.append((1.0 - DENSE_SHARE, _clamp(lexical)))
    if not parts:
        return 0.0
    return sum(weight * value for weight, value in parts) / sum(weight for weight, _ in parts)
