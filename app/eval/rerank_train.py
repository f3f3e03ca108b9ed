"""Training and held-out validation of the learned reranker (docs/adr/0015).

Two kinds of model over app.retrieve.features, on the rows app.eval.rerank_data
collected: `linear` (the default and shipped kind), a logistic regression on pairs
(a relevant and an unrelated candidate of one query) of features standardized within
each list; and `lambdamart`, LightGBM LambdaMART over the raw features. Reproducible:
fixed seeds, deterministic=True, one thread, rows in a fixed order; the same files give
the same model text (and version).

Validation holds out one set (or one family of sets) at a time, trains on the rest,
and scores the held-out queries exactly as the `full` stage does: the reranked head
(calibrated probability, then the blend with the built-in profile), then the rest of
the fused list, mapped to documents, nDCG@10.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from statistics import mean
from typing import Any

import numpy as np

from app.eval.rerank_data import QueryRow, family_of
from app.retrieve import features, learned
from app.retrieve.blend import BUILT_IN
from app.retrieve.rerank import base_score
from app.text.stems import TEXT_CHARS

FEATURES = features.FEATURES
"""The columns a LambdaMART model is trained on."""
LINEAR_FEATURES = (
    "fused_ratio",
    "fused_rr",
    "dense_ratio",
    "lexical_ratio",
    "coverage_idf",
    "bigram_coverage",
    "proximity",
    "identifier_match",
    "feedback_similarity",
    "kind_definition",
    "kind_declaration",
    "kind_imports",
    "kind_test",
    "kind_explaining",
    "kind_reference",
    "kind_turn",
    "question_non_answer",
    "name_definition",
    "head_coverage_idf",
)
"""The columns of the linear model: the first stage's own evidence relative to the
list, the text evidence it ignores (in the text, and in the path, heading path and
symbol: on mixed repositories the answer's name matches the question more often than
the wrong first candidate's), each with one meaning on every corpus, and what
kind of fragment each candidate is (app.retrieve.kinds; the query's kind is constant
within a list, so it enters through the two pair columns). Left out: raw magnitudes
(BM25, cosine, lengths), query-level values (constant within a list, so 0 once
standardized), `is_code`, which on the development sets mostly says which corpus a list
came from (with it, held-out cosqa and torchhub lost up to 0.014), and the document
columns (`doc_best_fused_rr`, `doc_fragments`): trained on fragment-level labels they
lifted the answer's neighbours in its file, and held out the model did better without
them (ADR 0015, seventh amendment)."""
KINDS = ("linear", "lambdamart")
KIND = "linear"
LINEAR_PARAMS: dict = {"C": 0.1, "pairs_per_query": 200, "seed": 7, "graded": True}
"""Inverse L2 strength, pairs sampled per query (with replacement), sampling seed, and
which pairs: `graded`, any two candidates of different grades (the better one first:
a fragment-labelled answer over the doc section that merely references it); else a
relevant and an unrelated one."""

PARAMS: dict = {
    "objective": "lambdarank",
    "learning_rate": 0.05,
    "num_leaves": 7,
    "min_data_in_leaf": 200,
    "feature_fraction": 0.8,
    "lambda_l2": 1.0,
    "lambdarank_truncation_level": 20,
    "num_threads": 1,
    "deterministic": True,
    "force_row_wise": True,
    "seed": 7,
    "verbosity": -1,
}
ROUNDS = 100
BALANCE = True
"""Weigh every set the same (else every query: the largest sets would dominate)."""


@dataclass(slots=True)
class Matrix:
    x: np.ndarray
    y: np.ndarray
    groups: list[int]
    weights: np.ndarray
    """Per row: every set weighs the same in total, whatever its number of queries."""


def featurize(rows: Sequence[QueryRow]) -> list[np.ndarray]:
    """Every feature of every head candidate, per row (computed once for all folds)."""
    return [np.asarray(features.extract(row.query, row.head), dtype=np.float64) for row in rows]


def columns_of(kind: str) -> tuple[str, ...]:
    if kind not in KINDS:
        raise ValueError(f"unknown model kind {kind!r} (expected one of {', '.join(KINDS)})")
    return LINEAR_FEATURES if kind == "linear" else FEATURES


def matrix(rows: Sequence[QueryRow], xs: Sequence[np.ndarray], columns: Sequence[str] = FEATURES) -> Matrix:
    keep = [features.FEATURES.index(c) for c in columns]
    kept = [(row, x) for row, x in zip(rows, xs) if row.head]
    per_set = Counter(row.dataset for row, _ in kept)
    share = len(kept) / len(per_set)
    return Matrix(
        np.concatenate([x[:, keep] for _, x in kept]),
        np.concatenate([np.asarray(row.grades, dtype=np.int32) for row, _ in kept]),
        [len(row.head) for row, _ in kept],
        np.concatenate([np.full(len(row.head), share / per_set[row.dataset]) for row, _ in kept]),
    )


def fit(data: Matrix, columns: Sequence[str], params: dict | None = None, rounds: int = ROUNDS) -> Any:
    import lightgbm as lgb

    train = lgb.Dataset(
        data.x,
        label=data.y,
        group=data.groups,
        weight=data.weights if BALANCE else None,
        feature_name=list(columns),
        free_raw_data=False,
    )
    return lgb.train(params or PARAMS, train, num_boost_round=rounds)


def fit_linear(data: Matrix, params: dict | None = None) -> learned.LinearScorer:
    """Logistic regression on feature differences of (better, worse) pairs within a list
    (LINEAR_PARAMS: any two grades, or relevant and unrelated), features standardized
    per list, no intercept (a pair and its mirror are both given, so the classes
    balance); each pair weighs its set's row weight."""
    from sklearn.linear_model import LogisticRegression
    from threadpoolctl import threadpool_limits

    p = LINEAR_PARAMS | (params or {})
    rng = np.random.default_rng(p["seed"])
    k = int(p["pairs_per_query"])
    diffs, weights = [], []
    start = 0
    for size in data.groups:
        x = features.standardized(data.x[start : start + size])
        y = data.y[start : start + size]
        weight = float(data.weights[start])
        start += size
        if p.get("graded"):
            better, worse = np.nonzero(y[:, None] > y[None, :])
            if len(better) == 0:
                continue
            pick = rng.choice(len(better), k)
            diffs.append(x[better[pick]] - x[worse[pick]])
        else:
            relevant, unrelated = np.flatnonzero(y > 0), np.flatnonzero(y == 0)
            if len(relevant) == 0 or len(unrelated) == 0:
                continue
            diffs.append(x[rng.choice(relevant, k)] - x[rng.choice(unrelated, k)])
        weights.append(np.full(k, weight if BALANCE else 1.0))
    if not diffs:
        raise ValueError("no query has both a relevant and an unrelated candidate: nothing to learn")
    d, w = np.concatenate(diffs), np.concatenate(weights)
    model = LogisticRegression(C=p["C"], fit_intercept=False, max_iter=2000)
    with threadpool_limits(1):  # one BLAS thread: the same sums in the same order on any machine
        model.fit(np.concatenate([d, -d]), np.r_[np.ones(len(d)), np.zeros(len(d))], sample_weight=np.r_[w, w])
    return learned.LinearScorer(model.coef_[0])


def predict_lists(model: Any, data: Matrix) -> np.ndarray:
    """Raw scores, one list at a time (a linear model standardizes within the list)."""
    out, start = [], 0
    for size in data.groups:
        out.append(model.predict(data.x[start : start + size], num_threads=1))
        start += size
    return np.concatenate(out) if out else np.zeros(0)


def calibrate(raw: np.ndarray, labels: np.ndarray, iterations: int = 50) -> tuple[float, float]:
    """Logistic fit P(relevant) = 1 / (1 + exp(-(a * raw + b))) by Newton's method, each step
    halved until it lowers the log-loss (without that, raw scores spread over more than a
    few units made the steps overshoot and diverge: a and b in the millions, every
    probability 0 or 1, and a held-out list left in the fused order or shuffled by ties)."""
    y = (labels > 0).astype(np.float64)

    def loss(a: float, b: float) -> float:
        z = a * raw + b
        return float(np.sum(np.logaddexp(0.0, z) - y * z))

    a, b = 1.0, 0.0
    current = loss(a, b)
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(np.clip(-(a * raw + b), -500.0, 500.0)))
        w = p * (1.0 - p) + 1e-9
        g = np.array([np.sum((p - y) * raw), np.sum(p - y)])
        h = np.array([[np.sum(w * raw * raw), np.sum(w * raw)], [np.sum(w * raw), np.sum(w)]])
        h += np.eye(2) * 1e-6
        step = np.linalg.solve(h, g)
        t = 1.0
        while t > 1e-12:
            trial = loss(a - t * float(step[0]), b - t * float(step[1]))
            # Lower by a share of what the step promises, or equal within rounding (near
            # the optimum a full Newton step changes the loss by less than its last bits).
            if trial <= current - 1e-4 * t * float(g @ step) or trial <= current + 1e-12 * abs(current):
                break
            t /= 2
        else:
            break  # no step lowers the loss: at the optimum within rounding
        a, b, current = a - t * float(step[0]), b - t * float(step[1]), trial
        if abs(t * step).max() < 1e-9:
            break
    return a, b


