"""The analysts' views (sql/views/20_usage.sql, 30_health.sql, 40_eval.sql) and retrieval
from SQL (api.retrieve): each returns the right rows for a small corpus, and an analyst
(a login that owns nothing and is no superuser, mapped to a principal) sees exactly its
grants through every one of them."""

from __future__ import annotations

import os
import re
from pathlib import Path

import msgspec
import psycopg
import pytest

from app.access import act_as
from app.wire.retrieve import RetrieveRequest, RetrieveResponse
from tests.conftest import login_url

JOURNAL = "# Journal\n\nRotate the write-ahead journal before the storage volume fills up.\n"
JOURNAL_V2 = "# Journal\n\nRotate the write-ahead journal before the storage volume fills up, then page the owner.\n"
POLICY = "# Policy\n\nEvery journal rotation is logged and reviewed by the storage owner.\n"
KEYS = "# Keys\n\nThe journal signing key lives in the vault; rotate it every ninety days.\n"
NOTE = "# Notes\n\nThe kestrel migration rotated the journal twice today.\n"
HOLIDAYS = "# Holidays\n\nThe office closes between the winter solstice and new year.\n"
SESSION = "s-kestrel-7f3c"
ALICE, CAROL = "alice", "carol"
"""alice reads repo platform; carol reads repo secret and audits the org."""


def retrieve(conn, retriever, principal: str, query: str, org: str = "acme", **fields) -> RetrieveResponse:
    """One retrieval through the service's lane, traced, in its own transaction."""
    scope = {"org_id": org} | {k: fields.pop(k) for k in ("repo_id", "persona_id", "session_id") if k in fields}
    act_as(conn, org, principal)
    response = retriever.retrieve(conn, msgspec.convert({"query": query, "scope": scope, **fields}, RetrieveRequest))
    conn.commit()
    return response


@pytest.fixture(scope="module")
def world_db(pg_server, template_db, pipeline, retriever, logins):
    """One database for the module (the tests only read it, or roll back): acme holds an
    org-wide policy, a copy of the platform runbook kept org-wide, the runbook in repo
    platform (twice: an exact copy collapses into it; then a second version), keys in
    repo secret, a note in a session; globex the same runbook. Traces: admin (org and
    audit grants) asks org-wide and in secret, alice in platform, admin once more in
    the session, and once for a word nothing holds."""
    from app.access import ensure_admin_principal
    from app.ingest.normalize import SourceDocument
    from app.scope import Scope
    from tests.conftest import _dsn, _janitor

    name = f"contexts_views_{os.getpid()}"
    with _janitor(pg_server, name, template_dbname=template_db):
        url = _dsn(pg_server, name)
        with psycopg.connect(url) as conn:

            def ingest(org: str, files: dict[str, str], repo=None, session=None) -> None:
                conn.execute("select service.create_org(%s)", (org,))
                pipeline.register_models(conn)
                ensure_admin_principal(conn, org, "admin")
                conn.execute("select service.bind_principal(%s, 'admin')", (org,))
                prepared = [pipeline.prepare(SourceDocument(path=p, content=c)) for p, c in files.items()]
                pipeline.write(conn, Scope(org, repo, None, session), prepared)
                conn.commit()

            ingest("acme", {"org/policy.md": POLICY, "org/journal.md": JOURNAL})
            ingest("acme", {"platform/journal.md": JOURNAL, "platform/journal-copy.md": JOURNAL}, repo="platform")
            ingest("acme", {"platform/journal.md": JOURNAL_V2}, repo="platform")
            ingest("acme", {"secret/keys.md": KEYS}, repo="secret")
            ingest("acme", {"notes.md": NOTE}, session=SESSION)
            ingest("globex", {"platform/journal.md": JOURNAL}, repo="platform")
            conn.execute("select service.create_principal('acme', %s, 'human', '', %s)", (ALICE, logins["analysts"][0]))
            conn.execute("select service.grant_scope('acme', %s, 'repo', 'platform')", (ALICE,))
            conn.execute("select service.create_principal('acme', %s, 'human', '', %s)", (CAROL, logins["analysts"][1]))
            conn.execute("select service.grant_scope('acme', %s, 'repo', 'secret')", (CAROL,))
            conn.execute("select service.grant_scope('acme', %s, 'audit', null)", (CAROL,))
            conn.execute("select service.grant_scope('acme', 'admin', 'session', %s)", (SESSION,))
            conn.commit()
            traces = {
                "admin-org": retrieve(conn, retriever, "admin", "journal rotation storage"),
                "admin-secret": retrieve(conn, retriever, "admin", "journal signing key", repo_id="secret"),
                "alice-platform": retrieve(
                    conn, retriever, ALICE, "rotate the write-ahead journal", repo_id="platform"
                ),
                "admin-session": retrieve(conn, retriever, "admin", "kestrel migration journal", session_id=SESSION),
                "admin-nothing": retrieve(conn, retriever, "admin", "xylophone", k_dense=0),
                "globex": retrieve(conn, retriever, "admin", "journal rotation storage", org="globex"),
            }
            # Written after the retrievals: never retrieved, and a third copy of the runbook
            # in platform (it collapses into the fragment the copy holds).
            ingest("acme", {"org/holidays.md": HOLIDAYS})
            ingest("acme", {"platform/journal-mirror.md": JOURNAL}, repo="platform")
        yield url, traces


