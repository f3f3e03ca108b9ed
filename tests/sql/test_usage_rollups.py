"""The usage views over the roll-ups (sql/functions/51_usage.sql) answer what their
definitions over api.retrieval_traces answered (kept below as OLD), for every reader, on
random traces: after they are written, after some are deleted or updated, after the
roll-ups are rebuilt; and no reader sees another org's usage."""

from __future__ import annotations

import json
import math
import os
import random
from datetime import UTC, datetime, timedelta

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.retrieve.usage_fold import UsageFolder

OLD_SUMMARIES = """
with summarized as (
    select t.trace_id, t.org_id, t.principal_id, t.created_at, t.query,
           t.request -> 'scope' ->> 'repo_id' as repo_id, t.request -> 'scope' ->> 'persona_id' as persona_id,
           t.request -> 'scope' ->> 'session_id' as session_id, cardinality(t.redacted) > 0 as withheld,
           coalesce(data._json_number(t.request -> 'min_relevance'), 0.0) as min_relevance,
           c.candidates, c.included, c.best_score, c.best_relevance, t.duration_ms
    from api.retrieval_traces t
    cross join lateral (
        select count(*)::int as candidates, (count(*) filter (where e ->> 'included' = 'true'))::int as included,
               max(data._json_number(e -> 'final_score')) as best_score,
               max(data._json_number(e -> 'relevance')) as best_relevance
        from jsonb_array_elements(t.candidates) e) c
)
select s.*, case when s.min_relevance > 0 then s.min_relevance else 0.3 end as relevance_floor,
       case when s.candidates = 0 then true when s.best_relevance is null then null
            else s.best_relevance < case when s.min_relevance > 0 then s.min_relevance else 0.3 end
       end as nothing_above_floor
from summarized s
"""
OLD_FRAGMENT_RETRIEVALS = """
select t.org_id, (e ->> 'fragment_id')::bigint as fragment_id,
       (array_agg(e ->> 'source' order by t.created_at desc, t.trace_id))[1] as source,
       (array_agg(data._json_number(e -> 'doc_id')::bigint order by t.created_at desc, t.trace_id))[1] as doc_id,
       count(*) filter (where e ->> 'included' = 'true') as retrievals, count(*) as candidacies,
       min(data._json_number(e -> 'fused_rank'))::int as best_fused_rank,
       max(t.created_at) filter (where e ->> 'included' = 'true') as last_retrieved_at,
       max(t.created_at) as last_candidate_at
from api.retrieval_traces t cross join lateral jsonb_array_elements(t.candidates) e
where e ->> 'redacted' = 'false' and jsonb_typeof(e -> 'fragment_id') = 'number'
group by t.org_id, (e ->> 'fragment_id')::bigint
"""
OLD = {
    "api.retrievals_per_day": f"""
        select (s.created_at at time zone 'UTC')::date as day, s.org_id, s.principal_id,
               s.repo_id, s.persona_id, s.session_id, s.withheld, count(*) as retrievals,
               count(*) filter (where s.included = 0) as empty,
               count(*) filter (where s.nothing_above_floor) as nothing_above_floor,
               avg(s.duration_ms) as mean_ms,
               percentile_cont(0.95) within group (order by s.duration_ms) as p95_ms
        from ({OLD_SUMMARIES}) s group by 1, 2, 3, 4, 5, 6, 7""",
    "api.retrievals_below_floor": f"""
        select s.trace_id, s.org_id, s.principal_id, s.created_at, s.query, s.repo_id, s.persona_id,
               s.session_id, s.withheld, s.relevance_floor, s.best_relevance, s.best_score, s.candidates
        from ({OLD_SUMMARIES}) s where s.nothing_above_floor""",
    "api.fragment_retrievals": OLD_FRAGMENT_RETRIEVALS,
    "api.document_retrievals": f"""
        select r.org_id, r.doc_id, d.path, d.kind, d.repo_id, d.persona_id, d.session_id, d.current_version,
               sum(r.retrievals)::bigint as fragments_returned,
               count(*) filter (where r.retrievals > 0) as fragments_retrieved,
               sum(r.candidacies)::bigint as candidacies, max(r.last_retrieved_at) as last_retrieved_at
        from ({OLD_FRAGMENT_RETRIEVALS}) r
        join data.documents d on d.org_id = r.org_id and d.doc_id = r.doc_id
        group by r.org_id, r.doc_id, d.path, d.kind, d.repo_id, d.persona_id, d.session_id, d.current_version""",
    "api.fragments_never_retrieved": f"""
        select f.fragment_id, f.org_id, coalesce(r.candidacies, 0) as candidacies
        from data.fragments f
        left join ({OLD_FRAGMENT_RETRIEVALS}) r on r.fragment_id = f.fragment_id and r.org_id = f.org_id
        where f.active and coalesce(r.retrievals, 0) = 0""",
}
NEW = {name: f"select * from {name}" for name in OLD} | {
    "api.fragments_never_retrieved": "select fragment_id, org_id, candidacies from api.fragments_never_retrieved"
}

