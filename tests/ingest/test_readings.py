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
from app.retrieve.features import READING_PREFIX, reading
from app.retrieve.models import RetrieveRequest
from app.retrieve.service import Retriever
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
    assert refused.value.sqlstate == "22023" and "fragments_reading_text" in str(refused.value)
    conn.rollback()
    assert stored(conn) == before
    # Written by hand as the owner, the same check holds.
    other = reading("a recipe for lemon cake")
    with pytest.raises(psycopg.errors.CheckViolation):
        conn.execute("select api.set_readings(%s, %s)", ([_id], [other]))
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
        # Stored before readings existed, and by a tokenizer of another version.
        outdated = READING_PREFIX[:4] + (12345).to_bytes(4, "little") + blob[8:]
        conn.execute("update data.fragments set reading = null where fragment_id = %s", (first,))
        conn.execute("update data.fragments set reading = %s where fragment_id = %s", (outdated, second))
    for expected in (2, 0):  # a second run finds nothing left to write
        done = CliRunner().invoke(main, ["--db-url", db_url, "rerank", "readings", "--json"], catch_exceptions=False)
        assert done.exit_code == 0, done.output
        assert json.loads(done.output.strip().splitlines()[-1])["written"] == expected
    with psycopg.connect(db_url) as conn:
        assert all(blob == reading(text) for _id, text, blob in stored(conn))
