"""R-ING-1: canonical text plus the metadata every later stage relies on."""

from __future__ import annotations

import hashlib
import re
import tomllib
import unicodedata
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import PurePosixPath

import py3langid
import yaml

from app.owners import owner_problem
from app.readable import READABLE_RANGE, in_utc
from app.wire.retrieve import KIND_PATTERN

# C0/C1 controls other than tab and newline, plus NUL; they break tokenizers and psql.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_TRAILING_SPACE = re.compile(r"[ \t]+$", re.MULTILINE)
_BLANK_RUNS = re.compile(r"\n{4,}")
KIND_FORMAT = re.compile(KIND_PATTERN)

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
    ".sql": "sql",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hh": "cpp",
    ".hpp": "cpp",
    ".hxx": "cpp",
    ".cs": "csharp",
    ".rb": "ruby",
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


class UnreadableContent(RejectedDocument):
    """Binary or undecodable content (a package's .pyc, an image): in a walk of a tree it
    is expected, so the CLI counts these instead of listing each."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}, refused")
        self.path = path


def content_hash(text: str) -> str:
    """The content hash SQL stores for a text: a document version's, and a chunk's
    (data.fragments.content_hash, data.fragment_sources.content_hash)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


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
    CODEOWNERS or the org's default decide (app/owners.py, service.begin_document)."""
    timestamp: datetime | None
    metadata: dict