@pytest.fixture
def db_url(world_db):
    """This module's tests share the world's database (conn connects to it)."""
    return world_db[0]


@pytest.fixture
def world(world_db, conn):
    yield world_db[1]
    conn.rollback()  # whatever a test did in its open transaction


def as_analyst(conn: psycopg.Connection, org: str, principal: str) -> None:
    """Act for a principal in the open transaction as the analyst role (row-level
    security applies; the analysts' views are granted to it, not to the service)."""
    conn.execute("select service.bind_principal(%s, %s)", (org, principal))
    conn.execute("set local role contexts_analyst")


def analyst(db_url: str, login: str) -> psycopg.Connection:
    return psycopg.connect(login_url(db_url, login))


def fragment_ids(conn: psycopg.Connection) -> set[int]:
    return {r[0] for r in conn.execute("select fragment_id from data.fragments")}


def included(response: RetrieveResponse) -> set[int]:
    return {f.id for f in response.fragments}


def test_usage_views_count_what_each_reader_may_read(world, conn, db_url, logins):
    traces = world
    ids = {name: r.trace_id for name, r in traces.items()}
    as_analyst(conn, "acme", "admin")
    everything = fragment_ids(conn)
    conn.rollback()
    with analyst(db_url, logins["analysts"][0]) as alice, analyst(db_url, logins["analysts"][1]) as carol:
        alice_sees, carol_sees = fragment_ids(alice), fragment_ids(carol)
        assert alice_sees < everything and carol_sees < everything

        # Summaries: alice her own retrieval; carol (audit) all of acme's, the one in
        # platform and the one in the session withheld (she holds no grant on them).
        rows = {
            r[0]: r
            for r in alice.execute(
                "select trace_id::text, query, repo_id, withheld, candidates, included from api.retrieval_summaries"
            )
        }
        assert set(rows) == {ids["alice-platform"]}
        assert rows[ids["alice-platform"]][1:4] == ("rotate the write-ahead journal", "platform", False)
        assert rows[ids["alice-platform"]][5] == len(traces["alice-platform"].fragments)
        rows = {
            r[0]: r
            for r in carol.execute(
                "select trace_id::text, query, repo_id, session_id, withheld from api.retrieval_summaries"
            )
        }
        acme = {k: v for k, v in ids.items() if k != "globex"}
        assert set(rows) == set(acme.values())
        assert rows[ids["alice-platform"]][1:] == (None, None, None, True)
        assert rows[ids["admin-session"]][1:] == (None, None, None, True)
        assert rows[ids["admin-secret"]][1:] == ("journal signing key", "secret", None, False)
        assert rows[ids["admin-org"]][1:] == ("journal rotation storage", None, None, False)

        # Per day: carol's five retrievals of acme, by principal and scope.
        per_day = carol.execute(
            "select principal_id, repo_id, session_id, withheld, retrievals, empty, nothing_above_floor "
            "from api.retrievals_per_day order by 1, 2 nulls first, 4"
        ).fetchall()
        assert per_day == [
            ("admin", None, None, False, 2, 1, 1),
            ("admin", None, None, True, 1, 0, 0),
            ("admin", "secret", None, False, 1, 0, 0),
            ("alice", None, None, True, 1, 0, 0),
        ]
        assert carol.execute("select sum(retrievals) from api.retrievals_per_day").fetchone() == (5,)

        # Nothing above the floor: the word nothing holds.
        assert carol.execute(
            "select trace_id::text, query, candidates, best_score from api.retrievals_below_floor"
        ).fetchall() == [(ids["admin-nothing"], "xylophone", 0, None)]
        assert alice.execute("select count(*) from api.retrievals_below_floor").fetchone() == (0,)
        # The floor is absolute relevance (ADR 0009): the request's min_relevance, else 0.3.
        assert alice.execute(
            "select relevance_floor, best_relevance >= 0.3, nothing_above_floor from api.retrieval_summaries"
        ).fetchall() == [(0.3, True, False)]

        # Fragments: returned counts per fragment, only for fragments the reader may read.
        def returned(names: list[str], readable: set[int]) -> dict[int, int]:
            counts: dict[int, int] = {}
            for name in names:
                for fragment_id in included(traces[name]) & readable:
                    counts[fragment_id] = counts.get(fragment_id, 0) + 1
            return counts

        shown = dict(carol.execute("select fragment_id, retrievals from api.fragment_retrievals where retrievals > 0"))
        assert shown == returned(list(acme), carol_sees)
        assert set(shown) <= carol_sees
        shown = dict(alice.execute("select fragment_id, retrievals from api.fragment_retrievals where retrievals > 0"))
        assert shown == returned(["alice-platform"], alice_sees) and shown
        # Never retrieved: alice's fragments none of her retrievals returned.
        never = {r[0] for r in alice.execute("select fragment_id from api.fragments_never_retrieved")}
        assert never == alice_sees - set(shown)
        never = {r[0] for r in carol.execute("select fragment_id from api.fragments_never_retrieved")}
        assert never == carol_sees - set(returned(list(acme), carol_sees))

        # Documents: each fragment returned counts for the document it was cited from.
        docs = dict(alice.execute("select doc_id, fragments_returned from api.document_retrievals"))
        expected: dict[int, int] = {}
        for f in traces["alice-platform"].fragments:
            expected[f.doc_id] = expected.get(f.doc_id, 0) + 1
        assert docs == expected
        paths = {r[0] for r in carol.execute("select path from api.document_retrievals")}
        assert "secret/keys.md" in paths and not any(p.startswith("platform/") for p in paths)


