"""R-ING-1: canonical text plus the metadata every later stage relies on."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import PurePosixPath

import py3langid

# C0/C1 controls other than tab and newline, plus NUL; they break tokenizers and psql.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_TRAILING_SPACE = re.compile(r"[ \t]+$", re.MULTILINE)
_BLANK_RUNS = re.compile(r"\n{4,}")
KIND_FORMAT = re.compile(r"^[a-z][a-z0-9-]{0,31}$")

CODE_LANGUAGES = {
    ".py": "python", ".pyi": "python",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".ts": "typescript", ".tsx": "tsx", ".mts": "typescript", ".cts": "typescript",
    ".go": "go", ".rs": "rust", ".java": "java",
}
PROSE_FORMATS = {".md": "markdown", ".markdown": "markdown", ".rst": "rst", ".txt": "text"}


class RejectedDocument(ValueError):
    """Raised for binary or undecodable input: it is refused, never stored."""


@dataclass(frozen=True, slots=True)
class SourceDocument:
    """A document as it arrives: raw text (or bytes) plus where it comes from."""

    path: str
    content: str | bytes
    kind: str | None = None
    author: str | None = None
    owner: str | None = None
    timestamp: datetime | None = None
    metadata: dict = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class NormalizedDocument:
    path: str
    text: str
    content_hash: str
    kind: str
    syntax: str
    """Parser to chunk with: a code language, or markdown / rst / text."""
    language: str | None
    """Natural language of the prose (ISO 639-1), None for code."""
    author: str | None
    owner: str
    """Named human accountable for the fragments (R-DOC-3)."""
    timestamp: datetime | None
    metadata: dict


def decode(content: str | bytes, path: str) -> str:
    if isinstance(content, str):
        # Text that arrived as a string (JSON) is binary when control characters make
        # up a tenth of it; a stray NUL in real text is only stripped.
        sample = content[:8192]
        controls = len(_CONTROL.findall(sample))
        if sample and controls * 10 >= len(sample):
            raise RejectedDocument(f"{path}: binary content ({controls} control characters), refused")
        return content
    if b"\x00" in content[:8192]:
        raise RejectedDocument(f"{path}: binary file (NUL bytes), refused")
    try:
        return content.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise RejectedDocument(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start}), refused") from exc


def canonical_text(text: str) -> str:
    """NFC, \\n newlines, no control characters or trailing blanks, at most two blank lines."""
    text = unicodedata.normalize("NFC", text).replace("\r\n", "\n").replace("\r", "\n")
    text = _CONTROL.sub("", text.replace("\ufeff", ""))
    text = _TRAILING_SPACE.sub("", text)
    text = _BLANK_RUNS.sub("\n\n\n", text)
    return text.strip("\n") + "\n" if text.strip() else ""


def syntax_of(path: str) -> str:
    suffix = PurePosixPath(path).suffix.lower()
    return CODE_LANGUAGES.get(suffix) or PROSE_FORMATS.get(suffix, "text")


def default_kind(syntax: str, path: str) -> str:
    if syntax in CODE_LANGUAGES.values():
        return "code"
    lowered = path.lower()
    for marker, kind in (("adr", "adr"), ("runbook", "runbook"), ("polic", "policy")):
        if marker in lowered:
            return kind
    return "doc"


def detect_language(text: str) -> str | None:
    sample = text[:4000].strip()
    if len(sample) < 20:
        return None
    lang, _score = py3langid.classify(sample)
    return lang


def normalize(doc: SourceDocument, max_bytes: int | None = None) -> NormalizedDocument:
    size = len(doc.content.encode("utf-8") if isinstance(doc.content, str) else doc.content)
    if max_bytes is not None and size > max_bytes:
        raise RejectedDocument(f"{doc.path}: {size} bytes is over the {max_bytes}-byte limit, refused")
    if not doc.path or len(doc.path) > 1024:
        raise RejectedDocument("a document path must have 1 to 1024 characters")
    raw = decode(doc.content, doc.path)
    text = canonical_text(raw)
    if not text:
        raise RejectedDocument(f"{doc.path}: empty after normalization, nothing to index")
    path = doc.path.replace("\\", "/").lstrip("/")
    syntax = syntax_of(path)
    if "\x00" in path or not path.strip("/"):
        raise RejectedDocument(f"{doc.path!r}: invalid path")
    kind = doc.kind or default_kind(syntax, path)
    if not KIND_FORMAT.match(kind):
        raise RejectedDocument(f"{doc.path}: kind {kind!r} must be lowercase letters, digits and dashes")
    is_code = syntax in CODE_LANGUAGES.values()
    return NormalizedDocument(
        path=path,
        text=text,
        content_hash=hashlib.sha256(text.encode("utf-8")).hexdigest(),
        kind=kind,
        syntax=syntax,
        language=None if is_code else detect_language(text),
        author=doc.author,
        owner=doc.owner or doc.author or "unowned",
        timestamp=doc.timestamp,
        metadata=dict(doc.metadata),
    )
