"""R-ING-1: canonical text plus the metadata every later stage relies on."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import PurePosixPath

import py3langid

# C0/C1 controls other than tab and newline, plus NUL; they break tokenizers and psql.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_TRAILING_SPACE = re.compile(r"[ \t]+$", re.MULTILINE)
_BLANK_RUNS = re.compile(r"\n{4,}")
KIND_FORMAT = re.compile(r"^[a-z][a-z0-9-]{0,31}$")

CODE_LANGUAGES = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".tsx": "tsx",
    ".mts": "typescript",
    ".cts": "typescript",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
}
PROSE_FORMATS = {".md": "markdown", ".markdown": "markdown", ".rst": "rst", ".txt": "text"}


PATH_MAX_CHARS = 1024
# Characters a reader of a citation cannot see or that break its line: controls (C0, C1,
# newline, tab), formatting (bidi overrides and isolates, zero-width, BOM), surrogates,
# line and paragraph separators.
_HIDDEN_IN_PATHS = {
    "Cc": "a control character",
    "Cf": "an invisible formatting character",
    "Cs": "a surrogate",
    "Zl": "a line separator",
    "Zp": "a paragraph separator",
}


class RejectedDocument(ValueError):
    """Raised for input that is refused, never stored: binary or undecodable content, or
    a path that could make a citation point somewhere it does not."""


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
    owner: str | None
    """Named human accountable for the fragments (R-DOC-3), as the document names it
    (the request's or --owner, else metadata `owner`, else front matter `owner:`); None:
    CODEOWNERS or the org's default decide (app/owners.py, api.begin_document)."""
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


def normalize_path(given: str) -> str:
    """The path a document is stored and cited under: NFC, `/` between segments, relative,
    no `.` segments or repeated slashes. A path that could mislead whoever reads the
    citation (escaping with `..`, hidden or line-breaking characters, blank parts) is
    refused rather than repaired."""
    path = unicodedata.normalize("NFC", given)
    for char in path:
        kind = _HIDDEN_IN_PATHS.get(unicodedata.category(char))
        if kind is not None:
            name = unicodedata.name(char, "")
            raise RejectedDocument(
                f"path {given!r} contains {kind} U+{ord(char):04X}{f' ({name})' if name else ''}, refused"
            )
    segments = [s for s in path.replace("\\", "/").split("/") if s not in ("", ".")]
    if any(s.strip() == ".." for s in segments):
        raise RejectedDocument(f"path {given!r} has a '..' segment, refused: paths stay inside their scope")
    if not segments:
        raise RejectedDocument(f"path {given!r} is empty once '.' segments and slashes are removed, refused")
    if any(not s.strip() for s in segments):
        raise RejectedDocument(f"path {given!r} has a blank segment, refused")
    path = "/".join(segments)
    if len(path) > PATH_MAX_CHARS:
        raise RejectedDocument(f"path of {len(path)} characters is over the {PATH_MAX_CHARS}-character limit, refused")
    return path


_FRONT_MATTER_FIELD = re.compile(r"""^(kind|negative)\s*:\s*["']?([A-Za-z0-9-]+)["']?\s*(#.*)?$""")
_FRONT_MATTER_OWNER = re.compile(
    r"""^(owner)\s*:\s*(?:"([^"]{1,256})"|'([^']{1,256})'|([^"'#][^#]{0,255}?))\s*(#.*)?$"""
)
_FRONT_MATTER_TIME = re.compile(r"""^(valid_from|valid_until)\s*:\s*["']?([0-9][0-9T:.+ Zz-]*?)["']?\s*(#.*)?$""")
VALIDITY_KEYS = ("valid_from", "valid_until")
"""Metadata (or front matter) bounding when a document is current (docs/adr/0016)."""


def front_matter(text: str) -> dict[str, str]:
    """`kind`, `negative`, `owner`, `valid_from` and `valid_until` of a leading YAML
    front matter block (--- ... ---), read as plain `key: value` lines: a document marks
    itself an anti-pattern with `kind: anti-pattern` or `negative: true` there, names its
    owner, and says when it is current with dates."""
    lines = text.split("\n", 61)
    if not lines or lines[0].strip() != "---":
        return {}
    found: dict[str, str] = {}
    for line in lines[1:61]:
        if line.strip() in ("---", "..."):
            return found
        owner = _FRONT_MATTER_OWNER.match(line.strip())
        if owner:
            found["owner"] = next(g for g in owner.groups()[1:4] if g).strip()
            continue
        match = _FRONT_MATTER_FIELD.match(line.strip()) or _FRONT_MATTER_TIME.match(line.strip())
        if match:
            found[match.group(1)] = match.group(2)
    return {}  # no closing line: not front matter


def validity_window(metadata: dict, path: str) -> None:
    """`valid_from` / `valid_until` of the metadata, checked and written back as ISO 8601
    with an offset (a date is its midnight UTC; a time without offset is UTC), so SQL
    reads them as times (sql/functions/48_validity.sql)."""
    bounds = {}
    for key in VALIDITY_KEYS:
        value = metadata.get(key)
        if value is None:
            continue
        if not isinstance(value, str):
            raise RejectedDocument(f"{path}: metadata {key} must be an ISO 8601 date or time, not {value!r}")
        try:
            when = datetime.fromisoformat(value.strip())
        except ValueError:
            raise RejectedDocument(
                f"{path}: metadata {key} {value!r} is not an ISO 8601 date or time (e.g. 2026-03-01)"
            ) from None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        bounds[key] = when
        metadata[key] = when.isoformat()
    if len(bounds) == 2 and bounds["valid_until"] <= bounds["valid_from"]:
        raise RejectedDocument(f"{path}: valid_until {metadata['valid_until']} is not after valid_from")


def document_owner(doc: SourceDocument, marks: dict[str, str]) -> str | None:
    """The owner the document itself names: the caller's, then metadata, then front matter."""
    named = doc.owner or doc.metadata.get("owner") or marks.get("owner")
    if named is None:
        return None
    if not isinstance(named, str) or not named.strip() or len(named) > 256 or _CONTROL.search(named):
        raise RejectedDocument(f"{doc.path}: owner must be a name of 1 to 256 characters, not {named!r}")
    return named.strip()


def normalize(doc: SourceDocument, max_bytes: int | None = None) -> NormalizedDocument:
    path = normalize_path(doc.path)
    size = len(doc.content.encode("utf-8") if isinstance(doc.content, str) else doc.content)
    if max_bytes is not None and size > max_bytes:
        raise RejectedDocument(f"{path}: {size} bytes is over the {max_bytes}-byte limit, refused")
    raw = decode(doc.content, path)
    text = canonical_text(raw)
    if not text:
        raise RejectedDocument(f"{path}: empty after normalization, nothing to index")
    syntax = syntax_of(path)
    is_code = syntax in CODE_LANGUAGES.values()
    marks = {} if is_code else front_matter(text)
    kind = doc.kind or marks.get("kind", "").lower() or default_kind(syntax, path)
    metadata = dict(doc.metadata)
    if marks.get("negative", "").lower() == "true" and "negative" not in metadata:
        metadata["negative"] = True
    for key in VALIDITY_KEYS:
        if key in marks and key not in metadata:
            metadata[key] = marks[key]
    validity_window(metadata, path)
    if not KIND_FORMAT.match(kind):
        raise RejectedDocument(f"{path}: kind {kind!r} must be lowercase letters, digits and dashes")
    return NormalizedDocument(
        path=path,
        text=text,
        content_hash=hashlib.sha256(text.encode("utf-8")).hexdigest(),
        kind=kind,
        syntax=syntax,
        language=None if is_code else detect_language(text),
        author=doc.author,
        owner=document_owner(doc, marks),
        timestamp=doc.timestamp,
        metadata=metadata,
    )
