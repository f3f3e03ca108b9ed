"""Delivering staleness nudges to each org's webhook, at least once (docs/owners.md).

`deliver_pending` first queues the nudges owed now (service.nudges_enqueue: one row per
stale fragment and period, so running it again adds nothing), then sends each due
nudge in a transaction of its own: claim it (locked, so a second worker skips it), POST
it, record the attempt, commit. The nudge is marked delivered only with the record of a
2xx answer: a failure is retried later with exponential backoff, and a crash between
the send and the commit leaves it undelivered, so it is sent again. Receivers dedupe on
the `X-Contexts-Nudge` header (the nudge id); the body is signed with the org's secret
(`X-Contexts-Signature: sha256=<hex HMAC-SHA256 of the body>`).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import timedelta

import httpx
import psycopg

from app.webhook_targets import refusal

MAX_RETRY_S = 6 * 3600.0
SIGNATURE_HEADER = "X-Contexts-Signature"
NUDGE_HEADER = "X-Contexts-Nudge"


@dataclass(slots=True)
class DeliveryReport:
    enqueued: int = 0
    delivered: int = 0
    failed: int = 0
    """Attempts that got no 2xx (each is retried later)."""
    seconds: float = 0.0
    errors: list[str] = field(default_factory=list)


def signature(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()


def retry_delay(attempts: int, base_s: float) -> float:
    """Seconds before the next try after `attempts` failed ones: base, 2x, 4x, ... capped."""
    return min(base_s * 2 ** max(attempts - 1, 0), MAX_RETRY_S)


def deliver_pending(
    transaction: Callable[[], AbstractContextManager[psycopg.Connection]],
    *,
    org_id: str | None = None,
    retry_base_s: float = 30.0,
    timeout_s: float = 10.0,
    limit: int = 10_000,
    client: httpx.Client | None = None,
    allow_private: bool = False,
) -> DeliveryReport:
    """Queue what is owed, then deliver every nudge due (of one org, or all), each in its
    own transaction from `transaction()` (which commits on success). Stops after `limit`
    attempts, so a webhook that keeps failing cannot hold the worker, and tries each nudge
    at most once: claims come earliest-due first, so when the one claimed was already tried
    in this run (its retry came due meanwhile), every nudge due at the start has been tried
    and the run ends, leaving it to the next. A webhook whose host
    resolves to a non-public address is not sent to unless `allow_private`
    (app.webhook_targets): the attempt is recorded as failed, with the reason."""
    report = DeliveryReport()
    started = time.perf_counter()
    with transaction() as conn:
        rows = conn.execute("select enqueued from service.nudges_enqueue(%s)", (org_id,)).fetchall()
        report.enqueued = sum(n for (n,) in rows)
    http = client or httpx.Client(timeout=timeout_s, follow_redirects=False)
    refusals: dict[str, str | None] = {}
    tried: set[int] = set()
    try:
        for _ in range(limit):
            with transaction() as conn:
                claimed = conn.execute(
                    "select nudge_id, url, secret, payload, attempts from service.nudge_claim(%s)", (org_id,)
                ).fetchone()
                if claimed is None:
                    break
                nudge_id, url, secret, payload, attempts = claimed
                if nudge_id in tried:
                    break
                tried.add(nudge_id)
                # Checked again at each run (the name may resolve elsewhere now), once per
                # URL: an org's nudges of one run share its webhook, and a lookup each
                # would repeat the same DNS query hundreds of times.
                if url not in refusals:
                    refusals[url] = refusal(url, allow_private)
                refused = refusals[url]
                status: int | None = None
                error: str | None = f"not sent: {refused}"
                took_ms = 0.0
                if refused is None:
                    status, error, took_ms = _post(http, url, secret, nudge_id, payload)
                ok = status is not None and 200 <= status < 300
                conn.execute(
                    "select service.nudge_attempted(%s, %s, %s, %s, %s, %s)",
                    (
                        nudge_id,
                        url,
                        status,
                        error,
                        took_ms,
                        timedelta(seconds=0 if ok else retry_delay(attempts + 1, retry_base_s)),
                    ),
                )
            if ok:
                report.delivered += 1
            else:
                report.failed += 1
                report.errors.append(f"nudge {nudge_id}: {error or status}")
    finally:
        if client is None:
            http.close()
    report.seconds = time.perf_counter() - started
    return report


def _post(
    http: httpx.Client, url: str, secret: str | None, nudge_id: int, payload: dict
) -> tuple[int | None, str | None, float]:
    body = json.dumps(payload, sort_keys=True, separators=(",", ":")).encode("utf-8")
    headers = {"Content-Type": "application/json", NUDGE_HEADER: str(nudge_id), "User-Agent": "contexts-nudges/1"}
    if secret:
        headers[SIGNATURE_HEADER] = signature(secret, body)
    started = time.perf_counter()
    try:
        answer = http.post(url, content=body, headers=headers)
    except httpx.HTTPError as exc:
        return None, f"{type(exc).__name__}: {exc}"[:1000], (time.perf_counter() - started) * 1000
    took = (time.perf_counter() - started) * 1000
    error = None if 200 <= answer.status_code < 300 else f"HTTP {answer.status_code}"
    return answer.status_code, error, took