def decode(content: str | bytes, path: str) -> str:
    if isinstance(content, str):
        # Text that arrived as a string (JSON) is binary when control characters make
        # up a tenth of it; a stray NUL in real text is only stripped.
        sample = content[:8192]
        controls = len(_CONTROL.findall(sample))
        if sample and controls * 10 >= len(sample):
            raise UnreadableContent(path, f"binary content ({controls} control characters)")
        return content
    if b"\x00" in content[:8192]:
        raise UnreadableContent(path, "binary file (NUL bytes)")
    try:
        return content.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UnreadableContent(path, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from exc


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


VALIDITY_KEYS = ("valid_from", "valid_until")
"""Metadata (or front matter) bounding when a document is current (docs/adr/0016)."""
LINK_KEYS = ("supersedes", "superseded_by", "links")
"""Metadata (or front matter) naming other documents (app/ingest/references.py)."""
FRONT_MATTER_KEYS = ("kind", "owner", "negative", "status", *VALIDITY_KEYS, *LINK_KEYS)
"""What a document's front matter says that ingestion honours; every other key is left
in the document's text only (docs/adr/0016, README "Front matter")."""
FRONT_MATTER_MAX_LINES = 256
"""A block not closed within this many lines is not front matter (read as text)."""
_FRONT_MATTER_KEY = re.compile(r"^\s*[\"']?[A-Za-z_][\w.-]*[\"']?\s*[:=]")


@dataclass(frozen=True, slots=True)
class FrontMatter:
    """A leading YAML (`---`) or TOML (`+++`) block: metadata, never text to index."""

    fields: dict
    """The block's top-level keys, as parsed."""
    lines: int
    """Lines the block takes, delimiters included: the body starts on the next one."""
    source: list[str]
    """The block's lines, delimiters included (where a key was said: evidence)."""

    def line_of(self, key: str) -> int | None:
        """The 1-based line that sets `key` (None: not set on a line of its own)."""
        pattern = re.compile(rf"^[\"']?{re.escape(key)}[\"']?\s*[:=]")
        return next((i for i, line in enumerate(self.source, start=1) if pattern.match(line)), None)


def read_front_matter(text: str) -> FrontMatter | None:
    """The document's front matter: a first line `---` (YAML) or `+++` (TOML) closed by the
    same line (YAML also by `...`) within FRONT_MATTER_MAX_LINES, holding a mapping. A
    block that parses to something else (a Markdown rule above a paragraph, a reST
    overlined title) is text, as is one never closed. A block that reads as keys but does
    not parse is refused (RejectedDocument: the author meant metadata, and silently
    indexing it would hide that nothing of it was read)."""
    opening = text[:4].rstrip("\n")
    if opening not in ("---", "+++"):
        return None
    lines = text.split("\n", FRONT_MATTER_MAX_LINES + 1)[:FRONT_MATTER_MAX_LINES]
    if lines[0] != opening:
        return None
    closing = ("---", "...") if opening == "---" else ("+++",)
    end = next((i for i in range(1, len(lines)) if lines[i] in closing), None)
    if end is None:
        return None
    body = "\n".join(lines[1:end])
    try:
        fields = _yaml(body) if opening == "---" else tomllib.loads(body)
    except (yaml.YAMLError, tomllib.TOMLDecodeError, ValueError, RecursionError) as exc:
        looks_like_keys = next(
            (bool(_FRONT_MATTER_KEY.match(line)) for line in lines[1:end] if line.strip() and not line.startswith("#")),
            False,
        )
        if not looks_like_keys:
            return None
        raise RejectedDocument(
            f"front matter (lines 1-{end + 1}) is not valid {'YAML' if opening == '---' else 'TOML'}: "
            f"{_parse_problem(exc)}; fix it, or start the document without a front matter block"
        ) from None
    if fields is None:
        fields = {}
    if not isinstance(fields, dict):
        return None
    return FrontMatter(fields, end + 1, lines[: end + 1])


def _parse_problem(exc: Exception) -> str:
    """What a YAML or TOML parser said, with the document's line (the block's first line
    after the opening delimiter is the document's line 2)."""
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem_mark is not None:
        return f"{exc.problem or exc.context or 'unreadable'} at line {exc.problem_mark.line + 2}"
    said = " ".join(str(exc).split())
    return re.sub(r"at line (\d+)", lambda m: f"at line {int(m.group(1)) + 1}", said)[:300]


def front_matter_lines(text: str) -> int:
    """How many leading lines are front matter (0: none, or not readable as such)."""
    try:
        found = read_front_matter(text)
    except RejectedDocument:
        return 0
    return found.lines if found else 0


def _yaml(text: str) -> object:
    """YAML 1.1 as PyYAML's safe loader reads it (no tags beyond the standard ones); a
    huge document of aliases is refused before it is expanded."""
    if text.count("*") > 100:
        events = sum(1 for event in yaml.parse(text, Loader=yaml.SafeLoader) if isinstance(event, yaml.AliasEvent))
        if events > 100:
            raise ValueError(f"{events} aliases: too many for front matter")
    return yaml.load(text, Loader=yaml.SafeLoader)  # noqa: S506 (the safe loader)


def front_matter(text: str) -> dict:
    """The keys of the document's front matter that ingestion honours (FRONT_MATTER_KEYS),
    checked and made JSON values: `kind`, `owner` and `status` strings, `negative` a
    boolean, `valid_from` / `valid_until` ISO 8601 strings (YAML and TOML dates
    included), `supersedes` / `superseded_by` / `links` a string or a list of strings.
    Raises RejectedDocument for a value of another type (or unreadable front matter)."""
    found = read_front_matter(text)
    if found is None:
        return {}
    out: dict = {}
    for key in FRONT_MATTER_KEYS:
        if key not in found.fields or found.fields[key] is None:
            continue
        value = found.fields[key]
        if key == "negative":
            if isinstance(value, str) and value.strip().lower() in ("true", "false"):
                value = value.strip().lower() == "true"
            if not isinstance(value, bool):
                raise RejectedDocument(f"front matter negative must be true or false, not {value!r}")
        elif key in VALIDITY_KEYS:
            if isinstance(value, datetime | date):
                value = value.isoformat()
            if not isinstance(value, str):
                raise RejectedDocument(f"front matter {key} must be an ISO 8601 date or time, not {value!r}")
        elif key in LINK_KEYS:
            items = [value] if isinstance(value, str) else value
            if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
                raise RejectedDocument(f"front matter {key} must be a path, URL or ADR-N, or a list of them")
            value = [item.strip() for item in items if item.strip()]
        elif not isinstance(value, str):
            raise RejectedDocument(f"front matter {key} must be a string, not {value!r}")
        out[key] = value
    return out


def validity_window(metadata: dict, path: str) -> None:
    """`valid_from` / `valid_until` of the metadata, checked and written back as ISO 8601
    in UTC (a date is its midnight UTC; a time without offset is UTC), so SQL
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
        try:
            when = in_utc(when)
        except OverflowError:  # past year 9999 or before year 1 once in UTC
            raise RejectedDocument(
                f"{path}: metadata {key} {value!r} is outside the times every reader can decode: {READABLE_RANGE}"
            ) from None
        bounds[key] = when
        metadata[key] = when.isoformat()
    if len(bounds) == 2 and bounds["valid_until"] <= bounds["valid_from"]:
        raise RejectedDocument(f"{path}: valid_until {metadata['valid_until']} is not after valid_from")


def document_owner(doc: SourceDocument, marks: dict[str, str]) -> str | None:
    """The owner the document itself names: the caller's, then metadata, then front matter."""
    named = doc.owner or doc.metadata.get("owner") or marks.get("owner")
    if named is None:
        return None
    if not isinstance(named, str):
        raise RejectedDocument(f"{doc.path}: owner must be a name of 1 to 256 characters, not {named!r}")
    problem = owner_problem(named.strip())
    if problem is not None:
        raise RejectedDocument(f"{doc.path}: owner {ascii(named)}: {problem}")
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
    try:
        marks = {} if is_code else front_matter(text)
    except RejectedDocument as exc:
        raise RejectedDocument(f"{path}: {exc}") from None
    kind = doc.kind or marks.get("kind", "").strip().lower() or default_kind(syntax, path)
    # Front matter is metadata (FRONT_MATTER_KEYS): what the caller's metadata says wins.
    metadata = dict(doc.metadata)
    if marks.get("negative") is True and "negative" not in metadata:
        metadata["negative"] = True
    for key in ("status", *VALIDITY_KEYS, *LINK_KEYS):
        if key in marks and key not in metadata:
            metadata[key] = marks[key]
    validity_window(metadata, path)
    if not KIND_FORMAT.match(kind):
        raise RejectedDocument(f"{path}: kind {kind!r} must be lowercase letters, digits and dashes")
    return NormalizedDocument(
        path=path,
        text=text,
        content_hash=content_hash(text),
        kind=kind,
        syntax=syntax,
        language=None if is_code else detect_language(text),
        author=doc.author,
        owner=document_owner(doc, marks),
        timestamp=doc.timestamp,
        metadata=metadata,
    )
