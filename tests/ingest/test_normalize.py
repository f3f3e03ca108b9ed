"""R-ING-1: canonical text, language, metadata; binary refused."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from app.ingest.normalize import RejectedDocument, SourceDocument, canonical_text, normalize


def test_canonical_text_strips_noise():
    raw = "\ufeffTitle\r\n\r\nline\x00 with NUL\x07 and bell   \r\n\n\n\n\n\nend\t \n"
    assert canonical_text(raw) == "Title\n\nline with NUL and bell\n\n\nend\n"


def test_metadata_and_language():
    when = datetime(2026, 1, 2, tzinfo=timezone.utc)
    doc = normalize(SourceDocument(
        path="docs/adr/0001-use-postgres.md",
        content="# Utiliser PostgreSQL\n\nNous stockons tout dans PostgreSQL parce que la recherche hybride y vit déjà.",
        author="Ada", timestamp=when))
    assert (doc.kind, doc.syntax, doc.language, doc.author, doc.owner, doc.timestamp) == (
        "adr", "markdown", "fr", "Ada", "Ada", when)
    english = normalize(SourceDocument(path="runbooks/disk.md", content="When the disk is full, rotate the logs first."))
    assert (english.kind, english.language, english.owner) == ("runbook", "en", "unowned")
    code = normalize(SourceDocument(path="src/app.py", content="def f():\n    return 1\n"))
    assert (code.kind, code.syntax, code.language) == ("code", "python", None)


def test_same_text_same_hash_regardless_of_newlines():
    a = normalize(SourceDocument(path="a.md", content="x\r\ny\r\n"))
    b = normalize(SourceDocument(path="a.md", content=b"x\ny\n"))
    assert a.content_hash == b.content_hash


@pytest.mark.parametrize(("content", "message"), [
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary"),
    (b"caf\xe9 latin-1", "not UTF-8"),
    ("   \n\t\n", "empty"),
])
def test_refusals(content, message):
    with pytest.raises(RejectedDocument, match=message):
        normalize(SourceDocument(path="x.bin", content=content))


def test_size_limit_and_kind_format():
    with pytest.raises(RejectedDocument, match="limit"):
        normalize(SourceDocument(path="big.md", content="x" * 100), max_bytes=10)
    with pytest.raises(RejectedDocument, match="kind"):
        normalize(SourceDocument(path="a.md", content="x", kind="Not A Kind"))
