"""Property-based proof of R-SEC-1/2: random orgs, scopes, principals, grants and
fragments (shared vocabulary, near-identical embeddings across tenants: the worst case).
For every principal, lexical, dense and hybrid search, fragment and trace reads, and
plain SQL as an analyst return exactly the rows its grants allow, and its scores do not
move when data it cannot see is added or removed."""

from __future__ import annotations

import hashlib
import itertools
import json
from dataclasses import dataclass, field

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from app.access import act_as
from tests.conftest import login_url

VOCAB = ["journal", "rotate", "volume", "vault", "signing", "deploy", "freeze", "pager", "owner", "storage",
         "backup", "token"]
REPOS, PERSONAS, SESSIONS = ["r1", "r2"], ["p1"], ["s1", "s2"]
GRANTS = [("org", None), ("repo", "r1"), ("repo", "r2"), ("persona", "p1"), ("session", "s1"), ("session", "s2"),
          ("audit", None)]
BASE = [0.9, 0.3, 0.2, 0.1]
DIMS = len(BASE)
TALLY = {"examples": 0, "orgs": 0, "principals": 0, "fragments": 0, "queries": 0, "reads": 0, "leaks": 0}
_names = itertools.count()


@dataclass
class Fragment:
    words: list[str]
    repo: str | None
    persona: str | None
    session: str | None
    noise: list[float]
    id: int | None = None


@dataclass
class Org:
    name: str
    fragments: list[Fragment]
    principals: list[set[tuple[str, str | None]]]
    expired: set[str]
    ids: dict[str, set[int]] = field(default_factory=dict)


fragment = st.builds(
    Fragment,
    words=st.lists(st.sampled_from(VOCAB), min_size=2, max_size=6),
    repo=st.sampled_from([None, *REPOS]), persona=st.sampled_from([None, *PERSONAS]),
    session=st.sampled_from([None, None, *SESSIONS]),
    noise=st.lists(st.floats(-0.01, 0.01), min_size=DIMS, max_size=DIMS),
)
org = st.builds(
    lambda fragments, principals, expired: Org(f"t{next(_names)}", fragments, principals, expired),
    st.lists(fragment, min_size=1, max_size=8),
    st.lists(st.sets(st.sampled_from(GRANTS), max_size=4), min_size=1, max_size=3),
    st.sets(st.sampled_from(SESSIONS), max_size=1),
)


def visible(o: Org, grants: set[tuple[str, str | None]], f: Fragment) -> bool:
    """The rule of sql/policies, restated independently."""
    kinds = {k for k, _ in grants}
    return ((f.repo is None or "org" in kinds or ("repo", f.repo) in grants)
            and (f.persona is None or "org" in kinds or ("persona", f.persona) in grants)
            and (f.session is None or (("session", f.session) in grants and f.session not in o.expired)))


def write(conn: psycopg.Connection, o: Org, fragments: list[Fragment], prefix: str = "f") -> None:
    """Through the real write path (begin_document, add_fragments) as a writer principal."""
    conn.execute("select api.create_org(%s)", (o.name,))
    conn.execute("select api.create_principal(%s, 'writer', 'service')", (o.name,))
    conn.execute("select api.grant_scope(%s, 'writer', 'org', null, true)", (o.name,))
    conn.execute("select api.bind_principal(%s, 'writer')", (o.name,))
    for n, f in enumerate(fragments):
        text = " ".join(f.words) + f" ({prefix}{n})" * (n % 2)  # some exact duplicates collapse, others do not
        digest = hashlib.sha256(text.encode()).hexdigest()
        doc_id, version, _, _ = conn.execute(
            "select * from api.begin_document(%s, %s, %s, %s, %s, 'doc', %s, %s)",
            (o.name, f.repo, f.persona, f.session, f"{prefix}{n}.md", text, digest)).fetchone()
        chunk = {"namespace": "prose", "owner": "o", "heading_path": [], "lexical_heading": "", "symbol": None,
                 "text": text, "content_hash": digest, "token_count": len(f.words), "chunker_version": "prop",
                 "simhash": int(digest[:15], 16), "anchor": "", "start_line": 1, "end_line": 1,
                 "embedding": [b + e for b, e in zip(BASE, f.noise)]}
        f.id = conn.execute("select fragment_id from api.add_fragments(%s, %s, %s)",
                            (doc_id, version, json.dumps([chunk]))).fetchone()[0]
    conn.commit()


