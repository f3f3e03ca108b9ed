"""Conversations as memory: turns with speaker and time, and the window around each.

A conversation arrives as turns ("Caroline: I went to a support group yesterday."), in
order, grouped in sessions that carry a date ("session 1, 1:56 pm on 8 May, 2023"). A
turn alone is a poor retrieval unit: the question it answers is in the turn before
("What do your kids like?" / "They loved the dinosaurs!"), and its relative times
("yesterday", "last year") mean nothing without the session's date. So each turn's
fragment is the turn itself under a header naming its session and date, the calendar
dates its relative times resolve to (so "in 2022" finds "last year" said in 2023), then
the question the turn before it asked, so a question and its answer stay together.

Pure functions over text: no database, no model.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date

from app.text import expansion
from app.text.turns import KIND as KIND
from app.text.turns import TURN_KIND as TURN_KIND
from app.text.turns import day_label, parse_date, resolve_relative, split_speaker

VERSION = f"3/{expansion.VERSION}"
"""Changes whenever what a turn's fragment holds changes, its lexical expansion included
(stored copies depend on it)."""
SPEAKER_SHARE = 0.8
"""Share of turns that must open with a speaker's name for a text set to be a conversation."""
MAX_SPEAKERS = 12
"""More distinct "names" than this and the colons are something else (headings, labels)."""
CONTEXT_CHARS = 600
"""Bound on the questions carried from one neighbour turn (a turn's fragment stays small)."""


@dataclass(frozen=True, slots=True)
class Turn:
    id: str
    """The turn's identifier (a corpus id, an anchor)."""
    session: str
    """The label of the session the turn belongs to (its turns share it)."""
    speaker: str | None
    text: str
    """What was said, without the speaker's prefix."""
    when: date | None
    """The session's date, when its label holds one."""


def is_conversation(turns: Iterable[tuple[str, str]]) -> bool:
    """Whether (session label, text) pairs are the turns of a conversation: most open
    with a speaker's name, a few names in all, and sessions hold several turns each."""
    speakers: set[str] = set()
    named = total = 0
    sessions: set[str] = set()
    for session, text in turns:
        total += 1
        sessions.add(session)
        speaker, _ = split_speaker(text)
        if speaker is not None:
            named += 1
            speakers.add(speaker)
    return (
        total >= 4
        and named >= total * SPEAKER_SHARE
        and 2 <= len(speakers) <= MAX_SPEAKERS
        and len(sessions) * 2 <= total
    )


def turns_of(rows: Iterable[tuple[str, str, str]]) -> list[Turn]:
    """Turns from (id, session label, text) rows in conversation order."""
    out = []
    for turn_id, session, text in rows:
        speaker, said = split_speaker(text)
        out.append(Turn(turn_id, session, speaker, said, parse_date(session)))
    return out


