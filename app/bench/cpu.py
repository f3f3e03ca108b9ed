"""CPU seconds per party of a benchmark (the service, PostgreSQL, the load generator,
the rest of the machine): what bounds throughput is CPU per request, whatever the latency."""

from __future__ import annotations

import time
from pathlib import Path

import psutil
import psycopg

from app.db.sql import scalar


class CpuMeter:
    """CPU seconds of the service process, of the PostgreSQL server (postmaster and
    backends, when it runs on this machine), of this process, and of the whole machine."""

    def __init__(self, service_pid: int | None, postmaster_pid: int | None) -> None:
        self.service = psutil.Process(service_pid) if service_pid else None
        self.postmaster = psutil.Process(postmaster_pid) if postmaster_pid else None

    def _postgres(self) -> dict[int, float]:
        if self.postmaster is None:
            return {}
        out = {}
        for p in (self.postmaster, *self.postmaster.children()):
            try:
                t = p.cpu_times()
                out[p.pid] = t.user + t.system
            except psutil.Error:
                continue
        return out

    def snapshot(self) -> dict:
        machine = psutil.cpu_times()
        service = self.service.cpu_times() if self.service is not None else None
        return {
            "at": time.monotonic(),
            "service": service.user + service.system if service is not None else 0.0,
            "postgres": self._postgres(),
            "load": time.process_time(),
            "machine": sum(machine) - machine.idle - getattr(machine, "iowait", 0.0),
        }

    @staticmethod
    def used(start: dict, end: dict, requests: int) -> dict:
        """CPU seconds per party, and per request (reads and writes together): the cost
        that bounds throughput, whatever the latency (cores / CPU per request)."""
        seconds = end["at"] - start["at"]
        postgres = sum(v - start["postgres"].get(pid, 0.0) for pid, v in end["postgres"].items())
        parts = {
            "service": end["service"] - start["service"],
            "postgres": postgres,
            "load_generator": end["load"] - start["load"],
        }
        machine = end["machine"] - start["machine"]
        parts["everything_else"] = max(0.0, machine - sum(parts.values()))
        return {
            "cores_busy": round(machine / seconds, 2),
            "cores": psutil.cpu_count(),
            "seconds": {k: round(v, 1) for k, v in parts.items()},
            "ms_per_request": {k: round(v * 1000 / max(requests, 1), 1) for k, v in parts.items()},
        }


def postmaster_pid(dsn: str) -> int | None:
    """The server's postmaster, when it runs here and we may read its data directory."""
    try:
        with psycopg.connect(dsn) as conn:
            data_dir = scalar(conn, "show data_directory")
        pid = int((Path(data_dir) / "postmaster.pid").read_text().split()[0])
        return pid if psutil.pid_exists(pid) else None
    except (psycopg.Error, OSError, ValueError, IndexError):
        return None
