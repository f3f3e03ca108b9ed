"""Layer 2: regression replays. Recorded queries (retrieval traces, or a JSONL file of
request bodies) run against the current pipeline configuration and a candidate one;
every query whose top results changed beyond a token-overlap threshold is flagged.

Overlap is the Jaccard index of the word-token sets of the two top-n texts (default
n = 3, threshold 0.5): a query is flagged when overlap < threshold. Both sides go
through `Retriever.rank` (candidates, rerank, freshness) and leave no trace rows, so a
replay never feeds its own queries back into the next replay.

Every door that answers with fragments records a trace, and each kind of trace is
either replayed or skipped with its reason, counted by kind (KINDS): a trace is never
a reason for a replay to fail.
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
from app.retrieve.service import Retriever
from app.wire.retrieve import RetrieveRequest

_WORD = re.compile(r"\w+")


KINDS = {
    "retrieval": "retrievals: POST /contexts/retrieve, MCP retrieve, contexts query, saved-query versions",
    "contexts_restrict": "retrievals restricted to named Contexts (context_mode restrict)",
    "contexts_boost": "retrievals boosting named Contexts (context_mode boost)",
    "touching": "retrievals naming the files a step touches (workflow rules)",
    "session_pack": "the context packs of new sessions (POST /sessions, MCP open_session)",
    "context_read_ranked": "Context reads ranked by a query (GET /contexts/{ref}?query=...)",
    "context_read_bundle": "Context reads in bundle order (GET /contexts/{ref})",
    "unrecognized": "traces whose request is no retrieval this version knows",
}
"""Every kind of recorded trace, as replays count them. Skipped, whatever the pipeline:
Context reads in bundle order (nothing is ranked: no knob or model changes them) and
unrecognized requests. Skipped when it happens: a request whose scope or Contexts its
principal may no longer read, and (`contexts eval replay`) one that asked for the
previous embedding generation; `contexts models replay` also skips lexical-only ones."""

SKIP_BUNDLE = "a Context read in bundle order ranks nothing: no pipeline knob or embedding model changes it"


class ReplayError(ValueError):
    """Recorded queries that cannot be read; the message names the file and line."""


@dataclass(frozen=True, slots=True)
class Recorded:
    request: RetrieveRequest
    origin: str
    """Where it came from: a trace id or FILE:LINE."""
    principal: str
    """Who asked: replayed with that principal's grants (row-level security applies)."""
    kind: str = "retrieval"
    """One of KINDS."""
    include_retired: bool = False
    """Retired Contexts may be named, as a Context read ranked by a query was allowed to."""


@dataclass(frozen=True, slots=True)
class Skipped:
    """A recorded trace a replay does not run, and why."""

    origin: str
    kind: str
    reason: str

    def to_dict(self) -> dict:
        return {"origin": self.origin, "kind": self.kind, "reason": self.reason}


@dataclass(slots=True)
class Selection:
    """The traces read for a replay: those it runs, newest first, and those it skips."""

    recorded: list[Recorded] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)


def count_kinds(replayed: Iterable[str], skipped: Iterable[str]) -> dict[str, dict[str, int]]:
    """{kind: {"replayed": n, "skipped": m}} for the kinds met, in KINDS order."""
    counts = {kind: {"replayed": 0, "skipped": 0} for kind in KINDS}
    for kind in replayed:
        counts.setdefault(kind, {"replayed": 0, "skipped": 0})["replayed"] += 1
    for kind in skipped:
        counts.setdefault(kind, {"replayed": 0, "skipped": 0})["skipped"] += 1
    return {kind: n for kind, n in counts.items() if n["replayed"] or n["skipped"]}


def describe_kinds(counts: dict[str, dict[str, int]]) -> str:
    """`retrieval 3, context_read_bundle 1 skipped`: one line for people."""
    parts = []
    for kind, n in counts.items():
        done = [f"{n['replayed']} replayed"] if n["replayed"] else []
        done += [f"{n['skipped']} skipped"] if n["skipped"] else []
        parts.append(f"{kind} {', '.join(done)}")
    return "; ".join(parts) or "none"


