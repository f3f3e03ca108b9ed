"""The usage roll-ups folded off the request path (docs/adr/0028, the amendment of
migration 0040 and the one after it).

A trace's write only lists the trace as pending (sql/functions/51_usage.sql); the write
whose list entry crosses a multiple of 64 tells its writer a fold is due (the
transaction-local setting `contexts.usage_fold_due`, read back with the trace's id by
app.retrieve.trace.record_trace). The writer then wakes its folder, which folds in a
transaction of its own: on a thread of its own in the service (the retrieval answers
without waiting for it), at `close` in a one-shot process (`contexts query`). The usage
views add the pending traces on the fly, so readers see every trace at any moment,
whenever the fold runs. Where no folder runs, a write folds itself once the list spans
four times 64 entries, as before, so the list stays bounded.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Protocol

import psycopg
from psycopg.conninfo import make_conninfo
from psycopg_pool import ConnectionPool

from app.db.availability import unavailable_reason

log = logging.getLogger(__name__)

BATCH = 256
"""Traces a fold counts in one transaction (service.fold_usage's default): one statement
whose upserts merge the fragments its traces share. The folder folds batch after batch
while they come back full."""

Connect = Callable[[], AbstractContextManager[psycopg.Connection]]
"""A connection for one fold: committed when the block ends without error (a pool's
`connection`, or `psycopg.connect`)."""


def fold(connect: Connect, batch: int = BATCH) -> int:
    """Fold pending traces now, a transaction a batch, until a batch comes back short
    (the list is drained, or another fold holds the lock and folds the rest). Returns the
    traces folded."""
    total = 0
    while True:
        with connect() as conn:
            row = conn.execute("select service.fold_usage(p_limit => %(batch)s)", {"batch": batch}).fetchone()
        folded = int(row[0]) if row else 0
        total += folded
        if folded < batch:
            return total


class UsageFolder:
    """Folds the pending usage roll-ups when a trace write says a fold is due (`wake`):
    on a daemon thread of its own (`background`, the service: each fold runs once the
    retrieval that made it due has answered), or at `close` (a one-shot process, after
    its answer). A failed fold is logged and left to the next: the traces stay listed and
    the views keep counting them."""

    def __init__(self, connect: Connect, background: bool = True, on_close: Callable[[], None] | None = None) -> None:
        self.connect = connect
        self.background = background
        self.on_close = on_close
        self.folds = 0
        """Folds run (batches that counted at least one trace are summed in `folded`)."""
        self.folded = 0
        """Traces this folder counted into the roll-ups."""
        self._lock = threading.Lock()
        self._due = threading.Event()
        self._idle = threading.Event()
        self._idle.set()
        self._closed = False
        self._thread: threading.Thread | None = None
        if background:
            self._thread = threading.Thread(target=self._run, name="contexts-usage-fold", daemon=True)
            self._thread.start()

    def wake(self) -> None:
        """A trace write made a fold due (called inside the writer's transaction: the
        folder's own transaction sees what has committed by the time it runs; a trace
        it misses is folded by the next)."""
        with self._lock:
            if not self._closed:
                self._idle.clear()
                self._due.set()

    def fold_now(self) -> int:
        """Fold now on the caller's thread (what the background thread runs)."""
        folded = fold(self.connect)
        self.folds += 1
        self.folded += folded
        return folded

    def wait_idle(self, timeout: float | None = None) -> bool:
        """True once no fold is due or running (tests, and a bench's end of phase)."""
        return self._idle.wait(timeout)

    def _run(self) -> None:
        while True:
            self._due.wait()
            with self._lock:
                if self._closed:
                    return
                self._due.clear()
            try:
                self.fold_now()
            except Exception as exc:  # a background fold must not take the service down
                if (reason := unavailable_reason(exc)) is not None:
                    log.warning("usage roll-ups: fold skipped, the database is unavailable: %s", reason)
                else:
                    log.exception("usage roll-ups: fold failed (the traces stay listed, the views count them)")
            with self._lock:
                if not self._due.is_set():
                    self._idle.set()

    def close(self) -> None:
        """Stop the thread (a fold under way finishes); without one, fold what is due."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        if self._thread is not None:
            self._due.set()
            self._thread.join(timeout=30)
        elif self._due.is_set():
            try:
                self.fold_now()
            except psycopg.Error:
                log.exception("usage roll-ups: fold at close failed (the traces stay listed, the views count them)")
        self._idle.set()
        if self.on_close is not None:
            self.on_close()


class Folds(Protocol):
    usage_folder: UsageFolder | None


@contextmanager
def folding(retriever: Folds, conn: psycopg.Connection) -> Iterator[UsageFolder]:
    """For the block, `retriever` wakes a background folder on a connection of its own
    to `conn`'s database (its login): what a bench running retrievals in process uses, so
    that its retrievals fold as the service's do, not as a process without a folder."""
    conninfo = make_conninfo(conn.info.dsn, password=conn.info.password)
    pool = ConnectionPool(conninfo, min_size=1, max_size=1, name="contexts-usage-fold", open=True)
    folder = UsageFolder(pool.connection, on_close=pool.close)
    before, retriever.usage_folder = retriever.usage_folder, folder
    try:
        yield folder
    finally:
        retriever.usage_folder = before
        folder.close()
