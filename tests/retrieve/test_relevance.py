"""Absolute relevance (app/retrieve/relevance.py): lexical evidence counts for the share of
the question a fragment holds, not for the rarity of one word it shares."""

from __future__ import annotations

import pytest

from app.retrieve.features import term_coverage
from app.retrieve.relevance import relevance
from tests.retrieve.test_features import candidate

GIT_PLUMBING = "Inspect objects with `git cat-file -p <sha>`: it prints a blob, a tree or a commit."


def scored(query: str, text: str, cosine: float, bm25: float) -> float:
    c = candidate(1, text, lexical=(1, bm25), dense=(1, cosine))
    (coverage,) = term_coverage(query, [c]).tolist()
    return relevance(c, coverage)


def test_one_rare_shared_word_is_not_an_answer_at_the_documented_floor() -> None:
    # The cosine and BM25 the newcomer's "teach my cat to sit" met `git cat-file` with.
    assert term_coverage("teach my cat to sit", [candidate(1, GIT_PLUMBING)]).tolist() == [pytest.approx(1 / 3)]
    assert scored("teach my cat to sit", GIT_PLUMBING, cosine=0.12, bm25=9.6) < 0.3
    # The same signals for a question the fragment holds every term of: an answer.
    assert scored("git cat-file", GIT_PLUMBING, cosine=0.12, bm25=9.6) >= 0.3


def test_coverage_counts_distinct_content_terms_and_a_stop_word_query_misses_none() -> None:
    c = candidate(1, "Rotate the journal when the storage volume is full.")
    assert term_coverage("rotate rotating journal storage quota", [c]).tolist() == [pytest.approx(3 / 4)]
    assert term_coverage("what is it", [c]).tolist() == [1.0]
    assert term_coverage("rotate", []).tolist() == []


def test_relevance_stays_in_the_unit_interval_and_rises_with_each_signal() -> None:
    low = scored("storage volume full", "Rotate the journal when the storage volume is full.", 0.2, 1.0)
    dense = scored("storage volume full", "Rotate the journal when the storage volume is full.", 0.6, 1.0)
    both = scored("storage volume full", "Rotate the journal when the storage volume is full.", 0.6, 8.5)
    assert 0.0 <= low < dense < both <= 1.0
    assert low == 0.0 and both == pytest.approx(1.0)
