"""BM25 in SQL equals Okapi BM25 computed by hand (k1=1.2, b=0.75, Lucene idf), and its
statistics follow fragments as they are added and retired."""

from __future__ import annotations

import hashlib
import json
import math
import re

import pytest

from app.access import ensure_admin_principal

K1, B = 1.2, 0.75


def add_doc(conn, org: str, path: str, text: str, repo: str | None = None) -> int:
    ensure_admin_principal(conn, org, "admin")
    conn.execute("select service.bind_principal(%s, 'admin')", (org,))
    doc_id, version, _changed, _rehome = conn.execute(
        "select * from service.begin_document(%s, %s, null, null, %s, 'doc', %s, %s)",
        (org, repo, path, text, hashlib.sha256(text.encode()).hexdigest()),
    ).fetchone()
    chunk = {
        "namespace": "prose",
        "owner": "tester",
        "heading_path": [],
        "lexical_heading": "",
        "symbol": None,
        "text": text,
        "content_hash": hashlib.sha256(text.encode()).hexdigest(),
        "token_count": len(text.split()),
        "chunker_version": "test",
        "simhash": int(hashlib.sha256(text.encode()).hexdigest()[:15], 16),
        "anchor": "",
        "start_line": 1,
        "end_line": 1,
        "embedding": [1.0, 0.0, 0.0],
    }
    conn.execute("select * from service.add_fragments(%s, %s, %s)", (doc_id, version, json.dumps([chunk])))
    return doc_id


@pytest.fixture
def corpus(conn):
    conn.execute("select service.create_org('acme')")
    conn.execute("select service.register_embedding_model('prose', 'test-model', 3)")
    add_doc(conn, "acme", "d1", "apple banana")
    add_doc(conn, "acme", "d2", "apple apple cherry")
    add_doc(conn, "acme", "d3", "durian fig grape kiwi")
    return conn


def bm25(tf: int, dl: int, df: int, n: int, avgdl: float) -> float:
    idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
    return idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * dl / avgdl))


def test_scores_match_hand_computation(corpus):
    rows = corpus.execute(
        "select f.text, s.score, s.rank from api.search_lexical('acme', 'apple') s "
        "join data.fragments f using (fragment_id) order by s.rank"
    ).fetchall()
    # N = 3 fragments, total length 2 + 3 + 4 = 9, avgdl = 3; "apple" in 2 of them.
    expected = {"apple apple cherry": bm25(2, 3, 2, 3, 3.0), "apple banana": bm25(1, 2, 2, 3, 3.0)}
    assert [r[0] for r in rows] == ["apple apple cherry", "apple banana"]
    for text, score, _rank in rows:
        assert score == pytest.approx(expected[text], rel=1e-12)
    assert expected["apple apple cherry"] == pytest.approx(0.6462550, rel=1e-6)


def test_multi_term_query_sums_terms(corpus):
    score = corpus.execute(
        "select s.score from api.search_lexical('acme', 'banana and kiwi apples') s "
        "join data.fragments f using (fragment_id) where f.text = 'apple banana'"
    ).fetchone()[0]
    assert score == pytest.approx(bm25(1, 2, 2, 3, 3.0) + bm25(1, 2, 1, 3, 3.0), rel=1e-12)


def test_a_term_the_query_says_twice_counts_twice(corpus):
    """Okapi's query term frequency, as Lucene and Tantivy count a repeated term: a long
    question that names its subject twice ("apple ... apples") asks for it more."""
    once = dict(corpus.execute("select fragment_id, score from api.search_lexical('acme', 'apple cherry')").fetchall())
    twice = dict(
        corpus.execute("select fragment_id, score from api.search_lexical('acme', 'apples, and an apple cherry')")
    )
    assert once.keys() == twice.keys() and len(once) == 2
    apple = bm25(2, 3, 2, 3, 3.0)  # "apple apple cherry"
    for fragment_id, score in once.items():
        assert twice[fragment_id] > score
    both = corpus.execute(
        "select s.score from api.search_lexical('acme', 'apples, and an apple cherry') s "
        "join data.fragments f using (fragment_id) where f.text = 'apple apple cherry'"
    ).fetchone()[0]
    assert both == pytest.approx(2 * apple + bm25(1, 3, 1, 3, 3.0), rel=1e-12)


