"""Dense search at a size where PostgreSQL really uses the HNSW index: a top-k larger
than hnsw.ef_search's default stays full, and a 1%-selective scope still gets k rows,
whether the filter is the requested scope or row-level security (narrow grants)."""

from __future__ import annotations

import json
import random
import re

import pytest

from app.access import act_as
from tests.ingest.test_write import nested_plans

DIMS, ROWS = 8, 10_000


@pytest.fixture
def vectors(conn):
    conn.execute("select service.create_org('acme')")
    conn.execute("select service.register_embedding_model('prose', 'synthetic', %s)", (DIMS,))
    conn.execute("select service.ensure_scope('acme', 'wide')")
    conn.execute("select service.ensure_scope('acme', 'narrow')")
    doc_id = conn.execute("""insert into data.documents (org_id, path, kind, current_version)
                             values ('acme', 'synthetic', 'doc', 1) returning doc_id""").fetchone()[0]
    conn.execute(
        "insert into data.document_versions (doc_id, version, content_hash, content) values (%s, 1, 'h', 'synthetic')",
        (doc_id,),
    )
    conn.execute("select setseed(0.42)")
    conn.execute(
        f"""
        with f as (
            insert into data.fragments (org_id, repo_id, doc_id, doc_version, namespace, kind, owner, text,
                                        content_hash, token_count, chunker_version, simhash, tsv)
            select 'acme', case when g %% 100 = 0 then 'narrow' else 'wide' end, %s, 1, 'prose', 'doc', 'x',
                   'row ' || g, md5(g::text), 2, 'test', g, ''::tsvector
            from generate_series(1, {ROWS}) g
            returning fragment_id, repo_id)
        insert into data.embeddings (fragment_id, model_id, org_id, repo_id, embedding)
        select f.fragment_id, m.model_id, 'acme', f.repo_id,
               array(select random()::float4 - 0.5 from generate_series(1, {DIMS})
                     where f.fragment_id > 0)::extensions.vector
        from f, data.embedding_models m where m.name = 'synthetic'
    """,
        (doc_id,),
    )
    conn.execute("analyze data.embeddings")
    conn.execute("analyze data.fragments")
    conn.execute("select service.create_principal('acme', 'narrow-reader')")
    conn.execute("select service.grant_scope('acme', 'narrow-reader', 'repo', 'narrow')")
    conn.commit()
    return conn


def hnsw_partition_index(conn, plans: str) -> str:
    """The index a plan scans `embeddings`' partition with; it must be an HNSW index."""
    used = re.findall(r"Index Scan using (\S+) on (embeddings_\d+)", plans)
    assert len(used) == 1, plans
    index, _partition = used[0]
    am = conn.execute(
        "select a.amname from pg_class c join pg_am a on a.oid = c.relam where c.relname = %s", (index,)
    ).fetchone()[0]
    assert am == "hnsw"
    return index


def exact_top(conn, query, k, repo=None):
    conn.execute("set enable_indexscan = off")
    rows = conn.execute(
        f"""
        select e.fragment_id from data.embeddings e join data.fragments f using (fragment_id)
        where (%s::text is null or f.repo_id = %s)
        order by e.embedding::extensions.vector({DIMS}) operator(extensions.<=>) %s::extensions.vector({DIMS})
        limit %s""",
        (repo, repo, json.dumps(query), k),
    ).fetchall()
    conn.execute("reset enable_indexscan")
    return [r[0] for r in rows]


def test_top_200_is_full_and_uses_the_hnsw_index(vectors):
    query = [random.Random(1).uniform(-0.5, 0.5) for _ in range(DIMS)]
    plans = nested_plans(vectors, "select * from api.search_dense('acme', %s, 200)", (json.dumps({"prose": query}),))
    hnsw_partition_index(vectors, plans)
    got = [
        r[0]
        for r in vectors.execute(
            "select fragment_id from api.search_dense('acme', %s, 200)", (json.dumps({"prose": query}),)
        ).fetchall()
    ]
    assert len(got) == 200
    recall = len(set(got) & set(exact_top(vectors, query, 200))) / 200
    assert recall >= 0.9, recall


def test_one_percent_scope_still_gets_k_rows(vectors):
    query = [random.Random(2).uniform(-0.5, 0.5) for _ in range(DIMS)]
    got = [
        r[0]
        for r in vectors.execute(
            "select fragment_id from api.search_dense('acme', %s, 50, 'narrow')", (json.dumps({"prose": query}),)
        )
    ]
    assert len(got) == 50
    recall = len(set(got) & set(exact_top(vectors, query, 50, "narrow"))) / 50
    assert recall >= 0.9, recall


def test_narrow_grants_still_get_k_rows_under_row_level_security(vectors):
    """1% of the org is visible to this principal: RLS filters the HNSW scan, and the
    iterative scan keeps going until k visible rows are found."""
    query = [random.Random(3).uniform(-0.5, 0.5) for _ in range(DIMS)]
    truth = exact_top(vectors, query, 50, "narrow")
    plans = nested_plans(
        vectors,
        "select * from api.search_dense('acme', %s, 50)",
        (json.dumps({"prose": query}),),
        principal=("acme", "narrow-reader"),
    )
    hnsw_partition_index(vectors, plans)
    act_as(vectors, "acme", "narrow-reader")
    got = [
        r[0]
        for r in vectors.execute(
            "select fragment_id from api.search_dense('acme', %s, 50)", (json.dumps({"prose": query}),)
        )
    ]
    assert len(got) == 50
    repos = {
        r[0] for r in vectors.execute("select distinct repo_id from data.fragments where fragment_id = any(%s)", (got,))
    }
    assert repos == {"narrow"}
    recall = len(set(got) & set(truth)) / 50
    print(f"\n1% visible under RLS: top-50 full, recall@50 = {recall:.2f}")
    assert recall >= 0.9, recall
