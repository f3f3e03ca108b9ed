"""R-ING-2, SQL: one fragment per statement (a function, a table, a view, a policy),
with the comments written above it and the `comment on` that documents it.

Hand-written because no installable parser splits PostgreSQL as written: PyPI's
tree-sitter-sql mis-parses PL/pgSQL bodies (a 1,200-line function file came out as
1,656 top-level nodes, 69 of them errors), and sqlparse splits on a `;` inside some
dollar-quoted bodies. Splitting needs only a lexer that knows where a statement's `;`
cannot be: in a quoted string ('...', E'...' with backslashes), a quoted identifier,
a dollar-quoted body ($$...$$, $tag$...$tag$, nested tags included), or a comment
(--, and /* */ nested). psql's backslash commands end at their line; MySQL's
`DELIMITER` lines change the terminator.

A statement that creates something is a fragment of its own, named by what it creates
(`api.retrieve_candidates`); the short statements between (grants, settings, inserts)
are grouped up to the size bound, as the code chunker groups imports. A statement over
the bound is cut where lines end a statement of its body.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass

from app.ingest.chunks import Chunk, Lines

_DOLLAR_TAG = re.compile(r"\$(?:[A-Za-z_\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*)?\$")
_DELIMITER = re.compile(r"^[ \t]*delimiter[ \t]+(\S+)[ \t]*$", re.IGNORECASE | re.MULTILINE)
_NAME = r'(?:"(?:[^"]|"")+"|[\w$]+)'
_CREATES = re.compile(
    r"^\s*create\s+(?:or\s+replace\s+)?"
    r"(?:(?:temp|temporary|unlogged|global|local|materialized|unique|constraint|trusted|procedural|recursive)\s+)*"
    r"(?P<what>function|procedure|table|view|index|trigger|type|policy|schema|extension|domain|aggregate|"
    r"sequence|operator\s+class|operator|cast|rule|publication|subscription|statistics|event\s+trigger|"
    r"foreign\s+table|server|collation|conversion|language|role|user|group|database|tablespace)\s+"
    r"(?:if\s+not\s+exists\s+)?(?:concurrently\s+)?(?:if\s+not\s+exists\s+)?"
    rf"(?P<name>{_NAME}(?:\s*\.\s*{_NAME})?)",
    re.IGNORECASE,
)
_ALTERS = re.compile(
    rf"^\s*alter\s+(?P<what>table|view|function|type|domain|sequence)\s+(?:if\s+exists\s+)?(?:only\s+)?"
    rf"(?P<name>{_NAME}(?:\s*\.\s*{_NAME})?)",
    re.IGNORECASE,
)
_DROPS = re.compile(
    r"^\s*drop\s+(?:materialized\s+)?(?P<what>function|procedure|table|view|index|trigger|type|policy|rule|domain|"
    rf"aggregate|sequence)\s+(?:concurrently\s+)?(?:if\s+exists\s+)?(?P<name>{_NAME}(?:\s*\.\s*{_NAME})?)",
    re.IGNORECASE,
)
_COMMENT_ON = re.compile(
    r"^\s*comment\s+on\s+(?:materialized\s+view|foreign\s+table|event\s+trigger|\w+)\s+"
    rf"(?P<name>{_NAME}(?:\s*\.\s*{_NAME})?)",
    re.IGNORECASE,
)
_SQL_COMMENT_LINE = re.compile(r"^\s*(?:--|/\*|\*)")
_ON_TABLE = re.compile(rf"\bon\s+(?:table\s+)?(?P<name>{_NAME}(?:\s*\.\s*{_NAME})?)", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Statement:
    """One statement as written: lines first..last (0-based, inclusive), comments just
    above it included, and what it creates (`api.retrieve_candidates`), if anything."""

    first: int
    last: int
    name: str | None
    documents: str | None = None
    """For a `comment on X`: X, the object it documents."""
    drops: str | None = None
    """For a `drop ... X`: X (it goes with a `create` of X right after it)."""


def _plain(name: str) -> str:
    """A name as a reader types it: quotes and the spaces around its dot dropped."""
    return re.sub(r"\s*\.\s*", ".", name).replace('"', "")


def split_statements(text: str) -> list[tuple[int, int]]:
    """Each statement's [start, end) character offsets, its terminator included; the
    text between statements (blank lines, comments) belongs to none. A last statement
    with no terminator ends with the text."""
    spans: list[tuple[int, int]] = []
    terminator = ";"
    delimiters = {m.start(): m for m in _DELIMITER.finditer(text)}
    i, n = 0, len(text)
    start: int | None = None
    while i < n:
        if i in delimiters and (start is None or text[start:i].strip() == ""):
            # MySQL's client command: the terminator until the next one.
            found = delimiters[i]
            terminator = found.group(1)
            i = found.end()
            start = None
            continue
        ch = text[i]
        if ch == "-" and text.startswith("--", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        if ch == "/" and text.startswith("/*", i):
            i = _block_comment_end(text, i)
            continue
        if ch.isspace():
            i += 1
            continue
        if start is None:
            start = i
            if ch == "\\" and (i == 0 or text[i - 1] == "\n" or text[text.rfind("\n", 0, i) + 1 : i].strip() == ""):
                # A psql meta-command (\i, \set, \connect): its line.
                end = text.find("\n", i)
                end = n if end < 0 else end
                spans.append((start, end))
                start, i = None, end
                continue
        if text.startswith(terminator, i):
            i += len(terminator)
            spans.append((start, i))
            start = None
            continue
        if ch == "'":
            escaped = i > 0 and text[i - 1] in "eE" and (i == 1 or not (text[i - 2].isalnum() or text[i - 2] == "_"))
            i = _quoted_end(text, i, "'", backslashes=escaped)
            continue
        if ch == '"':
            i = _quoted_end(text, i, '"', backslashes=False)
            continue
        if ch == "$":
            tag = _DOLLAR_TAG.match(text, i)
            # `$1` is a parameter, and `a$b$` is part of a name: neither opens a body.
            if tag is not None and not (i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_")):
                close = text.find(tag.group(0), tag.end())
                i = n if close < 0 else close + len(tag.group(0))
                continue
        i += 1
    if start is not None and text[start:].strip():
        spans.append((start, n))
    return spans


def _quoted_end(text: str, i: int, quote: str, backslashes: bool) -> int:
    """Past the closing quote of the string or identifier opening at i (a doubled quote
    stays inside it; with `backslashes`, E'...', so does an escaped one)."""
    j = i + 1
    n = len(text)
    while j < n:
        c = text[j]
        if backslashes and c == "\\":
            j += 2
            continue
        if c == quote:
            if j + 1 < n and text[j + 1] == quote:
                j += 2
                continue
            return j + 1
        j += 1
    return n


def _block_comment_end(text: str, i: int) -> int:
    """Past the end of the /* */ comment opening at i (PostgreSQL nests them)."""
    depth, j, n = 0, i, len(text)
    while j < n:
        if text.startswith("/*", j):
            depth += 1
            j += 2
        elif text.startswith("*/", j):
            depth -= 1
            j += 2
            if depth == 0:
                return j
        else:
            j += 1
    return n


def _object(found: re.Match[str] | None, body: str) -> str | None:
    """The object a create, alter or drop names; a policy, trigger or rule with its
    table (two tables' `own_only` policies are two objects)."""
    if found is None:
        return None
    name = _plain(found.group("name"))
    if found.group("what").lower() in ("policy", "trigger", "rule"):
        table = _ON_TABLE.search(body, found.end())
        return f"{name} on {_plain(table.group('name'))}" if table else name
    return name


def statements(text: str, doc: Lines) -> list[Statement]:
    """The statements of `text` by line, each with the comment lines just above it (not
    those a blank line separates from it) and what it creates or documents. Statements
    that share a line are one (`set a = 1; set b = 2;`)."""
    lines = doc.lines

    def line_of(offset: int) -> int:
        return min(bisect_right(doc.starts, offset), len(lines)) - 1

    found: list[Statement] = []
    for begin, end in split_statements(text):
        first, last = line_of(begin), line_of(max(begin, end - 1))
        body = text[begin:end]
        created = _CREATES.match(body) or _ALTERS.match(body)
        dropped = _DROPS.match(body) if created is None else None
        commented = _COMMENT_ON.match(body) if created is None and dropped is None else None
        name, drops = _object(created, body), _object(dropped, body)
        documents = _plain(commented.group("name")) if commented else None
        if found and first <= found[-1].last:
            merged = found[-1]
            found[-1] = Statement(merged.first, max(merged.last, last), merged.name or name, merged.documents)
            continue
        floor = found[-1].last + 1 if found else 0
        while first > floor and _SQL_COMMENT_LINE.match(lines[first - 1]):
            first -= 1
        found.append(Statement(first, last, name, documents, drops))
    return found


class SqlChunker:
    """Chunks SQL files by statement; shares no state between calls (one per pipeline)."""

    def __init__(self, max_tokens: int, overlap_tokens: int) -> None:
        self.max_tokens = max_tokens
        self.overlap_tokens = overlap_tokens

    def chunk(self, text: str) -> list[Chunk]:
        doc = Lines(text, self.max_tokens, self.overlap_tokens)
        chunks: list[Chunk] = []
        units = _units(statements(text, doc), doc, self.max_tokens)
        cursor = 0
        for index, (first, last, name) in enumerate(units):
            # A file's header (comments before the first statement) stays with it; the
            # lines after the last statement go with that one.
            first = min(first, cursor)
            if index == len(units) - 1:
                last = len(doc.lines) - 1
            chunks.extend(_emit(doc, first, last, name))
            cursor = last + 1
        if not units and doc.lines:
            chunks.extend(_emit(doc, 0, len(doc.lines) - 1, None))
        return chunks


def _units(found: list[Statement], doc: Lines, max_tokens: int) -> list[tuple[int, int, str | None]]:
    """Statements made into fragments: each one that creates something alone, with the
    `drop ... if exists` of the same object before it and the `comment on` statements
    that document it after it; the others grouped with their neighbours while they fit.
    A `comment on` that does not fit beside its object is named by that object."""
    units: list[tuple[int, int, str | None]] = []
    for index, statement in enumerate(found):
        after = found[index + 1] if index + 1 < len(found) else None
        if statement.drops is not None and after is not None and after.name is not None:
            if after.name.lower() == statement.drops.lower():
                # The drop opens its object's fragment: the create that follows joins it.
                units.append((statement.first, statement.last, after.name))
                continue
        if units:
            first, last, name = units[-1]
            fits = doc.span_tokens(first, statement.last + 1) <= max_tokens
            documents_it = statement.documents is not None and name is not None and _same(statement.documents, name)
            same_object = statement.name is not None and name is not None and statement.name.lower() == name.lower()
            if fits and (same_object or (statement.name is None and (documents_it or name is None))):
                units[-1] = (first, statement.last, name)
                continue
        named = statement.name or (statement.documents.split("(")[0] if statement.documents else None)
        units.append((statement.first, statement.last, named))
    return units


def _same(documented: str, name: str) -> bool:
    """Whether `comment on X` documents `name` (X may name a function with its argument
    types, or the object without its schema)."""
    documented = documented.split("(")[0].lower()
    name = name.lower()
    return documented == name or documented.split(".")[-1] == name.split(".")[-1]


def _emit(doc: Lines, first: int, last: int, name: str | None) -> list[Chunk]:
    lines = doc.lines
    while first <= last and not lines[first].strip():
        first += 1
    while last >= first and not lines[last].strip():
        last -= 1
    if first > last:
        return []
    # Over the bound, a statement is cut where a line ends one of its body's statements.
    breaks = frozenset(i + 1 for i in range(first, last) if lines[i].rstrip().endswith(";"))
    heading = (name,) if name else ()
    return [Chunk.of(piece, heading, name) for piece in doc.pieces(first, last + 1, breaks)]
