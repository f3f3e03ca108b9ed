"""data._bm25_top returns exactly the BM25 top k that scoring every posting gives, while
the C scorer skips common terms and sub-blocks (MaxScore over packed blocks): over random
corpora, queries from one term to thirty, k from 1 to 200, scopes, path restrictions,
every retrieval filter, and the BM25 of extra ids read from the same blocks. The
reference is written here in SQL over the decoded postings, apart from the C scorer."""

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
    conn.execute("select service.create_org('acme')")
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


def exhaustive(conn, scope, query, path_ids, filters):
    """Every posting of the query's terms decoded and scored in SQL (the formula of
    docs/adr/0004 over the statistics of the scope), then the filters: id -> score."""
    rows = conn.execute(
        """
        with corpus as (
            select sum(c.fragment_count)::float8 as n,
                   sum(c.total_length)::float8 / sum(c.fragment_count)::float8 as avgdl
            from data.bm25_corpus c
            where c.org_id = 'acme' and data._in_scope(c.repo_id, c.persona_id, c.session_id, %(r)s, %(p)s, %(s)s)
        ), said as (
            select q.lexeme as term, cardinality(q.positions) as times
            from unnest(api.lexical_tsvector(%(q)s)) q
        ), weighted as (
            select s.term, q.times * ln(1 + (c.n - sum(s.df) + 0.5) / (sum(s.df) + 0.5)) as idf
            from data.bm25_terms s join said q using (term) cross join corpus c
            where s.org_id = 'acme' and s.df > 0
              and data._in_scope(s.repo_id, s.persona_id, s.session_id, %(r)s, %(p)s, %(s)s)
            group by s.term, q.times, c.n
        ), postings as (
            select b.term, x.fragment_id, x.tf, x.dl
            from data.bm25_blocks b, extensions.bm25_postings(b.postings) x
            where b.org_id = 'acme' and b.term in (select w.term from weighted w)
              and data._in_scope(b.repo_id, b.persona_id, b.session_id, %(r)s, %(p)s, %(s)s)
        ), scored as materialized (
            select p.fragment_id,
                   sum(w.idf * p.tf * 2.2 / (p.tf + 1.2 * (0.25 + 0.75 * p.dl / c.avgdl))) as score
            from postings p join weighted w using (term) cross join corpus c
            where %(ids)s::bigint[] is null or p.fragment_id = any (%(ids)s::bigint[])
            group by p.fragment_id
        )
        select b.fragment_id, b.score from scored b
        join unnest(data._bm25_kept('acme', array(select fragment_id from scored),
                                    %(kinds)s, %(since)s, %(until)s, %(neg)s, %(valid)s)) k(id)
          on k.id = b.fragment_id
        """,
        {
            "q": query,
            "r": scope[0],
            "p": scope[1],
            "s": scope[2],
            "ids": path_ids,
            "kinds": filters[0],
            "since": filters[1],
            "until": filters[2],
            "neg": filters[3],
            "valid": filters[4],
        },
    ).fetchall()
    return dict(rows)


def top(scores: dict, k: int) -> list:
    return sorted(scores.items(), key=lambda r: (-r[1], r[0]))[:k]


def pruned(conn, scope, query, k, path_ids, filters, also=None):
    return conn.execute(
        "select fragment_id, score, in_top from data._bm25_top('acme', %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s,"
        " p_also_ids => %s)",
        (query, *scope, path_ids, k, *filters, also),
    ).fetchall()


def ranked(rows):
    """Order by score rounded below the summation order's last bits, then id."""
    return [(i, round(s, 9)) for i, s in sorted(rows, key=lambda r: (-round(r[1], 9), r[0]))]


def test_pruned_top_k_equals_scoring_every_posting(corpus):
    rng = random.Random(7)
    ids = [r[0] for r in corpus.execute("select fragment_id from data.fragments order by fragment_id").fetchall()]
    scopes = [(None, None, None), ("r1", None, None), ("r2", "p1", None), (None, None, "s1")]
    filter_sets = [
        (None, None, None, None, None),
        (["doc", "adr"], None, None, None, None),
        (None, NOW - timedelta(days=300), NOW - timedelta(days=30), None, None),
        (None, None, None, False, NOW),
        (["code"], None, None, True, None),
    ]
    also_checked = 0
    for case in range(100):
        size = rng.choice([1, 2, 3, 5, 8, 13, 20, 30])
        query = " ".join(zipf_word(rng) for _ in range(size))
        k = rng.choice([1, 5, 20, 100, 200])
        scope = rng.choice(scopes)
        filters = rng.choice(filter_sets) if case % 2 else filter_sets[0]
        path_ids = sorted(rng.sample(ids, 1500)) if case % 7 == 0 else None
        also = rng.sample(ids, 300) if case % 3 == 0 else None
        every = exhaustive(corpus, scope, query, path_ids, filters)
        rows = pruned(corpus, scope, query, k, path_ids, filters, also)
        actual = [(i, s) for i, s, in_top in rows if in_top]
        assert ranked(actual) == ranked(top(every, k)), (query, k, scope, filters, path_ids is not None)
        if also is not None:
            # The extra ids' BM25, from the same blocks: every one holding a query term in
            # scope and outside the top k, whatever the filters (the dense side applied them).
            unfiltered = exhaustive(corpus, scope, query, None, filter_sets[0])
            extra = {i: s for i, s, in_top in rows if not in_top}
            in_top = {i for i, _ in actual}
            expected = {i: unfiltered[i] for i in also if i in unfiltered and i not in in_top}
            assert extra == pytest.approx(expected, rel=1e-9), (query, k, scope)
            also_checked += len(expected)
    assert also_checked > 100


def test_lexical_search_keeps_its_contract(corpus):
    top = corpus.execute("select fragment_id, score, rank from api.search_lexical('acme', 'w000 w001 w150', 10)")
    rows = top.fetchall()
    assert [r[2] for r in rows] == list(range(1, 11))
    assert [r[1] for r in rows] == sorted((r[1] for r in rows), reverse=True)
    assert corpus.execute("select count(*) from api.search_lexical('acme', 'w000', 0)").fetchone() == (0,)
    with pytest.raises(Exception, match="k must be zero or more"):
        corpus.execute("select * from api.search_lexical('acme', 'w000', null)")
