"""Twin fragments take one place at the head of a list, not two.

A library's sync and async clients, code generated from other code (httpcore's `_sync`
from its `_async`): the two copies say the same thing, score alike, and a question about
the behaviour gets both in its top five instead of the doc section or the function that
explains it. A ranked candidate is a twin of one ranked above it when their words, as
sets, with `async` and `await` and an `async` prefix of a word set aside, overlap by
Jaccard >= JACCARD and exactly one of the two is the async form (or the sets are equal):
its final score is scaled by FACTOR, and the trace names the twin above it by its final
rank (`twin_of_rank`).
Fragments alike for another reason are not twins: API references written from one
template differ in the very names a question asks for (measured: treating every pair
over JACCARD as twins cost gorilla-torchhub 0.002 nDCG@10). Only the head (HEAD
candidates) is compared, and only fragments of MIN_WORDS distinct words or more.
"""

from __future__ import annotations

import re
from functools import lru_cache

from app.retrieve.candidates import Candidate

HEAD = 20
JACCARD = 0.8
MIN_WORDS = 8
WORDS_CACHE = 2048
"""Texts whose word sets are kept between queries (a few KiB each, the text included)."""
FACTOR = 0.85
"""A twin's final score is FACTOR x its own: it moves past fragments up to 15% below it."""

_WORD = re.compile(r"\w+")
_VARIANT = frozenset({"async", "await"})


@lru_cache(maxsize=WORDS_CACHE)
def words(text: str) -> tuple[frozenset[str], bool]:
    """The text's words as a set, async forms set aside, and whether it had any. Kept
    per text as the reranker keeps its readings (app.text.stems.read): the same fragments
    come back query after query, and reading 20 of them cost about 0.9 ms a query."""
    out = set()
    variant = False
    for w in _WORD.findall(text):
        w = w.lower()
        if w in _VARIANT:
            variant = True
        elif w.startswith("async") and len(w) > 5:
            variant = True
            out.add(w[5:])
        else:
            out.add(w)
    return frozenset(out), variant


def twins(a: tuple[frozenset[str], bool], b: tuple[frozenset[str], bool]) -> bool:
    return a[0] == b[0] or (a[1] != b[1] and jaccard(a[0], b[0]) >= JACCARD)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0


def mark_twins(ranked: list[Candidate]) -> None:
    """Scale the final score of each twin among `ranked`'s first HEAD (in final order)
    and, when one was, put the list back in order (stable)."""
    kept: list[tuple[Candidate, tuple[frozenset[str], bool]]] = []
    scaled = False
    for c in ranked[:HEAD]:
        mine = words(c.text)
        if len(mine[0]) >= MIN_WORDS:
            twin = next((k for k, theirs in kept if twins(mine, theirs)), None)
            if twin is not None and c.final_score is not None:
                c.final_score *= FACTOR
                c.twin_of = twin.fragment_id
                scaled = True
                continue
        kept.append((c, mine))
    if scaled:
        ranked.sort(key=lambda c: -(c.final_score or 0.0))
