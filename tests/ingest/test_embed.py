"""R-ING-3: the real model, offline; long texts are embedded whole, window by window."""

from __future__ import annotations

import numpy as np
import pytest

from app.settings import Settings
from app.text.embed import Embedder, embedders, resolve_dtype
from tests.embedding_memo import plain


@pytest.fixture
def model(models) -> dict[str, Embedder]:
    """The session's embedders, calling the model every time: these tests are about what
    it computes, so none may be answered from the suite's memo (tests/embedding_memo.py)."""
    return {namespace: plain(embedder) for namespace, embedder in models.items()}


def test_vectors_are_unit_length_and_deterministic(model):
    embedder = model["prose"]
    a, b = embedder.embed(["rotate the journal when the disk is full"] * 2)
    assert len(a) == embedder.dims == 384
    assert abs(np.linalg.norm(a) - 1) < 1e-5
    assert a == b


def test_short_text_is_one_window(model):
    embedder = model["prose"]
    text = "Certificates renew automatically thirty days before expiry."
    direct = embedder.model.encode([text], normalize_embeddings=True)[0]
    # In bfloat16 (CPUs where oneDNN runs it) two encodings of one text agree to about
    # 0.998, as bfloat16 does with float32; a wrong window would be far below either.
    assert np.dot(embedder.embed([text])[0], direct) > (0.997 if embedder.dtype == "bfloat16" else 0.999)


def test_tail_of_a_long_text_still_counts(model):
    embedder = model["code"]
    filler = "\\n".join(f"    step_{i} = compute_value({i}, factor=2)" for i in range(120))
    head = f"def pipeline():\\n{filler}\\n"
    tail = "    send_invoice_email(customer, pdf_attachment, smtp_server)\\n"
    windows, _owners, _weights = embedder._windows([head + tail])
    assert len(windows) > 1 and "send_invoice_email" in windows[-1]
    with_tail, without_tail = embedder.embed([head + tail, head])
    assert np.dot(with_tail, without_tail) < 0.9999, "the last window changes the vector"
    query = embedder.embed(["send the invoice by email"])[0]
    assert np.dot(query, with_tail) > np.dot(query, without_tail)


def test_a_query_never_waits_behind_an_ingestion(models):
    """An ingestion mid-encode (held here until released) must not block query
    embedding: the query lane has its own model instance and lock."""
    import threading

    from app.retrieve.service import Retriever

    ingest_model = models["prose"].model
    entered, release = threading.Event(), threading.Event()
    original = ingest_model.encode

    def slow_encode(*args, **kwargs):
        entered.set()
        release.wait(60)
        return original(*args, **kwargs)

    ingest_model.encode = slow_encode
    try:
        writer = threading.Thread(target=plain(models["prose"]).embed, args=(["a long document being ingested"],))
        writer.start()
        assert entered.wait(30)
        done: list = []
        reader = threading.Thread(target=lambda: done.append(Retriever(models, None).query_embeddings("a query")))
        reader.start()
        reader.join(30)
        assert done, "query embedding waited for the ingestion to finish"
    finally:
        release.set()
        del ingest_model.encode
        writer.join(60)


@pytest.mark.parametrize(
    "native, flags, expected",
    [
        (True, None, "bfloat16"),
        (False, None, "float32"),
        (True, {"avx512f", "avx512bw", "avx512_bf16"}, "bfloat16"),
        (True, {"avx2", "amx_tile", "amx_bf16"}, "bfloat16"),
        # oneDNN reports bfloat16 on AVX-512 without AVX512-BF16, and emulates it 3x slower.
        (True, {"avx512f", "avx512bw", "avx512vl", "avx512_vnni"}, "float32"),
        (False, {"avx512_bf16"}, "float32"),
    ],
)
def test_auto_dtype_is_bfloat16_only_where_the_cpu_computes_it(monkeypatch, native, flags, expected):
    import torch

    from app.text import embed

    monkeypatch.setattr(torch.ops.mkldnn, "_is_mkldnn_bf16_supported", lambda: native)
    monkeypatch.setattr(embed, "cpu_flags", lambda: flags)
    resolve_dtype.cache_clear()
    try:
        assert resolve_dtype("auto") == expected
        assert resolve_dtype("bfloat16") == "bfloat16" and resolve_dtype("float32") == "float32"
        assert {e.dtype for e in embedders(Settings()).values()} == {expected}
    finally:
        resolve_dtype.cache_clear()


def test_an_unknown_dtype_is_refused():
    with pytest.raises(ValueError, match="auto, float32 or bfloat16"):
        Settings.from_env({"CONTEXTS_EMBED_DTYPE": "float16"})


def test_declared_dims_match_the_loaded_model_without_loading_it(models, tmp_path):
    import json

    from app.text.embed import declared_dims, resolve_model_path

    embedder = models["prose"]
    folder = resolve_model_path(embedder.name)
    loaded = embedder.model
    getter = getattr(loaded, "get_embedding_dimension", None) or loaded.get_sentence_embedding_dimension
    assert declared_dims(folder) == int(getter()) == embedder.dims
    # A Dense layer changes the width: nothing is declared, the model is loaded instead.
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "1_Pooling" / "config.json").write_text(json.dumps({"word_embedding_dimension": 384}))
    modules = [
        {"type": "sentence_transformers.models.Transformer", "path": ""},
        {"type": "sentence_transformers.models.Pooling", "path": "1_Pooling"},
        {"type": "sentence_transformers.models.Dense", "path": "2_Dense"},
    ]
    (tmp_path / "modules.json").write_text(json.dumps(modules))
    assert declared_dims(str(tmp_path)) is None
    (tmp_path / "modules.json").write_text(json.dumps(modules[:2]))
    declared_dims.cache_clear()
    assert declared_dims(str(tmp_path)) == 384
    assert declared_dims(str(tmp_path / "missing")) is None
