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
from urllib.parse import unquote, urlsplit

from app.ingest.chunks import Chunk

MAX_REFERENCES = 200
"""Per fragment: a generated file listing thousands of links says little about each."""

TYPES = ("link", "url", "import", "symbol", "adr", "metadata", "supersedes", "superseded_by")
"""`supersedes` / `superseded_by`: the citing document replaces the target, or is
replaced by it (sql/functions/48_validity.sql ends the older one's validity window)."""


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

    def as_json(self) -> dict:
        return {
            "type": self.type,
            "target": self.target[:2048],
            "key": self.key[:2048],
            "name": self.name,
            "anchor": self.anchor,
            "repo": self.repo,
        }


# -- prose ---------------------------------------------------------------------------

_MD_LINK = re.compile(r"!?\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+[\"'(][^)]*)?\)")
_MD_DEFINITION = re.compile(r"^\s{0,3}\[[^\]\n]+\]:\s*<?(\S+?)>?(?:\s|$)", re.MULTILINE)
_RST_LINK = re.compile(r"`[^`<\n]*<([^>\s]+)>`_{1,2}")
_RST_TARGET = re.compile(r"^\s*\.\. _[^:\n]+:\s*(\S+)\s*$", re.MULTILINE)
_RST_DIRECTIVE = re.compile(r"^\s*\.\. (?:include|literalinclude|image|figure)::\s*(\S+)", re.MULTILINE)
_RST_DOC_ROLE = re.compile(r":doc:`(?:[^`<]*<([^>]+)>|([^`]+))`")
_BARE_URL = re.compile(r"(?<![\w(<\[/])https?://[^\s)<>\]\"'`]+")
_ADR = re.compile(r"\bADR[-_ #]?0*([0-9]{1,5})\b", re.IGNORECASE)
_SUPERSEDES = re.compile(
    r"\b(supersedes|superseded by|replaces|replaced by)\s+\[?(ADR[-_ #]?)?0*([0-9]{1,5})\b", re.IGNORECASE
)
"""A supersession (an ADR's status line, "Superseded by [ADR-0007](...)"). A bare number
counts only in an ADR and only after supersedes / superseded by: "replaces 3 calls" in a
runbook must not retire ADR 3."""
_AMENDS = re.compile(r"\b(?:amends|amended by)\s+\[?(?:ADR[-_ #]?)?0*([0-9]{1,5})\b", re.IGNORECASE)
_OWN_ADR = re.compile(r"^(?:adr[-_ ]?)?0*([0-9]{1,6})[-_.]", re.IGNORECASE)
_CODE_HOSTS = ("github.com", "gitlab.com", "bitbucket.org", "codeberg.org")


def adr_number(path: str) -> int | None:
    """The number of an ADR file, as data._document_keys reads it (None: not an ADR)."""
    match = _OWN_ADR.match(posixpath.basename(path))
    if match is None or not re.search(r"adr|decision", path, re.IGNORECASE) or int(match.group(1)) == 0:
        return None
    return int(match.group(1))


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
    parts = urlsplit(target)
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
    parts = urlsplit(url)
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
            ref = classify_target(match.group(1), doc_path)
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
        kind = "supersedes" if verb in ("supersedes", "replaces") else "superseded_by"
        found.append(Reference(kind, match.group(0), f"adr:{number}"))
    for pattern in (_AMENDS, _ADR):
        for match in pattern.finditer(text):
            number = int(match.group(1))
            if number and number != own and not any(a <= match.start() < b for a, b in claimed):
                found.append(Reference("adr", match.group(0), f"adr:{number}"))
    return found


def front_matter_links(text: str, key: str = "links") -> list[str]:
    """`links:` (or another list, `supersedes:`) of a leading YAML front matter block,
    inline (`[a, b]`) or as a list."""
    field = re.compile(rf"^{re.escape(key)}\s*:\s*(.*)$")
    lines = text.split("\n", 201)
    if not lines or lines[0].strip() != "---":
        return []
    links: list[str] = []
    in_list = False
    for line in lines[1:201]:
        stripped = line.strip()
        if stripped in ("---", "..."):
            return links
        match = field.match(stripped)
        if match:
            value = match.group(1).strip()
            in_list = not value
            if value:
                links.extend(_yaml_items(value.strip("[]")))
        elif in_list and stripped.startswith("- "):
            links.extend(_yaml_items(stripped[2:]))
        elif stripped and not line.startswith((" ", "\t")):
            in_list = False
    return []  # no closing line: not front matter


def _yaml_items(value: str) -> list[str]:
    return [item.strip().strip("\"'") for item in value.split(",") if item.strip().strip("\"'")]


def metadata_links(metadata: dict, text: str, doc_path: str) -> list[Reference]:
    """Explicit links of a document: its metadata's `links`, `supersedes` and
    `superseded_by` (each a string or a list of strings: paths, URLs, ADR-N) and its
    front matter's."""
    refs: list[Reference | None] = []
    for key, link_type in (("supersedes", "supersedes"), ("superseded_by", "superseded_by"), ("links", "metadata")):
        given = metadata.get(key) if isinstance(metadata, dict) else None
        if isinstance(given, str):
            given = [given]
        targets = [t for t in given if isinstance(t, str)] if isinstance(given, list) else []
        targets += front_matter_links(text, key)
        refs.extend(classify_target(t, doc_path, link_type) for t in targets)
    return [r for r in refs if r is not None]


# -- code ----------------------------------------------------------------------------

_IDENTIFIER = re.compile(r"(?<![\w.])([A-Za-z_]\w*)(?:\.([A-Za-z_]\w*))?")
_PY_IMPORT = re.compile(r"^[ \t]*import[ \t]+([\w. \t,]+?)[ \t]*(?:#.*)?$", re.MULTILINE)
_PY_FROM = re.compile(r"^[ \t]*from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#]+)", re.MULTILINE)
_JS_IMPORT = re.compile(
    r"""(?:^|[;\n])\s*(?:import|export)\s+(?:type\s+)?([\w$*{}\s,]+?)\s+from\s+["']([^"']+)["']"""
    r"""|(?:^|[;\n])\s*import\s+["']([^"']+)["']|\brequire\(\s*["']([^"']+)["']\s*\)"""
)
_GO_IMPORT_BLOCK = re.compile(r"^import\s*\(([^)]*)\)", re.MULTILINE)
_GO_IMPORT_LINE = re.compile(r"^import\s+(?:([\w.]+)\s+)?\"([^\"]+)\"", re.MULTILINE)
_GO_SPEC = re.compile(r"^\s*(?:([\w.]+)\s+)?\"([^\"]+)\"", re.MULTILINE)
_RUST_USE = re.compile(
    r"^\s*(?:pub(?:\([^)]*\))?\s+)?use\s+(?:crate|self|super)::([\w:]+?)(?:::\{([^}]*)\})?\s*;", re.MULTILINE
)
_JAVA_IMPORT = re.compile(r"^\s*import\s+(?:static\s+)?([\w.]+)\.(\w+|\*)\s*;", re.MULTILINE)


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
    stated = {b.statement for b in bindings.values() if b.statement in text}
    for bound in bindings.values():
        if bound.statement in stated:
            found.append(Reference("import", bound.statement.strip()[:200], bound.key, bound.name))
    own = (chunk_symbol or "").split(".")[0]
    local = set(local_names) - {own}
    for match in _IDENTIFIER.finditer(text):
        head, attribute = match.group(1), match.group(2)
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
    own_path = f"path:{doc_path}"
    return [
        _unique(r for r in refs if not (r.key == own_path and r.name is None and r.anchor is None))
        for refs in per_chunk
    ]
