"""What the operations run on: pools, worker threads, the retrieval and ingestion lanes.

Reads and writes run on separate thread pools with separate connection pools, so
writers waiting on an org's lock never take the threads or connections that reads
need; a writer waits for its org's turn on an asyncio lock, holding no thread.
/health takes neither: it reads the database monitor (app.db.availability).
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import hashlib
import logging
import math
import threading
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager, contextmanager
from typing import Protocol, TypeVar

import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

from app.access import authenticate
from app.authority import DebouncedRefresh, refresh
from app.db.availability import DatabaseMonitor, DatabaseUnavailable, is_connection_failure
from app.db.replica import PRIMARY, ReadReplica, ReadSource, ReplicaNotUsable, primary_wal_lsn
from app.generations.serving import (
    ModelNotLoadable,
    NoPreviousGeneration,
    follow,
    load_models,
    previous_generations,
    previous_models,
    serving_models,
)
from app.ingest.pipeline import IngestPipeline
from app.operations.log_fields import note
from app.retrieve.query_vectors import QueryVectors
from app.retrieve.service import Retriever
from app.scope import Scope
from app.settings import Settings
from app.text.embed import model_label

T = TypeVar("T")
log = logging.getLogger(__name__)

RECENT_KEY_SECONDS = 5.0
"""How long a key that just authenticated skips the check made before query embedding."""


class RecentKeys:
    """Keys that authenticated in the last few seconds (digests, bounded). Only the
    check that guards the query embedding's CPU consults it: every transaction still
    authenticates its key itself, so a key revoked meanwhile still gets its 401; at
    worst it costs one query embedding within the window. Unknown keys are never kept."""

    def __init__(self, seconds: float = RECENT_KEY_SECONDS, size: int = 4096) -> None:
        self.seconds = seconds
        self.size = size
        self._seen: OrderedDict[bytes, float] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def _digest(token: str) -> bytes:
        return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()

    def add(self, token: str) -> None:
        digest = self._digest(token)
        with self._lock:
            self._seen[digest] = time.monotonic() + self.seconds
            self._seen.move_to_end(digest)
            while len(self._seen) > self.size:
                self._seen.popitem(last=False)

    def __contains__(self, token: str) -> bool:
        digest = self._digest(token)
        with self._lock:
            until = self._seen.get(digest)
            if until is None:
                return False
            if until < time.monotonic():
                del self._seen[digest]
                return False
            return True


class IngestionMetrics(Protocol):
    """Where ingestion counts go (the HTTP door's Prometheus metrics, app.api.metrics)."""

    def ingested(self, org_id: str, documents: int, fragments: int, seconds: float) -> None: ...


class WriteBusy(Exception):
    """A write waited longer than CONTEXTS_WRITE_LOCK_WAIT_S for its org's turn: answered
    503 with Retry-After, having stored nothing (safe to retry, with the same
    Idempotency-Key)."""

    def __init__(self, org_id: str, waited_s: float, retry_after_s: int) -> None:
        super().__init__(
            f"another write of org {org_id} held its write lock for more than {waited_s:g} s; nothing was "
            f"stored: retry in {retry_after_s} s (with the same Idempotency-Key, if you sent one)"
        )
        self.retry_after_s = retry_after_s


class Services:
    def __init__(
        self,
        settings: Settings,
        pool: ConnectionPool,
        retriever: Retriever,
        pipeline: IngestPipeline,
        write_pool: ConnectionPool | None = None,
        monitor: DatabaseMonitor | None = None,
        replica: ReadReplica | None = None,
        admin_dsn: str | None = None,
    ) -> None:
        self.settings = settings
        self.admin_dsn = admin_dsn
        """The migrator's connection string: dropping retired generations is the schema
        owner's work (the service's own login may not)."""
        self._following = threading.Lock()
        self.pool = pool
        """Connections of reads (retrieve, fragments, traces, authorisation checks)."""
        self.write_pool = write_pool or pool
        self.replica = replica
        """The read replica retrievals read from (CONTEXTS_READ_DATABASE_URL), if any."""
        self.retriever = retriever
        self.pipeline = pipeline
        self._previous: tuple[tuple, Retriever] | None = None
        """The retriever of the previous generations (previous_retriever), and what it was
        built for: the active retriever and the generations it searches."""
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
        self.recent_keys = RecentKeys()
        self.metrics: IngestionMetrics | None = None
        """Set by the app (app.api.metrics): ingestion counts go there."""
        self.authority = DebouncedRefresh(self.refresh_authority, settings.authority_refresh_s)
        """Poked after each ingestion or deletion: citation authority is refreshed off the
        request path, once a burst of writes is over."""

    def refresh_authority(self) -> None:
        with self.transaction(self.write_pool) as conn:
            done = refresh(conn)
        log.info("citation authority refreshed in %.0f ms (%d fragments)", done.duration_ms, done.scored)

    def close(self) -> None:
        self.authority.close()
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
        return await self._run(self.read_executor, fn, *args)

    async def write(self, fn: Callable[..., T], *args: object) -> T:
        return await self._run(self.write_executor, fn, *args)

    async def prepare(self, fn: Callable[..., T], *args: object) -> T:
        """CPU work of a write (chunking, embedding), holding no connection."""
        return await self._run(self.prepare_executor, fn, *args)

    async def query_vectors(self, query: str, retriever: Retriever | None = None) -> QueryVectors:
        """The query's vectors, computed with those of the other requests waiting; a
        query embedded a moment ago is answered on the event loop, without a thread hop."""
        retriever = retriever or self.retriever
        recent = retriever.query_embedder.recent(query)
        if recent is not None:
            return recent
        return await self._run(self.embed_executor, retriever.query_embeddings, query)

    # -- model generations (docs/adr/0021) -------------------------------------------

    def follow_models(self) -> bool:
        """Embed with the models the database serves: when a namespace was promoted (or
        rolled back) since, load its model and swap retriever and pipeline in one step.
        Requests in flight finish with the objects they took; the new retriever has its
        own query-vector cache, so no vector of the old model is reused. True when it
        swapped; ModelNotLoadable when the promoted model cannot be loaded here."""
        with self.transaction() as conn:
            serving = serving_models(conn)
        with self._following:
            followed = follow(self.pipeline.embedders, serving)
            if followed is None:
                return False
            retriever = Retriever(followed, self.retriever.reranker, self.retriever.config)
            retriever.stage_observer = self.retriever.stage_observer
            before = {ns: model_label(e.name) for ns, e in self.pipeline.embedders.items()}
            self.retriever, self.pipeline = retriever, IngestPipeline(self.settings, followed)
        for namespace, embedder in followed.items():
            if model_label(embedder.name) != before[namespace]:
                log.warning(
                    "namespace %s: now embedding with %s (generation %d, loaded from %s), was %s",
                    namespace,
                    serving[namespace].name,
                    serving[namespace].generation,
                    embedder.name,
                    before[namespace],
                )
        return True

    def previous_retriever(self) -> Retriever:
        """The retriever of a request asking for the previous generation: per namespace,
        the generation its last promotion replaced while its window lasts (the others keep
        their active one), its model loaded from its source once and kept until that
        changes, with the active retriever's reranker and configuration. SQL checks the
        window again at query time. NoPreviousGeneration when none is left, or its model
        cannot be loaded here."""
        with self.transaction() as conn:
            kept = previous_models(conn)
        try:
            previous = previous_generations(kept)
        except NoPreviousGeneration:
            self._previous = None  # its model's memory goes with the window
            raise
        with self._following:
            current = self.retriever
            key = (current, tuple(sorted((ns, m.name, m.generation) for ns, m in previous.items())))
            if self._previous is not None and self._previous[0] == key:
                return self._previous[1]
            try:
                embedders = load_models(self.pipeline.embedders, previous)
            except ModelNotLoadable as exc:
                raise NoPreviousGeneration(f"the previous generation cannot be searched here: {exc}") from exc
            searched = {ns: m.generation for ns, m in previous.items()}
            retriever = Retriever(embedders, current.reranker, current.config, generations=searched)
            retriever.stage_observer = current.stage_observer
            self._previous = (key, retriever)
        for namespace, model in previous.items():
            log.info("namespace %s: previous generation %s loaded from %s", namespace, model.label, model.source)
        return retriever

    def follow_models_quietly(self) -> bool:
        """follow_models, a model that cannot be loaded logged (requests keep their 409)."""
        try:
            return self.follow_models()
        except ModelNotLoadable as exc:
            log.error("cannot follow the promoted model: %s", exc)
            return False

    def drop_retired_models(self) -> list[dict]:
        """api.drop_retired_models as the migrator: the vectors and index of every retired
        generation whose window has ended (never the active one), each drop logged; the
        row keeps `dropped_at`."""
        if self.admin_dsn is None:
            return []
        with psycopg.connect(self.admin_dsn) as conn:
            dropped = conn.execute(
                "select model_id, namespace, name, generation, vectors from api.drop_retired_models()"
            ).fetchall()
        rows = [dict(zip(("model_id", "namespace", "name", "generation", "vectors"), row)) for row in dropped]
        for row in rows:
            log.warning(
                "dropped retired generation %s@%d of %s (its window ended): %d vectors and its index",
                row["name"],
                row["generation"],
                row["namespace"],
                row["vectors"],
            )
        return rows

    @staticmethod
    async def _run(executor: ThreadPoolExecutor, fn: Callable[..., T], *args: object) -> T:
        call = functools.partial(contextvars.copy_context().run, fn, *args)
        return await asyncio.get_running_loop().run_in_executor(executor, call)

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
        (`bounded_lock_wait`)."""
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

    def busy(self, org_id: str) -> WriteBusy:
        bound = self.settings.write_lock_wait_s
        return WriteBusy(org_id, bound, max(1, min(60, math.ceil(bound))))

    @contextmanager
    def writing_for(self, token: str, org_id: str, wait_s: float) -> Iterator[psycopg.Connection]:
        """acting_for(token, write=True) in the org's turn (`org_turn` yields `wait_s`):
        a lock the transaction needs (the org's advisory write lock above all, taken by
        api.begin_document, api.delete_document, api.owners_reassign) is waited for at
        most the seconds left of the bound, then WriteBusy (a 503; rolled back)."""
        with self.acting_for(token, write=True) as conn:
            conn.execute("select set_config('lock_timeout', %s, true)", (f"{max(1, round(wait_s * 1000))}ms",))
            try:
                yield conn
            except psycopg.errors.LockNotAvailable:
                raise self.busy(org_id) from None

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

    def authenticate(self, token: str) -> tuple[str, str]:
        """(org, principal) of a valid API key, 401 otherwise: the check the MCP door
        makes before a request reaches an MCP session."""
        with self.transaction() as conn:
            org_id, principal_id = authenticate(conn, token)
            note(org=org_id, principal=principal_id)
        self.recent_keys.add(token)
        return org_id, principal_id

    async def precheck(self, token: str) -> None:
        """401 for a key that is not valid, before CPU is spent on its request (a query
        embedding); a key valid a moment ago passes on the event loop, without a thread
        hop or a transaction."""
        if token not in self.recent_keys:
            await self.read(self.authenticate, token)

    @contextmanager
    def acting_for(self, token: str, write: bool = False) -> Iterator[psycopg.Connection]:
        """A transaction bound to the principal of an API key (401 when it is not valid).
        With a read replica, a write's commit position is kept for its org, so that the
        org's next retrieval reads the replica only once it has replayed it."""
        with self.transaction(self.write_pool if write else self.pool) as conn:
            org_id, principal_id = authenticate(conn, token)
            note(org=org_id, principal=principal_id)
            self.recent_keys.add(token)
            yield conn
            if write and self.replica is not None:
                conn.commit()
                self.replica.wrote(org_id, primary_wal_lsn(conn))

    @contextmanager
    def reading_for(
        self, token: str, org_id: str, session_id: str | None = None
    ) -> Iterator[tuple[psycopg.Connection, ReadSource]]:
        """A read-only transaction for a retrieval, bound to the key's principal: on the
        replica when one is configured and may answer (app.db.replica.ReadReplica.check),
        else on the primary. A request that names a session reads the primary: an agent
        reads back the notes it has just written there. Row-level security and the binding
        apply on the replica exactly as on the primary (sql/functions/10_access.sql)."""
        replica = self.replica
        reason = "the request names a session" if session_id is not None else None
        if replica is not None and reason is None:
            answering = False
            try:
                with replica.pool.connection() as conn:
                    source = replica.check(conn, org_id)
                    try:
                        authenticate(conn, token)
                    except psycopg.errors.InvalidAuthorizationSpecification as exc:
                        # A key the primary accepted (run_retrieval checks it there first)
                        # that the replica has not replayed yet.
                        raise ReplicaNotUsable("the replica does not know this key yet") from exc
                    answering = True
                    yield conn, source
                return
            except (ReplicaNotUsable, PoolTimeout, psycopg.OperationalError) as exc:
                if answering:
                    raise
                reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                if not isinstance(exc, ReplicaNotUsable):
                    log.warning("read replica unavailable, reading the primary: %s", reason)
        with self.acting_for(token) as conn:
            yield conn, PRIMARY if replica is None else ReadSource("primary", reason=reason)

    def authorize_write(self, token: str, scope: Scope) -> None:
        """401 / 403 before any work on the request body; changes nothing."""
        with self.acting_for(token) as conn:
            conn.execute("select api.authorize_write(%s, %s, %s, %s)", scope.as_args())
            conn.rollback()