def test_health_views(world, conn, db_url, logins):
    as_analyst(conn, "acme", "admin")
    by_owner = conn.execute(
        "select owner, kind, age, age_from_days, fragments from api.fragments_by_owner order by kind"
    ).fetchall()
    kinds = dict(conn.execute("select kind, count(*) from data.fragments where active group by kind"))
    assert {r[1]: r[4] for r in by_owner} == kinds and len(by_owner) == len(kinds)
    assert {(r[0], r[2], r[3]) for r in by_owner} == {("unowned", "under 30 days", 0)}

    # The exact copy and the mirror of the runbook collapsed into one fragment (the live
    # journal.md has a second version of its own); the org-wide copy is another scope:
    # deduplication kept it apart, and it shows as a pair.
    clusters = conn.execute(
        "select paths, sources, exact_sources, near_sources, documents, repo_id from api.near_duplicate_clusters"
    ).fetchall()
    assert clusters == [(["platform/journal-copy.md", "platform/journal-mirror.md"], 2, 2, 0, 2, "platform")]
    pairs = conn.execute(
        "select p.why_not_collapsed, p.distance, p.repo_id, p.near_repo_id, f.text = n.text "
        "from api.near_duplicate_pairs p join data.fragments f on f.fragment_id = p.fragment_id "
        "join data.fragments n on n.fragment_id = p.near_fragment_id"
    ).fetchall()
    assert pairs == [("different scope", 0, None, "platform", True)]
    versions = dict(conn.execute("select path, versions from api.document_version_counts where repo_id = 'platform'"))
    assert versions == {"platform/journal.md": 2, "platform/journal-copy.md": 1, "platform/journal-mirror.md": 1}
    conn.rollback()

    with analyst(db_url, logins["analysts"][0]) as alice, analyst(db_url, logins["analysts"][1]) as carol:
        # alice reads org-wide and platform: the same cluster and pair; carol (secret)
        # neither, since both hold a platform fragment.
        assert alice.execute("select count(*) from api.near_duplicate_clusters").fetchone() == (1,)
        assert alice.execute("select count(*) from api.near_duplicate_pairs").fetchone() == (1,)
        assert carol.execute("select count(*) from api.near_duplicate_clusters").fetchone() == (0,)
        assert carol.execute("select count(*) from api.near_duplicate_pairs").fetchone() == (0,)
        paths = {r[0] for r in alice.execute("select path from api.document_version_counts")}
        assert paths == {"org/policy.md", "org/journal.md", "org/holidays.md", *versions}
        paths = {r[0] for r in carol.execute("select path from api.document_version_counts")}
        assert paths == {"org/policy.md", "org/journal.md", "org/holidays.md", "secret/keys.md"}
        for reader in (alice, carol):
            assert reader.execute("select sum(fragments) from api.fragments_by_owner").fetchone()[0] == len(
                fragment_ids(reader)
            )


