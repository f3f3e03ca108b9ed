"""service.delete_document against real Postgres: a deleted document's fragments leave
retrieval, BM25 statistics and dense search at once; its history stays; a fragment
another document still holds survives; near-duplicate pointers are re-homed."""

from __future__ import annotations

import json

import psycopg
import pytest

from app.access import act_as
from app.scope import Scope
from tests.ingest.test_write import INVENTORY, live_citation
from tests.sql.test_bm25 import assert_statistics_match_active_fragments

STORAGE = "# Storage\n\nRotate the journal when the storage volume is full.\n"
POLICY = "# Secrets\n\nNever commit API keys; rotate credentials every ninety days.\n"


def delete(conn, doc_id: int, principal: str = "admin"):
    """As the service does it: bound to a principal, under row-level security."""
    act_as(conn, "acme", principal)
    row = conn.execute("select * from service.delete_document(%s)", (doc_id,)).fetchone()
    return row


def doc_id(conn, path: str) -> int:
    return conn.execute("select doc_id from data.documents where path = %s", (path,)).fetchone()[0]


def dense_ids(conn, pipeline, query: str) -> set[int]:
    vectors = {ns: e.embed([query])[0] for ns, e in pipeline.embedders.items()}
    rows = conn.execute("select fragment_id from api.search_dense('acme', %s::jsonb, 50)", (json.dumps(vectors),))
    return {r[0] for r in rows}


def test_a_deleted_documents_fragments_leave_every_index_and_its_history_stays(conn, ingest, pipeline):
    ingest("acme", {"runbooks/storage.md": STORAGE, "policies/secrets.md": POLICY})
    storage = doc_id(conn, "runbooks/storage.md")
    fragments = {r[0] for r in conn.execute("select fragment_id from data.fragments where doc_id = %s", (storage,))}
    assert fragments & dense_ids(conn, pipeline, "storage volume full journal")
    conn.commit()

    row = delete(conn, storage)
    assert row[:5] == (storage, "acme", "runbooks/storage.md", 1, len(fragments)) and row[5] == []
    # At once, in the same transaction: neither list holds them any more.
    lexical = {r[0] for r in conn.execute("select fragment_id from api.search_lexical('acme', 'storage journal')")}
    assert not lexical & fragments
    assert not fragments & dense_ids(conn, pipeline, "storage volume full journal")
    assert conn.execute("select count(*) from api.list_documents('acme')").fetchone() == (1,)
    with pytest.raises(psycopg.errors.NoDataFound, match="unknown document"):
        conn.execute("select * from api.get_document(%s)", (storage,))
    conn.rollback()
    act_as(conn, "acme", "admin")
    conn.execute("select * from service.delete_document(%s)", (storage,))  # the rollback undid it
    conn.commit()

    assert_statistics_match_active_fragments(conn)
    # History for audit: the version, its text, its (retired) pointers and who deleted it.
    assert conn.execute(
        "select d.deleted_by, v.content, bool_and(s.retired_at is not null) from data.documents d"
        " join data.document_versions v using (doc_id) join data.fragment_sources s using (doc_id)"
        " where d.doc_id = %s group by 1, 2",
        (storage,),
    ).fetchone() == ("admin", STORAGE.strip() + "\n", True)
    assert conn.execute("select bool_or(active) from data.fragments where doc_id = %s", (storage,)).fetchone() == (
        False,
    )
    with pytest.raises(psycopg.errors.NoDataFound):
        delete(conn, storage)  # twice: it is gone
    conn.rollback()


def test_writing_a_deleted_path_again_revives_it_as_a_new_version(conn, ingest):
    ingest("acme", {"runbooks/storage.md": STORAGE})
    storage = doc_id(conn, "runbooks/storage.md")
    conn.commit()
    delete(conn, storage)
    conn.commit()
    result = ingest("acme", {"runbooks/storage.md": STORAGE})[0]
    assert (result.doc_id, result.version, result.changed, result.created) == (storage, 2, True, 0)
    assert conn.execute("select count(*) from api.list_documents('acme')").fetchone() == (1,)
    assert conn.execute("select bool_and(active) from data.fragments where doc_id = %s", (storage,)).fetchone() == (
        True,
    ), "the same text is revived, not embedded again"
    assert_statistics_match_active_fragments(conn)


def test_a_fragment_another_document_holds_stays(conn, ingest):
    ingest("acme", {"a/inventory.py": INVENTORY, "b/inventory.py": INVENTORY})
    conn.commit()
    delete(conn, doc_id(conn, "a/inventory.py"))
    conn.commit()
    assert live_citation(conn, "purge_expired")[:2] == ("b/inventory.py", 1)
    assert_statistics_match_active_fragments(conn)


def test_near_duplicate_pointers_of_other_documents_are_rehomed(conn, ingest, pipeline):
    near = INVENTORY.replace(
        '"""Stock levels and the reservations held against them."""',
        '"""Stock levels and the reservations held against it."""',
    )
    ingest("acme", {"a/inventory.py": INVENTORY})
    assert ingest("acme", {"b/inventory.py": near})[0].created == 0, "the near copy collapses at first"
    conn.commit()
    row = delete(conn, doc_id(conn, "a/inventory.py"))
    detached = row[5]
    assert detached and {d["path"] for d in detached} == {"b/inventory.py"}
    assert pipeline.rehome(conn, Scope("acme"), detached) == len(detached)
    conn.commit()
    path, version, text = live_citation(conn, "Inventory")
    assert (path, version) == ("b/inventory.py", 1) and "held against it." in text
    assert_statistics_match_active_fragments(conn)


def test_only_a_writer_of_its_scope_deletes_and_others_do_not_learn_it_exists(conn, ingest):
    ingest("acme", {"platform/storage.md": STORAGE}, repo="platform")
    ingest("globex", {"runbooks/storage.md": STORAGE})
    platform, globex = doc_id(conn, "platform/storage.md"), doc_id(conn, "runbooks/storage.md")
    conn.execute("select service.create_principal('acme', 'reader')")
    conn.execute("select service.grant_scope('acme', 'reader', 'org', null, false)")
    conn.execute("select service.create_principal('acme', 'other-repo')")
    conn.execute("select service.grant_scope('acme', 'other-repo', 'repo', 'mobile', true)")
    conn.commit()
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="may not write to repo platform"):
        delete(conn, platform, "reader")  # may read it, may not write it: 403
    conn.rollback()
    for principal, target in (("other-repo", platform), ("admin", globex)):
        with pytest.raises(psycopg.errors.NoDataFound, match="unknown document"):
            delete(conn, target, principal)  # may not read it: as unknown as a missing id
        conn.rollback()
    assert conn.execute("select count(*) from data.documents where deleted_at is not null").fetchone() == (0,)