READERS = {
    # principal: (org, grants); admin reads the whole org and audits it.
    "admin": ("acme", [("org", None), ("audit", None)]),
    "alice": ("acme", [("repo", "r1"), ("persona", "p1"), ("session", "s1")]),
    "carol": ("acme", [("repo", "r2"), ("session", "s2"), ("audit", None)]),
    "bob": ("acme", []),
    "gadmin": ("globex", [("org", None), ("audit", None)]),
}
NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)


@pytest.fixture(scope="module")
def usage_db(pg_server, template_db):
    """Two orgs with repos, personas, sessions, documents and fragments in every scope,
    and the readers above; traces are written by each test."""
    from tests.conftest import _dsn, _janitor

    name = f"contexts_usage_{os.getpid()}"
    with _janitor(pg_server, name, template_dbname=template_db):
        url = _dsn(pg_server, name)
        with psycopg.connect(url, autocommit=True) as conn:
            for org in ("acme", "globex"):
                conn.execute("select service.create_org(%s)", (org,))
                conn.execute(
                    "insert into data.repos (org_id, repo_id) select %s, r from unnest(array['r1', 'r2', 'r3']) r",
                    (org,),
                )
                conn.execute(
                    "insert into data.personas (org_id, persona_id) select %s, p from unnest(array['p1', 'p2']) p",
                    (org,),
                )
                conn.execute(
                    "insert into data.sessions (org_id, session_id) select %s, s from unnest(array['s1', 's2']) s",
                    (org,),
                )
            for principal, (org, grants) in READERS.items():
                conn.execute("select service.create_principal(%s, %s, 'human')", (org, principal))
                for kind, scope in grants:
                    conn.execute("select service.grant_scope(%s, %s, %s, %s)", (org, principal, kind, scope))
            scopes = [(r, p, s) for r in (None, "r1", "r2", "r3") for p in (None, "p1", "p2") for s in (None, "s1")]
            for org in ("acme", "globex"):
                for i, (repo, persona, session) in enumerate(scopes):
                    conn.execute(
                        "insert into data.documents (doc_id, org_id, repo_id, persona_id, session_id, path, kind)"
                        " overriding system value values (%s, %s, %s, %s, %s, %s, 'markdown')",
                        (1000 * (org == "globex") + i + 1, org, repo, persona, session, f"{org}/doc{i}.md"),
                    )
                    conn.execute(
                        "insert into data.fragments (fragment_id, org_id, repo_id, persona_id, session_id, doc_id,"
                        " namespace, kind, owner, heading_path, text, content_hash, token_count, chunker_version,"
                        " simhash, tsv)"
                        " select nextval('data.fragment_id_seq'), %s, %s, %s, %s, %s, 'prose', 'prose', 'o',"
                        " array['h'], 'text ' || n, 'h' || n, 10, 'test', 1, api.lexical_document('h', 'text')"
                        " from generate_series(1, 2) n",
                        (org, repo, persona, session, 1000 * (org == "globex") + i + 1),
                    )
            fragments = {
                org: [r[0] for r in conn.execute("select fragment_id from data.fragments where org_id = %s", (org,))]
                for org in ("acme", "globex")
            }
        yield url, fragments


