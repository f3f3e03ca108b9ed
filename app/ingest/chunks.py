"""What both chunkers produce, and the line-boundary splitter they share (R-ING-2)."""

from __future__ import annotations

from dataclasses import dataclass

from app.ingest.tokens import count_tokens

CHUNKER_VERSION = "2026.11-1"
"""Bump whenever chunk boundaries change: it is recorded on every fragment."""


@dataclass(frozen=True, slots=True)
class Chunk:
    text: str
    heading_path: tuple[str, ...]
    """Headings (prose) or enclosing symbols (code) above this chunk."""
    symbol: str | None
    start_line: int
    """1-based, inclusive."""
    end_line: int
    anchor: str
    token_count: int


def split_lines(
    line_tokens: list[int],
    max_tokens: int,
    overlap_tokens: int,
    preferred_breaks: set[int] | frozenset[int] = frozenset(),
) -> list[tuple[int, int]]:
    """Cut a run of lines into [start, end) pieces of at most max_tokens.

    Cuts fall between lines only (a single over-long line becomes its own piece), at the
    last preferred break inside the piece when there is one (statement or paragraph
    starts), else where the bound is reached. Each later piece starts with whole lines
    repeating up to overlap_tokens of the previous piece's tail.
    """
    pieces: list[tuple[int, int]] = []
    n = len(line_tokens)
    start = 0
    while start < n:
        total = 0
        end = start
        while end < n and (end == start or total + line_tokens[end] <= max_tokens):
            total += line_tokens[end]
            end += 1
        if end < n:
            # Prefer the last break that keeps at least a quarter of the piece.
            floor = start + max(1, (end - start) // 4)
            breaks = [b for b in preferred_breaks if floor <= b < end]
            if breaks:
                end = max(breaks)
        pieces.append((start, end))
        if end >= n:
            break
        back = end
        carried = 0
        while back > start + 1 and carried + line_tokens[back - 1] <= overlap_tokens:
            carried += line_tokens[back - 1]
            back -= 1
        start = back if back < end else end
    return pieces


def count_line_tokens(lines: list[str]) -> list[int]:
    """Tokens of each line including its newline, so pieces add up to their text's count."""
    return [count_tokens(line + "\n") for line in lines]
