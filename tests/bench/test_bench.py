"""`make bench` end to end on a tiny corpus (the repository's docs): every step runs, the
report is written."""

from __future__ import annotations

import json

import psycopg

from app.bench import engines as bench_engines
from app.bench import reference as bench_reference
from app.bench import run as bench
from tests.bench.corpus import small_corpus


def test_bench_runs_every_step(db_url, tmp_path):
    out, corpus = tmp_path / "out", small_corpus(tmp_path / "corpus")
    argv = ["--fragments", "20", "--corpus", str(corpus), "--queries", "3", "--db-url", db_url, "--out", str(out)]
    argv += ["--authority-fragments", "40", "80", "--authority-repeat", "1", "--copies", "2", "--tenants", "1"]
    assert bench.main(argv) == 0
    report = json.loads((out / "latest.json").read_text())
    scale = report["scale"]
    assert report["corpus_fragments"] == scale["tenant_fragments"] >= 40
    assert scale["copies_written_now"] == 2 and scale["embedded_for_lack_of_an_original"] == 0
    with psycopg.connect(db_url) as conn:
        counts = dict(
            conn.execute(
                "select org_id || '/' || repo_id, count(*) from data.fragments where active group by 1"
            ).fetchall()
        )
        original = counts["bench/site-packages"]
        assert counts == {
            "bench/site-packages": original,
            "bench/site-packages-copy-2": original,
            "bench-tenant-1/site-packages": original,
        }
        # A copy's vector is its original's, moved a little: a distinct point, the same meaning.
        cosines = conn.execute(
            """select 1 - (a.embedding operator(extensions.<=>) b.embedding)
               from data.fragments fa join data.embeddings a on a.fragment_id = fa.fragment_id
               join data.fragments fb on fb.text = fa.text and fb.namespace = fa.namespace
                                     and fb.repo_id = 'site-packages-copy-2'
               join data.embeddings b on b.fragment_id = fb.fragment_id and b.model_id = a.model_id
               where fa.repo_id = 'site-packages' and fa.org_id = 'bench'"""
        ).fetchall()
        assert len(cosines) >= original and all(0.98 < c < 0.99999 for (c,) in cosines)
    assert set(report["retrieval"]) == {"lexical", "dense", "hybrid"}
    assert report["rls_overhead"]["queries"] == 3 and report["rls_overhead"]["rls_p50_ms"] > 0
    assert report["authority_refresh"]["ms"] >= 0
    blend = report["blend_overhead"]
    assert blend["queries"] == 3
    for variant in ("relevance_only", "blend_defaults", "blend_with_persona_term"):
        assert blend[variant]["p50_ms"] > 0
    assert set(blend["added_p50_ms"]) == {"blend_defaults", "blend_with_persona_term"}
    assert blend["left_in_relevance_only"]["python_blend_ms"] >= 0
    for key, top in (("rerank_overhead", 100), ("rerank_overhead_default_top", 50)):
        rerank = report[key]
        assert rerank["queries"] == 3 and rerank["reranker"]["name"] == "learned" and rerank["rerank_top"] == top
        assert rerank["fused"]["p50_ms"] > 0 and rerank["learned"]["p50_ms"] > 0
        assert 0 < rerank["candidates_median"] <= top and rerank["scoring_cpu"]["cold_p50_ms"] > 0
        assert rerank["scoring_cpu"]["warm_p50_ms"] > 0
    synthetic = report["authority_refresh_synthetic"]
    assert [r["fragments"] for r in synthetic] == [40, 80]
    assert all(r["links"] > 0 and r["refresh_ms_best"] > 0 and r["seed_seconds"] >= 0 for r in synthetic)
    reference = report["reference"]
    for key in ("hybrid", "hybrid_end_to_end", "long_lexical", "long_hybrid"):
        assert reference[key]["queries"] > 0
        assert reference[key]["ours"]["p50_ms"] > 0 and reference[key]["reference"]["p50_ms"] > 0
    assert reference["hybrid"]["queries"] == reference["hybrid_end_to_end"]["queries"] == 3
    # Tantivy and bm25s beside our BM25, LanceDB beside our hybrid; or, without the bench
    # extra, one line saying so in their place.
    lexical, hybrid = report["engines_lexical"], report["engines_hybrid"]
    if bench_engines.missing(*bench_engines.EXTRA) is None:
        assert lexical["ordinary"]["queries"] == 3 and lexical["long"]["queries"] > 0
        assert lexical["ordinary"]["overlap_at_10_bm25s"] >= 0.99
        assert lexical["storage"]["tantivy_bytes"] > 0 and lexical["build"]["ours_seconds"] is None
        assert hybrid["queries"] == 3 and hybrid["lancedb"]["p50_ms"] > 0 and hybrid["whole"]["p50_ms"] > 0
    else:
        assert list(lexical) == list(hybrid) == ["skipped"]
    # The ingest reference embedded and wrote the corpus's own texts, and left no table.
    ingest = report["ingest_reference"]
    assert ingest["fragments"] == min(report["corpus_fragments"], 2000)
    assert ingest["fragments_per_second"] > 0 and 0 < ingest["embed_share"] < 1
    assert 20 <= reference["long_lexical"]["terms_median"] <= 40
    # Pruned BM25 gives the top k that scoring every posting gives, on every bench query.
    for label in ("ordinary", "long"):
        assert reference["lexical_pruning"][label]["queries"] > 0
        assert reference["lexical_pruning"][label]["differing_top_k"] == 0
    with psycopg.connect(db_url) as conn:
        assert conn.execute("select to_regnamespace('bench_reference')").fetchone() == (None,)  # dropped
        assert conn.execute("select to_regnamespace('bench_ingest_reference')").fetchone() == (None,)
        # The reference is a real search: it finds a fragment from a span of its own words.
        conn.execute(
            "create schema bench_reference; create table bench_reference.fts as"
            " select fragment_id, org_id, to_tsvector('english', text) as tsv from data.fragments where active"
        )
        fragment_id, text = conn.execute(
            "select fragment_id, text from data.fragments where org_id = 'bench' and active and namespace = 'prose'"
            " order by length(text) desc limit 1"
        ).fetchone()
        # From the middle: a fragment's first words are also the previous one's last (overlap).
        middle = len(text.split()) // 2
        query = " ".join(text.split()[max(0, middle - 12) : middle + 13])
        rows = conn.execute(bench_reference.reference_sql([]), {"query": query, "org": "bench", "k": 100}).fetchall()
        assert fragment_id in [r[0] for r in rows[:3]]
        conn.rollback()


