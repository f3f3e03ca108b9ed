"""Figures for docs/owners.md: the staleness query over a few thousand fragments and
traces, and nudges delivered to a local webhook. Bounds are generous (a shared CI
machine); the figures are printed (`pytest -s`)."""

from __future__ import annotations

import time

from app.access import ensure_admin_principal
from app.nudges import deliver_pending
from tests.owners.test_nudges import Receiver, transactions

FRAGMENTS = 5_000
TRACES = 5_000
RETURNED_PER_TRACE = 10


def test_staleness_and_delivery_at_a_few_thousand(conn, db_url):
    conn.execute("select service.create_org('acme')")
    ensure_admin_principal(conn, "acme", "admin")
    conn.execute("select service.ensure_scope('acme', 'core', null, null)")
    doc_id = conn.execute(
        "insert into data.documents (org_id, repo_id, path, kind, current_version, owner)"
        " values ('acme', 'core', 'big.md', 'doc', 1, 'Ada') returning doc_id"
    ).fetchone()[0]
    conn.execute(
        "insert into data.document_versions (doc_id, version, content_hash, content) values (%s, 1, 'h', 'x')",
        (doc_id,),
    )
    conn.execute(
        f"""
        with f as (
            insert into data.fragments (org_id, repo_id, doc_id, doc_version, namespace, kind, owner, text,
                                        content_hash, token_count, chunker_version, simhash, tsv,
                                        created_at, updated_at)
            select 'acme', 'core', %s, 1, 'prose', 'doc', 'owner-' || (g %% 20), 'row ' || g, md5(g::text), 2,
                   'test', g, ''::tsvector, now() - interval '400 days', now() - interval '400 days'
            from generate_series(1, {FRAGMENTS}) g
            returning fragment_id, content_hash)
        insert into data.fragment_sources (fragment_id, doc_id, doc_version, ordinal, anchor, start_line, end_line,
                                           content_hash, org_id)
        select f.fragment_id, %s, 1, row_number() over (), 'a' || f.fragment_id, 1, 1, f.content_hash, 'acme'
        from f
        """,
        (doc_id, doc_id),
    )
    # Retrievals skewed to the low ids: the first few hundred fragments are returned often.
    started = time.perf_counter()
    conn.execute(
        f"""
        insert into data.retrieval_traces (org_id, principal_id, query, request, pipeline, candidates, created_at)
        select 'acme', 'admin', 'q' || t, '{{}}', '{{}}',
               (select jsonb_agg(jsonb_build_object('fragment_id', f.fragment_id, 'included', true))
                from (select fragment_id from data.fragments where org_id = 'acme'
                      order by fragment_id offset (t * 7) % 400 limit {RETURNED_PER_TRACE}) f),
               now() - make_interval(secs => t * 60)
        from generate_series(1, {TRACES}) t
        """
    )
    recorded_s = time.perf_counter() - started
    conn.execute("analyze data.fragment_returns")
    conn.execute("analyze data.fragments")
    conn.commit()

    conn.execute("select service.bind_principal('acme', 'admin')")
    conn.execute("set local role contexts_service")
    conn.execute("select count(*) from api.stale_fragments('acme')").fetchone()  # warm
    runs = []
    for _ in range(5):
        started = time.perf_counter()
        stale = conn.execute("select count(*) from api.stale_fragments('acme')").fetchone()[0]
        runs.append(time.perf_counter() - started)
    one_owner = time.perf_counter()
    conn.execute("select count(*) from api.stale_fragments('acme', 'owner-3')").fetchone()
    one_owner_s = time.perf_counter() - one_owner
    conn.rollback()
    returns = conn.execute("select count(*) from data.fragment_returns").fetchone()[0]
    assert returns == TRACES * RETURNED_PER_TRACE and stale > 0
    median = sorted(runs)[len(runs) // 2]
    assert median < 2.0

    with Receiver() as hook, transactions(db_url) as tx:
        conn.execute("select service.bind_principal('acme', 'admin')")
        conn.execute("select service.webhook_set('acme', %s, 'a-long-enough-secret')", (hook.url,))
        conn.commit()
        report = deliver_pending(tx, allow_private=True)  # the receiver is on 127.0.0.1
    assert report.delivered == stale == len(hook.received) and report.failed == 0
    print(
        f"\n{FRAGMENTS} fragments, {TRACES} traces ({returns} returns, recorded in {recorded_s:.2f} s):"
        f" api.stale_fragments median {median * 1000:.1f} ms for {stale} stale fragments,"
        f" one owner {one_owner_s * 1000:.1f} ms;"
        f" {report.delivered} nudges queued and delivered to a local webhook in {report.seconds:.2f} s"
        f" ({report.delivered / report.seconds:.0f}/s)"
    )
