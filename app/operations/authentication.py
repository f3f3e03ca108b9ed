"""Acting as the principal of an API key: every operation's transaction authenticates
the key in it and binds its principal (row-level security then bounds what it reads and
writes), on the primary, or on the read replica for a retrieval that may read there."""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
from psycopg_pool import PoolTimeout

from app.access import authenticate
from app.db.replica import PRIMARY, ReadSource, ReplicaNotUsable, primary_wal_lsn
from app.operations.log_fields import note
from app.operations.runtime import Runtime
from app.scope import Scope

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


class Authentication:
    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.recent_keys = RecentKeys()

    def authenticate(self, token: str) -> tuple[str, str]:
        """(org, principal) of a valid API key, 401 otherwise: the check the MCP door
        makes before a request reaches an MCP session."""
        with self.runtime.transaction() as conn:
            org_id, principal_id = authenticate(conn, token)
            note(org=org_id, principal=principal_id)
        self.recent_keys.add(token)
        return org_id, principal_id

    async def precheck(self, token: str) -> None:
        """401 for a key that is not valid, before CPU is spent on its request (a query
        embedding); a key valid a moment ago passes on the event loop, without a thread
        hop or a transaction."""
        if token not in self.recent_keys:
            await self.runtime.read(self.authenticate, token)

    @contextmanager
    def acting_for(self, token: str, write: bool = False) -> Iterator[psycopg.Connection]:
        """A transaction bound to the principal of an API key (401 when it is not valid).
        With a read replica, a write's commit position is kept for its org, so that the
        org's next retrieval reads the replica only once it has replayed it."""
        runtime = self.runtime
        with runtime.transaction(runtime.write_pool if write else runtime.pool) as conn:
            org_id, principal_id = authenticate(conn, token)
            note(org=org_id, principal=principal_id)
            self.recent_keys.add(token)
            yield conn
            if write and runtime.replica is not None:
                conn.commit()
                runtime.replica.wrote(org_id, primary_wal_lsn(conn))

    @contextmanager
    def writing_for(self, token: str, org_id: str, wait_s: float) -> Iterator[psycopg.Connection]:
        """acting_for(token, write=True) in the org's turn (`Runtime.org_turn` yields
        `wait_s`): a lock the transaction needs (the org's advisory write lock above all,
        taken by service.begin_document, service.delete_document, service.owners_reassign) is waited
        for at most the seconds left of the bound, then WriteBusy (a 503; rolled back)."""
        with self.acting_for(token, write=True) as conn:
            conn.execute("select set_config('lock_timeout', %s, true)", (f"{max(1, round(wait_s * 1000))}ms",))
            try:
                yield conn
            except psycopg.errors.LockNotAvailable:
                raise self.runtime.busy(org_id) from None

    @contextmanager
    def reading_for(
        self, token: str, org_id: str, session_id: str | None = None
    ) -> Iterator[tuple[psycopg.Connection, ReadSource]]:
        """A read-only transaction for a retrieval, bound to the key's principal: on the
        replica when one is configured and may answer (app.db.replica.ReadReplica.check),
        else on the primary. A request that names a session reads the primary: an agent
        reads back the notes it has just written there. Row-level security and the binding
        apply on the replica exactly as on the primary (sql/functions/10_access.sql)."""
        replica = self.runtime.replica
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
            conn.execute("select service.authorize_write(%s, %s, %s, %s)", scope.as_args())
            conn.rollback()
