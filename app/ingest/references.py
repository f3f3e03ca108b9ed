"""The references a fragment makes: the edges of the citation graph (docs/adr/0013).

Found at ingest from the text alone: Markdown and reStructuredText links and relative
paths, URLs naming a file of a repository, ADR mentions ("ADR-12", "supersedes 0005"),
links listed in a document's metadata or front matter, and in code the imports and the
uses of names defined elsewhere (another module of the repository, or another fragment
of the same file). Each reference carries a key in the form SQL indexes documents by
(data._document_keys: path:P, module:a.b, package:p, adr:N), and for code the name the
target must define; SQL resolves it to the fragment that defines it, now or when its
target arrives (sql/functions/47_authority.sql).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import SplitResult, unquote, urlsplit

from markdown_it import MarkdownIt

from app.ingest.chunks import Chunk
from app.ingest.normalize import FrontMatter, RejectedDocument, read_front_matter
from app.ingest.normalize import front_matter as read_honoured

MAX_REFERENCES = 200
"""Per fragment: a generated file listing thousands of links says little about each."""

TYPES = ("link", "url", "import", "symbol", "adr", "metadata", "supersedes", "superseded_by")
"""`supersedes` / `superseded_by`: the citing document replaces the target, or is
replaced by it (sql/functions/48_validity.sql ends the older one's validity window).
Only the document's own declarations make them (`declared_supersessions`)."""
EVIDENCE_MAX_CHARS = 500
"""A supersession's evidence is one line: longer ones are cut."""
HEADER_MAX_LINES = 40
"""A declaration counts in the first lines of a document's body only (its header)."""


@dataclass(frozen=True, slots=True)
class Reference:
    type: str
    """One of TYPES: how the fragment refers to its target."""
    target: str
    """The reference as written."""
    key: str
    """What it names, as data.documents.link_keys holds it."""
    name: str | None = None
    """A name the target document must define (code): the cited fragment defines it."""
    anchor: str | None = None
    """A section of the target (a Markdown heading's slug)."""
    repo: str | None = None
    """The repository a URL names (the target must be a document of that repo)."""
    evidence: str | None = None
    """A supersession's grounds, as stored with the edge (data.fragment_links.evidence):
    where the document declares it ("line 3", "front matter line 2", "metadata") and the
    line as written."""

    def as_json(self) -> dict:
        return {
            "type": self.type,
            "target": self.target[:2048],
            "key": self.key[:2048],
            "name": self.name,
            "anchor": self.anchor,
            "repo": self.repo,
            "evidence": self.evidence[:EVIDENCE_MAX_CHARS] if self.evidence else None,
        }


# -- prose ---------------------------------------------------------------------------

# Each part is bounded, possessive, and stops at the bracket that could open the next
# attempt: unbounded, a run of `[` (or `[a](`, or a role opened and never closed) made
# every start scan to the end of the line, in quadratic time (100 KB of `[`: 85 s).
_LINK = r"\[(?P<text>[^\[\]\n]{0,1000})\]\(\s*<?(?P<href>[^)\s>\[]{1,2048}+)>?(?:\s+[\"'(][^)\[]{0,1000}+)?\)"
"""A Markdown inline link, `[text](href "title")` (here and in supersession headers)."""
# Each pattern names its target `href`.
_MD_LINK = re.compile(r"!?" + _LINK)
_MD_DEFINITION = re.compile(r"^\s{0,3}\[[^\]\n]+\]:\s*<?(?P<href>\S+?)>?(?:\s|$)", re.MULTILINE)
_RST_LINK = re.compile(r"`[^`<\n]{0,1000}<(?P<href>[^>\s`]{1,2048}+)>`_{1,2}")
_RST_TARGET = re.compile(r"^[ \t]*\.\. _[^:\n]+:[ \t]*(?P<href>\S+)[ \t]*$", re.MULTILINE)
_RST_DIRECTIVE = re.compile(r"^[ \t]*\.\. (?:include|literalinclude|image|figure)::[ \t]*(?P<href>\S+)", re.MULTILINE)
_RST_DOC_ROLE = re.compile(r":doc:`(?:[^`<]{0,1000}<([^>`]{1,2048}+)>|([^`]{1,2048}+))`")
_BARE_URL = re.compile(r"(?<![\w(<\[/])https?://[^\s)<>\]\"'`]+")
_ADR = re.compile(r"\bADR[-_ #]?0*([0-9]{1,5})\b", re.IGNORECASE)
_SUPERSEDES = re.compile(
    r"\b(supersedes|superseded by|replaces|replaced by)\s+\[?(ADR[-_ #]?)?0*([0-9]{1,5})\b", re.IGNORECASE
)
"""A mention of a supersession in running text ("ADR 0013 supersedes 0005"): an ADR
citation, never a supersession (only `declared_supersessions` makes those). A bare number
counts only in an ADR and only after supersedes / superseded by: "replaces 3 calls" in a
runbook names no ADR."""
_AMENDS = re.compile(r"\b(?:amends|amended by)\s+\[?(?:ADR[-_ #]?)?0*([0-9]{1,5})\b", re.IGNORECASE)
_OWN_ADR = re.compile(r"^(?:adr[-_ ]?)?0*([0-9]{1,6})[-_.]", re.IGNORECASE)
_CODE_HOSTS = ("github.com", "gitlab.com", "bitbucket.org", "codeberg.org")


def adr_number(path: str) -> int | None:
    """The number of an ADR file, as data._document_keys reads it (None: not an ADR)."""
    match = _OWN_ADR.match(posixpath.basename(path))
    if match is None or not re.search(r"adr|decision", path, re.IGNORECASE) or int(match.group(1)) == 0:
        return None
    return int(match.group(1))


def _split(target: str) -> SplitResult | None:
    """urlsplit, or None for a target it refuses (an unclosed IPv6 bracket, "http://[x"):
    a document's malformed link names nothing, and must not fail its ingestion."""
    try:
        return urlsplit(target)
    except ValueError:
        return None


def classify_target(target: str, doc_path: str, link_type: str = "link") -> Reference | None:
    """A link's target as a reference: a repository URL, an ADR mention, or a path
    relative to the citing document (or to the repository root with a leading /).
    Other URLs, mail addresses and anchors within the document itself name nothing
    we index: None."""
    target = target.strip()
    if not target or target.startswith("#"):
        return None
    adr = re.fullmatch(r"ADR[-_ #]?0*([0-9]{1,5})", target, re.IGNORECASE)
    if adr:
        return Reference("adr" if link_type == "link" else link_type, target, f"adr:{int(adr.group(1))}")
    parts = _split(target)
    if parts is None:
        return None
    if parts.scheme in ("http", "https"):
        return _url_reference(target, link_type)
    if parts.scheme or parts.netloc or target.startswith("//"):
        return None  # mailto:, ftp:, data: ...
    path = unquote(parts.path)
    if not path:
        return None
    if path.startswith("/"):
        resolved = posixpath.normpath(path.lstrip("/"))
    else:
        resolved = posixpath.normpath(posixpath.join(posixpath.dirname(doc_path), path))
    if resolved in (".", "") or resolved.startswith("../") or resolved == "..":
        return None
    return Reference(link_type, target, f"path:{resolved}", anchor=parts.fragment or None)


def _url_reference(url: str, link_type: str) -> Reference | None:
    """A URL to a file of a repository on a code host: owner/repo/(-/)blob|tree/ref/path."""
    parts = _split(url)
    if parts is None:
        return None
    host = (parts.hostname or "").lower()
    if host not in _CODE_HOSTS:
        return None
    segments = [unquote(s) for s in parts.path.split("/") if s]
    if len(segments) >= 2 and segments[2:3] == ["-"]:
        segments = segments[:2] + segments[3:]
    if len(segments) < 5 or segments[2] not in ("blob", "tree", "raw", "src"):
        return None
    path = posixpath.normpath("/".join(segments[4:]))
    if path.startswith(".."):
        return None
    return Reference(
        "url" if link_type == "link" else link_type,
        url,
        f"path:{path}",
        anchor=parts.fragment or None,
        repo=segments[1],
    )


def prose_references(text: str, doc_path: str) -> list[Reference]:
    """Links, URLs and ADR mentions of a piece of Markdown, reST or plain text."""
    found: list[Reference] = []
    spans: list[tuple[int, int]] = []
    for pattern in (_MD_LINK, _MD_DEFINITION, _RST_LINK, _RST_TARGET, _RST_DIRECTIVE):
        for match in pattern.finditer(text):
            spans.append(match.span())
            ref = classify_target(match.group("href"), doc_path)
            if ref is not None:
                found.append(ref)
    for match in _RST_DOC_ROLE.finditer(text):
        spans.append(match.span())
        target = match.group(1) or match.group(2)
        if not posixpath.splitext(target)[1]:
            target += ".rst"
        ref = classify_target(target, doc_path)
        if ref is not None:
            found.append(ref)
    for match in _BARE_URL.finditer(text):
        if any(start <= match.start() < end for start, end in spans):
            continue
        ref = _url_reference(match.group(0).rstrip(".,;:"), "link")
        if ref is not None:
            found.append(ref)
    own = adr_number(doc_path)
    claimed: list[tuple[int, int]] = []
    for match in _SUPERSEDES.finditer(text):
        verb, prefixed, number = match.group(1).lower(), match.group(2), int(match.group(3))
        if not number or number == own:
            continue
        if prefixed is None and (own is None or verb.startswith("replace")):
            continue  # a bare number: an ADR mention only where it reads as one (below)
        claimed.append(match.span())
        found.append(Reference("adr", match.group(0), f"adr:{number}"))
    for pattern in (_AMENDS, _ADR):
        for match in pattern.finditer(text):
            number = int(match.group(1))
            if number and number != own and not any(a <= match.start() < b for a, b in claimed):
                found.append(Reference("adr", match.group(0), f"adr:{number}"))
    return found


def metadata_links(metadata: dict, text: str, doc_path: str) -> list[Reference]:
    """Explicit links of a document: `links` of its metadata and of its front matter
    (each a string or a list of strings: paths, URLs, ADR-N)."""
    targets = _listed(metadata.get("links") if isinstance(metadata, dict) else None)
    targets += [t for t in front_matter(text).get("links", []) if t not in targets]
    refs = (classify_target(t, doc_path, "metadata") for t in targets)
    return [r for r in refs if r is not None]


def _listed(given: object) -> list[str]:
    if isinstance(given, str):
        given = [given]
    return [t.strip() for t in given if isinstance(t, str) and t.strip()] if isinstance(given, list) else []


def front_matter(text: str) -> dict:
    """The honoured keys of the text's front matter ({} when it has none; normalize has
    refused a document whose front matter is unreadable)."""
    try:
        return read_honoured(text)
    except RejectedDocument:
        return {}


def read_block(text: str) -> FrontMatter | None:
    """The text's front matter block (None: none, or unreadable)."""
    try:
        return read_front_matter(text)
    except RejectedDocument:
        return None


# -- supersession: only what the document itself declares -----------------------------
#
# A supersession retires a document from default retrieval, so it is read only where a
# reader would take it as the document's own declaration (docs/adr/0016): its metadata,
# its front matter, or a status / supersedes line in its header (the lines above its
# first section, and a "Status" section there, as adr-tools writes it). Running prose
# about supersession, code spans and blocks, quotes and tables declare nothing: they
# are at most ADR citations (prose_references).

_VERB = r"(supersedes|superseded[ _-]by|replaces|replaced[ _-]by)"
_AT_CLAUSE_START = re.compile(rf"(?:^|[.;,]\s+){_VERB}\s*:?\s*", re.IGNORECASE)
_AT_LINE_START = re.compile(rf"^{_VERB}\s*:?\s*", re.IGNORECASE)
_STATUS_FIELD = re.compile(r"^status\s*[:=]\s*(.*)$", re.IGNORECASE)
_FIELD_EMPHASIS = re.compile(r"^([*_]{1,3})([A-Za-z][A-Za-z _-]{0,30}?)(\s*:?)\1(\s*:?)")
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1|``.+?``")
_TARGET = re.compile(
    _LINK  # [ADR-7](0007-x.md)
    + r"|(?P<adr>ADR[-_ #]?0*(?P<adr_number>[0-9]{1,5}))\b"  # ADR-7
    r"|(?P<url>https?://[^\s)<>\]\"'`]+)"  # a repository URL
    r"|(?P<path>[\w./-]+\.(?:md|markdown|rst|txt|adoc))\b"  # a path
    r"|(?P<number>0*[0-9]{1,5})\b(?![\w-])(?!\.\w)",  # a bare number (in an ADR only), not 0.2
    re.IGNORECASE,
)
_TARGET_SEPARATOR = re.compile(r"\s*(?:,|&|\band\b)\s*", re.IGNORECASE)
_STATUS_HEADING = re.compile(r"^status$", re.IGNORECASE)


def declared_supersessions(
    text: str, doc_path: str, syntax: str, metadata: dict | None = None
) -> list[tuple[Reference, int | None]]:
    """The supersessions a document declares, each with the line of the text it is
    declared on (None: metadata or front matter, which belong to the first fragment):
    `supersedes` / `superseded_by` and a `status` saying "Superseded by X" in its metadata
    or front matter, and, in its header, a status field or "Status" section clause, or a
    line, that starts with supersedes / superseded by / replaces / replaced by. Each
    reference keeps its evidence (where, and the line as written)."""
    own_adr = adr_number(doc_path)
    found: list[tuple[Reference, int | None]] = []
    metadata = metadata if isinstance(metadata, dict) else {}
    said = front_matter(text)
    block = read_block(text)
    for key, link_type in (("supersedes", "supersedes"), ("superseded_by", "superseded_by")):
        in_front = said.get(key, [])
        given = _listed(metadata.get(key))
        for target in dict.fromkeys(given + in_front):
            if target in in_front and block is not None:
                line = block.line_of(key)
                where = f"front matter line {line}" if line else "front matter"
                evidence = f"{where}: {block.source[line - 1] if line else f'{key}: {target}'}"
            else:
                evidence = f"metadata {key}: {target}"
            ref = classify_target(target, doc_path, link_type)
            if ref is not None and ref.key != f"path:{doc_path}" and ref.key != f"adr:{own_adr}":
                found.append((_with_evidence(ref, evidence), None))
    status = metadata.get("status")
    if isinstance(status, str):
        if status == said.get("status") and block is not None and block.line_of("status"):
            line = block.line_of("status")
            assert line is not None
            evidence = f"front matter line {line}: {block.source[line - 1]}"
        else:
            evidence = f"metadata status: {status}"
        found += [(ref, None) for ref in _clauses(status, evidence, doc_path, own_adr)]
    lines = text.split("\n")
    for line_no, written, in_status in header_lines(text, syntax):
        field = _STATUS_FIELD.match(written)
        evidence = f"line {line_no}: {lines[line_no - 1].strip()}"
        if field:
            refs = _clauses(field.group(1), evidence, doc_path, own_adr)
        elif in_status:
            refs = _clauses(written, evidence, doc_path, own_adr)
        else:
            refs = _clauses(written, evidence, doc_path, own_adr, line_start_only=True)
        found += [(ref, line_no) for ref in refs]
    return found


def _with_evidence(ref: Reference, evidence: str) -> Reference:
    return Reference(ref.type, ref.target, ref.key, ref.name, ref.anchor, ref.repo, evidence)


def _clauses(
    value: str, evidence: str, doc_path: str, own_adr: int | None, line_start_only: bool = False
) -> list[Reference]:
    """The supersessions a status value (or a header line) declares: each clause that
    starts with a verb, and the targets right after it ("Superseded by ADR-7",
    "Supersedes [ADR-3](0003-x.md) and ADR-4"). Code spans declare nothing."""
    value = _CODE_SPAN.sub("\0", value.strip())
    found: list[Reference] = []
    pattern = _AT_LINE_START if line_start_only else _AT_CLAUSE_START
    for verb in pattern.finditer(value):
        link_type = "supersedes" if verb.group(1).lower().startswith(("supersedes", "replaces")) else "superseded_by"
        bare_allowed = own_adr is not None and verb.group(1).lower().startswith("supersede")
        at = verb.end()
        while True:
            target = _TARGET.match(value, at)
            if target is None:
                break
            ref = _target_reference(target, doc_path, link_type, bare_allowed)
            if ref is not None and ref.key not in (f"path:{doc_path}", f"adr:{own_adr}"):
                found.append(_with_evidence(ref, evidence))
            separator = _TARGET_SEPARATOR.match(value, target.end())
            if separator is None:
                break
            at = separator.end()
    return found


def _target_reference(target: re.Match, doc_path: str, link_type: str, bare_allowed: bool) -> Reference | None:
    written = target.group(0)
    if target.group("href"):
        ref = classify_target(target.group("href"), doc_path, link_type)
        if ref is None:  # [ADR-7](#anchor) or an external URL: the text may still name it
            adr = re.fullmatch(r"\s*ADR[-_ #]?0*([0-9]{1,5})\s*", target.group("text"), re.IGNORECASE)
            return Reference(link_type, written, f"adr:{int(adr.group(1))}") if adr else None
        return Reference(link_type, written, ref.key, anchor=ref.anchor, repo=ref.repo)
    if target.group("adr"):
        number = int(target.group("adr_number"))
        return Reference(link_type, written, f"adr:{number}") if number else None
    if target.group("url") or target.group("path"):
        ref = classify_target(written.rstrip(".,;:"), doc_path, link_type)
        return Reference(link_type, written, ref.key, anchor=ref.anchor, repo=ref.repo) if ref else None
    number = int(target.group("number"))
    return Reference(link_type, written, f"adr:{number}") if bare_allowed and number else None


def header_lines(text: str, syntax: str) -> list[tuple[int, str, bool]]:
    """The lines of a document's header that may declare something, each with its
    1-based line number and whether it lies in a "Status" section: for Markdown, the
    paragraphs, list items and headings above the first section other than a "Status"
    one (adr-tools: `## Status` then its value), never a code block, quote, table or HTML;
    for reST and plain text, the unindented lines above the second heading (a field list's
    `:Status:` reads as `Status:`), never a literal block or a quote. At most the first
    HEADER_MAX_LINES lines of the body (after any front matter) count."""
    block = read_block(text)
    skip = block.lines if block is not None else 0
    lines = text.split("\n")
    last = min(len(lines), skip + HEADER_MAX_LINES)
    if syntax == "markdown":
        return _markdown_header(lines, skip, last)
    return _plain_header(lines, skip, last, syntax)


def _markdown_header(lines: list[str], skip: int, last: int) -> list[tuple[int, str, bool]]:
    body = "\n" * skip + "\n".join(lines[skip:last])
    tokens = MarkdownIt("commonmark").enable("table").disable("inline").parse(body)
    out: list[tuple[int, str, bool]] = []
    seen = in_status = False  # seen: a title or any content (a heading now starts a section)
    nested = 0  # inside a quote or a table: nothing there is a declaration
    for i, token in enumerate(tokens):
        if token.type in ("blockquote_open", "table_open"):
            nested += 1
        elif token.type in ("blockquote_close", "table_close"):
            nested -= 1
        elif token.type == "heading_open":
            if _STATUS_HEADING.match(tokens[i + 1].content.strip()):
                in_status = seen = True
                continue
            if seen:
                break  # the first section after the title: the header is over
            seen = True
        elif token.type in ("fence", "code_block", "html_block", "hr"):
            seen = True
        elif token.type == "inline" and token.map is not None:
            seen = True
            if nested or tokens[i - 1].type == "heading_open":
                continue
            start = token.map[0]
            for offset, _line in enumerate(token.content.split("\n")):
                number = start + offset
                if number < len(lines):
                    out.append((number + 1, _plain_line(lines[number]), in_status))
    return out


def _plain_line(line: str) -> str:
    """A header line as a field reads: without its list marker and emphasis around its key."""
    line = re.sub(r"^\s{0,3}(?:[-*+]|\d{1,3}[.)])\s+", "", line).strip()
    return _FIELD_EMPHASIS.sub(r"\2\3\4", line)


def _plain_header(lines: list[str], skip: int, last: int, syntax: str) -> list[tuple[int, str, bool]]:
    out: list[tuple[int, str, bool]] = []
    headings = 0
    in_status = False
    for number in range(skip, last):
        line = lines[number]
        under = lines[number + 1] if number + 1 < len(lines) else ""
        if syntax == "rst" and line.strip() and re.fullmatch(r"([=\-`:'\"~^_*+#<>.])\1{2,}\s*", under):
            headings += 1
            if _STATUS_HEADING.match(line.strip()):
                in_status = True
            elif headings > 1:
                break
            continue
        if not line.strip() or line[:1] in (" ", "\t", ">", "|") or line.startswith(".. "):
            continue
        if re.fullmatch(r"([=\-`:'\"~^_*+#<>.])\1{2,}\s*", line):
            continue
        out.append((number + 1, _plain_line(re.sub(r"^:(\w[\w -]*):", r"\1:", line)), in_status))
    return out


# -- code ----------------------------------------------------------------------------

_IDENTIFIER = re.compile(r"(?<![\w.])([A-Za-z_]\w*)(?:\.([A-Za-z_]\w*))?")
_PY_IMPORT = re.compile(r"^[ \t]*import[ \t]+([\w. \t,]+?)[ \t]*(?:#.*)?$", re.MULTILINE)
_PY_FROM = re.compile(r"^[ \t]*from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+(\([^()]*\)|[^\n#]+)", re.MULTILINE)
_JS_IMPORT = re.compile(
    r"""(?:^|[;\n])[ \t]*(?:import|export)\s+(?:type\s+)?([\w$*{}\s,]{1,2000}?)\s+from\s+["']([^"'\n]{1,2048}+)["']"""
    r"""|(?:^|[;\n])[ \t]*import\s+["']([^"'\n]{1,2048}+)["']|\brequire\(\s*["']([^"'\n]{1,2048}+)["']\s*\)"""
)
_GO_IMPORT_BLOCK = re.compile(r"^import[ \t]*\(([^()]*)\)", re.MULTILINE)
_GO_IMPORT_LINE = re.compile(r"^import\s+(?:([\w.]+)\s+)?\"([^\"]+)\"", re.MULTILINE)
_GO_SPEC = re.compile(r"^[ \t]*(?:([\w.]+)[ \t]+)?\"([^\"\n]+)\"", re.MULTILINE)
_RUST_USE = re.compile(
    r"^[ \t]*(?:pub(?:\([^()]*\))?\s+)?use\s+(?:crate|self|super)::([\w:]+?)(?:::\{([^{}]*)\})?\s*;", re.MULTILINE
)
_JAVA_IMPORT = re.compile(r"^[ \t]*import\s+(?:static\s+)?([\w.]+)\.(\w+|\*)\s*;", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class _Binding:
    """What a name bound by an import stands for: a module, or a name in one."""

    key: str
    name: str | None
    statement: str


def module_path(doc_path: str) -> list[str]:
    """A code file's module as path segments, without extension (and a package's own
    file naming its folder), as data._document_keys reads it."""
    parts = posixpath.splitext(doc_path)[0].split("/")
    if parts[-1] in ("__init__", "index", "mod") and len(parts) > 1:
        parts = parts[:-1]
    return parts


def _python_module(spec: str, doc_path: str) -> str | None:
    dots = len(spec) - len(spec.lstrip("."))
    rest = spec[dots:]
    if not dots:
        return rest or None
    package = posixpath.dirname(doc_path).split("/") if posixpath.dirname(doc_path) else []
    if dots - 1 > len(package):
        return None
    base = package[: len(package) - (dots - 1)]
    parts = base + ([rest] if rest else [])
    return ".".join(p for p in parts if p) or None


def _python_bindings(text: str, doc_path: str) -> dict[str, _Binding]:
    bindings: dict[str, _Binding] = {}
    for match in _PY_FROM.finditer(text):
        module = _python_module(match.group(1), doc_path)
        if module is None:
            continue
        names = match.group(2).strip().strip("()").replace("\n", " ")
        for item in names.split(","):
            item = item.split("#")[0].strip()
            if not item or item == "*":
                continue
            original, _, alias = item.partition(" as ")
            bindings[(alias or original).strip()] = _Binding(f"module:{module}", original.strip(), match.group(0))
    for match in _PY_IMPORT.finditer(text):
        for item in match.group(1).split(","):
            original, _, alias = item.strip().partition(" as ")
            original = original.strip()
            if not original:
                continue
            if alias.strip():
                bindings[alias.strip()] = _Binding(f"module:{original}", None, match.group(0))
            else:
                bindings.setdefault(original, _Binding(f"module:{original}", None, match.group(0)))
    return bindings


def _js_bindings(text: str, doc_path: str) -> dict[str, _Binding]:
    bindings: dict[str, _Binding] = {}
    for match in _JS_IMPORT.finditer(text):
        clause, spec = match.group(1), match.group(2) or match.group(3) or match.group(4)
        if not spec.startswith("."):
            continue  # a package, not a file of this repository
        resolved = posixpath.normpath(posixpath.join(posixpath.dirname(doc_path), spec))
        if resolved.startswith(".."):
            continue
        key = "module:" + ".".join(module_path(resolved + ".js" if not posixpath.splitext(resolved)[1] else resolved))
        statement = match.group(0).strip()
        if not clause:
            bindings[f"\0{spec}"] = _Binding(key, None, statement)
            continue
        clause = clause.strip()
        named = re.search(r"\{([^}]*)\}", clause)
        if named:
            for item in named.group(1).split(","):
                original, _, alias = item.strip().partition(" as ")
                if original.strip():
                    bindings[(alias or original).strip()] = _Binding(key, original.strip(), statement)
            clause = clause.replace(named.group(0), "")
        for item in clause.split(","):
            item = item.strip()
            if item.startswith("*"):
                alias = item.partition(" as ")[2].strip()
                if alias:
                    bindings[alias] = _Binding(key, None, statement)
            elif item:
                bindings[item] = _Binding(key, None, statement)  # the default export
    return bindings


def _go_bindings(text: str) -> dict[str, _Binding]:
    specs: list[tuple[str | None, str, str]] = []
    for block in _GO_IMPORT_BLOCK.finditer(text):
        specs.extend((m.group(1), m.group(2), block.group(0)) for m in _GO_SPEC.finditer(block.group(1)))
    specs.extend((m.group(1), m.group(2), m.group(0)) for m in _GO_IMPORT_LINE.finditer(text))
    bindings: dict[str, _Binding] = {}
    for alias, path, statement in specs:
        package = path.rstrip("/").rsplit("/", 1)[-1]
        if alias in ("_", "."):
            continue
        bindings[alias or package] = _Binding(f"package:{package}", None, statement)
    return bindings


def _rust_bindings(text: str) -> dict[str, _Binding]:
    bindings: dict[str, _Binding] = {}
    for match in _RUST_USE.finditer(text):
        path, group = match.group(1).strip(":"), match.group(2)
        segments = [s for s in path.split("::") if s]
        if group is not None:
            module, names = segments, [n.strip() for n in group.split(",")]
        elif len(segments) >= 2:
            module, names = segments[:-1], [segments[-1]]
        else:
            continue
        for item in names:
            original, _, alias = item.partition(" as ")
            if original.strip() and original.strip() != "self":
                bindings[(alias or original).strip()] = _Binding(
                    "module:" + ".".join(module), original.strip(), match.group(0)
                )
    return bindings


def _java_bindings(text: str) -> dict[str, _Binding]:
    bindings: dict[str, _Binding] = {}
    for match in _JAVA_IMPORT.finditer(text):
        package, name = match.group(1), match.group(2)
        if name != "*":
            bindings[name] = _Binding(f"module:{package}.{name}", name, match.group(0))
    return bindings


def import_bindings(text: str, syntax: str, doc_path: str) -> dict[str, _Binding]:
    """Names a code file's imports bind, each to the module (and name) it stands for."""
    if syntax == "python":
        return _python_bindings(text, doc_path)
    if syntax in ("javascript", "typescript", "tsx", "jsx"):
        return _js_bindings(text, doc_path)
    if syntax == "go":
        return _go_bindings(text)
    if syntax == "rust":
        return _rust_bindings(text)
    if syntax == "java":
        return _java_bindings(text)
    return {}


def code_references(
    text: str, chunk_symbol: str | None, bindings: dict[str, _Binding], local_names: Iterable[str], doc_path: str
) -> list[Reference]:
    """One code fragment's references: the imports it states, the imported names it
    uses (`name`, or `module.name` for a module it imports), and the names it uses
    that another fragment of the same file defines (`local_names`)."""
    found: list[Reference] = []
    stated = {statement for statement in {b.statement for b in bindings.values()} if statement in text}
    for bound in bindings.values():
        if bound.statement in stated:
            found.append(Reference("import", bound.statement.strip()[:200], bound.key, bound.name))
    own = (chunk_symbol or "").split(".")[0]
    local = set(local_names) - {own}
    # Each (name, attribute) once, in order of first use: a repeated use makes the same
    # reference, which `_unique` drops (a fragment names the same few things many times).
    for head, attribute in dict.fromkeys(_IDENTIFIER.findall(text)):
        used = bindings.get(head)
        if used is not None:
            if used.name is None and attribute:
                found.append(Reference("symbol", f"{head}.{attribute}", used.key, attribute))
            elif used.name is not None:
                found.append(Reference("symbol", head, used.key, used.name))
        elif head in local:
            found.append(Reference("symbol", head, f"path:{doc_path}", head))
    return found


def _unique(refs: Iterable[Reference]) -> list[Reference]:
    seen: dict[tuple, Reference] = {}
    for ref in refs:
        seen.setdefault((ref.key, ref.name, ref.anchor, ref.repo), ref)
    return list(seen.values())[:MAX_REFERENCES]


def document_references(
    doc_path: str,
    syntax: str,
    text: str,
    chunks: Sequence[Chunk],
    metadata: dict | None = None,
    is_code: bool = False,
) -> list[list[Reference]]:
    """The references of each chunk of a document, in chunk order. Explicit links of
    the document (metadata, front matter) belong to its first chunk."""
    per_chunk: list[list[Reference]] = []
    if is_code:
        bindings = import_bindings(text, syntax, doc_path)
        local_names = {c.symbol.split(".")[0] for c in chunks if c.symbol}
        for chunk in chunks:
            per_chunk.append(code_references(chunk.text, chunk.symbol, bindings, local_names, doc_path))
    else:
        for chunk in chunks:
            per_chunk.append(prose_references(chunk.text, doc_path))
    explicit = metadata_links(metadata or {}, "" if is_code else text, doc_path)
    if per_chunk and explicit:
        per_chunk[0] = explicit + per_chunk[0]
    if per_chunk:
        # A declaration belongs to the fragment holding its line (metadata: the first).
        declared = declared_supersessions("" if is_code else text, doc_path, syntax, metadata)
        for ref, line in reversed(declared):
            at = next((i for i, c in enumerate(chunks) if line is not None and c.start_line <= line <= c.end_line), 0)
            per_chunk[at] = [ref, *per_chunk[at]]
    own_path = f"path:{doc_path}"
    return [
        _unique(r for r in refs if not (r.key == own_path and r.name is None and r.anchor is None))
        for refs in per_chunk
    ]
