"""R-ING-1: canonical text, language, metadata; binary refused."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from app.ingest.normalize import RejectedDocument, SourceDocument, canonical_text, normalize


def test_canonical_text_strips_noise():
    raw = "\ufeffTitle\r\n\r\nline\x00 with NUL\x07 and bell   \r\n\n\n\n\n\nend\t \n"
    assert canonical_text(raw) == "Title\n\nline with NUL and bell\n\n\nend\n"


def test_metadata_and_language():
    when = datetime(2026, 1, 2, tzinfo=UTC)
    doc = normalize(
        SourceDocument(
            path="docs/adr/0001-use-postgres.md",
            content=(
                "# Utiliser PostgreSQL\n\nNous stockons tout dans PostgreSQL parce que la recherche hybride y vit déjà."
            ),
            author="Ada",
            timestamp=when,
        )
    )
    assert (doc.kind, doc.syntax, doc.language, doc.author, doc.owner, doc.timestamp) == (
        "adr",
        "markdown",
        "fr",
        "Ada",
        None,  # an author is not an owner: CODEOWNERS or the org's default decide (app/owners.py)
        when,
    )
    english = normalize(
        SourceDocument(path="runbooks/disk.md", content="When the disk is full, rotate the logs first.")
    )
    assert (english.kind, english.language, english.owner) == ("runbook", "en", None)
    code = normalize(SourceDocument(path="src/app.py", content="def f():\n    return 1\n"))
    assert (code.kind, code.syntax, code.language) == ("code", "python", None)


def test_same_text_same_hash_regardless_of_newlines():
    a = normalize(SourceDocument(path="a.md", content="x\r\ny\r\n"))
    b = normalize(SourceDocument(path="a.md", content=b"x\ny\n"))
    assert a.content_hash == b.content_hash


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary"),
        (b"caf\xe9 latin-1", "not UTF-8"),
        ("   \n\t\n", "empty"),
    ],
)
def test_refusals(content, message):
    with pytest.raises(RejectedDocument, match=message):
        normalize(SourceDocument(path="x.bin", content=content))


def test_size_limit_and_kind_format():
    with pytest.raises(RejectedDocument, match="limit"):
        normalize(SourceDocument(path="big.md", content="x" * 100), max_bytes=10)
    with pytest.raises(RejectedDocument, match="kind"):
        normalize(SourceDocument(path="a.md", content="x", kind="Not A Kind"))


# -- paths: what a citation shows must be what the document is --------------------------


@pytest.mark.parametrize(
    ("given", "stored"),
    [
        ("docs/guide.md", "docs/guide.md"),
        ("docs\\adr\\0001.md", "docs/adr/0001.md"),
        ("/etc/service.md", "etc/service.md"),
        ("./docs/./guide.md", "docs/guide.md"),
        ("docs//api///retrieve.md", "docs/api/retrieve.md"),
        ("docs/notes/", "docs/notes"),
        ("docs/cafe\u0301.md", "docs/caf\u00e9.md"),
        ("docs/r\u00e9sum\u00e9 v2.md", "docs/r\u00e9sum\u00e9 v2.md"),
        ("docs/...md", "docs/...md"),
        ("\u6587\u6863/\u8bf4\u660e.md", "\u6587\u6863/\u8bf4\u660e.md"),
    ],
)
def test_paths_are_normalized(given, stored):
    assert normalize(SourceDocument(path=given, content="Some text.")).path == stored


@pytest.mark.parametrize(
    ("given", "problem"),
    [
        ("../../etc/passwd", "'..'"),
        ("..", "'..'"),
        ("docs/../../secrets.md", "'..'"),
        ("docs\\..\\..\\secrets.md", "'..'"),
        ("docs/.. /secrets.md", "'..'"),
        ("", "empty"),
        ("   ", "blank"),
        ("/", "empty"),
        ("./.", "empty"),
        ("docs/ /guide.md", "blank"),
        ("docs/guide.md\nInjected: yes", "control character U\\+000A"),
        ("docs/\tguide.md", "control character U\\+0009"),
        ("docs/guide\x00.md", "control character U\\+0000"),
        ("docs/guide\x85.md", "control character U\\+0085"),
        ("docs/\u202edm.exe", "invisible formatting character U\\+202E"),
        ("docs/guide\u2066.md", "invisible formatting character U\\+2066"),
        ("docs/gu\u200bide.md", "invisible formatting character U\\+200B"),
        ("\ufeffdocs/guide.md", "invisible formatting character U\\+FEFF"),
        ("docs/guide\u2028.md", "line separator U\\+2028"),
        ("d/" * 600 + "x.md", "1024"),
    ],
)
def test_misleading_paths_are_refused(given, problem):
    with pytest.raises(RejectedDocument, match=problem):
        normalize(SourceDocument(path=given, content="Some text."))


def test_a_refusal_shows_the_path_escaped():
    with pytest.raises(RejectedDocument) as refused:
        normalize(SourceDocument(path="a\u202eb\nc.md", content="Some text."))
    assert "\n" not in str(refused.value) and "\u202e" not in str(refused.value)


@pytest.mark.parametrize(
    ("content", "kind", "metadata"),
    [
        ("---\ntitle: Retries\nkind: anti-pattern\n---\n# Retries\n\nDo not.\n", "anti-pattern", {}),
        ("---\nnegative: true  # a known trap\n---\n# Retries\n\nDo not.\n", "doc", {"negative": True}),
        ("---\nkind: anti-pattern\n# no closing line\n\nDo not.\n", "doc", {}),
        ("# Retries\n\nkind: anti-pattern\n", "doc", {}),
    ],
)
def test_front_matter_marks_a_document_negative(content, kind, metadata):
    doc = normalize(SourceDocument(path="notes/retries.md", content=content))
    assert (doc.kind, doc.metadata) == (kind, metadata)
    assert normalize(SourceDocument(path="notes/retries.md", content=content, kind="adr")).kind == "adr"