def probability(raw: float, calibration: tuple[float, float]) -> float:
    a, b = calibration
    z = a * raw + b
    return 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0


def full_order(row: QueryRow, scores: Sequence[float], share: float = 0.0) -> list[int]:
    """Head indexes in the `full` stage's order: the base score (app.retrieve.rerank.order:
    `(1 - share) x score + share x fused / best fused of the head`), then the blend with
    the built-in profile (app.retrieve.blend; freshness is the same for every fragment of
    an eval corpus, pins there are none)."""
    w = BUILT_IN.weights
    best = max((c.fused_score for c in row.head), default=0.0)
    base = [base_score(s, c.fused_score, best, share) for s, c in zip(scores, row.head)]
    order = sorted(range(len(row.head)), key=lambda i: (-base[i], -row.head[i].fused_score, row.head[i].fragment_id))
    final = {i: w["rerank"] * base[i] + w["authority"] * (row.head[i].authority or 0.0) for i in order}
    return sorted(order, key=lambda i: -final[i])


def fused_order(row: QueryRow) -> list[int]:
    return list(range(len(row.head)))


MISS_COLUMNS = (
    "lexical_ratio",
    "dense_ratio",
    "coverage_idf",
    "proximity",
    "head_coverage_idf",
    "feedback_similarity",
)
"""The evidence `fused_misses` compares (ADR 0015, eighth amendment)."""


