"""Golden-set runs end to end on a tiny BEIR directory made here: strict loading,
ingestion through the real lane (cached per content and pipeline version), every
stage through the Retriever, document-level metrics, and the CLI's contract."""

from __future__ import annotations

import json
import math

import psycopg
import pytest
from click.testing import CliRunner

from app.cli import main
from app.eval import beir, golden

CORPUS = [
    {"_id": "d1", "title": "Volcano eruptions", "text": "Magma chambers under the volcano feed basalt lava flows."},
    {"_id": "d2", "title": "Glaciers", "text": "Glacier ice carves fjords and moraines over millennia."},
    {"_id": "d3", "title": "Coral reefs", "text": "Reef-building coral polyps bleach when ocean water warms."},
    {"_id": "d4", "title": "Desert dunes", "text": "Wind sorts sand into barchan dunes in arid deserts."},
    {"_id": "d/5", "title": "Tides", "text": "The moon's gravity raises ocean tides twice a day."},
]
QUERIES = [
    {"_id": "q1", "text": "basalt lava from magma chambers", "scope": "geology"},
    {"_id": "q2", "text": "coral polyps bleach", "metadata": {"scope": "ocean"}},
    {"_id": "q3", "text": "why do ocean tides follow the moon", "scope": "ocean"},
    {"_id": "q4", "text": "unlabelled query"},
    {"_id": "q5", "text": "a query whose only label is not relevant"},
]
QRELS = "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td3\t2\nq3\td/5\t1\nq5\td2\t0\n"


