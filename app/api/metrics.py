"""GET /metrics: the service in the Prometheus text format (prometheus-client).

What it holds: requests and their latency per route template (never a raw path, which
carries ids), retrieval stages, ingestion throughput, the pools and queues of
app.operations.services, and per-org index sizes read from the catalog at scrape time. No label
carries tenant data beyond org ids.

Who may read it: with CONTEXTS_METRICS_TOKEN set, a caller sending it as a bearer
token; without it, loopback clients only (a scraper on the same host or a sidecar):
per-org sizes say how big each tenant is, which a tenant's key must not learn.
"""

from __future__ import annotations

import hmac
import logging
import time
from collections.abc import Iterator
from ipaddress import ip_address
from typing import TYPE_CHECKING

from litestar import Request, Response, get
from litestar.datastructures import State
from litestar.types import ASGIApp, Message, Receive, Scope, Send
from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.registry import Collector

from app.api.errors import problem

if TYPE_CHECKING:
    from app.operations.services import Services

log = logging.getLogger("contexts.metrics")

LATENCY_BUCKETS = (0.005, 0.01, 0.02, 0.035, 0.05, 0.075, 0.1, 0.15, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
STAGE_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.02, 0.035, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0)
SIZES_TIMEOUT_S = 2.0
"""A scrape never waits longer than this for a read connection (the sizes are then left out)."""

METRICS_MEDIA_TYPE = CONTENT_TYPE_LATEST.replace("; charset=utf-8", "")
"""Litestar adds `; charset=utf-8` to a text/ media type: CONTENT_TYPE_LATEST names it already."""