def grant_principals(conn: psycopg.Connection, o: Org) -> None:
    for p, grants in enumerate(o.principals):
        conn.execute("select api.create_principal(%s, %s)", (o.name, f"p{p}"))
        for kind, scope_id in grants:
            conn.execute("select api.grant_scope(%s, %s, %s, %s)", (o.name, f"p{p}", kind, scope_id))
    for s in o.expired:
        conn.execute("update data.sessions set expires_at = now() - interval '1 second' "
                     "where org_id = %s and session_id = %s", (o.name, s))
    conn.commit()


def leak(found: set[int], allowed: set[int]) -> int:
    extra = found - allowed
    TALLY["leaks"] += len(extra)
    return len(extra)


def searches(conn: psycopg.Connection, o: Org, query: str) -> dict:
    vector = json.dumps({"prose": BASE})
    lexical = dict(conn.execute("select fragment_id, score from api.search_lexical(%s, %s, 1000)", (o.name, query)))
    dense = dict(conn.execute("select fragment_id, similarity from api.search_dense(%s, %s, 1000)", (o.name, vector)))
    hybrid = dict(conn.execute("select fragment_id, fused_score from api.retrieve_candidates(%s, %s, %s, "
                               "null, null, null, 1000, 1000)", (o.name, query, vector)))
    TALLY["queries"] += 3
    return {"lexical": lexical, "dense": dense, "hybrid": hybrid}


@pytest.fixture
def world_db(db_url, logins):
    with psycopg.connect(db_url) as conn:
        conn.execute("select api.register_embedding_model('prose', 'property-test', %s)", (DIMS,))
        conn.commit()
        yield conn


@settings(max_examples=30, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.data_too_large])
@given(orgs=st.lists(org, min_size=1, max_size=3), queries=st.lists(
    st.lists(st.sampled_from(VOCAB), min_size=1, max_size=3).map(" ".join), min_size=1, max_size=2))
