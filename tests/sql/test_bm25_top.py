"""data._bm25_top returns exactly the BM25 top k that scoring every posting gives, while
skipping common terms (term-level MaxScore): over random corpora, queries from one term
to thirty, k from 1 to 200, scopes, path restrictions and every retrieval filter."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

WORDS = [f"w{i:03d}" for i in range(400)]
KINDS = ["doc", "adr", "runbook", "code"]
NOW = datetime(2026, 6, 1, tzinfo=UTC)


def zipf_word(rng: random.Random) -> str:
    # A heavy head (w000..w009 in most fragments) and a long tail of rare words.
    return WORDS[min(int(rng.paretovariate(0.9)) - 1, len(WORDS) - 1) if rng.random() < 0.7 else rng.randrange(400)]


@pytest.fixture
def corpus(conn):
    """3,000 fragments in two repos, one persona and one session, with random kinds, dates,
    negative flags and validity windows (written directly: the trigger keeps BM25)."""
    rng = random.Random(20261202)
    conn.execute("select api.create_org('acme')")
    conn.execute("insert into data.repos (org_id, repo_id) values ('acme', 'r1'), ('acme', 'r2')")
    rows = []
    for i in range(3000):
        words = [zipf_word(rng) for _ in range(rng.randint(3, 80))]
        repo = rng.choice(["r1", "r2", None])
        persona = "p1" if rng.random() < 0.1 else None
        session = "s1" if rng.random() < 0.05 else None
        start = NOW - timedelta(days=rng.randint(0, 400)) if rng.random() < 0.2 else None
        until = NOW + timedelta(days=rng.randint(-200, 200)) if rng.random() < 0.2 else None
        rows.append(
            (
                repo,
                persona,
                session,
                rng.choice(KINDS),
                f"heading {zipf_word(rng)}",
                " ".join(words),
                f"h{i}",
                rng.random() < 0.1,
                NOW - timedelta(days=rng.randint(0, 900)),
                start,
                until,
            )
        )
    columns = list(zip(*rows, strict=True))
    conn.execute(
        "insert into data.fragments (fragment_id, org_id, repo_id, persona_id, session_id, namespace, kind, owner,"
        " heading_path, text, content_hash, token_count, chunker_version, simhash, tsv, negative, updated_at,"
        " valid_from, valid_until)"
        " select nextval('data.fragment_id_seq'), 'acme', r, p, s, 'prose', k, 'o', array[h], t, c, 10, 'test', 1,"
        " api.lexical_document(h, t), n, u, vf, vu"
        " from unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[],"
        " %s::boolean[], %s::timestamptz[], %s::timestamptz[], %s::timestamptz[])"
        " as x(r, p, s, k, h, t, c, n, u, vf, vu)",
        [list(c) for c in columns],
    )
    conn.execute("analyze")
    return conn


def exhaustive(conn, scope, query, k, path_ids, filters):
    """Every posting scored (data._bm25_scores), then the filters, then the top k."""
    return conn.execute(
        "with b as materialized (select * from data._bm25_scores('acme', %s, %s, %s, %s, %s, 1.2, 0.75))"
        " select b.fragment_id, b.score from b"
        " join unnest(data._bm25_kept('acme', array(select fragment_id from b), %s, %s, %s, %s, %s)) k(id)"
        " on k.id = b.fragment_id order by b.score desc, b.fragment_id limit %s",
        (query, *scope, path_ids, *filters, k),
    ).fetchall()


def pruned(conn, scope, query, k, path_ids, filters):
    return conn.execute(
        # Pruning from 500 postings on: this corpus is small, the logic is the same.
        "select fragment_id, score from data._bm25_top('acme', %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s,"
        " p_prune_from => 500)",
        (query, *scope, path_ids, k, *filters),
    ).fetchall()


def ranked(rows):
    """Order by score rounded below the summation order's last bits, then id."""
    return [(i, round(s, 9)) for i, s in sorted(rows, key=lambda r: (-round(r[1], 9), r[0]))]


def test_pruned_top_k_equals_scoring_every_posting(corpus):
    rng = random.Random(7)
    ids = [r[0] for r in corpus.execute("select fragment_id from data.fragments order by fragment_id").fetchall()]
    notices: list[str] = []
    corpus.add_notice_handler(lambda diag: notices.append(diag.message_primary or ""))
    corpus.execute("set client_min_messages = debug1")
    scopes = [(None, None, None), ("r1", None, None), ("r2", "p1", None), (None, None, "s1")]
    filter_sets = [
        (None, None, None, None, None),
        (["doc", "adr"], None, None, None, None),
        (None, NOW - timedelta(days=300), NOW - timedelta(days=30), None, None),
        (None, None, None, False, NOW),
        (["code"], None, None, True, None),
    ]
    cases = 0
    for case in range(100):
        size = rng.choice([1, 2, 3, 5, 8, 13, 20, 30])
        query = " ".join(zipf_word(rng) for _ in range(size))
        k = rng.choice([1, 5, 20, 100, 200])
        scope = rng.choice(scopes)
        filters = rng.choice(filter_sets) if case % 2 else filter_sets[0]
        path_ids = sorted(rng.sample(ids, 1500)) if case % 7 == 0 else None
        expected = exhaustive(corpus, scope, query, k, path_ids, filters)
        actual = pruned(corpus, scope, query, k, path_ids, filters)
        assert ranked(actual) == ranked(expected), (query, k, scope, filters, path_ids is not None)
        cases += 1
    skipped = [n for n in notices if n.startswith("bm25_top:") and not n.startswith("bm25_top: 0 ")]
    # Pruning must really run on this corpus, not fall back to scoring everything.
    assert len(skipped) >= cases // 4, notices[:5]


def test_lexical_search_keeps_its_contract(corpus):
    top = corpus.execute("select fragment_id, score, rank from api.search_lexical('acme', 'w000 w001 w150', 10)")
    rows = top.fetchall()
    assert [r[2] for r in rows] == list(range(1, 11))
    assert [r[1] for r in rows] == sorted((r[1] for r in rows), reverse=True)
    assert corpus.execute("select count(*) from api.search_lexical('acme', 'w000', 0)").fetchone() == (0,)
    with pytest.raises(Exception, match="k must be zero or more"):
        corpus.execute("select * from api.search_lexical('acme', 'w000', null)")