def test_statistics_follow_retired_versions(corpus):
    stats = corpus.execute("select fragment_count, total_length from data.bm25_corpus where org_id = 'acme'").fetchone()
    assert stats == (3, 9)
    add_doc(corpus, "acme", "d3", "kiwi")  # new version of d3 retires "durian fig grape kiwi"
    stats = corpus.execute("select fragment_count, total_length from data.bm25_corpus where org_id = 'acme'").fetchone()
    assert stats == (3, 6)
    df = dict(corpus.execute("select term, df from data.bm25_terms where org_id = 'acme'").fetchall())
    assert "durian" not in df and df["kiwi"] == 1 and df["appl"] == 2
    assert_statistics_match_active_fragments(corpus)
    rows = corpus.execute(
        "select count(*) from data.bm25_blocks b, extensions.bm25_postings(b.postings) p"
        " join data.fragments f using (fragment_id) where not f.active"
    ).fetchone()
    assert rows == (0,)


def test_statistics_are_per_org(corpus):
    before = corpus.execute("select score from api.search_lexical('acme', 'apple')").fetchall()
    corpus.execute("select service.create_org('other')")
    for i in range(5):
        add_doc(corpus, "other", f"o{i}", f"apple apple apple orchard {i}")
    corpus.commit()  # ends the binding: read on as the (RLS-bypassing) test superuser
    after = corpus.execute("select score from api.search_lexical('acme', 'apple')").fetchall()
    assert before == after
    assert corpus.execute("select count(*) from api.search_lexical('other', 'cherry')").fetchone() == (0,)


def assert_statistics_match_active_fragments(conn) -> None:
    """The maintained BM25 tables equal a recount from scratch over active fragments,
    per scope group (org and repo/persona/session labels), and the postings are exactly
    the active fragments' terms: none left behind by a fragment retired or deleted (no
    foreign key removes them, migration 0021), none missing. The packed blocks keep
    their layout (migration 0027): within an org, term and scope group, id ranges
    disjoint and in order, each block's postings inside its range and counted, and the
    open blocks last."""
    group = (
        "org_id || '|' || coalesce(repo_id, '') || '|' || coalesce(persona_id, '') || '|' || coalesce(session_id, '')"
    )
    recount = conn.execute(f"""
        with terms as (
            select f.org_id, f.repo_id, f.persona_id, f.session_id, f.fragment_id, t.lexeme,
                   coalesce(array_length(t.positions, 1), 1) as tf
            from data.fragments f, unnest(f.tsv) t where f.active)
        select (select coalesce(jsonb_object_agg(g || '/' || lexeme, df), '{{}}') from
                   (select {group} as g, lexeme, count(*) as df from terms group by 1, 2) d),
               (select coalesce(jsonb_object_agg(g, jsonb_build_array(n, len)), '{{}}') from
                   (select {group} as g, count(distinct fragment_id) as n, sum(tf) as len from terms group by 1) c),
               (select count(*) from terms)
    """).fetchone()
    kept = conn.execute(f"""
        select (select coalesce(jsonb_object_agg({group} || '/' || term, df), '{{}}') from data.bm25_terms),
               (select coalesce(jsonb_object_agg({group}, jsonb_build_array(fragment_count, total_length)), '{{}}')
                  from data.bm25_corpus where fragment_count > 0),
               (select coalesce(sum(postings_count), 0) from data.bm25_blocks)
    """).fetchone()
    assert kept == recount
    differing = conn.execute("""
        with terms as (
            select f.org_id, f.fragment_id, t.lexeme as term, coalesce(array_length(t.positions, 1), 1) as tf,
                   f.repo_id, f.persona_id, f.session_id
            from data.fragments f, unnest(f.tsv) t where f.active),
        expected as (
            select org_id, fragment_id, term, tf, (sum(tf) over (partition by org_id, fragment_id))::int as dl,
                   repo_id, persona_id, session_id
            from terms),
        stored as (
            select b.org_id, p.fragment_id, b.term, p.tf, p.dl, b.repo_id, b.persona_id, b.session_id
            from data.bm25_blocks b, extensions.bm25_postings(b.postings) p)
        select (select count(*) from (select * from stored except all select * from expected) extra),
               (select count(*) from (select * from expected except all select * from stored) missing)
    """).fetchone()
    assert differing == (0, 0)
    misplaced = conn.execute("""
        with blocks as (
            select b.*, extensions.bm25_block_first(b.postings) as lo, extensions.bm25_block_last(b.postings) as hi,
                   extensions.bm25_block_count(b.postings) as n,
                   lag(b.last_id) over g as before_end, lag(b.sealed) over g as before_sealed
            from data.bm25_blocks b
            window g as (partition by b.org_id, b.term, b.scope_group order by b.first_id))
        select count(*) filter (where lo < first_id or hi > last_id),
               count(*) filter (where n <> postings_count),
               count(*) filter (where before_end >= first_id),
               count(*) filter (where sealed and before_sealed = false)
        from blocks
    """).fetchone()
    assert misplaced == (0, 0, 0, 0), "outside range, miscounted, overlapping, sealed after open"
    ends = conn.execute("""
        select count(*) filter (where t.list_end < b.list_end),
               count(*) filter (where b.open_blocks > 8)
        from data.bm25_terms t
        join (select org_id, term, scope_group, max(last_id) as list_end,
                     count(*) filter (where not sealed) as open_blocks
              from data.bm25_blocks group by 1, 2, 3) b
          on b.org_id = t.org_id and b.term = t.term
         and b.scope_group = data._bm25_group(t.repo_id, t.persona_id, t.session_id)
    """).fetchone()
    assert ends == (0, 0), "a list ending after its recorded end, more than eight open blocks"