def test_no_principal_ever_sees_another_scope(world_db, db_url, logins, orgs, queries):
    conn = world_db
    conn.rollback()  # a failed example leaves nothing half-open for the next
    TALLY["examples"] += 1
    for o in orgs:
        write(conn, o, o.fragments)
        grant_principals(conn, o)
        TALLY["orgs"] += 1
        TALLY["fragments"] += len({f.id for f in o.fragments})
    every_id = {f.id for o in orgs for f in o.fragments}
    analyst_login = logins["analysts"][0]
    snapshots: dict[tuple[str, int, str], dict] = {}
    traces: dict[tuple[str, int], str] = {}

    for o in orgs:
        for p, grants in enumerate(o.principals):
            TALLY["principals"] += 1
            allowed = {f.id for f in o.fragments if visible(o, grants, f)}
            # As the service: every search, and every fragment id in the world.
            act_as(conn, o.name, f"p{p}")
            for query in queries:
                result = searches(conn, o, query)
                snapshots[(o.name, p, query)] = result
                for stage, rows in result.items():
                    assert leak(set(rows), allowed) == 0, (stage, query, grants)
                # And complete: every fragment it may read in the requested scope (the org,
                # no persona or session asked) is found, by dense search too.
                in_scope = {f.id for f in o.fragments if visible(o, grants, f) and f.persona is None
                            and f.session is None}
                assert set(result["dense"]) == in_scope
                assert set(result["hybrid"]) == set(result["lexical"]) | set(result["dense"])
            for fragment_id in every_id:
                try:
                    with conn.transaction():  # a savepoint: a 404 does not end the transaction
                        conn.execute("select * from api.get_fragment(%s)", (fragment_id,)).fetchone()
                    readable = True
                except psycopg.errors.NoDataFound:
                    readable = False
                TALLY["reads"] += 1
                TALLY["leaks"] += readable and fragment_id not in allowed
                assert readable == (fragment_id in allowed)
            for kind, session in grants:
                if kind == "session" and session not in o.expired:
                    vector = json.dumps({"prose": BASE})
                    rows = {r[0] for r in conn.execute("select fragment_id from api.search_dense(%s, %s, 1000, "
                                                       "null, null, %s)", (o.name, vector, session))}
                    TALLY["queries"] += 1
                    assert leak(rows, allowed) == 0
                    assert rows == {f.id for f in o.fragments if visible(o, grants, f) and f.persona is None
                                    and f.session in (None, session)}
            traces[(o.name, p)] = conn.execute(
                "select api.record_trace(%s, 'q', '{}', '{}', '[]')", (o.name,)).fetchone()[0]
            conn.commit()
            # As an analyst mapped to this principal: plain SQL sees exactly the same rows.
            conn.execute("update data.principals set db_role = null where db_role = %s", (analyst_login,))
            conn.execute("update data.principals set db_role = %s where org_id = %s and principal_id = %s",
                         (analyst_login, o.name, f"p{p}"))
            conn.commit()
            with psycopg.connect(login_url(db_url, analyst_login)) as sql:
                rows = {r[0] for r in sql.execute("select fragment_id from data.fragments")}
                assert leak(rows, allowed) == 0 and rows == allowed
                for table in ("embeddings", "bm25_postings", "fragment_sources"):
                    assert leak({r[0] for r in sql.execute(f"select fragment_id from data.{table}")}, allowed) == 0
                n = sql.execute("select coalesce(sum(fragment_count), 0) from data.bm25_corpus").fetchone()[0]
                assert n == len(allowed)  # statistics count what it may see, nothing else
                TALLY["queries"] += 5

    # Traces: the principal that made one, and auditors of its org, read it; nobody else.
    for (org_name, maker), trace_id in traces.items():
        for o in orgs:
            for p, grants in enumerate(o.principals):
                act_as(conn, o.name, f"p{p}")
                try:
                    with conn.transaction():
                        conn.execute("select api.get_trace(%s)", (trace_id,))
                    readable = True
                except psycopg.errors.NoDataFound:
                    readable = False
                expected = o.name == org_name and (p == maker or ("audit", None) in grants)
                TALLY["reads"] += 1
                TALLY["leaks"] += readable and not expected
                assert readable == expected
                conn.rollback()

    # Scores do not move when data the principal cannot see comes and goes: another
    # tenant with the same vocabulary and vectors, and a session nobody holds.
    noise = Org(f"t{next(_names)}", [Fragment(q.split() + ["journal"], None, None, None, [0.0] * DIMS)
                                     for q in queries * 3], [], set())
    write(conn, noise, noise.fragments, prefix="n")
    hidden = orgs[0]
    conn.execute("select api.bind_principal(%s, 'writer')", (hidden.name,))
    conn.execute("select api.open_session('hidden')")
    conn.commit()
    conn.execute("select api.bind_principal(%s, 'writer')", (hidden.name,))
    for n, q in enumerate(queries):
        text = f"{q} journal hidden {n}"
        digest = hashlib.sha256(text.encode()).hexdigest()
        doc_id, version, _, _ = conn.execute(
            "select * from api.begin_document(%s, null, null, 'hidden', %s, 'doc', %s, %s)",
            (hidden.name, f"h{n}.md", text, digest)).fetchone()
        chunk = {"namespace": "prose", "owner": "o", "heading_path": [], "lexical_heading": "", "symbol": None,
                 "text": text, "content_hash": digest, "token_count": 3, "chunker_version": "prop",
                 "simhash": int(digest[:15], 16), "anchor": "", "start_line": 1, "end_line": 1, "embedding": BASE}
        conn.execute("select * from api.add_fragments(%s, %s, %s)", (doc_id, version, json.dumps([chunk])))
    conn.commit()

    def unchanged() -> None:
        for (org_name, p, query), before in snapshots.items():
            act_as(conn, org_name, f"p{p}")
            o = next(o for o in orgs if o.name == org_name)
            assert searches(conn, o, query) == before
            conn.rollback()

    unchanged()
    conn.execute("delete from data.orgs where org_id = %s", (noise.name,))
    conn.execute("delete from data.documents where org_id = %s and session_id = 'hidden'", (hidden.name,))
    conn.commit()
    unchanged()
    print("\nno-leak proof so far:", json.dumps(TALLY))  # with -s: the counts for the record
    assert TALLY["leaks"] == 0


