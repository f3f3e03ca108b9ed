"""Ranking metrics against hand-computed values (TREC / BEIR definitions)."""

from __future__ import annotations

import math

import pytest

from app.eval.metrics import mean, mrr_at_k, ndcg_at_k, recall_at_k, score_query


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