# -- retrieval from SQL, with the query vectors traces keep --------------------------------


def sql_retrieve(conn: psycopg.Connection, *args, **named) -> tuple[list[tuple], list[str]]:
    """api.retrieve's (fragment_id, lexical_rank, dense_rank, fused_score) rows and notices."""
    notices: list[str] = []
    conn.add_notice_handler(lambda diag: notices.append(diag.message_primary or ""))
    placeholders = ", ".join(["%s"] * len(args) + [f"{k} => %s" for k in named])
    rows = conn.execute(
        f"select fragment_id, lexical_rank, dense_rank, fused_score from api.retrieve({placeholders})",
        (*args, *named.values()),
    ).fetchall()
    return rows, notices


def service_candidates(conn, retriever, principal: str, query: str, **fields) -> list[tuple]:
    scope = {"org_id": "acme"} | {k: fields.pop(k) for k in ("repo_id", "session_id") if k in fields}
    act_as(conn, "acme", principal)
    request = msgspec.convert({"query": query, "scope": scope, **fields}, RetrieveRequest)
    rows = [(c.fragment_id, c.lexical_rank, c.dense_rank, c.fused_score) for c in retriever.candidates(conn, request)]
    conn.rollback()
    return rows


def same_candidates(got: list[tuple], want: list[tuple]) -> bool:
    """Same fragments, ranks and fused scores; a score may differ in its last bit, since
    PostgreSQL sums a fragment's BM25 terms in whatever order the plan yields them."""
    return [r[:3] for r in got] == [r[:3] for r in want] and [r[3] for r in got] == pytest.approx(
        [r[3] for r in want], rel=1e-12, abs=1e-15
    )


