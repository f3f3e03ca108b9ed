"""Eval history in the database: each `contexts eval run | gate | replay` stores what it
measured through service.record_eval_run (sql/functions/60_eval.sql), so analysts can chart
figures over time (api.eval_figures) and read replay diffs (api.eval_replay_diffs).
This module only shapes the reports the commands already build into that call."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from datetime import datetime

import msgspec
import psycopg

from app import __version__
from app.eval.gate import GatePlan, Measured, Verdict
from app.eval.replay import Recorded, ReplayReport

_TRACE_ORIGIN = re.compile(r"^trace ([0-9a-f-]{36})$")


def figures_of(report: dict) -> list[dict]:
    """One figure per stage, query scope (None: every query) and metric of a golden run."""
    out = []
    blocks = [(None, report["queries"], report["stages"])]
    blocks += [(scope, b["queries"], b["stages"]) for scope, b in report.get("scopes", {}).items()]
    for scope, queries, stages in blocks:
        for stage, values in stages.items():
            for metric, value in values.items():
                out.append(
                    {
                        "dataset": report["dataset"],
                        "split": report["split"],
                        "stage": stage,
                        "scope": scope,
                        "metric": metric,
                        "value": value,
                        "queries": queries,
                    }
                )
    return out


def gate_figures(plan: GatePlan, measured: Measured, verdict: Verdict | None) -> list[dict]:
    """Every figure measured, with the baseline and status of each gated one; a gated
    figure the run did not measure is stored with no value (status "missing")."""
    figures = [f for report in measured.reports.values() for f in figures_of(report)]
    if verdict is None:
        return figures
    by_key = {(f["dataset"], f["stage"], f["metric"]): f for f in figures if f["scope"] is None}
    for check in verdict.checks:
        figure = by_key.get((check.dataset, check.stage, check.metric))
        if figure is None:
            figure = {
                "dataset": check.dataset,
                "split": plan.split(check.dataset) or "",
                "stage": check.stage,
                "scope": None,
                "metric": check.metric,
                "value": None,
            }
            figures.append(figure)
        figure |= {"baseline": check.baseline, "status": check.status, "waiver": check.waiver}
    return figures


def replay_rows(recorded: Iterable[Recorded], report: ReplayReport) -> list[dict]:
    """One row per replayed query (report.results follows `recorded`'s order; one the
    replay skipped has no row). Results keep their fragment ids, so readers see only the
    fragments they may read."""
    rows = []
    for item, result in zip(recorded, report.results, strict=True):
        if result.get("skipped"):
            continue
        match = _TRACE_ORIGIN.match(item.origin)
        rows.append(
            {
                "org_id": item.request.scope.org_id,
                "principal_id": item.principal,
                "origin": item.origin,
                "trace_id": match.group(1) if match else None,
                "query": item.request.query,
                "request": msgspec.to_builtins(item.request),
                "overlap": result.get("overlap"),
                "flagged": bool(result.get("flagged")),
                "same_order": result.get("same_order"),
                "current": [_listed(c) for c in result.get("current", [])],
                "candidate": [_listed(c) for c in result.get("candidate", [])],
                "error": result.get("error"),
            }
        )
    return rows


def _listed(summary: dict) -> dict:
    """A replay's result as stored: its score under the name traces give a final score,
    which the redaction (data._redact_candidates) keeps for fragments a reader may not read."""
    return {
        "fragment_id": summary["fragment_id"],
        "source": summary["source"],
        "final_score": summary["score"],
        "preview": summary["preview"],
    }


def record(
    conn: psycopg.Connection,
    command: str,
    pipeline: dict,
    options: dict,
    started_at: datetime,
    figures: list[dict] | None = None,
    replays: list[dict] | None = None,
    outcome: str | None = None,
) -> int:
    """Store one run (the operator's connection: the migrator); returns its run_id."""
    row = conn.execute(
        "select service.record_eval_run(%s, %s::jsonb, %s::jsonb, %s, %s, %s::jsonb, %s::jsonb, %s)",
        (
            command,
            json.dumps(pipeline, default=str),
            json.dumps(options, default=str),
            started_at,
            __version__,
            json.dumps(figures or []),
            json.dumps(replays or [], default=str),
            outcome,
        ),
    ).fetchone()
    assert row is not None  # the function returns the id or raises
    conn.commit()
    return int(row[0])
