"""What both chunkers produce, and the size-bounded cutter they share (R-ING-2).

Chunkers choose which lines belong together; `Lines.pieces` makes sure no piece is
over the bound whatever the input. Lines are the units of a cut; a line that is over the
bound by itself (minified code, a paragraph without newlines, a 2 MiB one-line file) is
taken apart into sentences, then statements, words, punctuation runs, and as a last
resort runs of graphemes, so a cut never splits a character. Every piece is a verbatim
span of the text, so citations quote the document exactly.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from itertools import accumulate, pairwise

import regex

from app.text.tokens import count_tokens

# How good a place to cut is, best first: a cut lands on the best rank available in the
# last three quarters of a piece.
PREFERRED, LINE, SENTENCE, STATEMENT, WORD, PUNCTUATION, GRAPHEME = 6, 5, 4, 3, 2, 1, 0

# A cut never falls inside a character as the reader sees it (a grapheme cluster: a letter
# and its accents, an emoji sequence joined by ZWJ).
_CLUSTER_CONTINUES = r"(?<!\p{GCB=Prepend}|\u200d)(?![\p{GCB=Extend}\p{GCB=ZWJ}\p{GCB=SpacingMark}])"

# Inside an over-long line, each pattern's matches end where a cut may go; a part still
# over the bound is taken apart by the next pattern.
_CUTS = tuple(
    (rank, regex.compile(f"(?:{pattern}){_CLUSTER_CONTINUES}"))
    for rank, pattern in (
        # After a sentence's full stop (and closing quotes), before the space that follows;
        # CJK full stops need no space.
        (
            SENTENCE,
            r"[.!?\u2026]+[\"'\u201d\u2019)\]]*(?=[^\S\n])|[\u3002\uff01\uff1f]+[\u300d\u300f\u201d\u2019\uff09)]*",
        ),
        (STATEMENT, r"[;{}]+"),
        # Before a run of spaces, which cl100k counts with the word after it.
        (WORD, r"\S(?=[^\S\n])"),
        (PUNCTUATION, r"[^\w\s]+|\w(?=[^\w\s])"),
    )
)
_LEADING_BLANK_LINES = regex.compile(r"(?:[^\S\n]*\n)+")
_LEADING_SPACES = regex.compile(f"[^\\S\\n]+{_CLUSTER_CONTINUES}")


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

    @classmethod
    def of(cls, piece: Piece, heading_path: tuple[str, ...], symbol: str | None, anchor: str | None = None) -> Chunk:
        """A piece of text as a chunk; its anchor the lines it spans unless one is given."""
        return cls(
            text=piece.text,
            heading_path=heading_path,
            symbol=symbol,
            start_line=piece.start_line,
            end_line=piece.end_line,
            anchor=anchor or f"L{piece.start_line}-L{piece.end_line}",
            token_count=piece.token_count,
        )


@dataclass(frozen=True, slots=True)
class Piece:
    """A verbatim span of the text within the size bound, blank edges trimmed."""

    text: str
    start_line: int
    """1-based, inclusive: the lines the text touches."""
    end_line: int
    token_count: int
    """cl100k tokens of `text` itself."""


@dataclass(frozen=True, slots=True)
class _Unit:
    """What a piece is made of: a whole line, or a part of an over-long one."""

    start: int
    """Offset in the text, inclusive."""
    end: int
    tokens: int
    rank: int
    """How good a cut just before this unit is."""


class Lines:
    """One document's lines with their offsets and token counts; built per call, so a
    chunker shared between threads keeps no state of its own."""

    def __init__(self, text: str, max_tokens: int, overlap_tokens: int) -> None:
        self.text = text
        self.max_tokens = max_tokens
        self.overlap_tokens = overlap_tokens
        self.lines = text.split("\n")
        if self.lines and self.lines[-1] == "":
            self.lines.pop()
        self.starts = list(accumulate((len(line) + 1 for line in self.lines), initial=0))
        self.tokens = [count_tokens(line + "\n") for line in self.lines]
        """Tokens of each line with its newline, so a run of lines adds up to about its text's count."""

    def __len__(self) -> int:
        return len(self.lines)

    def span_tokens(self, start: int, end: int) -> int:
        """Estimated tokens of lines [start, end)."""
        return sum(self.tokens[start:end])

    def piece(self, start: int, end: int) -> Piece | None:
        """Lines [start, end) as one piece, whatever its size (None when blank)."""
        return self._piece(self.starts[start], min(self.starts[end], len(self.text)))

    def pieces(self, start: int, end: int, preferred: set[int] | frozenset[int] = frozenset()) -> list[Piece]:
        """Cut lines [start, end) into pieces of at most max_tokens.

        Cuts fall between lines when the lines allow it, at the last `preferred` line
        (paragraph or statement starts) that keeps at least a quarter of the piece, else
        where the bound is reached; inside an over-long line at its best boundary. Each
        later piece starts by repeating up to overlap_tokens of the previous piece's tail.
        """
        units = self._units(start, end, preferred)
        pieces: list[Piece] = []
        first = covered = 0  # the piece starts at `first`; units before `covered` are in one already
        while True:
            # A piece starts with, and adds, something to read: no piece lies inside another.
            first, covered = self._visible(units, first), self._visible(units, max(covered, first))
            if covered >= len(units):
                break
            stop = self._stop(units, first, covered)
            piece = self._piece(units[first].start, units[stop - 1].end)
            # Unit counts only estimate a span's count; the span's own count decides.
            while piece is not None and piece.token_count > self.max_tokens and stop - 1 > covered:
                stop -= 1
                piece = self._piece(units[first].start, units[stop - 1].end)
            if stop <= covered or (piece is not None and piece.token_count > self.max_tokens):
                first = covered  # the repeated tail leaves no room for anything new: drop it
                continue
            if piece is not None:
                pieces.append(piece)
            covered = stop
            if stop < len(units):
                first = self._overlap_start(units, first, stop)
        return pieces

    def _visible(self, units: list[_Unit], i: int) -> int:
        """The first unit from i on that is not blank."""
        while i < len(units) and not self.text[units[i].start : units[i].end].strip():
            i += 1
        return i

    def _stop(self, units: list[_Unit], first: int, covered: int) -> int:
        """Where a piece starting at `first` ends: as far as the bound allows, pulled back
        to the best cut that keeps a quarter of it and adds something new."""
        total, stop = 0, first
        while stop < len(units) and (stop == first or total + units[stop].tokens <= self.max_tokens):
            total += units[stop].tokens
            stop += 1
        if stop == len(units) or stop <= covered:
            return stop
        floor = max(first + max(1, (stop - first) // 4), covered + 1)
        best = max(units[i].rank for i in range(floor, stop + 1))
        return next(i for i in range(stop, floor - 1, -1) if units[i].rank == best)

    def _overlap_start(self, units: list[_Unit], first: int, stop: int) -> int:
        """Where the next piece starts: whole units repeating up to overlap_tokens of this
        piece's tail, when they leave room for the unit after it."""
        back, carried = stop, 0
        while back > first + 1 and carried + units[back - 1].tokens <= self.overlap_tokens:
            carried += units[back - 1].tokens
            back -= 1
        return back if carried + units[stop].tokens <= self.max_tokens else stop

    # -- units -------------------------------------------------------------------

    def _units(self, start: int, end: int, preferred: set[int] | frozenset[int]) -> list[_Unit]:
        units: list[_Unit] = []
        for line in range(start, end):
            rank = PREFERRED if line in preferred else LINE
            lo, hi = self.starts[line], min(self.starts[line + 1], len(self.text))
            tokens = self._fits(lo, hi, self.tokens[line])
            if tokens is not None:
                units.append(_Unit(lo, hi, tokens, rank))
            else:
                units.extend(self._parts(lo, hi, rank, 0))
        return units

    def _parts(self, lo: int, hi: int, rank: int, level: int) -> list[_Unit]:
        """Units of an over-long span, cut at the boundaries of `_CUTS[level]` and finer."""
        if level == len(_CUTS):
            return self._graphemes(lo, hi, rank)
        cut_rank, pattern = _CUTS[level]
        # Parts of a few characters (minified statements, words) are joined with the ones
        # after them: fewer token counts, still cut at boundaries of this kind.
        shortest = max(1, self.max_tokens // 8)
        bounds = [lo]
        for match in pattern.finditer(self.text, lo, hi):
            if match.end() - bounds[-1] >= shortest and match.end() < hi:
                bounds.append(match.end())
        bounds.append(hi)
        if len(bounds) == 2:
            return self._parts(lo, hi, rank, level + 1)  # nothing to cut here: no need to count again
        units: list[_Unit] = []
        for i, (a, b) in enumerate(pairwise(bounds)):
            here = rank if i == 0 else cut_rank
            tokens = self._fits(a, b)
            if tokens is not None:
                units.append(_Unit(a, b, tokens, here))
            else:
                units.extend(self._parts(a, b, here, level + 1))
        return units

    def _graphemes(self, lo: int, hi: int, rank: int) -> list[_Unit]:
        """Runs of whole characters (grapheme clusters), the last resort inside a word."""
        units: list[_Unit] = []
        run = max(1, self.max_tokens // 8)
        for match in regex.finditer(rf"\X{{1,{run}}}", self.text, pos=lo, endpos=hi):
            a, b = match.span()
            here = rank if a == lo else GRAPHEME
            tokens = self._fits(a, b)
            if tokens is None:
                # One cluster over the bound (thousands of combining marks): code points,
                # at most four UTF-8 bytes each, so max_tokens // 4 of them always fit.
                step = max(1, self.max_tokens // 4)
                for c in range(a, b, step):
                    units.append(_Unit(c, min(c + step, b), count_tokens(self.text[c : min(c + step, b)]), here))
                    here = GRAPHEME
            else:
                units.append(_Unit(a, b, tokens, here))
        return units

    def _fits(self, lo: int, hi: int, tokens: int | None = None) -> int | None:
        """The span's token count when it can stand alone as a piece, else None."""
        raw = self.text[lo:hi]
        if tokens is None:
            tokens = count_tokens(raw)
        if tokens > self.max_tokens:
            return None
        if len(raw.encode("utf-8")) > self.max_tokens:
            # Trimming can raise a count (" word" is one token, "word" may be two).
            piece = self._piece(lo, hi)
            if piece is not None and piece.token_count > self.max_tokens:
                return None
        return tokens

    # -- pieces ------------------------------------------------------------------

    def _piece(self, lo: int, hi: int) -> Piece | None:
        """text[lo:hi] without blank lines at either end, spaces at the end, or spaces at
        the start when it begins inside a line (indentation at a line start stays)."""
        text = self.text
        blank = _LEADING_BLANK_LINES.match(text, lo, hi)
        if blank is not None:
            lo = blank.end()
        if lo > 0 and text[lo - 1] != "\n":
            spaces = _LEADING_SPACES.match(text, lo, hi)
            if spaces is not None:
                lo = spaces.end()
        while hi > lo and text[hi - 1].isspace():
            hi -= 1
        if hi <= lo:
            return None
        span = text[lo:hi]
        return Piece(span, bisect_right(self.starts, lo), bisect_right(self.starts, hi - 1), count_tokens(span))