def write_fragments(conn, org: str, ids: list[int], texts: list[str]) -> None:
    """Fragments with these ids and texts in `org`'s repo `r`, in one statement: ids given
    as a writer would (out of order, inside the list, below it), straight to the table."""
    conn.execute(
        "insert into data.fragments (fragment_id, org_id, repo_id, namespace, kind, owner, heading_path, text,"
        " content_hash, token_count, chunker_version, simhash, tsv)"
        " select id, %s, 'r', 'prose', 'doc', 'o', array['h'], t, md5(t || id::text), 3, 'v', 0,"
        " api.lexical_document('h', t) from unnest(%s::bigint[], %s::text[]) x(id, t)",
        (org, ids, texts),
    )


def org_with_repo(conn, org: str) -> None:
    conn.execute("select service.create_org(%s)", (org,))
    conn.execute("insert into data.repos (org_id, repo_id) values (%s, 'r')", (org,))


def test_deletes_keep_statistics_exact(corpus):
    corpus.execute("select service.create_org('other')")
    add_doc(corpus, "other", "o1", "apple share")
    corpus.execute("delete from data.documents where org_id = 'acme' and path = 'd1'")
    assert_statistics_match_active_fragments(corpus)
    assert corpus.execute(
        "select fragment_count, total_length from data.bm25_corpus where org_id = 'acme'"
    ).fetchone() == (2, 7)
    corpus.execute("delete from data.orgs where org_id = 'acme'")
    assert_statistics_match_active_fragments(corpus)
    corpus.execute("select service.create_org('acme')")
    add_doc(corpus, "acme", "n1", "share")
    corpus.commit()
    assert corpus.execute("select df from data.bm25_terms where org_id = 'acme' and term = 'share'").fetchone() == (1,)
    score = corpus.execute("select score from api.search_lexical('acme', 'share')").fetchone()[0]
    assert score > 0


def test_lexical_search_reads_the_postings_index(corpus):
    from tests.ingest.test_write import nested_plans

    corpus.commit()
    plans = nested_plans(corpus, "select * from api.search_lexical('acme', 'apple', 10)", principal=("acme", "admin"))
    assert re.search(r"Index Scan using bm25_blocks_\d+_pkey on bm25_blocks_\d+", plans)
    assert re.search(
        r"Index Scan using bm25_terms_group_key on bm25_terms s[^\n]*\n\s+Index Cond: [^\n]*term = ANY", plans
    )


