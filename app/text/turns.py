"""How conversation turns name dates and speakers, read the same way where turns are
written (app.ingest.conversation) and where questions are matched against them
(app.retrieve.dates, app.retrieve.speakers): both lanes need it, so it lives below them.

Pure functions over text: no database, no model.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

KIND = "conversation"
"""The document kind whose text is read as a transcript, one fragment per turn."""
TURN_KIND = "conversation-turn"
"""The kind of a document that is one turn already rendered (turn_fragment), as the eval
lane stores a conversation's turns: read as prose, expanded as a turn."""
TURN_KINDS = frozenset({KIND, TURN_KIND})
"""Document kinds whose fragments are turns as app.ingest.conversation.turn_fragment
writes them: expanded at ingest, matched by date and speaker at retrieval."""

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