def write_set(root, corpus=CORPUS, queries=QUERIES, qrels=QRELS, splits=("test",)):
    root.mkdir(parents=True, exist_ok=True)
    (root / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in corpus))
    (root / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    (root / "qrels").mkdir(exist_ok=True)
    for split in splits:
        (root / "qrels" / f"{split}.tsv").write_text(qrels)
    return root


def test_load_reads_labels_and_skips_queries_without_relevant_documents(tmp_path):
    dataset = beir.load(write_set(tmp_path / "geo"))
    assert dataset.split == "test"
    assert list(dataset.queries) == ["q1", "q2", "q3"]
    assert dataset.skipped_queries == ["q5"]
    assert dataset.queries["q2"].scope == "ocean"
    assert dataset.qrels["q2"] == {"d3": 2}


@pytest.mark.parametrize(
    "breakage, message",
    [
        (lambda root: (root / "qrels" / "dev.tsv").write_text(QRELS), "several splits"),
        (lambda root: (root / "corpus.jsonl").write_text('{"_id": "x", "text": "a"}\n{broken\n'), "corpus.jsonl:2"),
        (lambda root: (root / "qrels" / "test.tsv").write_text("q1\td1\t1\n"), "header"),
        (
            lambda root: (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\tyes\n"),
            "not a number",
        ),
        (
            lambda root: (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq9\td1\t1\n"),
            "not in queries.jsonl",
        ),
        (lambda root: (root / "queries.jsonl").unlink(), "queries.jsonl is missing"),
    ],
)
def test_malformed_sets_fail_with_a_message(tmp_path, breakage, message):
    root = write_set(tmp_path / "geo")
    breakage(root)
    with pytest.raises(beir.DatasetError, match=message):
        beir.load(root)


def test_named_split_and_unknown_split(tmp_path):
    root = write_set(tmp_path / "geo", splits=("dev", "test"))
    assert beir.load(root, "dev").split == "dev"
    with pytest.raises(beir.DatasetError, match="no split 'train'"):
        beir.load(root, "train")


def test_kind_is_detected_from_content(tmp_path):
    code = [{"_id": f"c{i}", "title": "", "text": f"def f{i}(x):\n    return x + {i}\n"} for i in range(5)]
    assert (
        beir.detect_kind(beir.load(write_set(tmp_path / "code", corpus=code, qrels="a\tb\tc\nq1\tc1\t1\n"))) == "code"
    )
    assert beir.detect_kind(beir.load(write_set(tmp_path / "prose"))) == "prose"
    assert beir.document_path("d/5", "prose") == "d%2F5.txt"
    assert beir.document_path("c1", "code") == "c1.py"
    # Under their own paths (kind files), ids map back to themselves.
    assert beir.document_path("src/click/core.py", "files") == "src/click/core.py"
    assert beir.corpus_id("src/click/core.py", "files") == "src/click/core.py"
    assert beir.corpus_id("d%2F5.txt", "prose") == "d/5"


FILES = [
    {
        "_id": "src/shop/cart.py",
        "title": "src/shop/cart.py",
        "text": "def cart_total(items):\n    return sum(i.price for i in items)\n",
    },
    {
        "_id": "src/shop/tax.py",
        "title": "src/shop/tax.py",
        "text": "VAT = 0.2\n\n\ndef with_vat(amount):\n    return amount * (1 + VAT)\n",
    },
    {
        "_id": "docs/refunds.md",
        "title": "docs/refunds.md",
        "text": "# Refunds\n\nRefunds are issued within 14 days of a return.\n",
    },
    {
        "_id": "CHANGES.rst",
        "title": "CHANGES.rst",
        "text": "Version 2.0\n-----------\n\n- Tax is added to the cart total.\n",
    },
    {"_id": "setup.cfg", "title": "setup.cfg", "text": "[metadata]\nname = shop\n"},
]


def test_a_repository_of_files_is_ingested_under_its_own_paths(conn, pipeline, retriever, tmp_path):
    """Ids that are paths: each file keeps its path, so the pipeline picks chunker and
    namespace per file (Python as code, Markdown as prose), and results map back."""
    assert beir.looks_like_file_path("src/click/core.py") and beir.looks_like_file_path("CHANGES.rst")
    for not_a_path in ("4983", "D1:1", "tensorflowhub-0", "../etc/passwd.py", "/abs/x.py", "a b.py", "v1.2"):
        assert not beir.looks_like_file_path(not_a_path), not_a_path
    qrels = "query-id\tcorpus-id\tscore\nq1\tsrc/shop/tax.py\t1\nq2\tdocs/refunds.md\t1\n"
    queries = [{"_id": "q1", "text": "add VAT to an amount"}, {"_id": "q2", "text": "how long do refunds take"}]
    dataset = beir.load(write_set(tmp_path / "shop", corpus=FILES, queries=queries, qrels=qrels))
    assert beir.detect_kind(dataset) == "files"
    assert beir.document_path("src/shop/tax.py", "files") == "src/shop/tax.py"
    assert beir.document_text(beir.CorpusDoc("setup.cfg", "setup.cfg", "[metadata]\n"), "files") == "[metadata]"

    report = golden.run(conn, pipeline, retriever, dataset, golden.GoldenOptions(depth=100, out_dir=tmp_path / "out"))
    assert report["kind"] == "files" and report["ingested_now"] == 5
    rows = dict(
        conn.execute(
            "select path, namespace from data.documents d join data.fragment_sources s using (doc_id) "
            "join data.fragments f using (fragment_id) where d.org_id = %s",
            (report["org"],),
        ).fetchall()
    )
    assert rows["src/shop/tax.py"] == "code" and rows["docs/refunds.md"] == "prose"
    lines = [json.loads(line) for line in (tmp_path / "out" / "shop-test.jsonl").read_text().splitlines()]
    assert lines[0]["stages"]["lexical"]["top10"][0] == "src/shop/tax.py"
    assert lines[1]["stages"]["hybrid"]["top10"][0] == "docs/refunds.md"


def test_golden_run_scores_every_stage_and_caches_the_corpus(conn, pipeline, retriever, tmp_path):
    dataset = beir.load(write_set(tmp_path / "geo"))
    options = golden.GoldenOptions(depth=100, out_dir=tmp_path / "out")
    report = golden.run(conn, pipeline, retriever, dataset, options)

    assert report["queries"] == 3 and report["skipped_queries"] == 1
    assert set(report["stages"]) == {"lexical", "dense", "hybrid", "full"}
    # Each query's words are its document's own: BM25 ranks the labelled one first.
    assert report["stages"]["lexical"] == {"ndcg@10": 1.0, "mrr@10": 1.0, "recall@10": 1.0, "recall@100": 1.0}
    for stage in ("dense", "hybrid", "full"):
        assert report["stages"][stage]["recall@100"] == 1.0  # five documents, all ranked
    assert report["stages"]["full"] == report["stages"]["hybrid"]
    assert report["full_stage"] == "no reranker configured: full = hybrid order"
    assert report["kind"] == "prose" and report["ingested_now"] == 5
    assert set(report["scopes"]) == {"geology", "ocean"}
    assert report["scopes"]["ocean"]["queries"] == 2

    lines = (tmp_path / "out" / "geo-test.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    assert first["query_id"] == "q1" and first["stages"]["lexical"]["top10"][0] == "d1"
    assert first["stages"]["lexical"]["first_relevant_rank"] == 1
    # Corpus ids with characters a path cannot carry as is map back exactly.
    third = json.loads(lines[2])
    assert third["stages"]["lexical"]["top10"][0] == "d/5"

    again = golden.run(conn, pipeline, retriever, dataset, options)
    assert again["ingested_now"] == 0 and again["org"] == report["org"]
    assert again["stages"] == report["stages"]

    # Changed content: a new org, and the stale copy is dropped.
    write_set(tmp_path / "geo", corpus=CORPUS + [{"_id": "d6", "title": "Rivers", "text": "Rivers meander."}])
    changed = golden.run(conn, pipeline, retriever, beir.load(tmp_path / "geo"), options)
    assert changed["org"] != report["org"] and changed["ingested_now"] == 6
    orgs = [r[0] for r in conn.execute("select org_id from data.orgs order by org_id")]
    assert orgs == [changed["org"]]


def test_near_duplicate_documents_both_count_as_retrieved(conn, pipeline, retriever, tmp_path):
    text = "Quantum annealing schedules tune the transverse field across many qubits in the device."
    corpus = [
        {"_id": "a", "title": "", "text": text},
        {"_id": "b", "title": "", "text": text},
        {"_id": "c", "title": "", "text": "Sourdough bread rises slowly with wild yeast."},
    ]
    qrels = "query-id\tcorpus-id\tscore\nq1\ta\t1\nq1\tb\t1\n"
    dataset = beir.load(
        write_set(
            tmp_path / "dup",
            corpus=corpus,
            queries=[{"_id": "q1", "text": "quantum annealing transverse field"}],
            qrels=qrels,
        )
    )
    report = golden.run(conn, pipeline, retriever, dataset, golden.GoldenOptions(stages=("lexical",), depth=100))
    assert report["stages"]["lexical"]["ndcg@10"] == pytest.approx(1.0)
    assert set(report["stages"]) == {"lexical"}


def test_cli_json_contract_and_errors(db_url, tmp_path):
    root = write_set(tmp_path / "geo")
    result = CliRunner().invoke(
        main,
        [
            "--db-url",
            db_url,
            "eval",
            "run",
            str(root),
            "--pipeline",
            "lexical",
            "--json",
            "--out",
            str(tmp_path / "out"),
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout.strip().splitlines()[-1])
    assert body["dataset"] == "geo" and body["split"] == "test" and body["queries"] == 3
    assert list(body["stages"]) == ["lexical"]
    assert set(body["stages"]["lexical"]) == {"ndcg@10", "mrr@10", "recall@10", "recall@100"}
    assert "pipeline_version" in body
    # Stored for charting: one figure per stage, query scope (none: all) and metric.
    with psycopg.connect(db_url) as conn:
        run = conn.execute(
            "select command, datasets, pipeline = %s::jsonb, options ->> 'depth' from api.eval_runs where run_id = %s",
            (json.dumps(body["pipeline_version"]), body["eval_run_id"]),
        ).fetchone()
        assert run == ("run", ["geo"], True, "200")
        figures = conn.execute(
            "select scope, metric, value, queries from api.eval_figures where run_id = %s and stage = 'lexical'",
            (body["eval_run_id"],),
        ).fetchall()
    assert sorted((s or "", m, v, q) for s, m, v, q in figures) == sorted(
        [("", m, v, 3) for m, v in body["stages"]["lexical"].items()]
        + [
            (scope, m, v, block["queries"])
            for scope, block in body["scopes"].items()
            for m, v in block["stages"]["lexical"].items()
        ]
    )

    (root / "qrels" / "dev.tsv").write_text(QRELS)
    several = CliRunner().invoke(main, ["--db-url", db_url, "eval", "run", str(root)])
    assert several.exit_code != 0 and "several splits" in several.output
    missing = CliRunner().invoke(main, ["--db-url", db_url, "eval", "run", str(tmp_path / "nowhere")])
    assert missing.exit_code != 0 and "no such dataset" in missing.output


def test_rerank_collect_keeps_the_head_candidates_and_reads_them_back(conn, pipeline, retriever, tmp_path):
    """`contexts rerank collect` keeps each labelled query's fused head with its grades;
    a candidate's reading (bytes, from the database) is left out, its text kept."""
    import numpy as np

    from app.eval import rerank_data
    from app.retrieve import features

    target = tmp_path / "geo.jsonl.gz"
    assert rerank_data.collect(conn, pipeline, retriever, beir.load(write_set(tmp_path / "geo")), target, 5) == 3
    rows = list(rerank_data.read(target))
    assert [r.query_id for r in rows] == ["q1", "q2", "q3"]
    first = rows[0]
    assert first.head and first.grades[0] == 1 and first.head_docs[0] == ["d1"]
    assert all(c.reading is None and c.text for r in rows for c in r.head)
    assert np.isfinite(features.extract(first.query, first.head)).all()


TAX = '''"""Shop taxes."""


def add_vat(amount, rate):
    """Add value added tax to a net amount."""
    gross = amount * (1 + rate)
    return round(gross, 2)


def refund_window(days):
    """How long a customer may return goods."""
    if days > 14:
        raise ValueError("refunds close after fourteen days")
    return days
'''


def write_shop(root):
    """A set labelled per fragment: a code file with two functions, and a doc."""
    corpus = [
        {"_id": "src/shop/tax.py", "title": "src/shop/tax.py", "text": TAX},
        {
            "_id": "docs/refunds.md",
            "title": "docs/refunds.md",
            "text": "# Refunds\n\nRefunds are issued within days.\n",
        },
    ]
    queries = [
        {"_id": "q1", "text": "add value added tax to a net amount"},
        {"_id": "q2", "text": "add value added tax to a net amount, with refunds closing"},
        {"_id": "q3", "text": "refunds issued within days"},
        {"_id": "q4", "text": "gross amount"},
    ]
    qrels = (
        "query-id\tcorpus-id\tscore\n"
        "q1\tsrc/shop/tax.py#L4\t2\n"  # add_vat's def line
        "q2\tsrc/shop/tax.py#L10\t1\n"  # refund_window's def line: not add_vat's fragment
        "q3\tdocs/refunds.md\t1\n"
        "q4\tsrc/shop/tax.py#L99\t1\n"  # past the file's end: no fragment holds it
    )
    return write_set(root, corpus=corpus, queries=queries, qrels=qrels)


def test_fragment_labels_are_scored_per_fragment(conn, pipeline, retriever, tmp_path):
    """`PATH#L<n>` names the fragment whose line range holds line n: another fragment of
    the same file ranked first is a miss, not the answer (document-level scoring would
    call it a hit); a plain corpus id in the same set still means any fragment of it."""
    dataset = beir.load(write_shop(tmp_path / "shop"))
    assert dataset.fragment_level and dataset.unknown_labels == 0
    options = golden.GoldenOptions(stages=("lexical",), depth=100, out_dir=tmp_path / "out")
    report = golden.run(conn, pipeline, retriever, dataset, options)
    assert report["labels"] == "fragment" and report["labels_without_fragment"] == 1

    lines = {
        r["query_id"]: r["stages"]["lexical"]
        for r in map(json.loads, (tmp_path / "out" / "shop-test.jsonl").read_text().splitlines())
    }
    assert lines["q1"]["first_relevant_rank"] == 1 and lines["q1"]["metrics"]["ndcg@10"] == 1.0
    assert lines["q1"]["top10"][0] == "src/shop/tax.py#L4"
    # q2: add_vat's fragment is first and is not the answer; refund_window's is below it.
    assert lines["q2"]["top10"][0].startswith("src/shop/tax.py#L1-")
    assert lines["q2"]["first_relevant_rank"] in (2, 3)
    assert lines["q2"]["metrics"]["mrr@10"] == pytest.approx(1 / lines["q2"]["first_relevant_rank"])
    assert lines["q3"]["metrics"]["ndcg@10"] == 1.0
    assert lines["q4"]["metrics"]["recall@100"] == 0.0


def test_rerank_collect_grades_a_fragment_labelled_set_per_fragment(conn, pipeline, retriever, tmp_path):
    """Training candidates of a set labelled `PATH#L<n>` are graded per fragment, as the
    gate scores it: the fragment holding the label's line has its grade, another fragment
    of the same file none (graded per document it had the answer's grade, and the model
    learned to lift the answer's neighbours); a row's nDCG@10 is the gate's."""
    from app.eval import rerank_data

    dataset = beir.load(write_shop(tmp_path / "shop"))
    target = tmp_path / "shop.jsonl.gz"
    rerank_data.collect(conn, pipeline, retriever, dataset, target, 5)
    rows = {r.query_id: r for r in rerank_data.read(target)}
    q2 = rows["q2"]
    assert q2.fragment_level and q2.head_keys is not None
    tax = [i for i, c in enumerate(q2.head) if c.path == "src/shop/tax.py"]
    assert len(tax) == 2  # add_vat's fragment and refund_window's
    answer = next(i for i in tax if "def refund_window" in q2.head[i].text)
    other = next(i for i in tax if i != answer)
    assert q2.grades[answer] == 1 and q2.grades[other] == 0
    assert rows["q3"].grades == [1 if c.path == "docs/refunds.md" else 0 for c in rows["q3"].head]

    # nDCG@10 of an order, per fragment: the answer first is 1.0; its neighbour first,
    # then the answer, is the gate's figure for that order (second place), not a hit.
    rest = [i for i in range(len(q2.head)) if i not in (answer, other)]
    assert q2.ndcg([answer, other, *rest]) == 1.0
    assert q2.ndcg([other, answer, *rest]) == pytest.approx(1 / math.log2(3))

    options = golden.GoldenOptions(stages=("hybrid",), rerank_top=5, out_dir=tmp_path / "out")
    report = golden.run(conn, pipeline, retriever, dataset, options)
    mean_rows = sum(r.ndcg(list(range(len(r.head)))) for r in rows.values()) / len(rows)
    assert mean_rows == pytest.approx(report["stages"]["hybrid"]["ndcg@10"], abs=1e-4)
