"""Who may read what, for analysts and auditors: api.fragment_authority shows the
authority of exactly the fragments the reader may read; api.fragment_readers names
exactly the principals row-level security lets read a fragment (checked by reading it
as each), with the grants and keys that let them, and is the DBA's and auditors' only."""

from __future__ import annotations

import psycopg
import pytest

SCOPES = {"r1": ("r1", None, None), "r2": ("r2", None, None), "p1": (None, "p1", None), "s1": (None, None, "s1"),
          "org": (None, None, None), "r1s1": ("r1", None, "s1")}  # fmt: skip
PRINCIPALS = {
    "admin": [("org", None), ("audit", None)],
    "alice": [("repo", "r1")],
    "pat": [("persona", "p1")],
    "sam": [("session", "s1"), ("repo", "r1")],
    "carol": [("audit", None)],
    "dis": [("org", None)],
}


@pytest.fixture
def world(conn):
    conn.execute("select service.create_org('acme')")
    conn.execute("insert into data.repos (org_id, repo_id) values ('acme', 'r1'), ('acme', 'r2')")
    conn.execute("insert into data.personas (org_id, persona_id) values ('acme', 'p1')")
    conn.execute("insert into data.sessions (org_id, session_id) values ('acme', 's1')")
    for principal, grants in PRINCIPALS.items():
        conn.execute("select service.create_principal('acme', %s, 'human')", (principal,))
        for kind, scope in grants:
            conn.execute("select service.grant_scope('acme', %s, %s, %s)", (principal, kind, scope))
    conn.execute("update data.principals set disabled_at = now() where principal_id = 'dis'")
    for key, principal, repos in (("a00000000001", "admin", None), ("a00000000002", "admin", ["r2"]),
                                  ("b00000000001", "alice", None), ("b00000000002", "alice", None)):  # fmt: skip
        conn.execute(
            "select service.create_api_key('acme', %s, %s, sha256(%s::bytea), '', null, false, %s)",
            (principal, key, key, repos),
        )
    conn.execute("update data.api_keys set revoked_at = now() where key_id = 'b00000000002'")
    fragments = {}
    for name, (repo, persona, session) in SCOPES.items():
        fragments[name] = conn.execute(
            "insert into data.fragments (fragment_id, org_id, repo_id, persona_id, session_id, namespace, kind, owner,"
            " heading_path, text, content_hash, token_count, chunker_version, simhash, tsv)"
            " values (nextval('data.fragment_id_seq'), 'acme', %s, %s, %s, 'prose', 'prose', 'o', array['h'], %s,"
            " %s, 10, 'test', 1, api.lexical_document('h', 'text')) returning fragment_id",
            (repo, persona, session, name, name),
        ).fetchone()[0]
    conn.commit()
    return fragments


def as_principal(conn, principal: str, role: str, sql: str, params=()):
    conn.commit()  # a transaction of its own: the role it takes ends with it
    with conn.transaction():
        conn.execute("select service.bind_principal('acme', %s)", (principal,))
        conn.execute(f"set local role {role}")
        return conn.execute(sql, params).fetchall()


def test_fragment_readers_names_exactly_who_row_level_security_lets_read(conn, world):
    readers = {}
    for name, fragment in world.items():
        rows = conn.execute("select * from api.fragment_readers('acme', %s)", (fragment,)).fetchall()
        readers[name] = {r[0]: r for r in rows}
        for principal in PRINCIPALS:
            if principal == "dis":
                continue  # a disabled principal cannot be bound at all
            sees = as_principal(
                conn, principal, "contexts_analyst", "select 1 from data.fragments where fragment_id = %s", (fragment,)
            )
            assert bool(sees) == (principal in readers[name]), (name, principal)
    assert set(readers["org"]) == set(PRINCIPALS)
    assert set(readers["r1"]) == {"admin", "alice", "sam", "dis"}
    assert set(readers["r1s1"]) == {"sam"}
    assert set(readers["p1"]) == {"admin", "pat", "dis"}
    admin, alice, sam = readers["r1"]["admin"], readers["r1"]["alice"], readers["r1s1"]["sam"]
    assert admin[4] == ["org"] and admin[5] == ["a00000000001"]  # the key restricted to r2 does not reach r1
    assert readers["r2"]["admin"][5] == ["a00000000001", "a00000000002"]
    assert readers["p1"]["admin"][5] == ["a00000000001"]  # a restricted key never reaches a persona
    assert alice[4] == ["repo:r1"] and alice[5] == ["b00000000001"]  # the revoked key is left out
    assert sam[4] == ["repo:r1", "session:s1"] and "session is live" in sam[6]
    assert readers["r1"]["dis"][2] is True and "reads nothing" in readers["r1"]["dis"][6]
    assert "whole org" in readers["org"]["carol"][6]
    conn.execute("update data.sessions set expires_at = now() - interval '1 minute' where session_id = 's1'")
    conn.commit()
    assert conn.execute("select * from api.fragment_readers('acme', %s)", (world["r1s1"],)).fetchall() == []


def test_fragment_readers_is_for_the_dba_and_auditors_only(conn, world):
    rows = as_principal(conn, "carol", "contexts_auditor", "select principal_id from api.fragment_readers('acme', %s)",
                        (world["r2"],))  # fmt: skip
    assert {r[0] for r in rows} == {"admin", "dis"}
    for principal, role in (
        ("alice", "contexts_analyst"),
        ("admin", "contexts_analyst"),
        ("alice", "contexts_auditor"),
    ):
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            as_principal(conn, principal, role, "select * from api.fragment_readers('acme', %s)", (world["r1"],))
    with pytest.raises(psycopg.errors.NoDataFound, match="unknown fragment"):
        conn.execute("select * from api.fragment_readers('acme', -1)")
    conn.rollback()


def test_fragment_authority_shows_what_the_reader_may_read(conn, world):
    conn.execute(
        "insert into data.fragment_authority (org_id, fragment_id, pagerank, authority)"
        " select 'acme', f, 0.1, 1.0 / n from unnest(%s::bigint[]) with ordinality x(f, n)",
        (list(world.values()),),
    )
    conn.commit()
    top = "select fragment_id from api.fragment_authority order by authority desc limit 20"
    expect = {
        "admin": {"r1", "r2", "p1", "org"},
        "alice": {"r1", "org"},
        "sam": {"r1", "s1", "org", "r1s1"},
        "pat": {"p1", "org"},
    }
    for principal, names in expect.items():
        rows = [r[0] for r in as_principal(conn, principal, "contexts_analyst", top)]
        assert rows == [world[n] for n in SCOPES if n in names], principal
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        as_principal(conn, "carol", "contexts_auditor", top)
