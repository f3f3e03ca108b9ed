"""An absolute relevance score: the same number means the same thing for every query.

The fused score (docs/adr/0005) is relative: each side is divided by this query's best,
so even an unrelated query gets a top score near 1. Relevance instead maps the raw
signals onto fixed reference points, then blends them:

    dense   = clamp((cosine - 0.25) / (0.60 - 0.25))   cosine with the namespace's model
    lexical = clamp((bm25 - 2.0) / (8.0 - 2.0))         Okapi BM25, k1 = 1.2, b = 0.75
              * sqrt(coverage)                          the query's terms it holds, a share
    relevance = 0.6 * dense + 0.4 * lexical             (only the sides the request ran)

BM25 alone says how rare the matched words are, not how much of the question they are: one
rare word ("cat" of `git cat-file`, for "teach my cat to sit") scores like a full match.
Coverage (app.retrieve.features.term_coverage) is the share of the query's distinct
content terms the fragment holds. The points and the square root were chosen on the
development sets, asking each set's questions of its own corpus and of another set's
(docs/adr/0009-absolute-relevance.md, amendment of 2026-12-06; `python -m
app.eval.relevance_floor`): at a floor of 0.3 (`min_relevance`), 0.987 of the relevant
top hits stay, as before, and no question asked of an unrelated corpus keeps anything
(0.183 did). They belong to all-MiniLM-L6-v2: another embedding model needs its own.
"""

from __future__ import annotations

import math

from app.retrieve.candidates import Candidate

DENSE_FLOOR, DENSE_CEILING = 0.25, 0.60
"""Cosine at or below the floor: no semantic evidence; at or above the ceiling: full."""
LEXICAL_FLOOR, LEXICAL_CEILING = 2.0, 8.0
"""BM25 of a stray common-word match, and of a match on several rare query terms."""
DENSE_SHARE = 0.6
"""The dense side's share when both sides ran (lexical evidence alone is weaker)."""


def _clamp(value: float) -> float:
    return min(1.0, max(0.0, value))


def relevance(candidate: Candidate, coverage: float = 1.0) -> float:
    """In [0, 1]. A side the request did not run (k = 0), or that did not score this
    candidate (reciprocal rank fusion outside that side's top k), is left out and the
    other side counts alone. `coverage`: the share of the query's terms the candidate
    holds (features.term_coverage), which scales its lexical evidence."""
    parts: list[tuple[float, float]] = []
    if candidate.dense_similarity is not None:
        dense = (candidate.dense_similarity - DENSE_FLOOR) / (DENSE_CEILING - DENSE_FLOOR)
        parts.append((DENSE_SHARE, _clamp(dense)))
    if candidate.lexical_score is not None:
        lexical = (candidate.lexical_score - LEXICAL_FLOOR) / (LEXICAL_CEILING - LEXICAL_FLOOR)
        parts.append((1.0 - DENSE_SHARE, _clamp(lexical) * math.sqrt(_clamp(coverage))))
    if not parts:
        return 0.0
    return sum(weight * value for weight, value in parts) / sum(weight for weight, _ in parts)
