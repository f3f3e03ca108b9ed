"""The learned reranker (docs/adr/0015): a model over app.retrieve.features, its output
calibrated to P(relevant) in [0, 1]. Two kinds of model file load: a linear pairwise
model over the features standardized within each list (the shipped kind: it held out
better), and LightGBM LambdaMART over the raw features.

The shipped model is `learned_reranker.json` next to this module: the model plus what
it was trained from (the training data's hash, the feature list, the parameters, the
calibration, the held-out figures). `contexts rerank train` writes it.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from app.retrieve import features
from app.retrieve.candidates import Candidate
from app.text.stems import TEXT_CHARS

LINEAR = "linear pairwise"
LAMBDAMART = "lightgbm lambdarank"
"""The model kinds a file can hold (its metadata's `model`)."""
NAME = "learned"
"""PipelineConfig.reranker / CONTEXTS_RERANKER value that selects the shipped model."""
MODEL_PATH = Path(__file__).with_name("learned_reranker.json")
CONTRIBUTIONS = 5
"""Features whose contributions a trace shows per candidate (the largest in magnitude)."""
EXPLAINED = 10
"""Candidates (the first of the final order) whose features and contributions the trace
keeps."""


class ModelError(ValueError):
    """A learned-reranker file that cannot be used."""


class LinearScorer:
    """score = standardized(features) . weights, per list: with the features z-scored
    within the list, a weight says how much being above this list's average on a
    feature is worth, whatever the corpus."""

    def __init__(self, weights: Sequence[float]) -> None:
        import numpy as np

        self.weights = np.asarray(weights, dtype=np.float64)

    def predict(self, x: Any, num_threads: int = 1) -> Any:
        """Raw scores of ONE list's rows (the standardization is within the list)."""
        return features.standardized(x) @ self.weights

    def contributions(self, x: Any) -> Any:
        """Each feature's exact share of each row's raw score."""
        return features.standardized(x) * self.weights


@dataclass(frozen=True, slots=True)
class LearnedModel:
    booster: Any
    """A LightGBM Booster, or a LinearScorer."""
    metadata: dict

    @property
    def kind(self) -> str:
        return str(self.metadata.get("model", LAMBDAMART))

    @property
    def version(self) -> str:
        return str(self.metadata["version"])

    @property
    def columns(self) -> list[str]:
        return list(self.metadata["features"])


def is_learned(name_or_path: str) -> bool:
    """`learned`, or a path to a learned-reranker file (anything else: a CrossEncoder)."""
    return name_or_path == NAME or (name_or_path.endswith(".json") and Path(name_or_path).is_file())


def model_file(name_or_path: str) -> Path:
    return MODEL_PATH if name_or_path == NAME else Path(name_or_path)


def dump(model_text: str, metadata: dict) -> str:
    return json.dumps({"metadata": metadata, "model": model_text}, indent=1, sort_keys=True) + "\n"


@lru_cache(maxsize=4)
def load(path: Path) -> LearnedModel:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelError(f"{path}: not a learned-reranker file: {exc}") from exc
    metadata = data.get("metadata") if isinstance(data, dict) else None
    if not isinstance(metadata, dict) or not isinstance(data.get("model"), str):
        raise ModelError(f"{path}: not a learned-reranker file: no metadata object and model text")
    columns = metadata.get("features")
    if not isinstance(columns, list) or not columns or not all(isinstance(c, str) for c in columns):
        raise ModelError(f"{path}: no feature list")
    unknown = sorted(set(columns) - set(features.FEATURES))
    if unknown:
        raise ModelError(f"{path}: features this code does not compute: {', '.join(unknown)}")
    if metadata.get("text_chars") != TEXT_CHARS:
        raise ModelError(
            f"{path}: trained on the first {metadata.get('text_chars', 'unrecorded')} characters of each text,"
            f" this code reads {TEXT_CHARS}: train it again (contexts rerank train)"
        )
    calibration = metadata.get("calibration")
    try:
        a, b = float(calibration["a"]), float(calibration["b"])  # type: ignore[index]
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelError(f"{path}: no calibration (a, b): {exc}") from exc
    if not (math.isfinite(a) and math.isfinite(b)) or not isinstance(metadata.get("version"), str):
        raise ModelError(f"{path}: a calibration that is not finite, or no version")
    kind = metadata.get("model", LAMBDAMART)
    if kind == LINEAR:
        return LearnedModel(LinearScorer(_linear_weights(path, data["model"], columns)), metadata)
    if kind != LAMBDAMART:
        raise ModelError(f"{path}: unknown model kind {kind!r} (expected {LINEAR!r} or {LAMBDAMART!r})")
    import lightgbm as lgb

    try:
        booster = lgb.Booster(model_str=data["model"])
    except lgb.basic.LightGBMError as exc:
        raise ModelError(f"{path}: not a LightGBM model: {exc}") from exc
    if booster.num_feature() != len(columns):
        raise ModelError(f"{path}: the model reads {booster.num_feature()} features, the file lists {len(columns)}")
    return LearnedModel(booster, metadata)


def _linear_weights(path: Path, text: str, columns: list[str]) -> list[float]:
    try:
        weights = json.loads(text)["weights"]
        if not isinstance(weights, dict):
            raise TypeError("weights is not an object")
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelError(f"{path}: the linear model's text holds no weights object: {exc}") from exc
    if set(weights) != set(columns):
        raise ModelError(f"{path}: the linear model's weights do not name exactly the listed features")
    try:
        values = [float(weights[c]) for c in columns]
    except (TypeError, ValueError) as exc:
        raise ModelError(f"{path}: a weight that is not a number: {exc}") from exc
    if not all(math.isfinite(v) for v in values):
        raise ModelError(f"{path}: a weight that is not finite")
    return values


_LOCK = threading.Lock()


FUSED_SHARE = 0.6
"""The fused order's share in the learned reranker's base score (app.retrieve.rerank.order;
ADR 0015, sixth to ninth amendments): the model re-orders within what the fused order
says and cannot bury the fused list's first answer. 0.85 while the model was trained on
document-level labels (it demoted fragment answers: mixed-click 0.300 alone); trained on
fragment-level labels with the fragment kinds, 0.5 held out best (mean +0.009 over
hybrid on twelve sets, none below it by more than 0.001); with the heading, path and
symbol coverage and fourteen sets, 0.6 (mean +0.022 one set out, none below -0.0001)."""


class LearnedReranker:
    """Scores the candidates in [0, 1]; keeps each one's features and contributions for
    the trace (`explain`)."""

    fused_share: float = FUSED_SHARE

    def __init__(self, name_or_path: str = NAME) -> None:
        self.path = model_file(name_or_path)
        self.model = load(self.path)
        self.name = NAME if name_or_path == NAME else str(self.path)
        self.version: str | None = self.model.version
        a, b = self.model.metadata["calibration"]["a"], self.model.metadata["calibration"]["b"]
        self.calibration = (float(a), float(b))

    def load(self) -> None:
        """Loaded at construction already (a few hundred KiB)."""

    def info(self) -> dict:
        return {
            "name": self.name,
            "version": self.version,
            "kind": self.model.kind.replace(" ", "-"),
            "fused_share": self.fused_share,
        }

    def rows(self, query: str, candidates: list[Candidate]) -> Any:
        """The model's columns of the features, one row per candidate (a float array)."""
        return features.extract(query, candidates, self.model.columns)

    def score(self, query: str, candidates: list[Candidate]) -> list[float]:
        """Calibrated P(relevant) per candidate. Each one keeps its row of features
        (`rerank_row`) so that `explain` can say why, once the final order is known: the
        blend's authority, freshness and pins move candidates after this, and the trace
        explains those a reader sees first (every candidate's detail made the trace 40%
        larger, about 2.5 ms more to store for 100 candidates)."""
        if not candidates:
            return []
        x = self.rows(query, candidates)
        model = self.model.booster
        a, b = self.calibration
        parts = None
        if isinstance(model, LinearScorer):
            parts = model.contributions(x)
            raw = parts.sum(axis=1)
        else:
            with _LOCK:
                raw = model.predict(x, num_threads=1)
        scored = _Scored(model, self.model.columns, x, raw, parts)
        for i, c in enumerate(candidates):
            c.rerank_detail = None
            c.rerank_row = (scored, i)
        return [_sigmoid(a * float(r) + b) for r in raw]


@dataclass(slots=True)
class _Scored:
    """One scoring call's features and raw scores, kept for `explain`."""

    model: Any
    columns: list[str]
    x: Any
    raw: Any
    parts: Any
    """The linear model's contributions (all rows: they cost nothing more); None for a
    tree model, whose TreeSHAP costs about what the features do and is computed for the
    explained rows only."""

    def details(self, rows: list[int]) -> list[dict]:
        import numpy as np

        if self.parts is not None:
            contrib = self.parts[rows]
        else:
            with _LOCK:
                contrib = self.model.predict(self.x[rows], pred_contrib=True, num_threads=1)[:, :-1]
        out = []
        for i, parts_i in zip(rows, contrib):
            top = np.argsort(-np.abs(parts_i), kind="stable")[:CONTRIBUTIONS]
            out.append(
                {
                    "features": dict(zip(self.columns, self.x[i].tolist())),
                    "raw": float(self.raw[i]),
                    "contributions": {self.columns[j]: round(float(parts_i[j]), 4) + 0.0 for j in top},  # no -0.0
                }
            )
        return out


def explain(candidates: Sequence[Candidate]) -> None:
    """Sets the `rerank_detail` of these candidates (those the learned reranker scored:
    the others have no `rerank_row`): their feature values, raw score and the largest
    contributions to it, computed together per scoring call."""
    calls: dict[int, tuple[_Scored, list[tuple[Candidate, int]]]] = {}
    for c in candidates:
        if c.rerank_row is not None:
            scored, row = c.rerank_row
            calls.setdefault(id(scored), (scored, []))[1].append((c, row))
    for scored, members in calls.values():
        for (c, _), detail in zip(members, scored.details([row for _, row in members])):
            c.rerank_detail = detail


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0
