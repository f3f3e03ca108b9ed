"""A cross-encoder's ONNX export as the reranker, by path: it scores as
sentence-transformers' CrossEncoder does on the same weights, is selected by a folder or
file path, names its version in traces, and a path it cannot use is refused clearly.
The model is a tiny BERT made and exported here (no cross-encoder ships offline)."""

from __future__ import annotations

import hashlib
import shutil

import msgspec
import numpy as np
import pytest

from app.retrieve import rerank
from app.retrieve.config import PipelineConfig
from app.retrieve.onnx_reranker import OnnxReranker, OnnxRerankerError, _probabilities
from app.retrieve.service import Retriever
from app.retrieve.trace import get_trace
from app.wire.retrieve import RetrieveRequest
from tests.retrieve import cross_encoders
from tests.retrieve.corpus import CODE, DOCS
from tests.retrieve.test_features import candidate

pytestmark = pytest.mark.e2e  # starts servers or builds a model of its own: not the unit tier

TEXTS = [
    "Rotate the signing keys every quarter.",
    "A recipe for lemon cake with poppy seeds.",
    "def rotate(keys):\n    return [k.renew() for k in keys]",
    "",
    "keys " * 600,  # longer than the model reads: truncated
]


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """A seeded two-layer BERT cross-encoder, saved with the bundled MiniLM's tokenizer,
    and its ONNX export beside it."""
    import warnings

    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    # Weights large enough that texts get scores far apart.
    folder = cross_encoders.tiny_cross_encoder(
        tmp_path_factory.mktemp("tiny-cross-encoder"), seed=3, layers=2, initializer_range=0.5
    )
    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    model = AutoModelForSequenceClassification.from_pretrained(str(folder)).eval()
    example = tokenizer(["a query"], ["a text"], return_tensors="pt")
    inputs = ["input_ids", "attention_mask", "token_type_ids"]
    with warnings.catch_warnings():  # the tracer's notes on Python conditionals in the model
        warnings.simplefilter("ignore")
        torch.onnx.export(  # the TorchScript exporter: the dynamo one needs onnxscript
            model,
            tuple(example[name] for name in inputs),
            str(folder / "model.onnx"),
            input_names=inputs,
            output_names=["logits"],
            dynamic_axes={name: {0: "batch", 1: "sequence"} for name in inputs} | {"logits": {0: "batch"}},
            dynamo=False,
        )
    return folder


def test_it_scores_as_the_cross_encoder_on_the_same_weights(exported):
    import torch
    from sentence_transformers import CrossEncoder

    listed = [candidate(i + 1, text, path=f"docs/{i}.md", heading_path=("Keys",)) for i, text in enumerate(TEXTS)]
    scorer = rerank.build(str(exported / "model.onnx"))
    assert isinstance(scorer, OnnxReranker)
    scorer.load()
    ours = scorer.score("how often are signing keys rotated", listed)
    reference = CrossEncoder(str(exported), device="cpu", activation_fn=torch.nn.Sigmoid(), max_length=512).predict(
        [("how often are signing keys rotated", rerank.rerank_text(c)) for c in listed]
    )
    assert np.allclose(ours, reference, atol=1e-5)
    assert all(0.0 <= s <= 1.0 for s in ours) and max(ours) - min(ours) > 0.05
    assert scorer.version == hashlib.sha256((exported / "model.onnx").read_bytes()).hexdigest()[:12]
    assert scorer.score("anything", []) == []


def test_the_file_or_a_folder_of_an_export_without_torch_weights_selects_it(exported, tmp_path):
    """A folder with torch weights stays a CrossEncoder's, as before ONNX was read."""
    nested = tmp_path / "nested"  # the layout of sentence-transformers' ONNX export
    shutil.copytree(exported, nested)
    (nested / "onnx").mkdir()
    (nested / "model.onnx").rename(nested / "onnx" / "model.onnx")
    bare = tmp_path / "bare"  # an export alone: the model and its tokenizer
    shutil.copytree(exported, bare)
    (bare / "model.safetensors").unlink()
    listed = [candidate(1, TEXTS[0]), candidate(2, TEXTS[1])]
    expected = OnnxReranker(str(exported / "model.onnx")).score("signing keys", listed)
    for path in (nested / "onnx" / "model.onnx", bare, bare / "model.onnx"):
        scorer = rerank.build(str(path))
        assert isinstance(scorer, OnnxReranker)
        assert np.allclose(scorer.score("signing keys", listed), expected)
    for path in (exported, nested):
        assert isinstance(rerank.build(str(path)), rerank.Reranker)


def test_a_path_it_cannot_use_is_refused_with_the_reason(exported, tmp_path):
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(exported / "model.onnx", alone / "model.onnx")
    with pytest.raises(OnnxRerankerError, match="no tokenizer"):
        rerank.build(str(alone)).load()  # type: ignore[union-attr]
    broken = tmp_path / "broken"
    shutil.copytree(exported, broken)
    (broken / "model.onnx").write_bytes(b"not an onnx model")
    with pytest.raises(OnnxRerankerError, match="not a model ONNX Runtime can run"):
        rerank.build(str(broken / "model.onnx")).load()  # type: ignore[union-attr]
    with pytest.raises(OnnxRerankerError, match="no model.onnx"):
        OnnxReranker(str(tmp_path))


def test_one_logit_is_a_sigmoid_and_two_the_second_class():
    assert _probabilities(np.array([[0.0], [2.0]])) == pytest.approx([0.5, 1 / (1 + np.exp(-2.0))])
    assert _probabilities(np.array([[0.0, 0.0], [0.0, np.log(3.0)]])) == pytest.approx([0.5, 0.75])
    with pytest.raises(OnnxRerankerError, match="one or two logits"):
        _probabilities(np.zeros((2, 3)))


def test_a_retrieval_reranked_by_it_names_it_in_the_trace(exported, conn, ingest, as_principal, models):
    ingest("acme", DOCS | CODE)
    retriever = Retriever.build(models, PipelineConfig(reranker=str(exported / "model.onnx")))
    request = msgspec.convert(
        {"query": "rotate credentials", "scope": {"org_id": "acme"}, "rerank_top": 6}, RetrieveRequest
    )
    as_principal("acme")
    response = retriever.retrieve(conn, request)
    trace = get_trace(conn, response.trace_id)
    assert trace["pipeline"]["reranker"] == str(exported / "model.onnx")
    assert (
        trace["pipeline"]["reranker_version"] == hashlib.sha256((exported / "model.onnx").read_bytes()).hexdigest()[:12]
    )
    reranked = [c for c in trace["candidates"] if c["rerank_score"] is not None]
    assert reranked and all(0.0 <= c["rerank_score"] <= 1.0 for c in reranked)
    assert [f.score for f in response.fragments] == sorted((f.score for f in response.fragments), reverse=True)
