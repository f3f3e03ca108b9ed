"""What every operation runs on: the settings, the connection pools (reads, writes, the
read replica), the worker threads, the database monitor, and the org's turn to write.

Reads and writes run on separate thread pools with separate connection pools, so
writers waiting on an org's lock never take the threads or connections that reads
need; a writer waits for its org's turn on an asyncio lock, holding no thread.
/health takes neither: it reads the database monitor (app.db.availability).
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import math
import time
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager, contextmanager
from typing import TypeVar

import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

from app.db.availability import DatabaseMonitor, DatabaseUnavailable, is_connection_failure
from app.db.replica import ReadReplica
from app.settings import Settings

T = TypeVar("T")


class WriteBusy(Exception):
    """A write waited longer than CONTEXTS_WRITE_LOCK_WAIT_S for its org's turn: answered
    503 with Retry-After, having stored nothing (safe to retry, with the same
    Idempotency-Key)."""

    def __init__(self, org_id: str, waited_s: float, retry_after_s: int, what: str | None = None) -> None:
        held = what or f"another write of org {org_id} held its write lock"
        super().__init__(
            f"{held} for more than {waited_s:g} s; nothing was "
            f"stored: retry in {retry_after_s} s (with the same Idempotency-Key, if you sent one)"
        )
        self.retry_after_s = retry_after_s


class Runtime:
    def __init__(
        self,
        settings: Settings,
        pool: ConnectionPool,
        write_pool: ConnectionPool | None = None,
        monitor: DatabaseMonitor | None = None,
        replica: ReadReplica | None = None,
    ) -> None:
        self.settings = settings
        self.pool = pool
        """Connections of reads (retrieve, fragments, traces, authorisation checks)."""
        self.write_pool = write_pool or pool
        self.replica = replica
        """The read replica retrievals read from (CONTEXTS_READ_DATABASE_URL), if any."""
        self.monitor = monitor
        # One thread per read connection: a read thread never waits for a connection.
        self.read_executor = ThreadPoolExecutor(settings.pool_max_size, thread_name_prefix="contexts-read")
        self.write_executor = ThreadPoolExecutor(settings.write_workers, thread_name_prefix="contexts-write")
        # Chunking and embedding of writes: CPU only, no connection, no lock; a write's
        # SQL then runs on a write thread, so it never queues behind another's model.
        self.prepare_executor = ThreadPoolExecutor(settings.write_workers, thread_name_prefix="contexts-prepare")
        # Threads that wait for a query vector (app.retrieve.query_vectors): as many as
        # requests may be in flight, so that all of them can join one model call. They
        # hold no connection, and sleep while a call runs.
        self.embed_executor = ThreadPoolExecutor(settings.query_embed_waiters, thread_name_prefix="contexts-embed")
        self._org_locks: dict[str, asyncio.Lock] = {}
        self._preparing = asyncio.Semaphore(settings.write_workers)
        """Writes being chunked and embedded, one per prepare thread: the others wait for
        a turn (bounded, prepare_turn) instead of queueing on the executor without end."""

    def close(self) -> None:
        if self.monitor is not None:
            self.monitor.close()
        self.read_executor.shutdown(wait=False, cancel_futures=True)
        self.write_executor.shutdown(wait=False, cancel_futures=True)
        self.prepare_executor.shutdown(wait=False, cancel_futures=True)
        self.embed_executor.shutdown(wait=False, cancel_futures=True)
        for pool in {id(self.pool): self.pool, id(self.write_pool): self.write_pool}.values():
            pool.close()
        if self.replica is not None:
            self.replica.pool.close()

    # -- threads -------------------------------------------------------------------

    async def read(self, fn: Callable[..., T], *args: object) -> T:
        self._require_database()
        return await self._run(self.read_executor, fn, *args)

    async def write(self, fn: Callable[..., T], *args: object) -> T:
        self._require_database()
        return await self._run(self.write_executor, fn, *args)

    def _require_database(self) -> None:
        """A database known to be down fails a request before it queues for a thread:
        requests caught by a frozen database hold every thread until it answers, and
        those behind them waited as long, where the monitor already said 503."""
        if self.monitor is not None:
            self.monitor.require()

    async def prepare(self, fn: Callable[..., T], *args: object) -> T:
        """CPU work of a write (chunking, embedding), holding no connection."""
        return await self._run(self.prepare_executor, fn, *args)

    async def embed(self, fn: Callable[..., T], *args: object) -> T:
        """A wait for a query vector (app.retrieve.query_vectors), holding no connection."""
        return await self._run(self.embed_executor, fn, *args)

    @staticmethod
    async def _run(executor: ThreadPoolExecutor, fn: Callable[..., T], *args: object) -> T:
        call = functools.partial(contextvars.copy_context().run, fn, *args)
        return await asyncio.get_running_loop().run_in_executor(executor, call)

    # -- an org's turn to write ----------------------------------------------------

    def org_lock(self, org_id: str) -> asyncio.Lock:
        """Writers of one org take turns here (the database serialises them too, with an
        advisory lock, for writers in other processes)."""
        lock = self._org_locks.get(org_id)
        if lock is None:
            lock = self._org_locks[org_id] = asyncio.Lock()
        return lock

    @asynccontextmanager
    async def org_turn(self, org_id: str) -> AsyncIterator[float]:
        """The org's turn to write, waited for at most CONTEXTS_WRITE_LOCK_WAIT_S (WriteBusy
        then, a 503): first among this service's writers (waiting holds no thread), then
        yields the seconds left of the bound, for the database's own lock
        (`Authentication.writing_for`)."""
        bound = self.settings.write_lock_wait_s
        started = time.monotonic()
        lock = self.org_lock(org_id)
        try:
            async with asyncio.timeout(bound):
                await lock.acquire()
        except TimeoutError:
            raise self.busy(org_id) from None
        try:
            yield max(0.0, bound - (time.monotonic() - started))
        finally:
            lock.release()

    @asynccontextmanager
    async def prepare_turn(self, org_id: str) -> AsyncIterator[None]:
        """A write's turn at the preparers (chunking, embedding), waited for at most
        CONTEXTS_WRITE_LOCK_WAIT_S like its org's write lock: under more writes than the
        model can embed, the excess is answered 503 with Retry-After, having stored nothing,
        instead of every write waiting longer and longer in an unbounded queue (95 writers
        on 2 cores waited 18 s at the median, and their clients had given up)."""
        bound = self.settings.write_lock_wait_s
        try:
            async with asyncio.timeout(bound):
                await self._preparing.acquire()
        except TimeoutError:
            raise self.busy(org_id, "other writes kept the embedding model busy") from None
        try:
            yield
        finally:
            self._preparing.release()

    def busy(self, org_id: str, what: str | None = None) -> WriteBusy:
        bound = self.settings.write_lock_wait_s
        return WriteBusy(org_id, bound, max(1, min(60, math.ceil(bound))), what)

    # -- transactions --------------------------------------------------------------

    @contextmanager
    def transaction(self, pool: ConnectionPool | None = None) -> Iterator[psycopg.Connection]:
        """One request, one transaction: commit on success, roll back on any error.
        A database known to be down fails at once (503), without waiting on the pool."""
        if self.monitor is not None:
            self.monitor.require()
        try:
            with (pool or self.pool).connection() as conn:
                yield conn
        except PoolTimeout as exc:
            if self.monitor is not None and not self.monitor.available:
                raise DatabaseUnavailable("database unavailable") from exc
            raise
        except psycopg.OperationalError as exc:
            if is_connection_failure(exc) and self.monitor is not None:
                self.monitor.report_failure(exc)
            raise
