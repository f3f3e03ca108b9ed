"""Layer 2: regression replays. Recorded queries (retrieval traces, or a JSONL file of
request bodies) run against the current pipeline configuration and a candidate one;
every query whose top results changed beyond a token-overlap threshold is flagged.

Overlap is the Jaccard index of the word-token sets of the two top-n texts (default
n = 3, threshold 0.5): a query is flagged when overlap < threshold. Both sides go
through `Retriever.rank` (candidates, rerank, freshness) and leave no trace rows, so a
replay never feeds its own queries back into the next replay.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import msgspec
import psycopg

from app.access import act_as
from app.eval.jsonl import json_objects
from app.retrieve.candidates import Candidate
from app.retrieve.config import PipelineConfig
from app.retrieve.models import RetrieveRequest
from app.retrieve.service import Retriever

_WORD = re.compile(r"\w+")


class ReplayError(ValueError):
    """Recorded queries that cannot be read; the message names the file and line."""


@dataclass(frozen=True, slots=True)
class Recorded:
    request: RetrieveRequest
    origin: str
    """Where it came from: a trace id or FILE:LINE."""
    principal: str
    """Who asked: replayed with that principal's grants (row-level security applies)."""


@dataclass(slots=True)
class ReplayReport:
    current: dict
    candidate: dict
    threshold: float
    top: int
    results: list[dict] = field(default_factory=list)

    @property
    def flagged(self) -> list[dict]:
        return [r for r in self.results if r["flagged"]]

    def to_dict(self) -> dict:
        return {
            "current": self.current,
            "candidate": self.candidate,
            "threshold": self.threshold,
            "top": self.top,
            "queries": len(self.results),
            "flagged": len(self.flagged),
            "errors": sum(1 for r in self.results if r.get("error")),
            "results": self.results,
        }


def tokens(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def jaccard(a: set[str], b: set[str]) -> float:
    """|a & b| / |a | b|; two empty sets are identical (1.0)."""
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def from_traces(conn: psycopg.Connection, org_id: str | None, limit: int) -> list[Recorded]:
    """The most recent recorded retrievals (one per distinct request and principal),
    newest first. Reads the traces table directly: run it as the migrator."""
    rows = conn.execute(
        "select trace_id::text, request, principal_id from data.retrieval_traces "
        "where %(org)s::text is null or org_id = %(org)s order by created_at desc, trace_id",
        {"org": org_id},
    ).fetchall()
    out: list[Recorded] = []
    seen: set[str] = set()
    for trace_id, request, principal in rows:
        key = json.dumps([request, principal], sort_keys=True)
        if key in seen:
            continue
        seen.add(key)
        try:
            out.append(Recorded(msgspec.convert(request, RetrieveRequest), f"trace {trace_id}", principal))
        except msgspec.ValidationError as exc:
            raise ReplayError(f"trace {trace_id}: recorded request is not a valid retrieval ({exc})") from exc
        if len(out) >= limit:
            break
    return out


def from_jsonl(path: Path, principal: str, default_org: str | None = None) -> list[Recorded]:
    """One request body per line (as POST /contexts/retrieve takes it), replayed for
    `principal`; a line without a scope uses `default_org`."""
    out: list[Recorded] = []
    for number, body in json_objects(path, ReplayError):
        if "scope" not in body:
            if default_org is None:
                raise ReplayError(f"{path}:{number}: no scope; give one per line or use --org")
            body = body | {"scope": {"org_id": default_org}}
        try:
            out.append(Recorded(msgspec.convert(body, RetrieveRequest), f"{path}:{number}", principal))
        except msgspec.ValidationError as exc:
            raise ReplayError(f"{path}:{number}: {exc}") from exc
    if not out:
        raise ReplayError(f"{path}: no query to replay")
    return out


def _summary(c: Candidate) -> dict:
    return {
        "fragment_id": c.fragment_id,
        "source": c.source,
        "score": round(c.final_score or 0.0, 6),
        "preview": " ".join(c.text.split())[:160],
    }


def replay(
    conn: psycopg.Connection,
    recorded: Iterable[Recorded],
    current: tuple[PipelineConfig, Retriever],
    candidate: tuple[PipelineConfig, Retriever],
    threshold: float = 0.5,
    top: int = 3,
    progress: Callable[[int, int], None] | None = None,
) -> ReplayReport:
    recorded = list(recorded)
    report = ReplayReport(current[0].to_dict(), candidate[0].to_dict(), threshold, top)
    for done, item in enumerate(recorded, start=1):
        result = {
            "origin": item.origin,
            "query": item.request.query,
            "principal": item.principal,
            "scope": msgspec.to_builtins(item.request.scope),
        }
        try:
            sides = {}
            for name, (config, retriever) in (("current", current), ("candidate", candidate)):
                act_as(conn, item.request.scope.org_id, item.principal)
                sides[name] = retriever.rank(conn, config.apply(item.request)).ranked[:top]
                conn.rollback()
        except psycopg.Error as exc:
            conn.rollback()
            result |= {"error": exc.diag.message_primary or str(exc), "flagged": True, "overlap": None}
            report.results.append(result)
            if progress:
                progress(done, len(recorded))
            continue
        overlap = jaccard(
            tokens("\n".join(c.text for c in sides["current"])), tokens("\n".join(c.text for c in sides["candidate"]))
        )
        same_ids = [c.fragment_id for c in sides["current"]] == [c.fragment_id for c in sides["candidate"]]
        result |= {
            "overlap": round(overlap, 4),
            "flagged": overlap < threshold,
            "same_order": same_ids,
            "current": [_summary(c) for c in sides["current"]],
            "candidate": [_summary(c) for c in sides["candidate"]],
        }
        report.results.append(result)
        if progress:
            progress(done, len(recorded))
    return report


def render_text(report: ReplayReport) -> str:
    """The diff report for people: one block per flagged query, current vs candidate."""
    lines = [
        f"replayed {len(report.results)} quer{'y' if len(report.results) == 1 else 'ies'}; "
        f"{len(report.flagged)} flagged (top-{report.top} token overlap < {report.threshold})"
    ]
    changed = {k: v for k, v in report.candidate.items() if report.current.get(k) != v}
    lines.append(
        "candidate changes: "
        + (", ".join(f"{k}: {report.current.get(k)!r} -> {v!r}" for k, v in changed.items()) or "none")
    )
    for r in report.flagged:
        lines.append("")
        if r.get("error"):
            lines.append(f"! {r['query']!r} ({r['origin']}): error: {r['error']}")
            continue
        lines.append(f"! {r['query']!r} ({r['origin']}): overlap {r['overlap']:.2f}")
        for side in ("current", "candidate"):
            lines.append(f"  {side}:")
            lines.extend(
                f"    {i}. {c['source']} (id {c['fragment_id']}, score {c['score']:.3f}) {c['preview'][:80]}"
                for i, c in enumerate(r[side], start=1)
            )
            if not r[side]:
                lines.append("    (nothing retrieved)")
    return "\n".join(lines)
