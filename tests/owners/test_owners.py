"""Owners (R-DOC-3): the document's own, else CODEOWNERS (last match wins), else the
org's default; bulk reassignment without a new version; staleness from the traces,
under the reader's row-level security."""

from __future__ import annotations

import psycopg
import pytest

from app.owners import CodeOwners
from tests.owners.helpers import OLD, fragments_of, record_returns

CODEOWNERS = "# docs\n*.md @docs-team\n/runbooks/ @ops @backup\n/runbooks/free.md\n"


def owners(conn, org):
    return {
        path: (owner, source, version)
        for path, owner, source, version in conn.execute(
            "select path, owner, owner_source, current_version from data.documents where org_id = %s", (org,)
        )
    }


def fragment_owners(conn, org, path):
    return set(
        conn.execute(
            "select f.owner, f.owner_source from data.fragments f where f.org_id = %s and f.fragment_id = any(%s)",
            (org, fragments_of(conn, org, path)),
        ).fetchall()
    )


def test_codeowners_last_matching_line_wins_and_a_bare_pattern_unowns():
    rules = CodeOwners(CODEOWNERS)
    assert rules.owner_of("guide.md") == "docs-team"
    assert rules.owner_of("runbooks/disk.md") == "ops"
    assert rules.owner_of("runbooks/free.md") is None
    assert rules.owner_of("src/app.py") is None


def test_owner_comes_from_the_document_then_codeowners_then_the_org_default(conn, ingest):
    conn.execute("select service.create_org('acme')")
    conn.execute("update data.orgs set default_owner = 'Dana' where org_id = 'acme'")
    files = {
        "CODEOWNERS": CODEOWNERS,
        "guide.md": "# Guide\n\nRotate the journal weekly and page the storage team when it fills.\n",
        "runbooks/disk.md": "# Disk\n\nWhen the disk fills, drain the queue before resizing the volume.\n",
        "runbooks/free.md": "# Free\n\nAnyone may edit this page about the coffee machine rota.\n",
        "named.md": "---\nowner: Ada Lovelace\n---\n# Named\n\nThe engine computes Bernoulli numbers in order.\n",
        "src/app.py": "def main():\n    return 'serve the pool of connections'\n",
    }
    ingest("acme", files, repo="core")
    ingest("acme", {"given.md": "# Given\n\nThe caller names the owner here.\n"}, repo="core", owner="Grace")
    got = owners(conn, "acme")
    assert got["guide.md"] == ("docs-team", "codeowners", 1)
    assert got["runbooks/disk.md"] == ("ops", "codeowners", 1)
    assert got["runbooks/free.md"] == ("Dana", "default", 1)
    assert got["named.md"] == ("Ada Lovelace", "document", 1)
    assert got["src/app.py"] == ("Dana", "default", 1)
    assert got["given.md"] == ("Grace", "document", 1)
    assert fragment_owners(conn, "acme", "runbooks/disk.md") == {("ops", "codeowners")}
    assert fragment_owners(conn, "acme", "named.md") == {("Ada Lovelace", "document")}

    # A new CODEOWNERS moves what it governs, without a new version of those documents;
    # what a document named itself stays.
    ingest("acme", {"CODEOWNERS": "* @platform\n"}, repo="core")
    got = owners(conn, "acme")
    assert got["guide.md"] == ("platform", "codeowners", 1)
    assert got["src/app.py"] == ("platform", "codeowners", 1)
    assert got["named.md"] == ("Ada Lovelace", "document", 1)
    assert fragment_owners(conn, "acme", "src/app.py") == {("platform", "codeowners")}


def test_without_any_source_a_fragment_is_unowned(conn, ingest):
    ingest("beta", {"note.md": "# Note\n\nNobody named an owner for this text.\n"})
    assert owners(conn, "beta")["note.md"] == ("unowned", "none", 1)


