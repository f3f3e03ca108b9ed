"""The demo's committed vectors (app/cli/demo.py): they hold most of the demo corpus's
texts, and the demo's ingestion reads them instead of running the model."""

from __future__ import annotations

import json

import numpy as np
import psycopg

from app.cli.demo import DEMO_FRESH_SHARE, ROOT, demo_inputs, demo_vectors
from app.cli.documents import ingest_paths
from app.eval.embedding_cache import REFERENCE_DTYPE, key_of, text_digest
from app.ingest.pipeline import IngestPipeline, embedding_input
from app.settings import Settings
from app.text.embed import embedders


def test_the_committed_demo_vectors_hold_the_demo_corpus():
    """Fails once the corpus drifted from the file: run `make demo-vectors` and commit
    app/cli/demo.vectors (a cold `make run` otherwise embeds what the file lacks)."""
    settings = Settings(home=ROOT / ".no-home")
    pipeline = IngestPipeline(settings, embedders(settings))
    vectors = demo_vectors()
    assert vectors.file is not None, vectors.problems
    # Computed in float32 (make demo-vectors), so it serves this CPU whatever its dtype.
    assert {t.key.dtype for t in vectors.file.tables.values()} == {REFERENCE_DTYPE}
    texts = held = 0
    for namespace, inputs in demo_inputs(pipeline).items():
        table = vectors.table(key_of(pipeline.embedders[namespace]))
        assert table is not None, vectors.problems
        texts += len(inputs)
        held += sum(1 for text in inputs if text_digest(text) in table.index)
    assert texts > 1000
    assert held >= DEMO_FRESH_SHARE * texts, f"{held} of {texts} texts: run make demo-vectors"


def test_the_demo_ingest_reads_the_vectors_instead_of_running_the_model(db_url, tmp_path):
    settings = Settings(home=tmp_path)
    vectors = demo_vectors()
    paths = [ROOT / "docs" / "adr" / "0003-deduplication-within-scope.md", ROOT / "app" / "ingest" / "dedupe.py"]
    changed, fragments, created, refused = ingest_paths(
        settings,
        db_url,
        paths,
        "demo",
        "contexts",
        None,
        None,
        None,
        None,
        True,
        base=ROOT,
        quiet=True,
        vectors=vectors,
    )
    assert (changed, refused) == (2, []) and created > 5
    assert vectors.misses == 0 and vectors.hits >= created  # no text went to the model
    with psycopg.connect(db_url) as conn:
        stored = conn.execute(
            "select d.path, f.namespace, f.heading_path, f.text, e.embedding::text from data.fragments f"
            " join data.documents d on d.doc_id = f.doc_id join data.embeddings e on e.fragment_id = f.fragment_id"
        ).fetchall()
    assert len(stored) == created
    pipeline_embedders = embedders(settings)
    for path, namespace, heading_path, text, embedding in stored:
        table = vectors.table(key_of(pipeline_embedders[namespace]))
        assert table is not None
        cached = table.get(text_digest(embedding_input(path, heading_path, text)))
        assert cached is not None
        assert np.allclose(np.array(json.loads(embedding), dtype=np.float32), cached, atol=1e-3)