def test_statistics_are_kept_once_per_statement(conn):
    """The BM25 triggers run once per statement over its transition tables, not once per
    fragment: a document's fragments are indexed together."""
    rows = conn.execute("""
        select t.tgname, (t.tgtype & 1) = 1 as per_row, t.tgoldtable, t.tgnewtable
        from pg_trigger t where t.tgrelid = 'data.fragments'::regclass and t.tgname like 'fragments_bm25_%'
        order by t.tgname
    """).fetchall()
    assert rows == [
        ("fragments_bm25_delete", False, "old_fragments", None),
        ("fragments_bm25_insert", False, None, "new_fragments"),
        ("fragments_bm25_update", False, "old_fragments", "new_fragments"),
    ]


def test_multi_row_statements_keep_statistics_exact(corpus):
    """One statement retiring, reviving, re-indexing and deleting many fragments at once
    leaves the statistics equal to a recount, as row-by-row changes do."""
    corpus.execute("select service.create_org('other')")
    for i in range(6):
        add_doc(corpus, "acme", f"r{i}", f"apple pear {'plum ' * i}quince{i}", repo="shop")
        add_doc(corpus, "other", f"o{i}", f"apple {'plum ' * i}", repo=None)
    assert_statistics_match_active_fragments(corpus)
    corpus.execute("update data.fragments set active = false where text like '%plum%'")
    assert_statistics_match_active_fragments(corpus)
    # Revive some, re-index others under a new text, and touch a column BM25 ignores.
    corpus.execute("""
        update data.fragments set
            active = case when text like 'apple pear%' then true else active end,
            tsv = case when text like 'apple plum%' then api.lexical_document('', text || ' extra') else tsv end,
            owner = 'someone'
        where org_id in ('acme', 'other')""")
    assert_statistics_match_active_fragments(corpus)
    assert corpus.execute("select count(*) from data.bm25_terms where term = 'extra'").fetchone() == (0,)
    corpus.execute("update data.fragments set active = true where org_id = 'other'")
    assert corpus.execute("select df from data.bm25_terms where term = 'extra'").fetchone() == (5,)
    assert_statistics_match_active_fragments(corpus)
    corpus.execute("delete from data.fragment_sources")
    assert corpus.execute("select count(*) from data.fragments").fetchone() == (0,)
    assert_statistics_match_active_fragments(corpus)
    assert corpus.execute("select count(*) from data.bm25_corpus").fetchone() == (0,)


def test_scores_of_given_fragments_read_only_their_postings(corpus):
    """Scoring given fragments (the dense hits weighted fusion needs) gives their scores
    among all; the blocks are read by (org, term) through the key, never by a scan of
    the partition (the C scorer then skips the sub-blocks that cannot hold a given id)."""
    from tests.ingest.test_write import nested_plans

    every = dict(corpus.execute("select fragment_id, score from api.score_lexical('acme', 'apple cherry kiwi', null)"))
    assert len(every) == 3
    some = sorted(every)[:2]
    given = dict(
        corpus.execute("select fragment_id, score from api.score_lexical('acme', 'apple cherry kiwi', %s)", (some,))
    )
    assert given == pytest.approx({i: every[i] for i in some}, rel=1e-12)
    corpus.commit()
    sql = "select * from api.score_lexical('acme', 'apple cherry kiwi', %s)"
    for _ in range(6):  # past the calls after which a cached generic plan may be chosen
        plans = nested_plans(corpus, sql, (some,), principal=("acme", "admin"))
    assert re.search(r"Index Scan using bm25_blocks_\d+_pkey", plans), plans
    assert re.search(r"Index Cond: [^\n]*term = ", plans), plans
    assert "Seq Scan on bm25_blocks" not in plans