def random_traces(rng: random.Random, fragments: dict[str, list[int]], count: int) -> list[tuple]:
    """Traces of every shape the views must read alike: scopes the reader may and may
    not read (and another org's, and no object), candidates of fragments of both orgs,
    unknown ids and odd entries, ties on created_at, missing relevance and duration."""
    moments = [NOW - timedelta(days=rng.randint(0, 3), hours=rng.choice([0, 5])) for _ in range(6)]
    rows = []
    for _ in range(count):
        org = "acme" if rng.random() < 0.8 else "globex"
        principal = rng.choice([p for p, (o, _) in READERS.items() if o == org] + [None])
        scope: object = {"org_id": org}
        if rng.random() < 0.05:
            scope = "everything"
        elif rng.random() < 0.05:
            scope = {"org_id": "elsewhere"}
        else:
            for key, values in (
                ("repo_id", ["r1", "r2", "r3"]),
                ("persona_id", ["p1", "p2"]),
                ("session_id", ["s1", "s2"]),
            ):
                if rng.random() < 0.4:
                    scope[key] = rng.choice(values)  # type: ignore[index]
        request: dict = {"query": f"q{rng.randint(0, 9)}", "scope": scope}
        floor = rng.choice([None, None, 0.0, 0.2, 0.5, "high"])
        if floor is not None:
            request["min_relevance"] = floor
        pool = fragments[org] + fragments["globex" if org == "acme" else "acme"][:3] + [987654321]
        candidates: list = []
        for rank, fragment in enumerate(rng.sample(pool, rng.randint(0, 8)), 1):
            candidate = {
                "fragment_id": fragment,
                "fused_rank": rank,
                "final_score": round(rng.random(), 3),
                "included": rng.random() < 0.5,
                "source": f"doc.md#a{rng.randint(0, 3)}",
                "doc_id": rng.choice([1, 2, 3, 5, 1001]),
            }
            if rng.random() < 0.8:
                candidate["relevance"] = round(rng.random() * 0.6, 3)
            candidates.append(candidate)
        if rng.random() < 0.05:
            candidates.append({"fragment_id": "12", "included": True})
        if rng.random() < 0.03:
            candidates.append(7)
        duration = None if rng.random() < 0.1 else round(rng.lognormvariate(3, 1), 3)
        rows.append(
            (
                org,
                principal,
                request["query"],
                json.dumps(request),
                json.dumps(candidates),
                duration,
                rng.choice(moments),
            )
        )
    return rows


def write(conn: psycopg.Connection, rows: list[tuple]) -> None:
    conn.execute(
        "insert into data.retrieval_traces (org_id, principal_id, query, request, pipeline, candidates, duration_ms,"
        " created_at)"
        " select o, p, q, r::jsonb, '{}', c::jsonb, d, t"
        " from unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::float8[], %s::timestamptz[])"
        " as x(o, p, q, r, c, d, t)",
        [list(column) for column in zip(*rows, strict=True)],
    )


def read_as(conn: psycopg.Connection, principal: str, sql: str) -> list[tuple]:
    with conn.transaction():
        conn.execute("select service.bind_principal(%s, %s)", (READERS[principal][0], principal))
        conn.execute("set local role contexts_analyst")
        return sorted(conn.execute(sql).fetchall(), key=repr)


def same(view: str, old: list[tuple], new: list[tuple]) -> None:
    assert len(old) == len(new), view
    for before, after in zip(old, new, strict=True):
        for column, (a, b) in enumerate(zip(before, after, strict=True)):
            if isinstance(a, float) and isinstance(b, float):
                # p95_ms (the last column of api.retrievals_per_day) is read from 2% buckets.
                tolerance = 0.011 if view == "api.retrievals_per_day" and column == len(before) - 1 else 1e-9
                assert math.isclose(a, b, rel_tol=tolerance), (view, before, after)
            else:
                assert a == b, (view, before, after)


def assert_views_agree(conn: psycopg.Connection) -> None:
    for principal in READERS:
        for view, sql in OLD.items():
            same(view, read_as(conn, principal, sql), read_as(conn, principal, NEW[view]))