def test_bulk_reassignment_writes_no_version_is_audited_and_sticks(conn, ingest, as_principal):
    ingest(
        "acme",
        {
            "CODEOWNERS": CODEOWNERS,
            "runbooks/a.md": "# A\n\nDrain the queue first.\n",
            "runbooks/b.md": "# B\n\nResize the volume after.\n",
            "guide.md": "# G\n\nRead me.\n",
        },
        repo="core",
    )
    conn.execute("select service.create_principal('acme', 'reader', 'human', '')")
    conn.execute("select service.grant_scope('acme', 'reader', 'repo', 'core', false)")
    conn.commit()
    as_principal("acme", "reader")
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute("select * from service.owners_reassign('acme', 'ops', 'Ada', 'core')")
    conn.rollback()

    as_principal("acme")
    moved = conn.execute("select * from service.owners_reassign('acme', 'ops', 'Ada', 'core', 'runbooks/')").fetchone()
    conn.commit()
    assert moved[1:] == (
        2,
        len(fragments_of(conn, "acme", "runbooks/a.md") + fragments_of(conn, "acme", "runbooks/b.md")),
    )
    got = owners(conn, "acme")
    assert got["runbooks/a.md"] == ("Ada", "reassigned", 1) and got["guide.md"] == ("docs-team", "codeowners", 1)
    assert fragment_owners(conn, "acme", "runbooks/b.md") == {("Ada", "reassigned")}
    audit = conn.execute(
        "select from_owner, to_owner, repo_id, path_prefix, documents, principal_id from data.owner_reassignments"
    ).fetchall()
    assert audit == [("ops", "Ada", "core", "runbooks/", 2, "admin")]

    # A later CODEOWNERS does not undo a reassignment; an owner the document names does.
    ingest("acme", {"CODEOWNERS": "* @platform\n"}, repo="core")
    assert owners(conn, "acme")["runbooks/a.md"] == ("Ada", "reassigned", 1)
    ingest("acme", {"runbooks/a.md": "---\nowner: Lin\n---\n# A\n\nDrain the queue first.\n"}, repo="core")
    assert owners(conn, "acme")["runbooks/a.md"] == ("Lin", "document", 2)


def test_a_repo_writer_reassigns_neither_nor_counts_a_personas_documents(conn, ingest, as_principal):
    """A document of the repo that also belongs to a persona is not the repo writer's to
    read: its reassignment leaves it as it was and does not count it (the count would
    tell hidden paths and owners)."""
    ingest("acme", {"runbooks/a.md": "---\nowner: ops\n---\n# A\n\nDrain the queue first.\n"}, repo="core")
    ingest(
        "acme", {"private/p.md": "---\nowner: ops\n---\n# P\n\nThe persona's own notes.\n"}, repo="core", persona="p2"
    )
    conn.execute("select service.create_principal('acme', 'repo-writer', 'agent', '')")
    conn.execute("select service.grant_scope('acme', 'repo-writer', 'repo', 'core', true)")
    conn.commit()
    as_principal("acme", "repo-writer")
    assert conn.execute("select documents from service.owners_reassign('acme', 'ops', 'Mal', 'core')").fetchone() == (
        1,
    )
    hidden = conn.execute("select documents from service.owners_reassign('acme', 'ops', 'Mal', 'core', 'private/')")
    assert hidden.fetchone() == (0,)
    conn.commit()
    got = owners(conn, "acme")
    assert got["runbooks/a.md"][0] == "Mal" and got["private/p.md"][0] == "ops"
    # The persona's writer (here the org's administrator) moves it.
    as_principal("acme")
    assert conn.execute("select documents from service.owners_reassign('acme', 'ops', 'Mal', 'core')").fetchone() == (
        1,
    )


def test_stale_means_often_returned_and_long_unedited(conn, ingest, as_principal):
    ingest(
        "acme",
        {
            "old.md": "# Old\n\nThe failover runbook: promote the replica, then repoint DNS.\n",
            "rare.md": "# Rare\n\nHow to rotate the signing keys of the legacy billing service.\n",
        },
        repo="core",
        owner="Ada",
        timestamp=OLD,
    )
    ingest(
        "acme",
        {"fresh.md": "# Fresh\n\nThe new deploy checklist, written this week for the platform.\n"},
        repo="core",
        owner="Ada",
    )
    ingest(
        "acme",
        {"secret.md": "# Secret\n\nPayroll export steps that only finance may read.\n"},
        repo="payroll",
        owner="Ada",
        timestamp=OLD,
    )
    old, rare, fresh, secret = (fragments_of(conn, "acme", p) for p in ("old.md", "rare.md", "fresh.md", "secret.md"))
    record_returns(conn, "acme", old + fresh + secret, times=6)
    record_returns(conn, "acme", rare, times=2)
    record_returns(conn, "acme", rare, times=9, days_ago=200)  # outside the 90-day window
    conn.commit()

    as_principal("acme")
    rows = conn.execute(
        "select fragment_id, owner, owner_source, path, retrievals, days_since_edit from api.stale_fragments('acme')"
    ).fetchall()
    assert {r[0] for r in rows} == set(old + secret)
    assert {(r[1], r[2], r[4]) for r in rows} == {("Ada", "document", 6)} and min(r[5] for r in rows) > 365
    looser = conn.execute("select fragment_id from api.stale_fragments('acme', p_min_retrievals => 2)").fetchall()
    assert {r[0] for r in looser} == set(old + secret + rare)
    assert conn.execute("select count(*) from api.stale_fragments('acme', 'Grace')").fetchone()[0] == 0
    conn.rollback()

    # A reader of repo core alone never sees payroll's fragments, nor their counts.
    conn.execute("select service.create_principal('acme', 'reader', 'human', '')")
    conn.execute("select service.grant_scope('acme', 'reader', 'repo', 'core', false)")
    conn.commit()
    as_principal("acme", "reader")
    seen = {r[0] for r in conn.execute("select fragment_id from api.stale_fragments('acme', 'Ada')")}
    assert seen == set(old)
    assert {r[0] for r in conn.execute("select fragment_id from data._stale_readable('acme', now(), 90, 1, 0)")} == set(
        old + fresh + rare
    )
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute("select * from data.fragment_returns")
    conn.rollback()


