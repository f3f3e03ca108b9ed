"""The relevance floor's measurement (app/eval/relevance_floor.py): what each share counts."""

from __future__ import annotations

from app.eval.relevance_floor import PAIRS, Asked, shares


def test_shares_count_kept_right_answers_and_answered_unrelated_questions() -> None:
    asked = [
        Asked("scifact", "scifact", False, True, (0.9, 0.2)),  # right first, kept at 0.3
        Asked("scifact", "scifact", False, True, (0.25,)),  # right first, dropped at 0.3
        Asked("scifact", "scifact", False, False, (0.8,)),  # wrong first: not counted
        Asked("scifact", "cosqa", True, None, (0.1, 0.35)),  # unrelated, answered at 0.3
        Asked("scifact", "cosqa", True, None, ()),  # unrelated, nothing retrieved
        Asked("cacm", "cosqa", False, None, (0.31,)),  # related corpus
    ]
    (row,) = shares(asked, floors=(0.3,))
    assert row == {
        "floor": 0.3,
        "relevant_kept": 0.5,
        "unrelated_answered": 0.5,
        "related_answered": 1.0,
        "questions": {"relevant_first": 2, "unrelated": 2, "related": 1},
    }
    assert shares([], floors=(0.3,))[0]["relevant_kept"] is None


def test_every_set_is_asked_of_another_corpus() -> None:
    assert all(other != name and other in PAIRS for name, (other, _unrelated) in PAIRS.items())