def roll_ups(conn: psycopg.Connection) -> dict[str, list[tuple]]:
    """The roll-up tables' rows (sums of latency rounded: they add up in another order)."""
    tables = ("data.usage_days", "data.usage_fragments", "data.usage_below_floor")
    rows = {t: conn.execute(f"select * from {t}").fetchall() for t in tables}
    rows["data.usage_days"] = [
        tuple(round(v, 6) if isinstance(v, float) else v for v in r) for r in rows["data.usage_days"]
    ]
    return {t: sorted(r, key=repr) for t, r in rows.items()}


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1))
def test_usage_views_answer_as_their_definitions_over_the_traces(usage_db, seed):
    url, fragments = usage_db
    rng = random.Random(seed)
    with psycopg.connect(url, autocommit=True) as conn:
        try:
            write(conn, random_traces(rng, fragments, 60))
            write(conn, random_traces(rng, fragments, 1))
            assert_views_agree(conn)
            # Retention: the oldest traces go, then some of one principal's.
            conn.execute(
                "delete from data.retrieval_traces where created_at < (select percentile_disc(0.3)"
                " within group (order by created_at) from data.retrieval_traces)"
            )
            conn.execute("delete from data.retrieval_traces where principal_id = 'alice' and duration_ms > 20")
            assert_views_agree(conn)
            # An update (a trace corrected by hand) and a rebuild.
            conn.execute(
                "update data.retrieval_traces set duration_ms = duration_ms * 2,"
                ' request = jsonb_set(request, \'{scope}\', \'{"org_id": "acme", "repo_id": "r2"}\')'
                " where org_id = 'acme' and principal_id = 'carol'"
            )
            assert_views_agree(conn)
            # The triggers' roll-ups are what counting every trace again gives.
            before = roll_ups(conn)
            conn.execute("select data._usage_rebuild()")
            assert roll_ups(conn) == before
            assert_views_agree(conn)
        finally:
            conn.execute("delete from data.retrieval_traces")
        assert conn.execute(
            "select (select count(*) from data.usage_days) + (select count(*) from data.usage_fragments)"
            " + (select count(*) from data.usage_below_floor)"
        ).fetchone() == (0,)


def test_roll_ups_are_read_only_through_the_views_and_per_org(usage_db):
    """No caller role selects a roll-up table; an analyst of one org (with an audit
    grant) sees none of another org's usage through any view."""
    url, fragments = usage_db
    rng = random.Random(7)
    with psycopg.connect(url, autocommit=True) as conn:
        try:
            write(conn, random_traces(rng, fragments, 80))
            for role in ("contexts_analyst", "contexts_auditor", "contexts_service"):
                for table in ("data.usage_days", "data.usage_fragments", "data.usage_below_floor"):
                    with pytest.raises(psycopg.errors.InsufficientPrivilege), conn.transaction():
                        conn.execute("select service.bind_principal('acme', 'admin')")
                        conn.execute(f"set local role {role}")
                        conn.execute(f"select count(*) from {table}")
            seen = {}
            for principal in ("admin", "gadmin"):
                org = READERS[principal][0]
                for view in NEW:
                    orgs = {row[0] for row in read_as(conn, principal, f"select org_id from {view}")}
                    assert orgs <= {org}, (principal, view, orgs)
                    seen[principal, view] = orgs
            assert seen["admin", "api.retrievals_per_day"] == {"acme"}
            assert seen["gadmin", "api.retrievals_per_day"] == {"globex"}
        finally:
            conn.execute("delete from data.retrieval_traces")


def test_the_upgrade_rolls_up_the_traces_written_before_it(pg_server):
    """A database at 0028 holding traces: migrating to head fills the roll-ups with
    exactly what counting every trace again gives."""
    from app.db.migrate import migrate
    from tests.conftest import _dsn, _janitor

    name = f"contexts_usage_upgrade_{os.getpid()}"
    with _janitor(pg_server, name):
        url = _dsn(pg_server, name)
        migrate(url, revision="0028", reapply=False)
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("insert into data.orgs (org_id) values ('acme'), ('globex')")
            write(conn, random_traces(random.Random(3), {"acme": list(range(1, 9)), "globex": list(range(9, 15))}, 40))
        migrate(url)
        with psycopg.connect(url, autocommit=True) as conn:
            tables = ("data.usage_days", "data.usage_fragments", "data.usage_below_floor")
            migrated = {t: sorted(conn.execute(f"select * from {t}").fetchall(), key=repr) for t in tables}
            assert conn.execute("select sum(retrievals) from data.usage_days").fetchone() == (40,)
            assert migrated["data.usage_fragments"] and migrated["data.usage_below_floor"]
            conn.execute("select data._usage_rebuild()")
            assert {t: sorted(conn.execute(f"select * from {t}").fetchall(), key=repr) for t in tables} == migrated