def test_org_settings_change_the_thresholds_and_need_an_org_write_grant(conn, ingest, as_principal):
    ingest(
        "acme", {"old.md": "# Old\n\nPromote the replica, then repoint DNS.\n"}, repo="core", owner="Ada", timestamp=OLD
    )
    record_returns(conn, "acme", fragments_of(conn, "acme", "old.md"), times=3)
    conn.execute("select service.create_principal('acme', 'writer', 'human', '')")
    conn.execute("select service.grant_scope('acme', 'writer', 'repo', 'core', true)")
    conn.commit()
    as_principal("acme")
    assert conn.execute("select count(*) from api.stale_fragments('acme')").fetchone()[0] == 0
    row = conn.execute("select * from service.owner_settings_set('acme', 'Dana', 30, 10, 3, 24)").fetchone()
    assert row == ("acme", "Dana", 30, 10, 3, 24)
    assert conn.execute("select count(*) from api.stale_fragments('acme')").fetchone()[0] == 1
    with pytest.raises(psycopg.errors.InvalidParameterValue):
        conn.execute("select * from service.owner_settings_set('acme', p_window_days => 0)")
    conn.rollback()
    as_principal("acme", "writer")
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute("select * from service.owner_settings_set('acme', 'Eve')")


def test_returns_are_the_included_entries_of_any_shape_of_trace(conn, ingest):
    """The trace trigger records each fragment an answer included, once, and skips an
    entry of any other shape rather than failing the retrieval's trace."""
    ingest("acme", {"a.md": "# A\n\nSomething to own.\n"}, repo="core")
    entries = [
        {"fragment_id": 7, "included": True},
        {"fragment_id": 7, "included": True},  # twice: one row
        {"fragment_id": 8, "included": False},
        {"fragment_id": 9},
        {"fragment_id": 10, "included": "true"},
        {"fragment_id": "11", "included": True},
        {"fragment_id": -12, "included": True},
        {"fragment_id": 1.5, "included": True},
        {"fragment_id": 10**19, "included": True},
        {"included": True},
        ["fragment_id", 13],
        14,
        None,
        {"fragment_id": 15, "included": True, "extra": {"fragment_id": 16, "included": True}},
    ]

    def returned(candidates: object) -> list[int]:
        trace_id = conn.execute(
            "insert into data.retrieval_traces (org_id, principal_id, query, request, pipeline, candidates)"
            " values ('acme', 'admin', 'q', '{}', '{}', %s) returning trace_id",
            (psycopg.types.json.Jsonb(candidates),),
        ).fetchone()[0]
        return [
            r[0]
            for r in conn.execute(
                "select fragment_id from data.fragment_returns where trace_id = %s order by 1", (trace_id,)
            )
        ]

    assert returned(entries) == [7, 15]
    assert returned({"fragment_id": 7, "included": True}) == []
    assert returned([]) == []
    assert returned("text") == []


def test_every_trigger_a_trace_write_fires_reads_the_rows_as_written(conn):
    """Writing a trace is on every retrieval's path: its triggers are statement triggers
    over the inserted rows as they were written (a transition table), never row
    triggers that read each new trace back from the table and decompress its candidates
    again. Several traces written in one statement each get their returns."""
    triggers = conn.execute(
        "select tgname, tgtype & 1 = 1 as per_row, tgnewtable is not null as over_new_rows from pg_trigger"
        " where tgrelid = 'data.retrieval_traces'::regclass and not tgisinternal and tgtype & 4 = 4"
    ).fetchall()
    assert {name for name, _, _ in triggers} >= {"retrieval_traces_returns", "retrieval_traces_usage_insert"}
    assert [name for name, per_row, over_new in triggers if per_row or not over_new] == []
    conn.execute("select service.create_org('acme')")
    conn.execute("select service.create_principal('acme', 'admin', 'human', 'test')")
    conn.execute(
        "insert into data.retrieval_traces (org_id, principal_id, query, request, pipeline, candidates) values"
        " ('acme', 'admin', 'a', '{}', '{}', '[{\"fragment_id\": 1, \"included\": true}]'),"
        " ('acme', 'admin', 'b', '{}', '{}', '[{\"fragment_id\": 2, \"included\": true},"
        ' {"fragment_id": 1, "included": false}]\')'
    )
    assert conn.execute(
        "select t.query, r.fragment_id from data.fragment_returns r join data.retrieval_traces t using (trace_id)"
        " order by 1, 2"
    ).fetchall() == [("a", 1), ("b", 2)]
