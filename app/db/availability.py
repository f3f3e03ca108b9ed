"""Whether the database answers, known without waiting on it: a monitor thread pings
it a few times a second on a connection of its own. While it is down, requests fail
at once with 503 (no pool timeout to sit through) and /health says so without taking
a worker thread; when it is back, the pools' stale connections are dropped. An embedded
server whose postmaster died is started again (`revive`), every REVIVE_INTERVAL_S while
it stays down. A database that stops answering without closing its connections (a frozen
host, a stopped process, a network partition) holds the ping too: a ping out for longer
than PING_DEADLINE_S counts as the database being unavailable, so requests still fail at
once instead of queueing behind it."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

import psycopg

log = logging.getLogger("contexts.db")

CONNECTION_FAILURE_STATES = ("08", "57P01", "57P02", "57P03", "53300")
"""SQLSTATE prefixes of a lost or refused connection: admin shutdown, crash shutdown,
cannot connect now, too many connections, and the whole connection-exception class."""


REVIVE_INTERVAL_S = 2.0
"""How often a dead embedded server is started again while it stays down."""

PING_DEADLINE_S = 3.0
"""A ping out this long means the database does not answer. `statement_timeout` cannot
say it (the server that would enforce it is the one not answering), nor can a socket
timeout on a Unix socket; the monitor's own clock can. Long enough that a busy server
on a loaded host (a `select 1` waits for a CPU, the monitor thread for the GIL) is not
taken for a stopped one."""


class DatabaseUnavailable(RuntimeError):
    """The database is down or refusing connections (HTTP 503)."""


def is_connection_failure(exc: BaseException) -> bool:
    if not isinstance(exc, psycopg.OperationalError):
        return False
    state = exc.sqlstate or ""
    return not state or state.startswith(CONNECTION_FAILURE_STATES)


def unavailable_reason(exc: BaseException) -> str | None:
    """One line saying why the database could not be used, when `exc` is that (a
    background task then logs a warning, not a traceback, for an expected outage)."""
    if isinstance(exc, DatabaseUnavailable) or is_connection_failure(exc):
        text = str(exc).strip()
        return text.splitlines()[0] if text else type(exc).__name__
    return None


class DatabaseMonitor:
    def __init__(
        self,
        dsn: str,
        interval_s: float = 0.25,
        on_recovery: Callable[[], None] | None = None,
        revive: Callable[[], bool] | None = None,
        ping_deadline_s: float = PING_DEADLINE_S,
    ) -> None:
        self.dsn = dsn
        self.interval_s = interval_s
        self.ping_deadline_s = ping_deadline_s
        self._ping_started: float | None = None
        """When the ping in flight was sent (None between pings)."""
        self._hang_logged = False
        self.on_recovery = on_recovery
        self.revive = revive
        """Starts the database again when this process can (the embedded server): True
        when it did."""
        self._revived_at = float("-inf")
        self._available = True
        self._since = time.monotonic()
        self._stop = threading.Event()
        self._conn: psycopg.Connection | None = None
        self._thread = threading.Thread(target=self._run, name="contexts-db-monitor", daemon=True)

    def start(self) -> DatabaseMonitor:
        self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    @property
    def available(self) -> bool:
        return self._available and self._hanging_for() is None

    def _hanging_for(self) -> float | None:
        """Seconds the ping in flight has waited, once past the deadline."""
        started = self._ping_started
        if started is None or time.monotonic() - started <= self.ping_deadline_s:
            return None
        if not self._hang_logged:
            self._hang_logged = True
            log.warning("database unavailable: a ping has had no answer for %.1f s", self.ping_deadline_s)
        return time.monotonic() - started

    def require(self) -> None:
        hanging = self._hanging_for()
        if hanging is not None:
            raise DatabaseUnavailable(f"database not answering for {hanging:.1f} s")
        if not self._available:
            raise DatabaseUnavailable(f"database unavailable for {time.monotonic() - self._since:.1f} s")

    def report_failure(self, exc: BaseException) -> None:
        """A request saw the connection fail: believe it now, the next ping confirms."""
        self._set(False, str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__)

    def _set(self, available: bool, reason: str = "") -> None:
        changed = available != self._available
        self._available = available
        if changed:
            self._since = time.monotonic()
            log.warning("database %s%s", "available again" if available else "unavailable: ", reason)
            if available and self.on_recovery is not None:
                self.on_recovery()

    def _ping(self) -> None:
        if self._conn is None or self._conn.closed or self._conn.broken:
            self._conn = psycopg.connect(
                self.dsn,
                autocommit=True,
                connect_timeout=1,
                application_name="contexts-monitor",
                options="-c statement_timeout=1000",
            )
        self._conn.execute("select 1")

    def _run(self) -> None:
        while not self._stop.is_set():
            self._ping_started = time.monotonic()
            try:
                self._ping()
                self._ping_started = None
                if self._hang_logged:
                    self._hang_logged = False
                    log.warning("database available again: the ping was answered")
                self._set(True)
            except psycopg.Error as exc:
                self._ping_started = None
                self.report_failure(exc)
                if self._conn is not None:
                    self._conn.close()
                    self._conn = None
                self._try_reviving()
            self._stop.wait(self.interval_s)
        if self._conn is not None:
            self._conn.close()

    def _try_reviving(self) -> None:
        if self.revive is None or time.monotonic() - self._revived_at < REVIVE_INTERVAL_S:
            return
        self._revived_at = time.monotonic()
        try:
            if self.revive():
                log.warning("the embedded database had stopped: started it again")
        except Exception as exc:  # noqa: BLE001 - tried again in REVIVE_INTERVAL_S
            log.warning("the embedded database is down and did not start again yet: %s", exc)
