"""The int8 ONNX query lane agrees with torch, and refuses a model file it did not pin."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from app.settings import Settings
from app.text.embed import Embedder
from app.text.onnx_minilm import OnnxModelError, _verified

QUERIES = [
    "how do I rotate the journal when the disk is full",
    "ts_headline",
    "def parse_config(path: str) -> dict",
    "retry policy for HTTP clients with exponential backoff and jitter",
    "Zertifikate werden dreißig Tage vor Ablauf erneuert",
]


def test_query_vectors_agree_with_torch(models):
    torch_lane = replace(models["prose"].for_queries(), backend="torch")
    onnx_lane = replace(models["prose"], query_backend="onnx-int8").for_queries()
    assert onnx_lane.backend == "onnx-int8" and onnx_lane.runtime == "onnx-int8"
    reference = np.asarray(torch_lane.embed(QUERIES))
    vectors = np.asarray(onnx_lane.embed(QUERIES))
    assert vectors.shape == (len(QUERIES), 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert (reference * vectors).sum(axis=1).min() > 0.999
    # and not by accident: another query's vector is far from it
    assert float(reference[0] @ vectors[1]) < 0.9


def test_a_long_query_is_embedded_window_by_window(models):
    onnx_lane = replace(models["prose"], query_backend="onnx-int8").for_queries()
    long = " ".join(["the journal rotates when the volume is full"] * 80)
    windows, _owners, _weights = onnx_lane._windows([long])
    assert len(windows) > 1
    assert len(onnx_lane.embed([long])[0]) == 384


def test_other_models_keep_torch_for_queries():
    custom = Embedder("prose", "/models/my-encoder", "bfloat16", 1, 8, query_backend="onnx-int8")
    assert custom.for_queries().backend == "torch"


def test_the_model_file_is_checked_against_its_pinned_digest(tmp_path):
    forged = tmp_path / "model.onnx"
    forged.write_bytes(b"not the model")
    with pytest.raises(OnnxModelError, match="sha256"):
        _verified(str(forged), "0" * 64)


def test_an_unknown_backend_is_refused():
    with pytest.raises(ValueError, match="QUERY_EMBED_BACKEND"):
        Settings.from_env({"CONTEXTS_QUERY_EMBED_BACKEND": "tensorrt"})
