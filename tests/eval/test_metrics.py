"""Ranking metrics against hand-computed values (TREC / BEIR definitions)."""

from __future__ import annotations

import math

import pytest

from app.eval.metrics import fragment_grade, fragment_ranking, mean, mrr_at_k, ndcg_at_k, recall_at_k, score_query


def test_single_relevant_document_at_rank_two():
    ranking, qrels = ["a", "b", "c"], {"b": 1}
    assert ndcg_at_k(ranking, qrels, 10) == pytest.approx(1 / math.log2(3))  # 0.6309
    assert mrr_at_k(ranking, qrels, 10) == 0.5
    assert recall_at_k(ranking, qrels, 10) == 1.0


def test_graded_gains_and_ideal_order():
    # DCG = 1/log2(2) + 0 + 2/log2(4) = 2; IDCG = 2/log2(2) + 1/log2(3) = 2.6309
    ranking, qrels = ["b", "x", "a"], {"a": 2, "b": 1, "c": 0}
    assert ndcg_at_k(ranking, qrels, 10) == pytest.approx(2 / (2 + 1 / math.log2(3)))
    assert ndcg_at_k(["a", "b"], qrels, 10) == pytest.approx(1.0)
    assert mrr_at_k(ranking, qrels, 10) == 1.0


def test_grade_zero_is_not_relevant():
    qrels = {"a": 0, "b": 1}
    assert mrr_at_k(["a", "b"], qrels, 10) == 0.5
    assert recall_at_k(["a"], qrels, 10) == 0.0


def test_ideal_dcg_counts_all_relevant_documents_up_to_k():
    qrels = {f"r{i}": 1 for i in range(12)}
    ranking = ["r0", "r1", "r2", "r3", "r4", "n0", "n1", "n2", "n3", "n4"]
    dcg = sum(1 / math.log2(i + 2) for i in range(5))
    idcg = sum(1 / math.log2(i + 2) for i in range(10))
    assert ndcg_at_k(ranking, qrels, 10) == pytest.approx(dcg / idcg)
    assert recall_at_k(ranking, qrels, 10) == pytest.approx(5 / 12)
    assert ndcg_at_k([f"r{i}" for i in range(12)], qrels, 10) == pytest.approx(1.0)


def test_cut_offs():
    ranking = [f"n{i}" for i in range(10)] + ["hit"] + [f"m{i}" for i in range(100)]
    qrels = {"hit": 1, "far": 1}
    assert mrr_at_k(ranking, qrels, 10) == 0.0
    assert ndcg_at_k(ranking, qrels, 10) == 0.0
    assert recall_at_k(ranking, qrels, 10) == 0.0
    assert recall_at_k(ranking, qrels, 100) == 0.5
    assert mrr_at_k(ranking, qrels, 11) == pytest.approx(1 / 11)


def test_a_document_counts_once_at_its_best_rank():
    # Two fragments of "a" must not push "b" down, nor count "a" twice.
    assert mrr_at_k(["a", "a", "b"], {"b": 1}, 10) == 0.5
    assert ndcg_at_k(["a", "a", "a"], {"a": 1}, 10) == pytest.approx(1.0)


def test_query_without_relevant_documents_is_skipped():
    assert score_query(["a"], {"a": 0}) is None
    with pytest.raises(ValueError):
        ndcg_at_k(["a"], {}, 10)


def test_mean_is_macro_average():
    one = score_query(["a"], {"a": 1})
    none = score_query(["x"], {"a": 1})
    averaged = mean([one, none])
    assert averaged["ndcg@10"] == pytest.approx(0.5)
    assert averaged["recall@100"] == pytest.approx(0.5)


def test_fragment_labels_score_each_fragment_as_its_own_position():
    """`PATH#L<n>`: only the fragment whose line range holds line n is the answer; each
    fragment takes one rank position; a plain id still means any fragment of it."""
    qrels = {"core.py#L40": 2, "docs/api.rst#L7": 1, "README.md": 1}
    fragments = [
        ("core.py#L1-L30", [("core.py", 1, 30)]),  # same file, other fragment: a miss
        ("core.py#L31-L60", [("core.py", 31, 60)]),  # holds line 40
        ("core.py#L55-L80", [("core.py", 55, 80)]),  # overlaps, does not hold 40: a miss
        ("docs/api.rst#L1-L20", [("docs/api.rst", 1, 20)]),
        ("README.md#L1-L9", [("README.md", 1, 9)]),
        ("README.md#L10-L19", [("README.md", 10, 19)]),  # the document counted already
    ]
    ranking = fragment_ranking(fragments, qrels)
    assert ranking == [
        "core.py#L1-L30",
        "core.py#L40",
        "core.py#L55-L80",
        "docs/api.rst#L7",
        "README.md",
        "README.md#L10-L19",
    ]
    assert mrr_at_k(ranking, qrels, 10) == 0.5
    dcg = 2 / math.log2(3) + 1 / math.log2(5) + 1 / math.log2(6)
    assert ndcg_at_k(ranking, qrels, 10) == pytest.approx(dcg / (2 + 1 / math.log2(3) + 1 / math.log2(4)))
    # Whole-file scoring would have counted the first fragment as the answer.
    assert mrr_at_k(["core.py"], {"core.py": 2}, 10) == 1.0


def test_a_fragment_stands_for_its_best_label_and_near_duplicates_for_each_source():
    qrels = {"a.py#L5": 1, "a.py#L8": 2, "b.py#L3": 1}
    # One fragment holds both lines of a.py: it stands for the better grade; a
    # near-duplicate fragment with a source in b.py satisfies b.py's label too.
    fragments = [("a.py#L1-L10", [("a.py", 1, 10)]), ("x#1", [("c.py", 1, 4), ("b.py", 1, 4)])]
    assert fragment_ranking(fragments, qrels) == ["a.py#L8", "b.py#L3"]
    assert recall_at_k(fragment_ranking(fragments, qrels), qrels, 10) == pytest.approx(2 / 3)

    # A candidate's own grade, for training pairs: its best satisfied label, else 0.
    assert fragment_grade([("a.py", 1, 10)], qrels) == 2
    assert fragment_grade([("a.py", 6, 7)], qrels) == 0
    assert fragment_grade([("c.py", 1, 4), ("b.py", 1, 4)], qrels) == 1
