"""Frozen settings built from CONTEXTS_* environment variables, never at import time."""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass, field, fields, replace
from functools import cache
from pathlib import Path

import platformdirs

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"


def _default_home() -> Path:
    return Path(platformdirs.user_data_dir("contexts", appauthor=False))


def _default_datasets() -> Path:
    # CI clones the repository into a fresh folder with shared/ beside it.
    return Path(__file__).resolve().parents[1].parent / "shared" / "datasets"


def usable_cores() -> int:
    """Cores this process may run on (a container's CPU set, not the host's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _default_pool_size() -> int:
    # Two read connections per core. Measured with the load bench (50 readers, 2 cores,
    # runs alternated): 4 connections served 33.6 and 32.0 retrievals/s, 8 served 26.1
    # and 26.0; with 8, more backends than cores time-share the CPU and each read costs
    # more of it, in the service (25.5 ms against 19.8) and in PostgreSQL (40 against 35).
    return max(2, 2 * usable_cores())


@dataclass(frozen=True, slots=True)
class Settings:
    database_url: str | None = None
    """PostgreSQL >= 16 with pgvector. Unset: the embedded server under `home`."""

    home: Path = field(default_factory=_default_home)
    """Where the embedded server keeps its data and caches live."""

    host: str = "127.0.0.1"
    """Address `contexts serve` binds to."""

    port: int = 8000
    """Port `contexts serve` binds to."""

    db_host: str = "127.0.0.1"
    """Address `contexts db serve` opens the embedded PostgreSQL on, for SQL clients
    (psql, BI tools); `*` or 0.0.0.0 for every interface."""

    db_port: int = 5432
    """Port of that TCP door (and the URLs `contexts analyst create` prints)."""

    header_timeout_s: float = 10.0
    """Seconds a connection has to send complete request headers (counted from connecting,
    or from the first byte of its next request); then it gets 408 and is closed."""

    body_timeout_s: float = 30.0
    """Seconds a request body has to arrive in full, counted from the first read; then 408
    (or, when the response has begun, the connection is closed)."""

    max_connections: int = 100
    """Open HTTP connections served at once; one more is answered 503 and closed."""

    max_header_bytes: int = 16 * 1024
    """Largest request head (request line and headers) accepted; a longer one is answered
    431 (problem details) and the connection closed."""

    forwarded_allow_ips: str = "127.0.0.1,::1"
    """Reverse proxies whose X-Forwarded-For and X-Forwarded-Proto headers `contexts serve`
    believes: comma-separated addresses or networks (`10.0.0.0/8`), `*` for any peer,
    empty for none. A request from one of them is taken to come from the address its
    proxies name (the nearest one not trusted itself), which the failed-authentication
    throttle, the request log and /metrics' loopback rule see; from any other peer the
    headers are ignored (docs/http-tls.md)."""

    auth_failures_per_client: int = 30
    """Failed authentications (answered 401) one client address may make per
    `auth_failure_window`; then its requests are answered 429 with Retry-After until the
    window ends, unless their key authenticated recently (app/api/throttle.py). 0: no limit."""

    auth_failures_per_key: int = 10
    """The same for one key id (the `ctx_<key id>_` part of a token), from any address.
    0: no limit."""

    auth_failure_window: str = "minute"
    """Window of those limits, counted from its first failure: second, minute, hour or day."""

    prose_model: str = DEFAULT_MODEL
    """Sentence-transformers model (name or local path) for the prose namespace of a fresh
    database. Once the namespace has a model, the service embeds with its active
    generation instead (docs/models.md)."""

    code_model: str = DEFAULT_MODEL
    """Sentence-transformers model (name or local path) for the code namespace of a fresh
    database (as prose_model)."""

    model_check_s: float = 10.0
    """Seconds between two checks of the models the database serves (one small query):
    after `contexts models promote` the service loads the promoted model by then, or at
    the first request refused for it; 0 checks only on such a refusal."""

    drop_retired_s: float = 86400.0
    """Seconds between two runs of `contexts models drop-retired` by the service (and one
    at start): retired generations whose window has ended lose vectors and index; 0
    never runs it."""

    reranker: str | None = "learned"
    """`learned` (the default: the shipped linear model, docs/adr/0015), a
    learned-reranker .json file, or a CrossEncoder name or local path; `none` keeps the
    fused order (said in traces)."""

    embed_dtype: str = "auto"
    """float32, bfloat16 (cosine >= 0.998 to float32), or auto: bfloat16 where the CPU
    computes it natively (AVX512-BF16 or AMX, about twice float32's throughput), else
    float32 (emulated bfloat16 measured 6x slower than float32 on an AVX2-only CPU)."""

    torch_threads: int = 2
    """Intra-op threads for torch in the CLI, eval and bench (bulk embedding)."""

    query_embed_backend: str = "onnx-int8"
    """How query vectors are computed: "onnx-int8" (the bundled MiniLM's int8 ONNX
    export: under half the CPU of torch, cosine >= 0.999 to torch's vectors; other
    models always use torch) or "torch" (the same runtime as fragments)."""

    service_torch_threads: int = 1
    """Intra-op threads for torch inside the API service, where requests run beside
    PostgreSQL and each other: a second thread then mostly spins waiting for a core
    (measured on a busy 2-core machine: 20 ms of CPU per query embedding with one
    thread, 70-170 ms with two). Concurrent requests still use both cores."""

    embed_batch_size: int = 32
    """Fragments per embedding batch."""

    max_fragment_tokens: int = 512
    """Size bound of one fragment, in cl100k tokens."""

    overlap_tokens: int = 64
    """Tokens repeated from the previous piece when a unit is split."""

    max_body_bytes: int = 8 * 1024 * 1024
    """Largest HTTP request body accepted."""

    mcp_allowed_origins: str = ""
    """Comma-separated origins (`https://app.example.com`) whose pages may call /mcp besides
    this server's own: a request with any other Origin header is refused (403), as MCP
    requires against DNS rebinding. Clients that are not browsers send no Origin."""

    max_document_bytes: int = 2 * 1024 * 1024
    """Largest single document accepted for ingestion."""

    max_document_fragments: int = 10_000
    """Most fragments one document may be cut into (a normal 2 MiB document is about
    1,000): past it the document is refused (422) before it is embedded or its org's
    write lock is taken, which a document of 16,000 tiny sections held for 22 s."""

    principal: str = "admin"
    """Principal the CLI acts for (`org create` makes `admin` with org read/write)."""

    service_database_url: str | None = None
    """Login the API service connects with (a member of contexts_service, not a superuser).
    Unset: the migrator creates the login `contexts_api` and the service uses it."""

    read_database_url: str | None = None
    """A hot standby (streaming replica) of the database, as a login in contexts_service:
    retrievals read their candidates there, everything that writes (documents, notes,
    pins, traces) and every other read stays on the primary, and keys are checked on the
    primary. A retrieval reads the primary instead when the replica has not replayed
    this service's last write for the org, lags more than `read_replica_max_lag_s`, does
    not know the key yet, is down, or the request names a session
    (docs/adr/0020-read-replicas.md). Unset: everything reads the primary."""

    read_replica_max_lag_s: float = 5.0
    """Replay lag (seconds) beyond which retrievals leave the replica for the primary."""

    service_password: str | None = None
    """Password given to the `contexts_api` login when the migrator creates it. Unset:
    none on an external server; on the embedded one (which asks every login but the
    superuser for its password) a generated one kept in CONTEXTS_HOME/service-password."""

    pool_max_size: int = field(default_factory=_default_pool_size)
    """Connections (and worker threads) for reads: retrievals, fragments, traces. Unset:
    two per usable core (at least 2)."""

    write_workers: int = 2
    """Connections (and worker threads) for ingestion's SQL; writers of one org take
    turns. As many threads again chunk and embed documents, holding no connection."""

    write_lock_wait_s: float = 10.0
    """Seconds a write waits for its org's turn (another write of the org holds the write
    lock: in this service, or in the database for another process) before it is answered
    503 with Retry-After, having stored nothing. Embedding happens before the turn, so
    the lock is held only for the SQL of a write (docs/writes.md)."""

    authority_refresh_s: float = 5.0
    """Seconds after the last ingestion before the service refreshes citation authority
    in the background (debounced: a burst of writes costs one refresh); 0 never does
    (`contexts rank refresh` does it then)."""

    nudge_interval_s: float = 300.0
    """Seconds between two runs of the service's nudge worker, which queues the nudges
    of stale fragments and delivers them to each org's webhook (app/nudges.py); 0 never
    runs it (`contexts nudges deliver` does it then)."""

    nudge_retry_base_s: float = 30.0
    """First retry delay of a failed webhook delivery; doubled per attempt, up to 6 hours."""

    nudge_timeout_s: float = 10.0
    """Seconds a webhook has to answer one delivery."""

    read_statement_timeout_s: float = 60.0
    """A statement of a read (retrievals, listings: the read pool and the replica's) that
    runs longer is cancelled and the request answers 503; 0: no limit. Writes have none
    (a large ingest may take long)."""

    webhook_allow_private: bool = False
    """Let webhooks point at loopback, private and link-local addresses (receivers on the
    service's own network). Off, such a webhook is refused when set and not sent to
    (app/webhook_targets.py: an org writer must not make the service reach them)."""

    query_embed_waiters: int = 64
    """Requests that may wait for their query vector at once (threads holding no
    connection): those waiting together share one model call."""

    metrics_token: str | None = None
    """Bearer token GET /metrics asks for; unset, /metrics answers loopback clients only."""

    log_level: str = "info"
    """Level of the service's JSON log lines (debug, info, warning, error)."""

    datasets: Path = field(default_factory=_default_datasets)
    """Labelled retrieval sets (BEIR layout) that `contexts eval` finds by name."""

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None, **overrides: object) -> Settings:
        """Read CONTEXTS_<FIELD> for each field; explicit overrides win."""
        env = os.environ if environ is None else environ
        values: dict[str, object] = {}
        for f in fields(cls):
            raw = env.get(f"CONTEXTS_{f.name.upper()}")
            if raw is None or raw == "":
                continue
            values[f.name] = _coerce(f.name, f.type, raw)
        values.update({k: v for k, v in overrides.items() if v is not None})
        settings = cls(**values)  # type: ignore[arg-type]
        settings.validate()
        return settings

    def validate(self) -> None:
        if self.embed_dtype not in ("auto", "float32", "bfloat16"):
            raise ValueError("CONTEXTS_EMBED_DTYPE must be auto, float32 or bfloat16")
        if self.query_embed_backend not in ("torch", "onnx-int8"):
            raise ValueError("CONTEXTS_QUERY_EMBED_BACKEND must be torch or onnx-int8")
        if self.overlap_tokens < 0 or self.overlap_tokens >= self.max_fragment_tokens // 2:
            raise ValueError("CONTEXTS_OVERLAP_TOKENS must be >= 0 and under half the fragment bound")
        if self.log_level.lower() not in ("debug", "info", "warning", "error"):
            raise ValueError("CONTEXTS_LOG_LEVEL must be debug, info, warning or error")
        if self.torch_threads < 1 or self.service_torch_threads < 1:
            raise ValueError("CONTEXTS_TORCH_THREADS and CONTEXTS_SERVICE_TORCH_THREADS must be at least 1")
        if self.pool_max_size < 1 or self.write_workers < 1 or self.query_embed_waiters < 1:
            raise ValueError(
                "CONTEXTS_POOL_MAX_SIZE, CONTEXTS_WRITE_WORKERS and CONTEXTS_QUERY_EMBED_WAITERS must be at least 1"
            )
        if self.max_fragment_tokens < 64:
            raise ValueError("CONTEXTS_MAX_FRAGMENT_TOKENS must be at least 64")
        if self.max_document_fragments < 1:
            raise ValueError("CONTEXTS_MAX_DOCUMENT_FRAGMENTS must be at least 1")
        if self.header_timeout_s <= 0 or self.body_timeout_s <= 0:
            raise ValueError("CONTEXTS_HEADER_TIMEOUT_S and CONTEXTS_BODY_TIMEOUT_S must be positive")
        if not 0 < self.write_lock_wait_s <= 600:
            raise ValueError("CONTEXTS_WRITE_LOCK_WAIT_S must be over 0 and at most 600 seconds")
        for origin in filter(None, (o.strip() for o in self.mcp_allowed_origins.split(","))):
            if origin_of(origin) is None:
                raise ValueError(
                    f"CONTEXTS_MCP_ALLOWED_ORIGINS must list origins such as https://app.example.com, got {origin!r}"
                )
        if self.max_connections < 1:
            raise ValueError("CONTEXTS_MAX_CONNECTIONS must be at least 1")
        if not 0 <= self.port <= 65535 or not 1 <= self.db_port <= 65535:
            raise ValueError("CONTEXTS_PORT must be 0 to 65535 (0: any free port), CONTEXTS_DB_PORT 1 to 65535")
        if not 1024 <= self.max_header_bytes <= 1024 * 1024:
            raise ValueError("CONTEXTS_MAX_HEADER_BYTES must be 1024 to 1048576")
        if (wrong := untrusty_forwarders(self.forwarded_allow_ips)) is not None:
            raise ValueError(
                "CONTEXTS_FORWARDED_ALLOW_IPS (--forwarded-allow-ips) must list IP addresses or networks "
                f"(10.0.0.0/8) separated by commas, or be * or empty: {wrong!r} is neither"
            )
        if self.auth_failures_per_client < 0 or self.auth_failures_per_key < 0:
            raise ValueError("CONTEXTS_AUTH_FAILURES_PER_CLIENT and CONTEXTS_AUTH_FAILURES_PER_KEY must be at least 0")
        if self.auth_failure_window not in ("second", "minute", "hour", "day"):
            raise ValueError("CONTEXTS_AUTH_FAILURE_WINDOW must be second, minute, hour or day")
        if not 0 <= self.authority_refresh_s <= 86400:
            raise ValueError("CONTEXTS_AUTHORITY_REFRESH_S must be between 0 and 86400 seconds")
        if not 0 <= self.nudge_interval_s <= 86400 or not 0 <= self.nudge_retry_base_s <= 86400:
            raise ValueError("CONTEXTS_NUDGE_INTERVAL_S and CONTEXTS_NUDGE_RETRY_BASE_S must be 0 to 86400 seconds")
        if not 0 <= self.model_check_s <= 86400 or not 0 <= self.drop_retired_s <= 7 * 86400:
            raise ValueError("CONTEXTS_MODEL_CHECK_S must be 0 to 86400, CONTEXTS_DROP_RETIRED_S 0 to 604800 seconds")
        if not 0 <= self.read_statement_timeout_s <= 86400:
            raise ValueError("CONTEXTS_READ_STATEMENT_TIMEOUT_S must be from 0 (no limit) to 86400 seconds")
        if not 0 < self.nudge_timeout_s <= 300:
            raise ValueError("CONTEXTS_NUDGE_TIMEOUT_S must be over 0 and at most 300 seconds")
        if self.read_replica_max_lag_s < 0:
            raise ValueError("CONTEXTS_READ_REPLICA_MAX_LAG_S must be at least 0")
        if not 1 <= self.db_port <= 65535:
            raise ValueError("CONTEXTS_DB_PORT must be a port number (1 to 65535)")

    def with_(self, **changes: object) -> Settings:
        return replace(self, **changes)  # type: ignore[arg-type]


def untrusty_forwarders(value: str) -> str | None:
    """The first entry of a forwarded_allow_ips list that is not an address, a network
    (host bits zero) or a lone `*`; None when all are. uvicorn takes such an entry as a
    literal name that no peer address matches: a typo would quietly trust nobody."""
    items = [item.strip() for item in value.split(",") if item.strip()]
    if items == ["*"]:
        return None
    for item in items:
        try:
            if "/" in item:
                ipaddress.ip_network(item)
            else:
                ipaddress.ip_address(item)
        except ValueError:
            return item
    return None


def _coerce(name: str, annotation: object, raw: str) -> object:
    kind = str(annotation)
    if kind == "bool":
        if raw.strip().lower() in ("1", "true", "yes", "on"):
            return True
        if raw.strip().lower() in ("0", "false", "no", "off"):
            return False
        raise ValueError(f"CONTEXTS_{name.upper()}={raw!r} is not a valid value (1 or 0, true or false)")
    try:
        if "int" in kind:
            return int(raw)
        if "float" in kind:
            return float(raw)
        if "Path" in kind:
            return Path(raw).expanduser()
    except ValueError as exc:
        raise ValueError(f"CONTEXTS_{name.upper()}={raw!r} is not a valid value") from exc
    return raw


def origin_of(url: str) -> str | None:
    """scheme://host[:port] of an Origin header or a URL, lowercase, with the scheme's
    default port left out; None when it is not one (`null`, no host)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    default = {"http": 80, "https": 443}[parts.scheme]
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"{parts.scheme}://{host}" + (f":{port}" if port is not None and port != default else "")


@cache
def allowed_origins(listed: str) -> frozenset[str]:
    """CONTEXTS_MCP_ALLOWED_ORIGINS as origins (origin_of), parsed once per value: the
    /mcp door asks on every request that carries an Origin."""
    return frozenset(o for o in (origin_of(each) for each in listed.split(",") if each.strip()) if o is not None)
