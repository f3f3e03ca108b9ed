"""R-ING-2, prose: fragments along the heading hierarchy, keeping the heading path.

Markdown is parsed with markdown-it (so a `#` inside a fenced block is not a heading);
reStructuredText headings are title lines underlined (optionally overlined) with
punctuation, levels in order of first use; plain text has no headings. A leading front
matter block (YAML `---` or TOML `+++`) is metadata and is left out of every chunk. A section that
exceeds the size bound is split at paragraph starts, then between lines, with overlap;
an over-long line at sentence, then word boundaries (see `Lines.pieces`). In such a
section a Markdown table is cut apart from the prose around it, into runs of whole rows
(`TABLE_PIECE_TOKENS`, no overlap).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from markdown_it import MarkdownIt

from app.ingest.chunks import Chunk, Lines, Piece
from app.ingest.normalize import front_matter_lines

FRONT_MATTER_SYNTAXES = ("markdown", "text", "rst")
"""Prose whose leading front matter block is metadata (every syntax normalize reads it for)."""

_RST_ADORNMENT = re.compile(r"^([=\-`:'\"~^_*+#<>.])\1{2,}\s*$")
_SLUG_DROP = re.compile(r"[^\w\- ]", re.UNICODE)
_LIST_ITEM = re.compile(r"^\s{0,3}(?:[-*+]|\d{1,3}[.)])\s")

TABLE_PIECE_TOKENS = 160
"""A big section's table is cut into runs of whole rows of about this many tokens. Each
row of a reference table (an endpoint, a setting, an option) is an answer of its own: in
a slice of twenty rows it is a twentieth of the BM25 length and of the vector, and a
question about it finds the neighbouring prose or code first. A row longer than this is
a piece alone; one longer than the size bound is split like any over-long span."""


@dataclass(frozen=True, slots=True)
class _Heading:
    line: int  # 0-based line where the section starts
    level: int
    title: str
    body: int  # 0-based line after the heading's own lines


def github_slug(title: str) -> str:
    return _SLUG_DROP.sub("", title.strip().lower()).replace(" ", "-")


def markdown_headings(text: str) -> list[_Heading]:
    return markdown_blocks(text)[0]


def markdown_blocks(text: str) -> tuple[list[_Heading], list[tuple[int, int]]]:
    """Headings, and tables as 0-based line ranges [start, end) (header and delimiter
    rows included), from one parse."""
    # Block structure only: a heading's text is its inline token's `content`, which the
    # block parser sets. The inline pass (links, emphasis) read nothing we use, took half
    # the time of an ordinary file and seconds on runs of `[` or `![` (80 KB: 1.8 s).
    tokens = MarkdownIt("commonmark").enable("table").disable("inline").parse(text)
    headings: list[_Heading] = []
    tables: list[tuple[int, int]] = []
    for i, token in enumerate(tokens):
        if token.map is None:
            continue
        if token.type == "heading_open":
            inline = tokens[i + 1]
            headings.append(_Heading(token.map[0], int(token.tag[1]), inline.content.strip(), token.map[1]))
        elif token.type == "table_open":
            tables.append((token.map[0], token.map[1]))
    return headings, tables


def rst_headings(lines: list[str]) -> list[_Heading]:
    levels: dict[str, int] = {}
    headings: list[_Heading] = []
    i = 0
    while i + 1 < len(lines):
        title, under = lines[i], lines[i + 1]
        match = _RST_ADORNMENT.match(under)
        if title.strip() and not _RST_ADORNMENT.match(title) and match and len(under.rstrip()) >= len(title.rstrip()):
            over = i > 0 and _RST_ADORNMENT.match(lines[i - 1]) is not None
            key = ("over" if over else "") + match.group(1)
            level = levels.setdefault(key, len(levels) + 1)
            headings.append(_Heading(i - 1 if over else i, level, title.strip(), i + 2))
            i += 2
            continue
        i += 1
    return headings


class ProseChunker:
    """Chunks prose; it keeps only its settings, so one instance serves every thread."""

    def __init__(self, max_tokens: int, overlap_tokens: int) -> None:
        self.max_tokens = max_tokens
        self.overlap_tokens = overlap_tokens

    def chunk(self, text: str, syntax: str) -> list[Chunk]:
        # Front matter is metadata (app/ingest/normalize.py), never a fragment: its lines
        # are blanked, so the body keeps its line numbers and a YAML `---` is neither a
        # rule nor a setext underline.
        skipped = front_matter_lines(text) if syntax in FRONT_MATTER_SYNTAXES else 0
        if skipped:
            lines_of = text.split("\n", skipped)
            text = "\n" * skipped + lines_of[skipped]
        doc = Lines(text, self.max_tokens, self.overlap_tokens)
        lines = doc.lines
        tables: list[tuple[int, int]] = []
        if syntax == "markdown":
            headings, tables = markdown_blocks(text)
        elif syntax == "rst":
            headings = rst_headings(lines)
        else:
            headings = []
        chunks: list[Chunk] = []
        slugs: dict[str, int] = {}
        stack: list[_Heading] = []
        bounds = [h.line for h in headings] + [len(lines)]
        sections: list[tuple[int, int, tuple[str, ...], str]] = []
        if headings and headings[0].line > 0:
            sections.append((0, headings[0].line, (), ""))
        elif not headings:
            sections.append((0, len(lines), (), ""))
        for heading, end in zip(headings, bounds[1:]):
            while stack and stack[-1].level >= heading.level:
                stack.pop()
            stack.append(heading)
            slug = github_slug(heading.title)
            seen = slugs.get(slug, 0)
            slugs[slug] = seen + 1
            sections.append((heading.line, end, tuple(h.title for h in stack), f"{slug}-{seen}" if seen else slug))

        carry: int | None = None  # start of a heading-only section waiting for its body
        for index, (start, end, path, anchor) in enumerate(sections):
            if carry is not None:
                start = carry
                carry = None
            body = [ln for ln in lines[start:end] if ln.strip()]
            is_heading_only = len(body) <= (2 if syntax == "rst" else 1) and path
            if is_heading_only and index + 1 < len(sections):
                carry = start
                continue
            chunks.extend(_section_chunks(doc, start, end, path, anchor, tables))
        return chunks


def _section_chunks(
    doc: Lines, start: int, end: int, path: tuple[str, ...], anchor: str, tables: list[tuple[int, int]]
) -> list[Chunk]:
    lines = doc.lines
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    paragraph_starts = {
        i
        for i in range(start + 1, end)
        if lines[i].strip() and (not lines[i - 1].strip() or _LIST_ITEM.match(lines[i]))
    }
    # A heading ends a table, so a table lies within one section: `a` is its header row.
    inside = [(a, min(b, end)) for a, b in tables if start <= a < end]
    if inside and doc.span_tokens(start, end) > doc.max_tokens:
        pieces: list[Piece] = []
        cursor = start
        for a, b in inside:
            if cursor < a:
                pieces.extend(doc.pieces(cursor, a, paragraph_starts))
            pieces.extend(_table_pieces(doc, a, b))
            cursor = b
        if cursor < end:
            pieces.extend(doc.pieces(cursor, end, paragraph_starts))
    else:
        pieces = doc.pieces(start, end, paragraph_starts)
    return [Chunk.of(piece, path, None, anchor if len(pieces) == 1 else None) for piece in pieces]


def _table_pieces(doc: Lines, start: int, end: int) -> list[Piece]:
    """Lines [start, end) of a table as runs of whole rows of at most TABLE_PIECE_TOKENS;
    the header and delimiter rows stay with the first body row."""
    pieces: list[Piece] = []
    budget = min(TABLE_PIECE_TOKENS, doc.max_tokens)
    first, total = start, 0
    for line in range(start, end + 1):
        if line == end or (line > max(first, start + 2) and total + doc.tokens[line] > budget):
            piece = doc.piece(first, line)
            if piece is not None and piece.token_count > doc.max_tokens:
                pieces.extend(doc.pieces(first, line))
            elif piece is not None:
                pieces.append(piece)
            first, total = line, 0
        if line < end:
            total += doc.tokens[line]
    return pieces