@dataclass(slots=True)
class ReplayReport:
    current: dict
    candidate: dict
    threshold: float
    top: int
    results: list[dict] = field(default_factory=list)
    """One per recorded query given, in its order; one skipped when replayed carries
    `skipped` (its reason) and nothing else of a replay."""
    skipped: list[Skipped] = field(default_factory=list)
    """Traces skipped before the replay (Selection.skipped), then those skipped by it."""

    @property
    def replayed(self) -> list[dict]:
        return [r for r in self.results if not r.get("skipped")]

    @property
    def flagged(self) -> list[dict]:
        return [r for r in self.replayed if r["flagged"]]

    @property
    def kinds(self) -> dict[str, dict[str, int]]:
        return count_kinds((r["kind"] for r in self.replayed), (s.kind for s in self.skipped))

    def to_dict(self) -> dict:
        return {
            "current": self.current,
            "candidate": self.candidate,
            "threshold": self.threshold,
            "top": self.top,
            "queries": len(self.replayed),
            "flagged": len(self.flagged),
            "errors": sum(1 for r in self.replayed if r.get("error")),
            "skipped": len(self.skipped),
            "kinds": self.kinds,
            "skipped_traces": [s.to_dict() for s in self.skipped],
            "results": self.replayed,
        }


def tokens(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def jaccard(a: set[str], b: set[str]) -> float:
    """|a & b| / |a | b|; two empty sets are identical (1.0)."""
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def classify(request: object, marks: dict) -> tuple[str, RetrieveRequest | str]:
    """A recorded trace's kind (KINDS) and its request as a retrieval, or the reason it
    is none. `marks`: what the trace's pipeline says of the door that recorded it
    (`context_read`, `request_kind`, `include_retired`)."""
    if marks.get("context_read") == "bundle order" or (isinstance(request, dict) and "context" in request):
        return "context_read_bundle", SKIP_BUNDLE
    try:
        parsed = msgspec.convert(request, RetrieveRequest)
    except (msgspec.ValidationError, ValueError, TypeError) as exc:
        return "unrecognized", f"the recorded request is not a retrieval ({exc})"
    if marks.get("request_kind") == "session_pack":
        return "session_pack", parsed
    if parsed.contexts:
        if parsed.context_mode == "boost":
            return "contexts_boost", parsed
        return ("context_read_ranked" if marks.get("include_retired") else "contexts_restrict"), parsed
    if parsed.touching:
        return "touching", parsed
    return "retrieval", parsed


def from_traces(conn: psycopg.Connection, org_id: str | None, limit: int) -> Selection:
    """The most recent recorded traces (one per distinct request, principal and kind),
    newest first: up to `limit` to replay, and every one met on the way that cannot be
    replayed, each with its reason. Reads the traces table directly: run it as the
    migrator."""
    selection = Selection()
    seen: set[str] = set()
    with conn.cursor(name="replay_traces") as cur:
        cur.itersize = 500
        cur.execute(
            "select trace_id::text, request, principal_id, jsonb_build_object("
            "'context_read', pipeline -> 'context_read', 'request_kind', pipeline -> 'request_kind', "
            "'include_retired', pipeline -> 'include_retired') "
            "from data.retrieval_traces where %(org)s::text is null or org_id = %(org)s "
            "order by created_at desc, trace_id",
            {"org": org_id},
        )
        for trace_id, request, principal, marks in cur:
            kind, parsed = classify(request, marks)
            key = json.dumps([request, principal, kind], sort_keys=True)
            if key in seen:
                continue
            seen.add(key)
            origin = f"trace {trace_id}"
            if isinstance(parsed, str):
                selection.skipped.append(Skipped(origin, kind, parsed))
                continue
            selection.recorded.append(Recorded(parsed, origin, principal, kind, bool(marks.get("include_retired"))))
            if len(selection.recorded) >= limit:
                break
    return selection


def on_active_generation(selection: Selection) -> tuple[list[Recorded], list[Skipped]]:
    """What a comparison of two pipelines replays: the requests searched with the
    active embedding generations. One that asked for the previous generation is skipped
    (`contexts models replay NAMESPACE --generation previous` compares generations)."""
    recorded, skipped = [], list(selection.skipped)
    for item in selection.recorded:
        if item.request.generation == "active":
            recorded.append(item)
        else:
            reason = (
                f"it searched the {item.request.generation} embedding generation: "
                "`contexts models replay NAMESPACE --generation previous` compares generations"
            )
            skipped.append(Skipped(item.origin, item.kind, reason))
    return recorded, skipped


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


UNREADABLE_NOW = {"42501", "P0002"}
"""SQLSTATEs of a request its principal can no longer make (a grant revoked, a session
expired, a Context unsubscribed or gone, the principal or repo deleted): skipped."""


def replay(
    conn: psycopg.Connection,
    recorded: Iterable[Recorded],
    current: tuple[PipelineConfig, Retriever],
    candidate: tuple[PipelineConfig, Retriever],
    threshold: float = 0.5,
    top: int = 3,
    progress: Callable[[int, int], None] | None = None,
    skipped: Iterable[Skipped] = (),
) -> ReplayReport:
    """Each recorded request on both sides, for its principal. One its principal may no
    longer make is skipped (UNREADABLE_NOW); any other database error is reported and
    flagged. `skipped`: traces skipped before the replay, reported with the others."""
    recorded = list(recorded)
    report = ReplayReport(current[0].to_dict(), candidate[0].to_dict(), threshold, top, skipped=list(skipped))
    for done, item in enumerate(recorded, start=1):
        result = {
            "origin": item.origin,
            "kind": item.kind,
            "query": item.request.query,
            "principal": item.principal,
            "scope": msgspec.to_builtins(item.request.scope),
        }
        try:
            sides = {}
            for name, (config, retriever) in (("current", current), ("candidate", candidate)):
                act_as(conn, item.request.scope.org_id, item.principal)
                ranking = retriever.rank(conn, config.apply(item.request), include_retired=item.include_retired)
                sides[name] = ranking.ranked[:top]
                conn.rollback()
        except psycopg.Error as exc:
            conn.rollback()
            message = exc.diag.message_primary or str(exc)
            if exc.sqlstate in UNREADABLE_NOW:
                reason = f"{item.principal} can no longer make this request ({message})"
                report.skipped.append(Skipped(item.origin, item.kind, reason))
                result["skipped"] = reason
            else:
                result |= {"error": message, "flagged": True, "overlap": None}
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
    """The diff report for people: the counts by kind, the skipped traces' reasons, then
    one block per flagged query, current vs candidate."""
    replayed = len(report.replayed)
    lines = [
        f"replayed {replayed} quer{'y' if replayed == 1 else 'ies'}; "
        f"{len(report.flagged)} flagged (top-{report.top} token overlap < {report.threshold}); "
        f"{len(report.skipped)} trace(s) skipped",
        f"by kind: {describe_kinds(report.kinds)}",
    ]
    lines.extend(skip_lines(report.skipped))
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


def skip_lines(skipped: list[Skipped], shown: int = 3) -> list[str]:
    """Per reason, how many traces were skipped for it and the first few."""
    by_reason: dict[tuple[str, str], list[str]] = {}
    for s in skipped:
        by_reason.setdefault((s.kind, s.reason), []).append(s.origin)
    lines = []
    for (kind, reason), origins in by_reason.items():
        more = f", +{len(origins) - shown} more" if len(origins) > shown else ""
        lines.append(f"  skipped {len(origins)} {kind}: {reason} ({', '.join(origins[:shown])}{more})")
    return lines