def test_sampled_queries_are_ones_the_api_accepts(conn):
    """A symbol named `_` or a line of punctuation is no query: the API refuses it (400),
    and the load bench counted that refusal as an error of the service."""
    from app.wire.retrieve import check_text

    conn.execute("select service.create_org(%s)", (bench.ORG,))
    conn.execute("insert into data.repos (org_id, repo_id) values (%s, %s)", (bench.ORG, bench.CORPUS_REPO))
    rows = [
        ("mod._", "def _(x):\n    return x"),
        (None, "--- *** --- === +++"),
        ("mod.parse", "def parse(text):\n    return text.split()"),
        (None, "Rotate the journal nightly at two."),
        ("mod.__", "__ = 1"),
    ]
    for symbol, text in rows:
        conn.execute(
            "insert into data.fragments (fragment_id, org_id, repo_id, namespace, kind, owner, heading_path, symbol,"
            " text, content_hash, token_count, chunker_version, simhash, tsv)"
            " values (nextval('data.fragment_id_seq'), %s, %s, 'code', 'code', 'bench', '{}', %s, %s, md5(%s), 5,"
            " 'test', 0, api.lexical_document('', %s))",
            (bench.ORG, bench.CORPUS_REPO, symbol, text, text, text),
        )
    for seed in range(8):
        queries = bench.sample_queries(conn, 10, seed)
        assert queries and "_" not in queries and "__" not in queries
        for query in queries:
            check_text("query", query)