def test_api_retrieve_runs_the_services_hybrid_retrieval_from_stored_vectors(world, conn, retriever, db_url, logins):
    expected = service_candidates(conn, retriever, "admin", "journal rotation storage")
    assert any(r[2] is not None for r in expected)  # a dense side
    with analyst(db_url, logins["analysts"][1]) as carol:  # audit: admin's trace, and its vector
        # The service's list as carol would get it: the same retrieval under her grants.
        mine = service_candidates(conn, retriever, CAROL, "journal rotation storage")
        rows, notices = sql_retrieve(carol, "acme", "journal rotation storage")
        assert same_candidates(rows, mine) and notices == []
        # A text nobody retrieved: BM25 only, and a notice saying so.
        rows, notices = sql_retrieve(carol, "acme", "signing key vault")
        assert same_candidates(rows, service_candidates(conn, retriever, CAROL, "signing key vault", k_dense=0))
        assert rows and all(r[2] is None for r in rows)
        assert notices == ["no stored query vector for this exact text: lexical search only (BM25)"]
        # alice's query in platform is withheld from carol: so is its vector.
        rows, notices = sql_retrieve(carol, "acme", "rotate the write-ahead journal")
        assert all(r[2] is None for r in rows) and len(notices) == 1
        # And the scope check is api.retrieve_candidates' own.
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            sql_retrieve(carol, "acme", "journal rotation storage", p_repo_id="platform")
    as_analyst(conn, "acme", "admin")
    rows, notices = sql_retrieve(conn, "acme", "journal rotation storage")
    assert same_candidates(rows, expected) and notices == []
    conn.rollback()
    with analyst(db_url, logins["analysts"][0]) as alice:  # no audit grant: admin's vector is not hers
        rows, notices = sql_retrieve(alice, "acme", "journal rotation storage")
        assert all(r[2] is None for r in rows) and len(notices) == 1
        rows, notices = sql_retrieve(alice, "acme", "rotate the write-ahead journal", p_repo_id="platform")
        assert same_candidates(
            rows, service_candidates(conn, retriever, ALICE, "rotate the write-ahead journal", repo_id="platform")
        )
        assert notices == []


BAD_RETRIEVALS = [
    (("acme", "  "), {}, psycopg.errors.InvalidParameterValue),
    (("acme", "journal"), {"p_k_lexical": 0, "p_k_dense": 0}, psycopg.errors.InvalidParameterValue),
    (("acme", "journal"), {"p_k_dense": 1001}, psycopg.errors.InvalidParameterValue),
    (("acme", "journal"), {"p_fusion": '{"method": "magic"}'}, psycopg.errors.InvalidParameterValue),
    (("acme", "journal"), {"p_session_id": "nope"}, psycopg.errors.InsufficientPrivilege),
    (("globex", "journal"), {}, psycopg.errors.InsufficientPrivilege),
]


def test_api_retrieve_refuses_bad_input(world, db_url, logins):
    with analyst(db_url, logins["analysts"][1]) as carol:
        for args, named, error in BAD_RETRIEVALS:
            with pytest.raises(error), carol.transaction():
                sql_retrieve(carol, *args, **named)


def test_every_example_of_the_analysts_doc_runs(world, conn):
    """docs/analysts.md's SQL, statement by statement, as an analyst (org `demo` and repo
    `contexts` of the doc are this world's acme and platform)."""
    doc = (Path(__file__).parents[2] / "docs" / "analysts.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```sql\n(.*?)```", doc, flags=re.S)
    statements = [
        s.strip().replace("'demo'", "'acme'").replace("'contexts'", "'platform'")
        for block in blocks
        for s in re.sub(r"--[^\n]*", "", block).split(";")
        if s.strip()
    ]
    assert len(statements) >= 15
    notices: list[str] = []
    conn.add_notice_handler(lambda diag: notices.append(diag.message_primary or ""))
    as_analyst(conn, "acme", "admin")
    for statement in statements:
        conn.execute(statement).fetchall()
    conn.rollback()
    assert "no stored query vector for this exact text: lexical search only (BM25)" in notices
