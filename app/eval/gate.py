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

One run of `contexts eval gate`: `plan` (which sets, at which depth, against which
figures), `measure` (each set through a caller's runner), then `write_baseline`, or
`judge` and `write_verdict` (gate.json). The command only parses options and prints.
"""

from __future__ import annotations

import json
import time
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from app.eval import beir
from app.eval.golden import DEFAULT_DEPTH, STAGES
from app.eval.metrics import METRICS
from app.wire.retrieve import DEFAULT_RERANK_TOP

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

    def cells(self) -> tuple[str, str, str, str, str, str]:
        """dataset, stage, metric, baseline, current and delta as the gate's table shows
        them (the status column is the caller's to style)."""
        return (
            self.dataset,
            self.stage,
            self.metric,
            f"{self.baseline:.4f}",
            "-" if self.current is None else f"{self.current:.4f}",
            "-" if self.delta is None else f"{self.delta:+.4f}",
        )

    def to_dict(self) -> dict:
        return {
            "dataset": self.dataset,
            "stage": self.stage,
            "metric": self.metric,
            "baseline": self.baseline,
            "current": self.current,
            "delta": None if self.delta is None else round(self.delta, 4),
            "status": self.status,
            "waiver": self.waiver,
        }


def load_baseline(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise GateError(f"{path}: {exc.strerror or exc} (create it with `make eval-baseline`)") from exc
    except json.JSONDecodeError as exc:
        raise GateError(f"{path}: not valid JSON ({exc})") from exc
    datasets = data.get("datasets") if isinstance(data, dict) else None
    if not isinstance(datasets, dict) or not datasets:
        raise GateError(f'{path}: expected {{"datasets": {{NAME: {{"stages": ...}}}}}}')
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
    if not folder.is_dir():
        return []
    return load_waiver_files(sorted(folder.glob("*.toml")))


def load_waiver_files(paths: list[Path]) -> list[Waiver]:
    """Waivers from these files (`contexts models promote --waiver FILE` names them)."""
    waivers: list[Waiver] = []
    for path in paths:
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise GateError(f"{path}: {exc.strerror or exc}") from exc
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
            waivers.append(
                Waiver(
                    str(entry["dataset"]),
                    entry["stage"],
                    entry["metric"],
                    float(accept),
                    data["change"].strip(),
                    data["reason"].strip(),
                    path.name,
                )
            )
    return waivers


def compare(
    baseline: dict, current: dict[str, dict], waivers: list[Waiver], tolerance: float = TOLERANCE
) -> list[Check]:
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
        out[name] = round(
            stages["hybrid"]["ndcg@10"] - max(stages["lexical"]["ndcg@10"], stages["dense"]["ndcg@10"]), 4
        )
    return out


def baseline_from(reports: dict[str, dict], previous: dict | None = None) -> dict:
    """A new baseline holding every metric of every stage of these reports."""
    any_report = next(iter(reports.values()))
    datasets = dict((previous or {}).get("datasets", {}))
    for name, report in reports.items():
        datasets[name] = {
            "split": report["split"],
            "queries": report["queries"],
            "stages": {s: {m: report["stages"][s][m] for m in METRICS} for s in report["stages"]},
        }
    return {
        "about": "Golden-set figures of the current pipeline on the development sets; `make eval-gate` "
        "fails when nDCG@10 or recall@100 of any stage drops by more than "
        f"{TOLERANCE} (unless eval/waivers/ says why). Regenerate: `make eval-baseline`.",
        "depth": any_report["depth"],
        "rerank_top": any_report["rerank_top"],
        "pipeline_version": any_report["pipeline_version"],
        "datasets": dict(sorted(datasets.items())),
    }


# -- one gate run ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GatePlan:
    """What one gate run measures."""

    datasets: dict[str, Path]
    """Set name -> its directory, in the order they run."""
    baseline: dict | None
    """None only when a first baseline is being written."""
    waivers: list[Waiver]
    only: tuple[str, ...]
    """Sets named on the command line (the rest of the baseline is then left alone)."""
    depth: int
    rerank_top: int

    def split(self, name: str) -> str | None:
        """The qrels split the baseline measured for this set (None: the set's only one)."""
        return (self.baseline or {}).get("datasets", {}).get(name, {}).get("split")


def plan(
    baseline_path: Path,
    waivers_dir: Path,
    datasets_dir: Path,
    only: tuple[str, ...] = (),
    update_baseline: bool = False,
) -> GatePlan:
    """The sets to run: those named, else the baseline's, else (for a first baseline)
    every set under `datasets_dir`; depth and rerank_top as the baseline measured them.
    Raises GateError (or beir.DatasetError for a set that cannot be found)."""
    baseline = None
    if baseline_path.exists() or not update_baseline:
        baseline = load_baseline(baseline_path)
    waivers = load_waivers(waivers_dir)
    if only:
        names = list(only)
    elif baseline:
        names = list(baseline["datasets"])
    else:
        names = (
            sorted(p.name for p in datasets_dir.iterdir() if (p / "corpus.jsonl").is_file())
            if datasets_dir.is_dir()
            else []
        )
    if not names:
        raise GateError(f"no dataset to run (none in the baseline, none under CONTEXTS_DATASETS={datasets_dir})")
    return GatePlan(
        datasets={name: beir.locate(datasets_dir, name) for name in names},
        baseline=baseline,
        waivers=waivers,
        only=tuple(only),
        depth=(baseline or {}).get("depth", DEFAULT_DEPTH),
        rerank_top=(baseline or {}).get("rerank_top", DEFAULT_RERANK_TOP),
    )


@dataclass(frozen=True, slots=True)
class Measured:
    reports: dict[str, dict]
    """Set name -> its `golden.run` report."""
    seconds: dict[str, float]
    """Set name -> wall time of its run (ingestion included), rounded to 0.1 s."""

    def rows(self) -> list[tuple[str, str, dict]]:
        """(set, stage, metrics) for the table of every figure measured."""
        return [(name, stage, values) for name, r in self.reports.items() for stage, values in r["stages"].items()]

    @property
    def full_stage(self) -> str | None:
        return next(iter(self.reports.values())).get("full_stage")


def measure(
    plan: GatePlan,
    run_set: Callable[[Path, str | None], dict],
    on_set: Callable[[str, dict, float], None] | None = None,
) -> Measured:
    """Run each planned set through `run_set(directory, split)` (a `golden.run` report);
    `on_set(name, report, seconds)` after each."""
    reports: dict[str, dict] = {}
    seconds: dict[str, float] = {}
    for name, path in plan.datasets.items():
        started = time.perf_counter()
        reports[name] = run_set(path, plan.split(name))
        seconds[name] = round(time.perf_counter() - started, 1)
        if on_set:
            on_set(name, reports[name], seconds[name])
    return Measured(reports, seconds)


def write_baseline(plan: GatePlan, measured: Measured, path: Path) -> dict:
    """The figures measured now as the baseline at `path` (sets not run now are kept
    when only some were named)."""
    new = baseline_from(measured.reports, plan.baseline if plan.only else None)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(new, indent=2) + "\n", encoding="utf-8")
    return new


@dataclass(frozen=True, slots=True)
class Verdict:
    checks: list[Check]
    margins: dict[str, float | None]
    """Per set: hybrid nDCG@10 minus the better single side's (see fusion_margins)."""
    seconds: dict[str, float]

    @property
    def failed(self) -> list[Check]:
        return [c for c in self.checks if c.failed]

    @property
    def improved(self) -> list[Check]:
        return [c for c in self.checks if c.status == "improved"]

    @property
    def passed(self) -> bool:
        return not self.failed

    def failure(self) -> str | None:
        """Why the gate fails, or None when it passes."""
        failed = self.failed
        if not failed:
            return None
        return (
            f"gate failed: {len(failed)} figure(s) dropped more than {TOLERANCE} below the baseline "
            "without a waiver: " + ", ".join(f"{c.dataset}/{c.stage}/{c.metric}" for c in failed)
        )

    def to_dict(self) -> dict:
        """gate.json, and the command's --json line."""
        return {
            "passed": self.passed,
            "checks": [c.to_dict() for c in self.checks],
            "hybrid_margin": self.margins,
            "seconds": self.seconds,
        }


def judge(plan: GatePlan, measured: Measured) -> Verdict:
    """Every gated figure of the baseline (of the named sets only, when some were named)
    against what was measured."""
    if plan.baseline is None:
        raise GateError("no baseline to gate against (create it with `make eval-baseline`)")
    baseline = plan.baseline
    if plan.only:
        baseline = baseline | {"datasets": {k: v for k, v in baseline["datasets"].items() if k in plan.only}}
    return Verdict(
        compare(baseline, measured.reports, plan.waivers), fusion_margins(measured.reports), measured.seconds
    )


def write_verdict(verdict: Verdict, out_dir: Path) -> Path:
    path = out_dir / "gate.json"
    out_dir.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(verdict.to_dict(), indent=2) + "\n", encoding="utf-8")
    return path
