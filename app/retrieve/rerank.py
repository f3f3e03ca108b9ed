"""R-RET-2: a reranker scores the top fused candidates: by default the learned one
(app.retrieve.learned, docs/adr/0015), or any sentence-transformers CrossEncoder, or a
cross-encoder's ONNX export by path (app.retrieve.onnx_reranker); `none` keeps the
fused order."""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import Any, Protocol

from app.retrieve.candidates import Candidate

OFF = "none"
"""The reranker value that keeps the fused order."""
LIST_HEAD = 3
"""The first candidates of the lexical and of the dense list, scored by the reranker
wherever fusion put them (`head_and_tail`)."""


class Scorer(Protocol):
    name: str
    version: str | None
    fused_share: float
    """The fused order's share in a candidate's base score (`order`): 0 for a cross-encoder,
    the learned reranker's learned.FUSED_SHARE."""

    def load(self) -> None: ...

    def score(self, query: str, candidates: list[Candidate]) -> list[float]:
        """One score in [0, 1] per candidate; may set each one's `rerank_detail`."""
        ...


def build(name_or_path: str | None, threads: int = 1) -> Scorer | None:
    """The reranker a configuration names: `learned` (or a learned-reranker .json file),
    `none` (or nothing) for the fused order, a `.onnx` file (or a folder holding
    `model.onnx` and no torch weights), else a CrossEncoder name or path."""
    from app.retrieve import learned, onnx_reranker

    if not name_or_path or name_or_path.strip().lower() == OFF:
        return None
    if learned.is_learned(name_or_path):
        return learned.LearnedReranker(name_or_path)
    if onnx_reranker.onnx_file(name_or_path) is not None:
        return onnx_reranker.OnnxReranker(name_or_path, threads)
    return Reranker(name_or_path, threads)


@lru_cache(maxsize=4)
def _load(name_or_path: str, threads: int) -> Any:
    import torch
    from sentence_transformers import CrossEncoder

    torch.set_num_threads(threads)
    return CrossEncoder(name_or_path, device="cpu", activation_fn=torch.nn.Sigmoid())


_LOCK = threading.Lock()


class Reranker:
    """Scores (query, fragment) pairs in [0, 1] with a sentence-transformers CrossEncoder."""

    def __init__(self, name_or_path: str, threads: int = 1, batch_size: int = 32) -> None:
        self.name = name_or_path
        self.version: str | None = None
        self.fused_share = 0.0
        self.threads = threads
        self.batch_size = batch_size

    def load(self) -> None:
        _load(self.name, self.threads)

    def score(self, query: str, candidates: list[Candidate]) -> list[float]:
        if not candidates:
            return []
        pairs = [(query, rerank_text(c)) for c in candidates]
        with _LOCK:
            scores = _load(self.name, self.threads).predict(
                pairs, batch_size=self.batch_size, show_progress_bar=False, convert_to_numpy=True
            )
        return [float(s) for s in scores]


def rerank_text(candidate: Candidate) -> str:
    header = " > ".join((candidate.path, *candidate.heading_path))
    return f"{header}\n{candidate.text}"


def base_score(score: float, fused_score: float, best_fused: float, share: float) -> float:
    """A reranked candidate's base score: `(1 - share) x` the reranker's score `+ share x`
    its fused score relative to the head's best (the held-out simulation,
    app.eval.rerank_train.full_order, scores the same way)."""
    fused = min(1.0, fused_score / best_fused) if best_fused > 0 else 0.0
    return (1.0 - share) * score + share * fused


def head_and_tail(candidates: list[Candidate], rerank_top: int) -> tuple[list[Candidate], list[Candidate]]:
    """The candidates the reranker scores (the top `rerank_top` fused, then the first
    LIST_HEAD of each list that fusion put below them, in fused order) and the rest, in
    fused order. A list's best is evidence fusion can bury: in a repository's code the
    lexical side weighs a sixth (docs/adr/0015), and httpx's one module naming `retries`,
    BM25's first by twice the second's score, was 68th fused, never reranked, for "how are
    retries configured?"."""
    head, tail = candidates[:rerank_top], list[Candidate]()
    for c in candidates[rerank_top:]:
        first = any(rank is not None and rank <= LIST_HEAD for rank in (c.lexical_rank, c.dense_rank))
        (head if first else tail).append(c)
    return head, tail


def order(
    query: str,
    candidates: list[Candidate],
    rerank_top: int,
    reranker: Scorer | None,
    best_possible: float = 1.0,
    beside: list[Candidate] | None = None,
) -> list[Candidate]:
    """The best `rerank_top` of the top `rerank_top` fused candidates and each list's
    first (`head_and_tail`), best first, each with its base score (the blend's relevance
    term, app.retrieve.blend).

    With a reranker the base score is its score (a probability, in [0, 1], kept in
    `rerank_score` too); without one it is the fused score scaled to [0, 1] by the best
    possible fused score (first on both sides), and the fused order stands.
    `beside` (pinned or rule-brought fragments, outside the ranking) get scores the same
    way, scored in one list with the head: the learned reranker's features are relative
    to the list, and a list of one or two pins alone would make them meaningless.
    """
    if reranker is not None:
        # The fused order keeps the reranker's share of the base score (the learned one's:
        # ADR 0015, sixth amendment), the fused score relative to the head's best. Each
        # list's first are scored too, and the best `rerank_top` of all go on: a request
        # still composes at most `rerank_top` ranked fragments.
        head, _ = head_and_tail(candidates, rerank_top)
        together = head + (beside or [])
        share = reranker.fused_share
        best = max((c.fused_score for c in head), default=0.0)
        for candidate, score in zip(together, reranker.score(query, together)):
            candidate.rerank_score = score
            candidate.base_score = base_score(score, candidate.fused_score, best, share)
        return sorted(head, key=lambda c: (-(c.base_score or 0.0), -c.fused_score, c.fragment_id))[:rerank_top]
    head = candidates[:rerank_top]
    for candidate in head + (beside or []):
        candidate.base_score = min(1.0, candidate.fused_score / best_possible)
    return head