class Metrics:
    """One registry per service (tests run several apps in one process)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self._collector: ServiceCollector | None = None
        self.requests = Counter(
            "contexts_http_requests",
            "HTTP requests answered, by method, route template and status.",
            ("method", "route", "status"),
            registry=self.registry,
        )
        self.latency = Histogram(
            "contexts_http_request_duration_seconds",
            "Time from the request's arrival to the end of its response, by method and route template.",
            ("method", "route"),
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.stages = Histogram(
            "contexts_retrieval_stage_duration_seconds",
            "Time of each retrieval stage: embed (query vectors), candidates (the one SQL call: "
            "lexical, dense and fusion), rerank, compose, trace.",
            ("stage",),
            buckets=STAGE_BUCKETS,
            registry=self.registry,
        )
        org = ("org",)
        self.ingested_documents = Counter(
            "contexts_ingest_documents",
            "Documents written by the service (new versions and unchanged).",
            org,
            registry=self.registry,
        )
        self.ingested_fragments = Counter(
            "contexts_ingest_fragments",
            "Fragments written by the service (before deduplication).",
            org,
            registry=self.registry,
        )
        self.ingest_seconds = Counter(
            "contexts_ingest_seconds",
            "Time spent writing documents (normalise, chunk, embed, write).",
            org,
            registry=self.registry,
        )

    def attach(self, services: Services) -> None:
        """Pool, queue and index-size gauges, read from `services` at each scrape. An app
        started again (its lifespan re-entered, as tests do) replaces the collector
        instead of registering its series twice."""
        if self._collector is not None:
            self.registry.unregister(self._collector)
        self._collector = ServiceCollector(services)
        self.registry.register(self._collector)

    def observe_stage(self, name: str, seconds: float) -> None:
        self.stages.labels(name).observe(seconds)

    def ingested(self, org_id: str, documents: int, fragments: int, seconds: float) -> None:
        self.ingested_documents.labels(org_id).inc(documents)
        self.ingested_fragments.labels(org_id).inc(fragments)
        self.ingest_seconds.labels(org_id).inc(seconds)


class ServiceCollector(Collector):
    """Gauges computed when scraped: nothing to keep up to date on the request path."""

    def __init__(self, services: Services) -> None:
        self.services = services

    def collect(self) -> Iterator[Metric]:
        services = self.services
        pools = GaugeMetricFamily(
            "contexts_pool_connections", "Database connections of each pool, by state.", labels=("pool", "state")
        )
        waiting = GaugeMetricFamily(
            "contexts_pool_requests_waiting", "Callers waiting for a connection, by pool.", labels=("pool",)
        )
        for name, pool in {"read": services.runtime.pool, "write": services.runtime.write_pool}.items():
            stats = pool.get_stats()
            size, available = stats.get("pool_size", 0), stats.get("pool_available", 0)
            pools.add_metric([name, "open"], size)
            pools.add_metric([name, "idle"], available)
            pools.add_metric([name, "max"], pool.max_size)
            waiting.add_metric([name], stats.get("requests_waiting", 0))
        yield pools
        yield waiting
        queued = GaugeMetricFamily(
            "contexts_executor_queue_depth",
            "Calls waiting for a worker thread, by executor (read, write, query embedding).",
            labels=("executor",),
        )
        for name, executor in (
            ("read", services.runtime.read_executor),
            ("write", services.runtime.write_executor),
            ("embed", services.runtime.embed_executor),
        ):
            queued.add_metric([name], executor._work_queue.qsize())  # no public accessor
        yield queued
        up = GaugeMetricFamily("contexts_database_up", "1 when the database answers the monitor's pings.")
        up.add_metric([], 0 if services.runtime.monitor is not None and not services.runtime.monitor.available else 1)
        yield up
        if services.runtime.replica is not None:
            lag = GaugeMetricFamily(
                "contexts_replica_lag_seconds",
                "Replay lag of the read replica (0 when it has replayed all it received; absent when unreadable).",
            )
            seconds = services.runtime.replica.lag_s(timeout=SIZES_TIMEOUT_S)
            if seconds is not None:
                lag.add_metric([], seconds)
            yield lag
        yield from self._sizes()

    def _sizes(self) -> Iterator[Metric]:
        services = self.services
        if services.runtime.monitor is not None and not services.runtime.monitor.available:
            return
        try:
            with services.runtime.pool.connection(timeout=SIZES_TIMEOUT_S) as conn:
                rows = conn.execute("select * from service.metrics_org_sizes()").fetchall()
        except Exception as error:  # a scrape reports what it can; the log says why sizes are missing
            log.warning("metrics: index sizes unavailable: %s", error)
            return
        families = {
            "active_fragments": GaugeMetricFamily(
                "contexts_org_active_fragments", "Active fragments of each org (BM25 statistics).", labels=("org",)
            ),
            "embeddings": GaugeMetricFamily(
                "contexts_org_embeddings_estimated", "Stored vectors of each org (planner estimate).", labels=("org",)
            ),
            "hnsw_bytes": GaugeMetricFamily(
                "contexts_org_hnsw_bytes", "Size of each org's HNSW indexes, in bytes.", labels=("org",)
            ),
            "bm25_blocks": GaugeMetricFamily(
                "contexts_org_bm25_blocks_estimated",
                "Packed BM25 blocks of each org, up to 1,024 postings each (planner estimate).",
                labels=("org",),
            ),
            "bm25_bytes": GaugeMetricFamily(
                "contexts_org_bm25_bytes", "Bytes of each org's BM25 postings and their indexes.", labels=("org",)
            ),
            "fragment_bytes": GaugeMetricFamily(
                "contexts_org_fragment_bytes", "Bytes of each org's fragments and their indexes.", labels=("org",)
            ),
        }
        for org_id, *values in rows:
            for family, value in zip(families.values(), values):
                family.add_metric([org_id], float(value))
        yield from families.values()


def route_label(scope: Scope) -> str:
    """The route template Litestar matched ("/fragments/{fragment_id:int}"), or
    "unmatched": a raw path would put ids, and any path a client invents, in labels."""
    return scope.get("path_template") or "unmatched"


async def count_response(message: Message, scope: Scope) -> None:
    """A `before_send` hook: every response is counted, those of paths no route matches
    too (Litestar runs middleware only for matched routes)."""
    if message["type"] != "http.response.start" or scope["type"] != "http":
        return
    metrics: Metrics | None = getattr(scope["app"].state, "metrics", None)
    if metrics is not None:
        metrics.requests.labels(scope.get("method", ""), route_label(scope), str(message["status"])).inc()


def metrics_middleware(app: ASGIApp) -> ASGIApp:
    """Latency of the requests a route matched, until their response has been sent."""

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        started = time.perf_counter()
        try:
            await app(scope, receive, send)
        finally:
            metrics: Metrics | None = getattr(scope["app"].state, "metrics", None)
            if metrics is not None:
                metrics.latency.labels(scope.get("method", ""), route_label(scope)).observe(
                    time.perf_counter() - started
                )

    return middleware


def _loopback(request: Request) -> bool:
    host = request.client.host if request.client else ""
    try:
        return ip_address(host).is_loopback
    except ValueError:  # not an address (a Unix socket, a test client): not loopback
        return False


@get("/metrics", tags=["operations"], summary="Prometheus metrics", security=[{}], include_in_schema=False)
async def metrics_handler(request: Request, state: State) -> Response:
    """Text exposition format 0.0.4. See the module docstring for who may read it."""
    expected = state.services.settings.metrics_token
    if expected:
        sent = request.headers.get("authorization", "")
        scheme, _, token = sent.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(token.strip().encode(), expected.encode()):
            return problem(401, "send the metrics token (CONTEXTS_METRICS_TOKEN) as a bearer token", request)
    elif not _loopback(request):
        return problem(403, "metrics are served to loopback clients only unless CONTEXTS_METRICS_TOKEN is set", request)
    metrics: Metrics = state.metrics
    body = await state.services.runtime.read(generate_latest, metrics.registry)
    return Response(body, media_type=METRICS_MEDIA_TYPE)
