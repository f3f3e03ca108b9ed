"""JSON Lines files of the eval commands (BEIR corpora and queries, replayed requests,
agent tasks): one object per non-blank line, errors that name the file and line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path


def json_objects(path: Path, error: type[Exception]) -> Iterator[tuple[int, dict]]:
    """(line number, object) per non-blank line; `error` for an unreadable file or a
    line that is not a JSON object."""
    try:
        handle = path.open(encoding="utf-8")
    except OSError as exc:
        raise error(f"{path}: {exc.strerror or exc}") from exc
    with handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise error(f"{path}:{number}: not valid JSON ({exc.msg})") from exc
            if not isinstance(row, dict):
                raise error(f"{path}:{number}: each line must be a JSON object")
            yield number, row
