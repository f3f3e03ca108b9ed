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
from datetime import date, timedelta

from app.text import expansion

MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_MONTH = "|".join(MONTHS) + "|" + "|".join(m[:3] for m in MONTHS) + "|sept"
_SPEAKER = re.compile(r"([A-Z][\w.'\-]*(?: [A-Z][\w.'\-]*){0,2}):[ \t]+(?=\S)")
# "8 May, 2023", "8 May 2023", "May 8, 2023", "2023-05-08"
_DAY_MONTH_YEAR = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+({_MONTH})\.?,?\s+(\d{{4}})\b", re.IGNORECASE)
_MONTH_DAY_YEAR = re.compile(rf"\b({_MONTH})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.IGNORECASE)
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")

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


def month_number(name: str) -> int:
    key = name.lower().rstrip(".")
    return 9 if key == "sept" else next(i for i, m in enumerate(MONTHS, start=1) if m.startswith(key[:3]))


def parse_date(text: str) -> date | None:
    """The first calendar date written in `text` (day month year, month day year, or ISO)."""
    found: list[tuple[int, date]] = []
    for match in _DAY_MONTH_YEAR.finditer(text):
        day, month, year = int(match[1]), month_number(match[2]), int(match[3])
        found.extend(_valid(match.start(), year, month, day))
    for match in _MONTH_DAY_YEAR.finditer(text):
        month, day, year = month_number(match[1]), int(match[2]), int(match[3])
        found.extend(_valid(match.start(), year, month, day))
    for match in _ISO.finditer(text):
        found.extend(_valid(match.start(), int(match[1]), int(match[2]), int(match[3])))
    return min(found)[1] if found else None


def _valid(position: int, year: int, month: int, day: int) -> list[tuple[int, date]]:
    try:
        return [(position, date(year, month, day))]
    except ValueError:
        return []


# -- dates a question names, matched against a turn's (app/retrieve/dates.py) --

DateKey = tuple[int, ...]
"""(year, month) or (year, month, day): a month or a day a text names."""
_MONTH_YEAR = re.compile(rf"\b({_MONTH})\.?,?\s+(\d{{4}})\b", re.IGNORECASE)
_WEEK_OF = "week of "


def _days_named(text: str) -> tuple[list[date], str]:
    """Every valid calendar date written in `text`, and the text with them blanked out."""
    days: list[date] = []
    spans: list[tuple[int, int]] = []
    for pattern, order in ((_DAY_MONTH_YEAR, "dmy"), (_MONTH_DAY_YEAR, "mdy"), (_ISO, "ymd")):
        for match in pattern.finditer(text):
            if order == "dmy":
                parts = (int(match[3]), month_number(match[2]), int(match[1]))
            elif order == "mdy":
                parts = (int(match[3]), month_number(match[1]), int(match[2]))
            else:
                parts = (int(match[1]), int(match[2]), int(match[3]))
            found = _valid(match.start(), *parts)
            if found:
                days.append(found[0][1])
                spans.append(match.span())
    rest = text
    for start, end in sorted(spans, reverse=True):
        rest = rest[:start] + " " + rest[end:]
    return days, rest


def query_dates(text: str) -> frozenset[DateKey]:
    """The days and months a question names: a day in any form `parse_date` reads ("on 3
    June, 2023", "October 13, 2023", "2023-06-03"), a month with its year ("in December
    2023"). A year alone names nothing (most turns of a conversation share it), nor does
    a month without its year ("may" is also a verb), nor a relative time ("last year":
    relative to when the speaker said it, not to today; docs/adr/0027)."""
    days, rest = _days_named(text)
    keys: set[DateKey] = {(d.year, d.month, d.day) for d in days}
    for match in _MONTH_YEAR.finditer(rest):
        year = int(match[2])
        if 1 <= year <= 9999:
            keys.add((year, month_number(match[1])))
    return frozenset(keys)


def fragment_dates(text: str) -> frozenset[DateKey]:
    """The days and months a turn's fragment (turn_fragment) is about: its session's date
    (first line) and the dates its relative times name (the parenthesised line after the
    turn; "week of" a day: its seven days), each day with its month. Empty for a text
    without them."""
    lines = text.split("\n")
    days: list[date] = []
    keys: set[DateKey] = set()
    said = parse_date(lines[0])
    if said is not None:
        days.append(said)
    for line in lines[1:]:
        if not line:
            break  # the questions of the turn before follow a blank line
        if not (line.startswith("(") and line.endswith(")")):
            continue
        for label in line[1:-1].split("; "):
            if label.startswith(_WEEK_OF):
                start = parse_date(label)
                if start is not None:
                    days.extend(start + timedelta(days=i) for i in range(7))
                continue
            day = parse_date(label)
            if day is not None:
                days.append(day)
                continue
            month = _MONTH_YEAR.fullmatch(label)
            if month is not None:
                keys.add((int(month[2]), month_number(month[1])))
    for d in days:
        keys |= {(d.year, d.month), (d.year, d.month, d.day)}
    return frozenset(keys)


def day_or_month_label(key: DateKey) -> str:
    """ "3 June 2023" or "June 2023"."""
    if len(key) == 3:
        return day_label(date(*key))
    return _month_label(key[0], key[1])


def split_speaker(text: str) -> tuple[str | None, str]:
    """("Caroline", "Hey Mel!") from "Caroline: Hey Mel!"; (None, text) without a name."""
    match = _SPEAKER.match(text)
    if match is None:
        return None, text
    return match[1], text[match.end() :]


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


# Relative times and the span of days they point at, from the day they were said.
_RELATIVE: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), unit)
    for pattern, unit in (
        (r"\byesterday\b", "yesterday"),
        (r"\btoday\b|\btonight\b|\bthis morning\b|\bthis evening\b", "today"),
        (r"\btomorrow\b", "tomorrow"),
        (r"\blast (?:week|weekend)\b|\bthe (?:week|weekend) before\b", "last week"),
        (r"\bnext (?:week|weekend)\b", "next week"),
        (r"\blast month\b", "last month"),
        (r"\bnext month\b", "next month"),
        (r"\bthis month\b", "this month"),
        (r"\blast year\b", "last year"),
        (r"\bnext year\b", "next year"),
        (r"\bthis year\b", "this year"),
    )
)