@pytest.mark.parametrize(
    "view",
    ["api.retrievals_per_day", "api.retrievals_below_floor", "api.fragment_retrievals", "api.document_retrievals"],
)
def test_usage_views_read_the_roll_ups_not_the_traces(usage_db, view):
    """Their cost follows the roll-ups: a plan of theirs reads data.retrieval_traces only
    by key, for the traces listed in data.usage_pending (not yet counted), never whole.
    Planned over a history (most of it folded) with its statistics: on an empty table
    the planner's choice depends on whether it was ever analysed, and means nothing."""
    url, fragments = usage_db
    with psycopg.connect(url, autocommit=True) as conn, conn.transaction(force_rollback=True):  # the set is shared
        write(conn, random_traces(random.Random(7), fragments, 300))
        assert 0 < conn.execute("select count(*) from data.usage_pending").fetchone()[0] < 300
        conn.execute("analyze data.retrieval_traces, data.usage_pending")
        plan = "\n".join(r[0] for r in read_as(conn, "admin", f"explain select * from {view}"))
    reads = [line.strip() for line in plan.splitlines() if " on retrieval_traces" in line]
    assert reads and all(line.startswith("->  Index Scan using retrieval_traces_pkey") for line in reads), plan
    assert "usage_pending" in plan and "usage_" in plan.replace("usage_pending", ""), plan


def test_a_day_of_one_principal_and_scope_is_one_roll_up_row_whatever_its_latencies(usage_db):
    """data.usage_days keeps a group's latencies as a histogram in its row, not a row per
    latency bucket: what the per-day view reads follows days x principals x scopes, not
    the spread of latencies (100,000 traces: 3,724 rows, not 66,600; docs/adr/0028)."""
    url, fragments = usage_db
    request = json.dumps({"query": "q", "scope": {"org_id": "acme", "repo_id": "r1"}})
    with psycopg.connect(url, autocommit=True) as conn:
        try:
            durations = [round(1.5**k, 3) for k in range(40)]  # 1.5 ms to 7 s: 40 buckets 2% wide and more
            rows = [("acme", "alice", "q", request, "[]", d, NOW) for d in durations]
            write(conn, rows[:25])
            write(conn, rows[25:])
            conn.execute("select data._usage_fold_all()")  # the pending traces counted
            assert conn.execute("select count(*), sum(retrievals), sum(timed) from data.usage_days").fetchone() == (
                1,
                40,
                40,
            )
            exact = conn.execute(
                "select percentile_cont(0.95) within group (order by d) from unnest(%s::float8[]) d", (durations,)
            ).fetchone()[0]
            (p95,) = read_as(conn, "admin", "select p95_ms from api.retrievals_per_day")[0]
            assert math.isclose(p95, exact, rel_tol=0.011)
            conn.execute("delete from data.retrieval_traces where duration_ms > 1000")
            assert conn.execute("select count(*), sum(timed) from data.usage_days").fetchone() == (1, 18)
        finally:
            conn.execute("delete from data.retrieval_traces")


def written_in(conn: psycopg.Connection, rows: list[tuple]) -> tuple[bool, bool]:
    """Write rows in one transaction: whether that write touched the roll-ups (wrote a
    row version of theirs), and whether it made a fold due (contexts.usage_fold_due)."""
    with conn.transaction():
        write(conn, rows)
        (touched, due) = conn.execute(
            "select count(*) > 0, current_setting('contexts.usage_fold_due', true) = 'on'"
            " from (select xmin from data.usage_days union all select xmin from data.usage_fragments"
            " union all select xmin from data.usage_below_floor) r"
            " where r.xmin::text = pg_current_xact_id()::xid::text"
        ).fetchone()
    return touched, due


def folds_in(conn: psycopg.Connection, rows: list[tuple]) -> bool:
    return written_in(conn, rows)[0]