def _clip(text: str, limit: int = CONTEXT_CHARS) -> str:
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit)
    return text[: cut if cut > limit // 2 else limit] + " …"


def _line(turn: Turn, text: str) -> str:
    return f"{turn.speaker}: {text}" if turn.speaker else text


_SENTENCE = re.compile(r"[^.!?\n]*[.!?]+[\"')\]]*|[^.!?\n]+$")


def questions(text: str) -> str:
    """The questions a turn asks (its sentences that end with a question mark)."""
    return " ".join(m.group().strip() for m in _SENTENCE.finditer(text) if m.group().rstrip("\"')]").endswith("?"))


def turn_fragment(turns: Sequence[Turn], index: int, before: int = 1) -> str:
    """The text stored for `turns[index]`: its session (label and date), the turn under
    its speaker's name, the dates its relative times name, then the questions that the
    `before` turns preceding it in its session asked (what the turn answers: "What do
    your kids like?" before "They loved the dinosaurs!").

    Only the questions are carried, not whole neighbour turns: a neighbour's full text
    would make each turn's fragment a near copy of the next one's, and two of them then
    take two of the first ten places for one piece of evidence (measured on LoCoMo:
    whole previous turns cost 0.05 of nDCG@10 against questions only). They are carried
    without the asker's name: the name would make a turn match questions about the
    other speaker (recall@10 +0.01 on each LoCoMo set without it)."""
    turn = turns[index]
    lines = [turn.session, _line(turn, turn.text)]
    if turn.when is not None:
        dates = resolve_relative(turn.text, turn.when)
        if dates:
            lines.append("(" + "; ".join(dates) + ")")
    asked = [
        _clip(questions(other.text))
        for other in turns[max(0, index - before) : index]
        if other.session == turn.session and questions(other.text)
    ]
    if asked:
        lines.append("")
        lines.extend(asked)
    return "\n".join(lines)


def fragments(turns: Sequence[Turn], before: int = 1) -> dict[str, str]:
    """Turn id -> the text stored for that turn (turn_fragment for each)."""
    return {turn.id: turn_fragment(turns, i, before) for i, turn in enumerate(turns)}


# -- transcripts (a conversation as one document: `contexts ingest --kind conversation`) --

FORMAT = (
    "a heading per session with its date ('## Session 3, 8 May 2023, 1:56 pm' or '## 2023-05-08'), "
    "then one turn per line or paragraph as 'Speaker: text', "
    "or dated turns '[2023-05-08 13:56] Speaker: text'"
)
_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_STAMP = re.compile(r"^\[([^\]\n]{1,60})\][ \t]*")


class NotATranscript(ValueError):
    """A document of kind conversation that cannot be read as turns (the message names
    the line and the format expected)."""


@dataclass(frozen=True, slots=True)
class TranscriptTurn:
    turn: Turn
    start_line: int
    """1-based line of the transcript the turn starts on."""
    end_line: int
    """1-based, inclusive: its last line (a turn may go on over the lines below it)."""


def read_transcript(text: str, skip_lines: int = 0) -> list[TranscriptTurn]:
    """The turns of a transcript, in order (`skip_lines`: a front matter block to pass
    over). A heading opens a session, named by the heading (its date, when it holds one,
    is the session's); a line "Speaker: text" is a turn (split_speaker), and lines below
    it up to a blank line, a heading or the next turn go on with it; "[date time] Speaker:
    text" is a turn said on that date (in a session named by the date when no heading
    opened one). Anything else raises NotATranscript saying which line and what was
    expected."""
    session: str | None = None
    when: date | None = None
    out: list[TranscriptTurn] = []
    # The turn being read: its start line, session, date, speaker and lines said.
    current: tuple[int, str, date | None, str] | None = None
    said: list[str] = []
    end = 0

    def close() -> None:
        nonlocal current
        if current is not None:
            start, label, day, speaker = current
            anchor = f"L{start}-L{end}"
            out.append(TranscriptTurn(Turn(anchor, label, speaker, "\n".join(said), day), start, end))
        current = None

    for number, line in enumerate(text.split("\n"), start=1):
        if number <= skip_lines:
            continue
        stripped = line.strip()
        if not stripped:
            close()
            continue
        heading = _HEADING.match(line)
        if heading is not None:
            close()
            session, when = heading[2].strip(), parse_date(heading[2])
            continue
        day, label, rest = when, session, stripped
        stamp = _STAMP.match(stripped)
        if stamp is not None:
            day = parse_date(stamp[1])
            if day is None:
                raise NotATranscript(
                    f"line {number}: [{stamp[1]}] holds no date (expected e.g. [2023-05-08 13:56] Speaker: text)"
                )
            label = session if session is not None else day_label(day)
            rest = stripped[stamp.end() :]
        speaker, words = split_speaker(rest)
        if speaker is None:
            if current is not None and stamp is None:
                said.append(stripped)
                end = number
                continue
            raise NotATranscript(
                f"line {number}: {_clip(stripped, 60)!r} is not a turn 'Speaker: text' "
                f"(a speaker's name starts with a capital letter); expected {FORMAT}"
            )
        if label is None:
            raise NotATranscript(f"line {number}: a turn before any session heading or date; expected {FORMAT}")
        close()
        current, said, end = (number, label, day, speaker), [words.strip()], number
    close()
    if not out:
        raise NotATranscript(f"no turns found; expected {FORMAT}")
    return out