def fused_misses(
    rows: Sequence[QueryRow], xs: Sequence[np.ndarray], columns: Sequence[str] = MISS_COLUMNS
) -> dict[str, tuple[int, dict[str, tuple[float, float]]]]:
    """Per set, the fused order's misses (its first candidate unrelated, a relevant one
    further down the head) and, per column, the share of them where the first relevant
    candidate is above / below that first candidate: whether the evidence could have told
    them apart. `xs`: every feature of each row's head (`featurize`)."""
    keep = [features.FEATURES.index(c) for c in columns]
    out: dict[str, tuple[int, dict[str, tuple[float, float]]]] = {}
    counts: dict[str, list] = {}
    for row, x in zip(rows, xs):
        grades = np.asarray(row.grades)
        relevant = np.flatnonzero(grades > 0)
        if not row.head or relevant.size == 0 or relevant[0] == 0:
            continue
        first, miss = x[relevant[0], keep], x[0, keep]
        tally = counts.setdefault(row.dataset, [0, np.zeros(len(keep)), np.zeros(len(keep))])
        tally[0] += 1
        tally[1] += first > miss + 1e-12
        tally[2] += first < miss - 1e-12
    for name, (n, above, below) in sorted(counts.items()):
        out[name] = (n, {c: (float(a) / n, float(b) / n) for c, a, b in zip(columns, above, below)})
    return out


@dataclass(slots=True)
class Fold:
    held_out: str
    sets: list[str]
    queries: int
    hybrid: float
    full: float
    per_set: dict[str, tuple[float, float]] = field(default_factory=dict)


def score_rows(
    model: Any,
    rows: Sequence[QueryRow],
    xs: Sequence[np.ndarray],
    columns: Sequence[str],
    calibration: tuple[float, float],
    share: float = 0.0,
) -> dict[str, tuple[float, float]]:
    """Per set: (hybrid nDCG@10, full nDCG@10) over its queries."""
    by_set: dict[str, list[tuple[float, float]]] = {}
    keep = [features.FEATURES.index(c) for c in columns]
    for row, x in zip(rows, xs):
        if row.head:
            raw = model.predict(x[:, keep], num_threads=1)
            scores = [probability(float(s), calibration) for s in raw]
            full = row.ndcg(full_order(row, scores, share))
        else:
            full = row.ndcg([])
        by_set.setdefault(row.dataset, []).append((row.ndcg(fused_order(row)), full))
    return {s: (mean(h for h, _ in v), mean(f for _, f in v)) for s, v in by_set.items()}