def test_a_trace_write_folds_nothing_and_the_views_stay_exact(usage_db):
    """Writing a trace does no roll-up work, ever, while a folder keeps up: it is listed in
    data.usage_pending, and the write crossing a multiple of data._usage_fold_every()
    only says a fold is due (contexts.usage_fold_due); the fold runs in a transaction of
    its own (service.fold_usage). At every moment, with traces pending or not, every view
    answers what its definition over the traces answers, for every reader (and a rebuild
    gives what the folds gave)."""
    url, fragments = usage_db
    rng = random.Random(11)
    with psycopg.connect(url, autocommit=True) as conn:
        try:
            every = 64
            conn.execute(f"set contexts.usage_fold_every = {every}")  # data._usage_fold_every()'s default
            writes = 2 * every + 5
            written = [written_in(conn, random_traces(rng, fragments, 1)) for _ in range(writes)]
            assert not any(touched for touched, _ in written)
            due = [n for n, (_, due) in enumerate(written, start=1) if due]
            assert len(due) in (2, 3) and due[0] <= every and all(b - a == every for a, b in zip(due, due[1:]))
            assert conn.execute("select count(*) from data.usage_pending").fetchone() == (writes,)
            assert conn.execute("select count(*) from data.usage_days").fetchone() == (0,)
            assert_views_agree(conn)
            with pytest.raises(psycopg.errors.InvalidParameterValue):
                conn.execute("select service.fold_usage(0)")
            assert conn.execute("select service.fold_usage(100)").fetchone() == (100,)
            assert_views_agree(conn)
            assert conn.execute("select service.fold_usage()").fetchone() == (writes - 100,)
            assert conn.execute("select service.fold_usage()").fetchone() == (0,)
            assert conn.execute("select sum(retrievals) from data.usage_days").fetchone() == (writes,)
            assert_views_agree(conn)
            folds_in(conn, random_traces(rng, fragments, 3))
            assert_views_agree(conn)
            conn.execute("select data._usage_fold_all()")
            assert conn.execute("select count(*) from data.usage_pending").fetchone() == (0,)
            assert_views_agree(conn)
            before = roll_ups(conn)
            conn.execute("select data._usage_rebuild()")
            assert roll_ups(conn) == before
        finally:
            conn.execute("delete from data.retrieval_traces")


def test_without_a_folder_a_write_folds_a_backlog_of_four_batches(usage_db):
    """Where no folder runs (traces written from SQL, a process without one), the list
    stays bounded: the due write that finds it spanning four times
    data._usage_fold_every() entries folds a batch of that size itself."""
    url, fragments = usage_db
    rng = random.Random(12)
    with psycopg.connect(url, autocommit=True) as conn:
        try:
            conn.execute("set contexts.usage_fold_every = 8")
            folded = [folds_in(conn, random_traces(rng, fragments, 1)) for _ in range(40)]
            # The first due write at which the list spans 32 entries folds them; none after.
            assert len([n for n, f in enumerate(folded, start=1) if f and 32 <= n < 40]) == sum(folded) == 1
            assert conn.execute("select count(*) from data.usage_pending").fetchone() == (8,)
            assert conn.execute("select sum(retrievals) from data.usage_days").fetchone() == (32,)
            assert_views_agree(conn)
        finally:
            conn.execute("delete from data.retrieval_traces")


def test_a_recorded_trace_wakes_the_folder_which_folds_after_the_write(usage_db):
    """app.retrieve.trace.record_trace, as every retrieval writes its trace: no write's
    transaction touches the roll-ups; the write that makes a fold due wakes the folder,
    whose thread folds in a transaction of its own, so the roll-ups hold what was written
    once it is idle; the views agree with the traces throughout."""
    from app.access import act_as
    from app.retrieve.trace import record_trace

    url, fragments = usage_db
    rng = random.Random(17)
    folder = UsageFolder(lambda: psycopg.connect(url))
    try:
        with psycopg.connect(url) as conn:
            conn.execute("set contexts.usage_fold_every = 8")
            conn.commit()
            for n in range(1, 21):
                org, principal, query, request, candidates, duration, _ = random_traces(rng, fragments, 1)[0]
                folds = folder.folds
                act_as(conn, "acme", "admin")
                entries = [c for c in json.loads(candidates) if isinstance(c, dict)]  # as a retrieval writes them
                record_trace(conn, "acme", query, json.loads(request), {}, entries, duration, folder=folder)
                conn.execute("reset role")  # the owner again, to look at the roll-ups
                (touched,) = conn.execute(
                    "select count(*) from (select xmin from data.usage_days union all select xmin"
                    " from data.usage_fragments) r where r.xmin::text = pg_current_xact_id()::xid::text"
                ).fetchone()
                assert touched == 0, n
                conn.commit()
                assert folder.wait_idle(30)
                if folder.folds > folds:  # this write made a fold due: all but it may be pending now
                    assert folder.folded >= n - 1  # the woken fold may run before this write commits
            assert folder.folds in (2, 3)  # 20 list entries cross 2 or 3 multiples of 8
        with psycopg.connect(url, autocommit=True) as conn:
            (pending,) = conn.execute("select count(*) from data.usage_pending").fetchone()
            assert folder.folded + pending == 20 and pending <= 5
            assert_views_agree(conn)
    finally:
        folder.close()
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("delete from data.retrieval_traces")


