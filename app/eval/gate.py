"""The regression gate: current golden-set figures against `eval/baseline.json`.

A gated figure (nDCG@10 and recall@100 of every stage on every set) fails the gate when
it drops by more than TOLERANCE below the baseline, unless a waiver names it. A waiver
is a TOML file under `eval/waivers/`:

    change = "weighted fusion replaces plain RRF"      # the change (commit, PR or id)
    reason = "why the drop is accepted"                 # mandatory, in words

    [[waive]]
    dataset = "cacm"
    stage = "lexical"
    metric = "ndcg@10"
    accept = 0.430          # lowest figure this waiver accepts

A waiver covers only drops down to `accept`: a later, larger drop fails again. Improving
a figure beyond the tolerance is reported so the baseline is updated in the same commit
(`make eval-baseline`).
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from pathlib import Path

from app.eval.golden import STAGES
from app.eval.metrics import METRICS

TOLERANCE = 0.005
GATED = ("ndcg@10", "recall@100")
WAIVER_KEYS = {"change", "reason", "waive"}
ENTRY_KEYS = {"dataset", "stage", "metric", "accept"}


class GateError(ValueError):
    """A baseline or waiver file that cannot be used; the message says what to fix."""


@dataclass(frozen=True, slots=True)
class Waiver:
    dataset: str
    stage: str
    metric: str
    accept: float
    change: str
    reason: str
    file: str


@dataclass(frozen=True, slots=True)
class Check:
    dataset: str
    stage: str
    metric: str
    baseline: float | None
    current: float | None
    status: str
    """ok, improved, regressed, waived or missing."""
    waiver: str | None = None

    @property
    def delta(self) -> float | None:
        if self.baseline is None or self.current is None:
            return None
        return self.current - self.baseline

    @property
    def failed(self) -> bool:
        return self.status in ("regressed", "missing")

    def to_dict(self) -> dict:
        return {"dataset": self.dataset, "stage": self.stage, "metric": self.metric, "baseline": self.baseline,
                "current": self.current, "delta": None if self.delta is None else round(self.delta, 4),
                "status": self.status, "waiver": self.waiver}


def load_baseline(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise GateError(f"{path}: {exc.strerror or exc} (create it with `make eval-baseline`)") from exc
    except json.JSONDecodeError as exc:
        raise GateError(f"{path}: not valid JSON ({exc})") from exc
    datasets = data.get("datasets") if isinstance(data, dict) else None
    if not isinstance(datasets, dict) or not datasets:
        raise GateError(f"{path}: expected {{\"datasets\": {{NAME: {{\"stages\": ...}}}}}}")
    for name, entry in datasets.items():
        stages = entry.get("stages") if isinstance(entry, dict) else None
        if not isinstance(stages, dict):
            raise GateError(f"{path}: dataset {name!r} has no stages")
        for stage, values in stages.items():
            if stage not in STAGES or not isinstance(values, dict):
                raise GateError(f"{path}: {name}: unknown stage {stage!r}")
            for metric in GATED:
                if not isinstance(values.get(metric), (int, float)):
                    raise GateError(f"{path}: {name}/{stage} lacks a number for {metric}")
    return data


def load_waivers(folder: Path) -> list[Waiver]:
    waivers: list[Waiver] = []
    if not folder.is_dir():
        return waivers
    for path in sorted(folder.glob("*.toml")):
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise GateError(f"{path}: not valid TOML ({exc})") from exc
        unknown = set(data) - WAIVER_KEYS
        if unknown:
            raise GateError(f"{path}: unknown key(s) {', '.join(sorted(unknown))}")
        for key in ("change", "reason"):
            if not isinstance(data.get(key), str) or not data[key].strip():
                raise GateError(f"{path}: a waiver must say {key!r} (a non-empty string)")
        entries = data.get("waive")
        if not isinstance(entries, list) or not entries:
            raise GateError(f"{path}: a waiver lists what it waives in [[waive]] tables")
        for number, entry in enumerate(entries, start=1):
            where = f"{path}: waive #{number}"
            if not isinstance(entry, dict) or set(entry) != ENTRY_KEYS:
                raise GateError(f"{where}: needs exactly {', '.join(sorted(ENTRY_KEYS))}")
            if entry["stage"] not in STAGES:
                raise GateError(f"{where}: stage must be one of {', '.join(STAGES)}")
            if entry["metric"] not in GATED:
                raise GateError(f"{where}: only gated metrics ({', '.join(GATED)}) can be waived")
            accept = entry["accept"]
            if not isinstance(accept, (int, float)) or isinstance(accept, bool) or not 0 <= accept <= 1:
                raise GateError(f"{where}: accept must be a number between 0 and 1")
            waivers.append(Waiver(str(entry["dataset"]), entry["stage"], entry["metric"], float(accept),
                                  data["change"].strip(), data["reason"].strip(), path.name))
    return waivers


def compare(baseline: dict, current: dict[str, dict], waivers: list[Waiver],
            tolerance: float = TOLERANCE) -> list[Check]:
    """One check per gated figure of the baseline. `current` maps a dataset name to its
    `golden.run` report (or lacks it: that set is then missing)."""
    checks: list[Check] = []
    for name, entry in baseline["datasets"].items():
        for stage, values in entry["stages"].items():
            for metric in GATED:
                base = float(values[metric])
                now = current.get(name, {}).get("stages", {}).get(stage, {}).get(metric)
                if now is None:
                    checks.append(Check(name, stage, metric, base, None, "missing"))
                    continue
                status, used = "ok", None
                if now < base - tolerance:
                    status = "regressed"
                    for w in waivers:
                        if (w.dataset, w.stage, w.metric) == (name, stage, metric) and now >= w.accept - 1e-9:
                            status, used = "waived", f"{w.file}: {w.change}"
                            break
                elif now > base + tolerance:
                    status = "improved"
                checks.append(Check(name, stage, metric, base, float(now), status, used))
    return checks


def fusion_margins(reports: dict[str, dict]) -> dict[str, float | None]:
    """Per set: hybrid nDCG@10 minus the better single side's (> 0: fusion earns its keep)."""
    out: dict[str, float | None] = {}
    for name, report in reports.items():
        stages = report.get("stages", {})
        if not all(s in stages for s in ("lexical", "dense", "hybrid")):
            out[name] = None
            continue
        out[name] = round(stages["hybrid"]["ndcg@10"] - max(stages["lexical"]["ndcg@10"], stages["dense"]["ndcg@10"]), 4)
    return out


def baseline_from(reports: dict[str, dict], previous: dict | None = None) -> dict:
    """A new baseline holding every metric of every stage of these reports."""
    any_report = next(iter(reports.values()))
    datasets = dict((previous or {}).get("datasets", {}))
    for name, report in reports.items():
        datasets[name] = {"split": report["split"], "queries": report["queries"],
                          "stages": {s: {m: report["stages"][s][m] for m in METRICS} for s in report["stages"]}}
    return {
        "about": "Golden-set figures of the current pipeline on the development sets; `make eval-gate` "
                 "fails when nDCG@10 or recall@100 of any stage drops by more than "
                 f"{TOLERANCE} (unless eval/waivers/ says why). Regenerate: `make eval-baseline`.",
        "depth": any_report["depth"],
        "rerank_top": any_report["rerank_top"],
        "pipeline_version": any_report["pipeline_version"],
        "datasets": dict(sorted(datasets.items())),
    }