def train(
    rows: Sequence[QueryRow],
    xs: Sequence[np.ndarray] | None = None,
    columns: Sequence[str] | None = None,
    params: dict | None = None,
    rounds: int = ROUNDS,
    kind: str = KIND,
) -> tuple[Any, tuple[float, float]]:
    """The model and its calibration (fit on its own training rows)."""
    default = columns_of(kind)  # refuses an unknown kind, even with columns given
    columns = columns or default
    data = matrix(rows, xs if xs is not None else featurize(rows), columns)
    model = fit_linear(data, params) if kind == "linear" else fit(data, columns, params, rounds)
    a, b = calibrate(predict_lists(model, data), data.y)
    # Rounded: the last bits of a Newton fit are not worth a different model version.
    return model, (round(a, 9), round(b, 9))


def held_out_groups(rows: Sequence[QueryRow], by: str) -> list[str]:
    """What `validate` holds out in turn: the sets (by="set") or families the rows come from."""
    return sorted({r.dataset if by == "set" else family_of(r.dataset) for r in rows})


def validate(
    rows: Sequence[QueryRow],
    by: str = "set",
    xs: Sequence[np.ndarray] | None = None,
    columns: Sequence[str] | None = None,
    params: dict | None = None,
    rounds: int = ROUNDS,
    kind: str = KIND,
    share: float | None = None,
) -> list[Fold]:
    """Leave one set (by="set") or one family (by="family") out, in turn, each held-out
    list scored with the fused order's `share` of the base score (default: the shipped
    reranker's, learned.FUSED_SHARE)."""
    share = learned.FUSED_SHARE if share is None else share
    columns = columns or columns_of(kind)
    held_out = held_out_groups(rows, by)
    if len(held_out) < 2:
        raise ValueError(
            f"leaving one {by} out needs candidates of two {by}s or more; these hold one: {', '.join(held_out)}"
        )
    xs = xs if xs is not None else featurize(rows)
    key = (lambda r: r.dataset) if by == "set" else (lambda r: family_of(r.dataset))
    folds = []
    for held in held_out:
        train_idx = [i for i, r in enumerate(rows) if key(r) != held]
        test_idx = [i for i, r in enumerate(rows) if key(r) == held]
        model, calibration = train(
            [rows[i] for i in train_idx], [xs[i] for i in train_idx], columns, params, rounds, kind
        )
        test_rows = [rows[i] for i in test_idx]
        per_set = score_rows(model, test_rows, [xs[i] for i in test_idx], columns, calibration, share)
        for name, (hybrid, full) in sorted(per_set.items()):
            folds.append(Fold(held, [name], sum(1 for r in test_rows if r.dataset == name), hybrid, full))
    return folds


def _labels(rows: Sequence[QueryRow]) -> str:
    """How the training candidates were graded (the model file's metadata)."""
    text = "qrels grade of the fragment's best document (dev split)"
    fragment = sorted({r.dataset for r in rows if r.fragment_level})
    if fragment:
        text += f"; per fragment (the best label it holds) on {', '.join(fragment)}"
    return text


def model_version(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def model_file(
    rows: Sequence[QueryRow],
    xs: Sequence[np.ndarray] | None,
    data_sha256: str,
    validation: dict | None = None,
    columns: Sequence[str] | None = None,
    params: dict | None = None,
    rounds: int = ROUNDS,
    kind: str = KIND,
) -> tuple[str, dict]:
    """Train on every row; the learned-reranker file's text and its metadata."""
    columns = columns or columns_of(kind)
    model, (a, b) = train(rows, xs, columns, params, rounds, kind)
    library: dict
    if isinstance(model, learned.LinearScorer):
        import sklearn

        weights = {c: round(float(w), 12) for c, w in zip(columns, model.weights)}
        text = json.dumps({"weights": weights, "standardized": "z-score within each list"}, sort_keys=True)
        library = {"model": learned.LINEAR, "sklearn": sklearn.__version__, "params": LINEAR_PARAMS | (params or {})}
    else:
        import lightgbm

        text = model.model_to_string()
        library = {"model": learned.LAMBDAMART, "lightgbm": lightgbm.__version__, "params": params or PARAMS}
        library["rounds"] = rounds
    metadata = {
        "name": learned.NAME,
        "version": model_version(text + repr((a, b, TEXT_CHARS))),
        **library,
        "features": list(columns),
        "text_chars": TEXT_CHARS,
        "balance_sets": BALANCE,
        "calibration": {"a": a, "b": b, "fit": "logistic P(grade > 0) on the training candidates' raw scores"},
        "training_data": {
            "sha256": data_sha256,
            "sets": {name: sum(1 for r in rows if r.dataset == name) for name in sorted({r.dataset for r in rows})},
            "pairs": sum(len(r.head) for r in rows),
            "labels": _labels(rows),
        },
        "validation": validation or {},
    }
    return learned.dump(text, metadata), metadata
