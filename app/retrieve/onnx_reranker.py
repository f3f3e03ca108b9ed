"""A cross-encoder exported to ONNX, selected by path (CONTEXTS_RERANKER=FILE or DIR):
ONNX Runtime on CPU, no torch at query time. Named directly, a `.onnx` file finds its
tokenizer in its folder (or, for `onnx/model.onnx`, the folder above: the layout of
sentence-transformers' ONNX export). A folder is taken as an ONNX export when it holds
`model.onnx` or `onnx/model.onnx` and no torch weights; a folder with torch weights stays
a sentence-transformers CrossEncoder, as before (name its `.onnx` file to use ONNX).
A single logit becomes a probability by its sigmoid, as the CrossEncoder reranker does
(tests/retrieve/test_onnx_reranker.py exports a model and compares the two); a head of
two logits by the softmax of its second class (the "relevant" class)."""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from app.retrieve.candidates import Candidate

MAX_LENGTH = 512
"""Word pieces per (query, text) pair at most, as BERT-sized cross-encoders take."""


TORCH_WEIGHTS = ("model.safetensors", "pytorch_model.bin")
"""A folder holding one of these is a CrossEncoder's, whatever ONNX files it also holds."""


class OnnxRerankerError(ValueError):
    """An ONNX reranker path that cannot be used."""


def onnx_file(name_or_path: str) -> Path | None:
    """The ONNX model a reranker setting names, or None when it names none."""
    path = Path(name_or_path)
    if path.suffix == ".onnx" and path.is_file():
        return path
    if path.is_dir() and not any((path / weights).is_file() for weights in TORCH_WEIGHTS):
        for candidate in (path / "model.onnx", path / "onnx" / "model.onnx"):
            if candidate.is_file():
                return candidate
    return None


@lru_cache(maxsize=4)
def _load(model: Path, threads: int) -> tuple[Any, Any, list[str], str]:
    """(session, tokenizer, input names, version: the model file's SHA-256, 12 digits)."""
    import onnxruntime
    from transformers import AutoTokenizer

    folders = [model.parent, model.parent.parent] if model.parent.name == "onnx" else [model.parent]
    tokenizer = None
    for folder in folders:
        if (folder / "tokenizer.json").is_file() or (folder / "vocab.txt").is_file():
            tokenizer = AutoTokenizer.from_pretrained(str(folder))
            break
    if tokenizer is None:
        raise OnnxRerankerError(f"{model}: no tokenizer (tokenizer.json or vocab.txt) beside it")
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    try:
        session = onnxruntime.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime raises its own exception types for a bad file
        raise OnnxRerankerError(f"{model}: not a model ONNX Runtime can run: {exc}") from exc
    names = [i.name for i in session.get_inputs()]
    if "input_ids" not in names:
        raise OnnxRerankerError(f"{model}: no input_ids input: not a text cross-encoder export")
    version = hashlib.sha256(model.read_bytes()).hexdigest()[:12]
    return session, tokenizer, names, version


class OnnxReranker:
    """Scores (query, fragment) pairs in [0, 1] with a cross-encoder's ONNX export."""

    def __init__(self, name_or_path: str, threads: int = 1, batch_size: int = 32) -> None:
        model = onnx_file(name_or_path)
        if model is None:
            raise OnnxRerankerError(f"{name_or_path}: no model.onnx there")
        self.name = name_or_path
        self.model = model
        self.threads = threads
        self.batch_size = batch_size
        self.version: str | None = None
        self.fused_share = 0.0

    def load(self) -> None:
        self.version = _load(self.model, self.threads)[3]

    def score(self, query: str, candidates: list[Candidate]) -> list[float]:
        from app.retrieve.rerank import rerank_text

        if not candidates:
            return []
        session, tokenizer, names, self.version = _load(self.model, self.threads)
        limit = min(MAX_LENGTH, int(getattr(tokenizer, "model_max_length", MAX_LENGTH)))
        scores: list[float] = []
        for start in range(0, len(candidates), self.batch_size):
            batch = candidates[start : start + self.batch_size]
            encoded = tokenizer(
                [query] * len(batch),
                [rerank_text(c) for c in batch],
                padding=True,
                truncation=True,
                max_length=limit,
                return_tensors="np",
            )
            feed = {name: encoded[name].astype(np.int64) for name in names if name in encoded}
            missing = set(names) - set(feed)
            if missing:
                raise OnnxRerankerError(f"{self.model}: inputs the tokenizer does not give: {sorted(missing)}")
            scores.extend(_probabilities(np.asarray(session.run(None, feed)[0], dtype=np.float64)))
        return scores


def _probabilities(logits: np.ndarray) -> list[float]:
    """A sigmoid of one logit per pair, or the second class's softmax of two."""
    if logits.ndim == 1 or logits.shape[1] == 1:
        return (1.0 / (1.0 + np.exp(-logits.reshape(-1)))).tolist()
    if logits.ndim == 2 and logits.shape[1] == 2:
        shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
        return (shifted[:, 1] / shifted.sum(axis=1)).tolist()
    raise OnnxRerankerError(f"a cross-encoder gives one or two logits per pair, not shape {logits.shape}")