def test_two_writers_folding_at_once_count_each_trace_once(usage_db):
    """While one transaction's fold is uncommitted, another's write does not wait for it
    (nor fold), a reader waits for neither and sees every trace, and a second fold waits
    and then folds only what the first left; two writers writing at once, each with a
    folder of its own folding when its writes make a fold due, leave the roll-ups exactly
    what counting every trace again gives."""
    import threading

    url, fragments = usage_db
    rng = random.Random(13)
    with psycopg.connect(url, autocommit=True) as a, psycopg.connect(url, autocommit=True) as b:
        try:
            write(a, random_traces(rng, fragments, 20))
            a.execute("select data._usage_fold_all()")
            a.execute("set contexts.usage_fold_every = 1000")  # no fold inside these writes
            write(a, random_traces(rng, fragments, 30))
            a.execute("reset contexts.usage_fold_every")
            assert a.execute("select count(*) from data.usage_pending").fetchone() == (30,)
            second = threading.Thread(target=lambda: b.execute("select data._usage_fold(null)"))
            with a.transaction():
                a.execute("select data._usage_fold(12)")
                with b.transaction():
                    b.execute("set local lock_timeout = '2s'")
                    b.execute("set local contexts.usage_fold_every = 1")  # every write would fold
                    write(b, random_traces(rng, fragments, 1))
                    write(b, random_traces(rng, fragments, 1))
                # Nothing folded: 30 listed (12 of them claimed, uncommitted) and b's 2.
                assert b.execute("select count(*) from data.usage_pending").fetchone() == (32,)
                b.execute("set lock_timeout = '2s'")
                assert_views_agree(b)  # a's fold is not committed: b reads those 12 as pending
                b.execute("reset lock_timeout")
                second.start()
                second.join(0.5)
                assert second.is_alive()  # the second fold waits for the first
            second.join()
            assert a.execute("select count(*) from data.usage_pending").fetchone() == (0,)
            assert a.execute("select sum(retrievals) from data.usage_days").fetchone() == (52,)
            assert_views_agree(a)

            # Two writers, each waking a folder of its own when its write makes a fold due:
            # two folders folding at once (and, should they lag, writes folding a backlog).
            folders = [UsageFolder(lambda: psycopg.connect(url)) for _ in range(2)]

            def writer(rows: list[tuple], folder: UsageFolder) -> None:
                with psycopg.connect(url, autocommit=True) as conn:
                    conn.execute("set contexts.usage_fold_every = 8")
                    for row in rows:
                        if written_in(conn, [row])[1]:
                            folder.wake()

            try:
                threads = [
                    threading.Thread(target=writer, args=(random_traces(rng, fragments, 80), folder))
                    for folder in folders
                ]
                for thread in threads:
                    thread.start()
                for thread in threads:
                    thread.join()
                assert all(folder.wait_idle(30) for folder in folders)
            finally:
                for folder in folders:
                    folder.close()
            assert sum(folder.folded for folder in folders) > 0
            assert_views_agree(a)
            a.execute("select data._usage_fold_all()")
            assert a.execute("select sum(retrievals) from data.usage_days").fetchone() == (212,)
            before = roll_ups(a)
            a.execute("select data._usage_rebuild()")
            assert roll_ups(a) == before
        finally:
            a.execute("delete from data.retrieval_traces")