def test_appends_below_the_list_end_and_many_small_writes_keep_the_layout(conn):
    """Where a list ends is kept in data.bm25_terms (migration 0032), not read from the
    blocks: writes whose ids fall at or below that end (ids given out of order, as two
    writers that took their ids before either committed would write them; revivals) are
    merged where they fall, and a run of small appends merges its open blocks every
    eighth write."""
    org_with_repo(conn, "ab")

    def write(ids: list[int]) -> None:
        write_fragments(conn, "ab", ids, [f"common word{i % 5} solo{i}" for i in ids])

    for start in range(1000, 1300, 10):  # thirty small appends of one term
        write(list(range(start, start + 3)))
        assert_statistics_match_active_fragments(conn)
    write([5, 6, 1001 + 2000])  # below the list's start, then above its end
    write([1004, 1105])  # inside gaps of the list
    assert_statistics_match_active_fragments(conn)
    conn.execute("update data.fragments set active = false where org_id = 'ab' and fragment_id % 3 = 0")
    assert_statistics_match_active_fragments(conn)
    conn.execute("update data.fragments set active = true where org_id = 'ab' and fragment_id % 6 = 0")
    write([1500, 1501])
    assert_statistics_match_active_fragments(conn)
    blocks, open_blocks = conn.execute(
        "select count(*), count(*) filter (where not sealed) from data.bm25_blocks where term = 'common'"
    ).fetchone()
    assert 1 <= blocks < 30 and open_blocks <= 8


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_revivals_and_late_ids_join_the_blocks_they_fall_in(conn, seed):
    """Postings at or below a list's end (revived fragments, ids a writer took before
    another committed, ids below the whole list) join the sealed block they fall in, or
    are merged with the open blocks when they fall among them; sealed blocks that grow
    past 512 split. Random retirements, revivals and late writes, each in one statement,
    keep the postings equal to a recount and the layout sound."""
    import random

    rng = random.Random(seed)
    org_with_repo(conn, "rv")

    def write(ids: list[int]) -> None:
        # `full`: only the first 512 ids carry it, one sealed block and no open one.
        write_fragments(conn, "rv", ids, [f"common word{i % 7} solo{i}{' full' * (i < 2024)}" for i in ids])

    def layout() -> tuple[int, int]:
        return conn.execute(
            "select count(*), count(*) filter (where sealed) from data.bm25_blocks"
            " where org_id = 'rv' and term = 'common'"
        ).fetchone()

    write(list(range(1000, 4000, 2)))  # 1,500 postings of `common`: two sealed blocks of 512, one open
    assert layout() == (3, 2)
    write(list(range(1001, 1023, 2)))  # inside the first block: it grows to 523 and splits, both sealed
    assert layout() == (4, 3)
    assert_statistics_match_active_fragments(conn)
    used = set(range(1000, 4000, 2)) | set(range(1001, 1023, 2))
    for step in range(10):
        ids = sorted(used)
        retire = rng.sample(ids, rng.randint(1, 300))
        conn.execute("update data.fragments set active = false where org_id = 'rv' and fragment_id = any(%s)", [retire])
        assert_statistics_match_active_fragments(conn)
        inactive = [
            r[0] for r in conn.execute("select fragment_id from data.fragments where org_id = 'rv' and not active")
        ]
        revive = rng.sample(inactive, rng.randint(0, len(inactive)))
        conn.execute("update data.fragments set active = true where org_id = 'rv' and fragment_id = any(%s)", (revive,))
        assert_statistics_match_active_fragments(conn)
        # Late ids: in the gaps of the list, below all of it, and a few above its end.
        late = rng.sample([i for i in range(999 - 2 * step, 4000, 2) if i not in used and i > 0], 40)
        late += [5000 + 100 * step + k for k in range(rng.randint(0, 3))]
        write(late)
        used.update(late)
        assert_statistics_match_active_fragments(conn)


def test_a_revival_into_a_list_of_sealed_blocks_only(conn):
    """A list whose blocks are all sealed (no open block to merge with): a revived
    posting joins its sealed block, and a posting below the list joins the first."""
    org_with_repo(conn, "sl")
    ids = list(range(2000, 3024, 2))
    write_fragments(conn, "sl", ids, ["sealed only"] * len(ids))
    count = (
        "select count(*), count(*) filter (where sealed), sum(postings_count) from data.bm25_blocks where term = 'seal'"
    )
    assert conn.execute(count).fetchone() == (1, 1, 512)
    conn.execute("update data.fragments set active = false where org_id = 'sl' and fragment_id in (2010, 2500)")
    assert conn.execute(count).fetchone() == (1, 1, 510)
    conn.execute("update data.fragments set active = true where org_id = 'sl' and fragment_id in (2010, 2500)")
    assert conn.execute(count).fetchone() == (1, 1, 512)
    assert_statistics_match_active_fragments(conn)
