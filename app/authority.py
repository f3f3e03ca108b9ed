"""Citation authority (docs/adr/0013): refreshing data.fragment_authority, never on
the request path. The service refreshes it a few seconds after the last ingestion (one
refresh for a burst of writes); `contexts rank refresh` refreshes it on demand."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

import psycopg

from app.db.availability import unavailable_reason

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Refresh:
    refreshed_at: datetime
    duration_ms: float
    """Time the database spent computing PageRank and swapping the view in."""
    scored: int
    """Fragments with an authority row (cited, or citing within their scope class)."""


def refresh(conn: psycopg.Connection) -> Refresh:
    """Refresh the view concurrently (readers keep the previous scores meanwhile)."""
    row = conn.execute("select refreshed_at, duration_ms, scored from service.refresh_authority()").fetchone()
    assert row is not None  # the function returns its one record or raises
    return Refresh(*row)


class DebouncedRefresh:
    """Calls `run` once, `delay` seconds after the last `poke`, on a thread of its own."""

    def __init__(self, run: Callable[[], object], delay: float) -> None:
        self.run = run
        self.delay = delay
        self._timer: threading.Timer | None = None
        self._lock = threading.Lock()
        self._closed = False

    def poke(self) -> None:
        if self.delay <= 0:
            return
        with self._lock:
            if self._closed:
                return
            if self._timer is not None:
                self._timer.cancel()
            self._timer = threading.Timer(self.delay, self._fire)
            self._timer.name = "contexts-authority"
            self._timer.daemon = True
            self._timer.start()

    def _fire(self) -> None:
        with self._lock:
            self._timer = None
            if self._closed:
                return
        try:
            self.run()
        except Exception as exc:  # a background refresh must not take the service down
            if (reason := unavailable_reason(exc)) is not None:
                log.warning("citation authority refresh skipped, the database is unavailable: %s", reason)
            else:
                log.exception("citation authority refresh failed (the previous scores stay)")

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
