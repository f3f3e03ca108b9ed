"""BM25 in SQL equals Okapi BM25 computed by hand (k1=1.2, b=0.75, Lucene idf), and its
statistics follow fragments as they are added and retired."""

from __future__ import annotations

import hashlib
import json
import math

import pytest

K1, B = 1.2, 0.75


def add_doc(conn, org: str, path: str, text: str, repo: str | None = None) -> int:
    doc_id, version, _ = conn.execute(
        "select * from api.begin_document(%s, %s, null, null, %s, 'doc', %s, %s)",
        (org, repo, path, text, hashlib.sha256(text.encode()).hexdigest())).fetchone()
    chunk = {"namespace": "prose", "owner": "tester", "heading_path": [], "lexical_heading": "",
             "symbol": None, "text": text, "content_hash": hashlib.sha256(text.encode()).hexdigest(),
             "token_count": len(text.split()), "chunker_version": "test",
             "simhash": int(hashlib.sha256(text.encode()).hexdigest()[:15], 16), "anchor": "",
             "start_line": 1, "end_line": 1, "embedding": [1.0, 0.0, 0.0]}
    conn.execute("select * from api.add_fragments(%s, %s, %s)", (doc_id, version, json.dumps([chunk])))
    return doc_id


@pytest.fixture
def corpus(conn):
    conn.execute("select api.create_org('acme')")
    conn.execute("select api.register_embedding_model('prose', 'test-model', 3)")
    add_doc(conn, "acme", "d1", "apple banana")
    add_doc(conn, "acme", "d2", "apple apple cherry")
    add_doc(conn, "acme", "d3", "durian fig grape kiwi")
    return conn


def bm25(tf: int, dl: int, df: int, n: int, avgdl: float) -> float:
    idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
    return idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * dl / avgdl))


def test_scores_match_hand_computation(corpus):
    rows = corpus.execute("select f.text, s.score, s.rank from api.search_lexical('acme', 'apple') s "
                          "join data.fragments f using (fragment_id) order by s.rank").fetchall()
    # N = 3 fragments, total length 2 + 3 + 4 = 9, avgdl = 3; "apple" in 2 of them.
    expected = {"apple apple cherry": bm25(2, 3, 2, 3, 3.0), "apple banana": bm25(1, 2, 2, 3, 3.0)}
    assert [r[0] for r in rows] == ["apple apple cherry", "apple banana"]
    for text, score, _rank in rows:
        assert score == pytest.approx(expected[text], rel=1e-12)
    assert expected["apple apple cherry"] == pytest.approx(0.6462550, rel=1e-6)


def test_multi_term_query_sums_terms(corpus):
    score = corpus.execute("select s.score from api.search_lexical('acme', 'banana and kiwi apples') s "
                           "join data.fragments f using (fragment_id) where f.text = 'apple banana'").fetchone()[0]
    assert score == pytest.approx(bm25(1, 2, 2, 3, 3.0) + bm25(1, 2, 1, 3, 3.0), rel=1e-12)


def test_statistics_follow_retired_versions(corpus):
    stats = corpus.execute("select fragment_count, total_length from data.bm25_corpus where org_id = 'acme'").fetchone()
    assert stats == (3, 9)
    add_doc(corpus, "acme", "d3", "kiwi")  # new version of d3 retires "durian fig grape kiwi"
    stats = corpus.execute("select fragment_count, total_length from data.bm25_corpus where org_id = 'acme'").fetchone()
    assert stats == (3, 6)
    df = dict(corpus.execute("select term, df from data.bm25_terms where org_id = 'acme'").fetchall())
    assert df["durian"] == 0 and df["kiwi"] == 1 and df["appl"] == 2
    rows = corpus.execute("select count(*) from data.bm25_postings p join data.fragments f using (fragment_id) "
                          "where not f.active").fetchone()
    assert rows == (0,)


def test_statistics_are_per_org(corpus):
    before = corpus.execute("select score from api.search_lexical('acme', 'apple')").fetchall()
    corpus.execute("select api.create_org('other')")
    for i in range(5):
        add_doc(corpus, "other", f"o{i}", f"apple apple apple orchard {i}")
    after = corpus.execute("select score from api.search_lexical('acme', 'apple')").fetchall()
    assert before == after
    assert corpus.execute("select count(*) from api.search_lexical('other', 'cherry')").fetchone() == (0,)


def test_lexical_plan_uses_the_postings_index(corpus):
    corpus.execute("set enable_seqscan = off")
    plan = "\n".join(r[0] for r in corpus.execute(
        "explain select fragment_id, tf, dl from data.bm25_postings where org_id = 'acme' and term = 'appl'").fetchall())
    assert "bm25_postings_pkey" in plan