def _month_label(year: int, month: int) -> str:
    return f"{MONTHS[month - 1].capitalize()} {year}"


def _shift_month(day: date, months: int) -> tuple[int, int]:
    index = day.year * 12 + day.month - 1 + months
    return index // 12, index % 12 + 1


def day_label(day: date) -> str:
    """ "8 May 2023" (the words a question would use)."""
    return f"{day.day} {MONTHS[day.month - 1].capitalize()} {day.year}"


def resolve_relative(text: str, said_on: date) -> list[str]:
    """The calendar dates that the relative times in `text` name, said on `said_on`:
    "yesterday" on 8 May 2023 -> "7 May 2023"; "last year" -> "2022"; in text order,
    each once."""
    found: list[tuple[int, str]] = []
    for pattern, unit in _RELATIVE:
        for match in pattern.finditer(text):
            found.append((match.start(), _resolve(unit, said_on)))
    out: list[str] = []
    for _, label in sorted(found):
        if label not in out:
            out.append(label)
    return out


def _resolve(unit: str, day: date) -> str:
    if unit in ("yesterday", "today", "tomorrow"):
        return day_label(day + timedelta(days={"yesterday": -1, "today": 0, "tomorrow": 1}[unit]))
    if unit in ("last week", "next week"):
        start = day + timedelta(days=-7 if unit == "last week" else 7)
        return f"week of {day_label(start - timedelta(days=start.weekday()))}"
    if unit in ("last month", "next month", "this month"):
        return _month_label(*_shift_month(day, {"last month": -1, "next month": 1, "this month": 0}[unit]))
    return str(day.year + {"last year": -1, "next year": 1, "this year": 0}[unit])


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

KIND = "conversation"
"""The document kind whose text is read as a transcript, one fragment per turn."""
TURN_KIND = "conversation-turn"
"""The kind of a document that is one turn already rendered (turn_fragment), as the eval
lane stores a conversation's turns: read as prose, expanded as a turn."""
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
