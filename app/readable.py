"""What a write may store: only values every later reader can decode.

A stored value is read back by the service (psycopg into Python objects), the CLI, the
MCP door and analysts' own clients, each in its own time zone. A time outside what
Python's datetime holds once converted to the reader's zone (year 1 to 9999), or
+/-infinity, breaks every listing that meets it; JSON nested deeper than a decoder's
recursion limit breaks every read of it. The same rules hold in SQL (migration
0026_readable_values, sql/functions/30_ingest.sql), so no door stores what these refuse:
checking here first only refuses earlier, before a document is chunked and embedded.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime

READABLE_FROM = datetime(1, 1, 2, tzinfo=UTC)
"""The earliest time stored: a day after year 1 begins, so every zone (UTC-12 to
UTC+14) still reads a date of year 1 or later."""
READABLE_UNTIL = datetime(9999, 12, 31, tzinfo=UTC)
"""Times are stored before this one: a day before year 9999 ends, for the same reason."""
READABLE_RANGE = "from 0001-01-02 to 9999-12-30 (UTC)"

MAX_METADATA_DEPTH = 32
"""Nesting of a document's metadata: objects and arrays within one another."""
MAX_METADATA_TEXT_BYTES = 32 * 1024
"""A document's metadata as PostgreSQL prints it (jsonb::text), checked in SQL for every
door; the HTTP API's own bound (16 KiB of compact JSON) is tighter: JSON printed by
PostgreSQL is at most 1.5 times as long as compact JSON (a space after each `,` and `:`)."""


def as_aware(value: datetime) -> datetime:
    """`value` with its offset; a naive time counts as UTC."""
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def in_utc(value: datetime) -> datetime:
    """`value` as the same instant in UTC (a naive time counts as UTC), as a time is
    handed to SQL: PostgreSQL reads offsets up to 15:59 only, where ISO 8601 and Python
    allow up to 23:59 (+16:00 was a 500). Raises OverflowError past what datetime holds."""
    return as_aware(value).astimezone(UTC)


def time_problem(value: datetime | None, what: str) -> str | None:
    """Why `value` may not be stored (None when it may). A naive time counts as UTC."""
    if value is None:
        return None
    at = as_aware(value)
    try:
        ok = READABLE_FROM <= at < READABLE_UNTIL
    except OverflowError:  # an offset that pushes it past what datetime holds
        ok = False
    if ok:
        return None
    return f"{what} {value.isoformat()} is outside the times every reader can decode: {READABLE_RANGE}"


def require_readable_time(value: datetime | None, what: str) -> None:
    """Raise ValueError with `time_problem`'s reason (a wire body's __post_init__ check)."""
    problem = time_problem(value, what)
    if problem is not None:
        raise ValueError(problem)


def json_depth(value: object) -> int:
    """Nesting of containers in a decoded JSON value (a scalar is 0, `{}` and `[]` are 1),
    without recursion: the value may be deep enough to exhaust Python's stack."""
    depth = 0
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, Mapping):
            children = list(item.values())
        elif isinstance(item, list | tuple):
            children = list(item)
        else:
            continue
        depth = max(depth, level)
        stack.extend((child, level + 1) for child in children)
    return depth


def metadata_problem(metadata: Mapping[str, object], what: str = "metadata") -> str | None:
    """Why a document's metadata may not be stored (None when it may): its nesting.
    (Sizes are checked where the JSON is encoded; NaN, infinities and numbers beyond a
    double never decode from a request, and PostgreSQL refuses lone surrogates.) A NUL
    character is refused here with where it is: PostgreSQL's own error names no field."""
    depth = json_depth(metadata)
    if depth > MAX_METADATA_DEPTH:
        return f"{what} is nested {depth} levels deep; at most {MAX_METADATA_DEPTH} are accepted"
    where = _nul_at(metadata)
    if where is not None:
        return f"{what} holds a NUL character (U+0000) at {where}, which PostgreSQL's JSON cannot store"
    return None


def _nul_at(value: object) -> str | None:
    """The JSON path of the first key or string holding U+0000 (None: none does)."""
    return text_at(value, lambda text: "\x00" in text)


SURROGATE = re.compile("[\ud800-\udfff]")
"""A lone UTF-16 surrogate: a JSON parser other than msgspec (the MCP SDK's) decodes
`"\\ud800"` into one, and no encoder, tokenizer or PostgreSQL accepts it."""

BIDI_CONTROL = re.compile("[\u202a-\u202e\u2066-\u2069]")
"""Bidirectional embeddings, overrides and isolates: text holding them displays other
than it reads ("Trojan Source"); text in a right-to-left script needs none."""


def surrogate_at(value: object) -> str | None:
    """The JSON path of the first key or string holding a lone surrogate (None: none)."""
    return text_at(value, lambda text: SURROGATE.search(text) is not None)


def text_at(value: object, holds: Callable[[str], bool], path: str = "$") -> str | None:
    """The JSON path of the first key or string for which `holds` is true (None: none).
    Callers bound the depth first (MAX_METADATA_DEPTH; a request's JSON nesting), so the
    recursion is bounded too."""
    if isinstance(value, str):
        return path if holds(value) else None
    if isinstance(value, Mapping):
        for key, item in value.items():
            if holds(str(key)):
                return f"{path} (a key)"
            found = text_at(item, holds, f"{path}.{key}")
            if found is not None:
                return found
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            found = text_at(item, holds, f"{path}[{index}]")
            if found is not None:
                return found
    return None


class _Repeated(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


def _refuse_repeats(pairs: list[tuple[str, object]]) -> None:
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise _Repeated(key)
        seen.add(key)


def repeated_key(raw: bytes) -> str | None:
    """The first key given twice in one object of a JSON document, or None (also for a
    document that is not JSON: its parser says so). msgspec keeps the last of them, where a
    proxy or filter before this service may have read the first (`"query"` twice)."""
    try:
        json.loads(raw, object_pairs_hook=_refuse_repeats)
    except _Repeated as repeated:
        return repeated.key
    except (ValueError, RecursionError):
        return None
    return None
