"""Readings of stored fragments (data.fragments.reading): what the learned reranker
reads of each text, written by `contexts rerank readings` for fragments stored before
ingestion wrote them, or under another tokenizer (docs/adr/0015, third amendment)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import psycopg

from app.text.stems import READING_PREFIX, reading

DEFAULT_BATCH = 500


@dataclass(slots=True)
class ReadingsResult:
    written: int = 0
    batches: int = 0
    seconds: float = 0.0


def backlog_size(conn: psycopg.Connection) -> int:
    row = conn.execute("select service.reading_backlog_size(%s)", (READING_PREFIX,)).fetchone()
    return int(row[0]) if row else 0


def write_readings(
    conn: psycopg.Connection, batch: int = DEFAULT_BATCH, progress: Callable[[int, int], None] | None = None
) -> ReadingsResult:
    """Write the reading of every fragment lacking this code's, one committed
    batch at a time (a run stopped anywhere resumes where it was); `progress(done,
    total)` after each batch. `conn`: the migrator's (every org)."""
    started = time.perf_counter()
    result = ReadingsResult()
    total = backlog_size(conn)
    if progress:
        progress(0, total)
    after = 0
    while True:
        rows = conn.execute(
            "select fragment_id, org_id, text from service.reading_backlog(%s, %s, %s)", (READING_PREFIX, after, batch)
        ).fetchall()
        if not rows:
            break
        conn.execute(
            "select service.set_readings(%s, %s, %s)",
            ([r[0] for r in rows], [r[1] for r in rows], [reading(text) for _id, _org, text in rows]),
        )
        conn.commit()
        after = rows[-1][0]
        result.written += len(rows)
        result.batches += 1
        total = max(total, result.written)
        if progress:
            progress(result.written, total)
    result.seconds = time.perf_counter() - started
    return result
