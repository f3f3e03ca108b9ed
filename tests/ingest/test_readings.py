"""Readings (data.fragments.reading): ingestion stores what the learned reranker reads
of each text, retrieval returns it, the database refuses one made of another text, and
`contexts rerank readings` writes the missing and outdated ones."""

from __future__ import annotations

import json

import msgspec
import psycopg
import pytest
from click.testing import CliRunner

from app.cli import main
from app.retrieve.service import Retriever
from app.text.stems import READING_PREFIX, reading
from app.wire.retrieve import RetrieveRequest
from tests.retrieve.corpus import CODE, DOCS


def stored(conn) -> list[tuple[int, str, bytes | None]]:
    return conn.execute("select fragment_id, text, reading from data.fragments order by fragment_id").fetchall()


def test_ingestion_stores_each_reading_and_retrieval_returns_it(conn, ingest, as_principal, models):
    ingest("acme", DOCS | CODE)
    rows = stored(conn)
    assert rows and all(blob == reading(text) for _id, text, blob in rows)
    request = msgspec.convert({"query": "rotate credentials", "scope": {"org_id": "acme"}}, RetrieveRequest)
    as_principal("acme")
    candidates = Retriever(models, None).candidates(conn, request)
    assert candidates and all(c.reading == reading(c.text) for c in candidates)


def test_a_reading_of_another_text_is_refused_and_nothing_is_stored(conn, ingest, monkeypatch):
    ingest("acme", {"docs/a.md": "# A\n\nRotate the signing keys every quarter.\n"})
    before = stored(conn)
    (_id, text, blob), *_ = before
    # A writer that sends a reading of another text: the chunk is refused, the document too.
    monkeypatch.setattr("app.ingest.pipeline.reading", lambda text: reading(text + " and more"))
    with pytest.raises(psycopg.Error) as refused:
        ingest("acme", {"docs/b.md": "# B\n\nA recipe for lemon cake.\n"})
    assert refused.value.sqlstate == "22023" and "was not made of its text" in str(refused.value)
    conn.rollback()
    assert stored(conn) == before
    # Written by hand as the owner, the same check holds.
    other = reading("a recipe for lemon cake")
    with pytest.raises(psycopg.errors.CheckViolation):
        conn.execute("select service.set_readings(%s, %s, %s)", ([_id], ["acme"], [other]))
    conn.rollback()
    assert stored(conn) == before


def test_contexts_rerank_readings_writes_the_missing_and_outdated_ones(db_url, tmp_path, monkeypatch):
    (tmp_path / "a.md").write_text("# A\n\nRotate the signing keys every quarter.\n\n## Vault\n\nKeys live there.\n")
    (tmp_path / "b.py").write_text("def rotate(keys):\n    return [k.renew() for k in keys]\n")
    monkeypatch.chdir(tmp_path)
    done = CliRunner().invoke(main, ["--db-url", db_url, "ingest", ".", "--org", "acme"], catch_exceptions=False)
    assert done.exit_code == 0, done.output
    with psycopg.connect(db_url) as conn:
        rows = stored(conn)
        assert len(rows) >= 2
        (first, _, _), (second, _, blob) = rows[:2]
        # Stored before readings existed (and inactive now: it may come back), and by a
        # tokenizer of another version.
        outdated = READING_PREFIX[:4] + (12345).to_bytes(4, "little") + blob[8:]
        conn.execute("update data.fragments set reading = null, active = false where fragment_id = %s", (first,))
        conn.execute("update data.fragments set reading = %s where fragment_id = %s", (outdated, second))
    for expected in (2, 0):  # a second run finds nothing left to write
        done = CliRunner().invoke(main, ["--db-url", db_url, "rerank", "readings", "--json"], catch_exceptions=False)
        assert done.exit_code == 0, done.output
        assert json.loads(done.output.strip().splitlines()[-1])["written"] == expected
    with psycopg.connect(db_url) as conn:
        assert all(blob == reading(text) for _id, text, blob in stored(conn))


def test_a_fragment_stored_without_a_reading_gets_one_when_a_document_holds_its_text(conn, ingest):
    text = "# A\n\nRotate the signing keys every quarter.\n"
    ingest("acme", {"docs/a.md": text})
    conn.execute("update data.fragments set reading = null")  # as stored before readings were
    conn.commit()
    results = ingest("acme", {"docs/copy.md": text})
    assert results[0].created == 0  # the same fragments, pointed at again
    rows = stored(conn)
    assert rows and all(blob == reading(text) for _id, text, blob in rows)


def test_updating_other_columns_does_not_check_the_reading_again(conn, ingest):
    """The digest is checked when the text or the reading is written, not on every
    update of the row (retiring a fragment, changing its owner)."""
    ingest("acme", {"docs/a.md": "# A\n\nRotate the signing keys every quarter.\n"})
    fragment_id = stored(conn)[0][0]
    conn.execute("alter table data.fragments disable trigger fragments_reading_text")
    conn.execute("update data.fragments set reading = %s where fragment_id = %s", (reading("other"), fragment_id))
    conn.execute("alter table data.fragments enable trigger fragments_reading_text")
    conn.execute("update data.fragments set owner = 'someone' where fragment_id = %s", (fragment_id,))
    with pytest.raises(psycopg.errors.CheckViolation):
        conn.execute("update data.fragments set reading = reading || ''::bytea where fragment_id = %s", (fragment_id,))
