"""`contexts eval run | replay | agent | gate`."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from app.cli.common import CliError, console, context_settings, database_error, open_database, result_console
from app.eval import EVAL_DIR, VECTORS_DIR
from app.eval.metrics import METRICS
from app.eval.stages import DEFAULT_DEPTH, STAGES
from app.settings import Settings
from app.wire.retrieve import DEFAULT_BUDGET_TOKENS, DEFAULT_RERANK_TOP

if TYPE_CHECKING:  # loaded lazily: `contexts --help` should not import torch
    from app.eval.beir import Dataset
    from app.ingest.pipeline import IngestPipeline
    from app.retrieve.config import PipelineConfig
    from app.retrieve.service import Retriever

DEFAULT_OUT = Path("eval-results")


def vectors_option(flag: str = "--vectors", help: str | None = None) -> Callable[[Callable], Callable]:
    """The folder of the golden sets' corpus vectors (one option, as each command names it)."""
    return click.option(
        flag,
        "vectors_dir",
        type=click.Path(path_type=Path, file_okay=False),
        default=VECTORS_DIR,
        show_default=True,
        help=help
        or "Corpus vectors to read before embedding (built by `make eval-cache`); every corpus vector "
        "is rounded through float16, read or embedded.",
    )


@click.group("eval")
def eval_group() -> None:
    """Measure retrieval: golden sets, regression replays, graded agent tasks, the gate."""


@contextmanager
def progress_bars(quiet: bool = False) -> Iterator[Callable[[str, int, int], None]]:
    """A callback progress(phase, done, total) drawing one rich bar per phase (stderr)."""
    with Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
        disable=quiet,
    ) as bars:
        tasks: dict[str, TaskID] = {}

        def update(phase: str, done: int, total: int) -> None:
            if phase not in tasks:
                tasks[phase] = bars.add_task(phase, total=total)
            bars.update(tasks[phase], completed=done, total=total)

        yield update


def resolve_dataset(settings: Settings, name_or_path: str) -> Path:
    """A directory, or the name of a set under CONTEXTS_DATASETS."""
    from app.eval import beir

    try:
        return beir.locate(settings.datasets, name_or_path)
    except beir.DatasetError as exc:
        raise CliError(str(exc)) from exc


def golden_components(settings: Settings, config_path: Path | None) -> tuple[IngestPipeline, Retriever, PipelineConfig]:
    """Ingestion pipeline and retriever for a run; a configuration file may swap knobs."""
    from app.ingest.pipeline import IngestPipeline
    from app.retrieve.config import ConfigError, PipelineConfig
    from app.retrieve.service import Retriever
    from app.text.embed import embedders

    try:
        current = PipelineConfig(reranker=settings.reranker)
        config = PipelineConfig.load(config_path, current) if config_path else current
    except ConfigError as exc:
        raise CliError(str(exc)) from exc
    models = embedders(settings)
    return IngestPipeline(settings, models), Retriever.build(models, config, settings.torch_threads), config


def record_run(
    dsn: str,
    command: str,
    pipeline: dict,
    options: dict,
    started_at: datetime,
    figures: list[dict] | None = None,
    replays: list[dict] | None = None,
    outcome: str | None = None,
) -> int:
    """Store the run in the database (api.eval_runs, api.eval_figures, api.eval_replay_diffs)."""
    import psycopg

    from app.eval import history

    try:
        with psycopg.connect(dsn) as conn:
            run_id = history.record(conn, command, pipeline, options, started_at, figures, replays, outcome)
    except psycopg.Error as exc:
        raise database_error(exc) from exc
    console.print(f"recorded as eval run {run_id} (api.eval_runs)")
    return run_id


def metrics_table(title: str, rows: list[tuple[str, str, dict]], note: str | None = None) -> Table:
    table = Table(title=title, caption=note)
    table.add_column("dataset")
    table.add_column("stage")
    for metric in METRICS:
        table.add_column(metric, justify="right")
    for dataset, stage, values in rows:
        table.add_row(dataset, stage, *(f"{values[m]:.4f}" if m in values else "-" for m in METRICS))
    return table


def run_golden_set(
    settings: Settings,
    dsn: str,
    path: Path,
    split: str | None,
    stages: tuple[str, ...],
    depth: int,
    rerank_top: int,
    kind: str,
    config_path: Path | None,
    out_dir: Path | None,
    quiet: bool = False,
    components: tuple[IngestPipeline, Retriever, PipelineConfig] | None = None,
    vectors_dir: Path | None = VECTORS_DIR,
) -> dict:
    import psycopg

    from app.eval import beir, golden

    try:
        dataset = beir.load(path, split)
    except beir.DatasetError as exc:
        raise CliError(str(exc)) from exc
    pipeline, retriever, _config = components or golden_components(settings, config_path)
    options = golden.GoldenOptions(
        stages=stages, depth=depth, rerank_top=rerank_top, kind=kind, out_dir=out_dir, vectors_dir=vectors_dir
    )
    try:
        with psycopg.connect(dsn) as conn, progress_bars(quiet) as progress:
            return golden.run(
                conn,
                pipeline,
                retriever,
                dataset,
                options,
                lambda phase, done, total: progress(f"{dataset.name}: {phase}", done, total),
            )
    except beir.DatasetError as exc:
        raise CliError(str(exc)) from exc
    except psycopg.Error as exc:
        raise database_error(exc) from exc


@eval_group.command("run")
@click.argument("dataset")
@click.option("--split", default=None, help="qrels/SPLIT.tsv to use. Default: the only file there.")
@click.option(
    "--pipeline", "stage", type=click.Choice(STAGES), default=None, help="Measure one stage only. Default: all four."
)
@click.option(
    "--depth",
    default=DEFAULT_DEPTH,
    show_default=True,
    type=click.IntRange(100, 1000),
    help="List depth of the lexical and dense stages (hybrid and full use the request defaults).",
)
@click.option(
    "--rerank-top",
    default=DEFAULT_RERANK_TOP,
    show_default=True,
    type=click.IntRange(1, 1000),
    help="Fused candidates the reranker scores (full stage).",
)
@click.option(
    "--kind",
    type=click.Choice(["auto", "code", "prose", "files", "conversation"]),
    default="auto",
    show_default=True,
    help="Ingest the corpus as code (.py), prose, files under their own paths (ids that are paths), "
    "or a conversation (each turn with its date and the question asked before it); "
    "auto decides from the ids and the content.",
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Pipeline configuration (JSON or TOML knobs) to evaluate instead of the current one.",
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=DEFAULT_OUT,
    show_default=True,
    help="Where per-query results (JSONL) and the summary go.",
)
@vectors_option()
@click.option("--json", "as_json", is_flag=True, help="Last line of stdout: the report as one JSON object.")
@click.pass_context
def run_command(
    ctx: click.Context,
    dataset: str,
    split: str | None,
    stage: str | None,
    depth: int,
    rerank_top: int,
    kind: str,
    config_path: Path | None,
    out_dir: Path,
    vectors_dir: Path,
    as_json: bool,
) -> None:
    """Score a labelled set (BEIR layout: DATASET dir, or a name under CONTEXTS_DATASETS)
    at document level: nDCG@10, MRR@10, recall@10 and recall@100 per stage."""
    from app.eval.history import figures_of

    started_at = datetime.now(UTC)
    settings = context_settings(ctx)
    path = resolve_dataset(settings, dataset)
    stages = (stage,) if stage else STAGES
    dsn = open_database(settings)
    report = run_golden_set(
        settings, dsn, path, split, stages, depth, rerank_top, kind, config_path, out_dir, vectors_dir=vectors_dir
    )
    options = {"depth": depth, "rerank_top": rerank_top, "kind": report["kind"], "stages": list(stages)}
    report["eval_run_id"] = record_run(
        dsn, "run", report["pipeline_version"], options, started_at, figures=figures_of(report)
    )
    print_report(report, as_json)


def print_report(report: dict, as_json: bool) -> None:
    rows = [(report["dataset"], stage, values) for stage, values in report["stages"].items()]
    for scope, block in report.get("scopes", {}).items():
        rows.extend((f"{report['dataset']} [{scope}]", stage, values) for stage, values in block["stages"].items())
    note = f"full stage: {report['full_stage']}" if report.get("full_stage") else None
    title = (
        f"{report['dataset']} ({report['split']}, {report['queries']} queries, "
        f"{report['corpus_documents']} documents as {report['kind']})"
    )
    target = console if as_json else result_console()
    target.print(metrics_table(title, rows, note))
    if report.get("per_query_file"):
        console.print(f"per-query results: {report['per_query_file']}")
    if report.get("corpus_vectors"):
        console.print(f"corpus vectors: {vectors_line(report['corpus_vectors'])}")
    if as_json:
        click.echo(json.dumps(report, sort_keys=False))


def vectors_line(vectors: dict) -> str:
    """How a set's corpus vectors came: read from the cache or embedded now."""
    line = f"{vectors['hits']} read from {vectors['file']}, {vectors['misses']} embedded now"
    return line + "".join(f"; {problem}" for problem in vectors["problems"])


@eval_group.command("replay")
@click.option(
    "--candidate",
    "candidate_path",
    required=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="Candidate pipeline configuration (JSON or TOML knobs).",
)
@click.option(
    "--current",
    "current_path",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Configuration to compare against. Default: the current pipeline (CONTEXTS_RERANKER included).",
)
@click.option(
    "--queries",
    "queries_path",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="JSONL of retrieval request bodies. Default: recorded retrieval traces.",
)
@click.option("--org", "org_id", default=None, help="Traces of this org only; scope for JSONL lines without one.")
@click.option(
    "--limit",
    default=200,
    show_default=True,
    type=click.IntRange(1, 100_000),
    help="Most recent distinct traced requests to replay.",
)
@click.option(
    "--threshold",
    default=0.5,
    show_default=True,
    type=click.FloatRange(0.0, 1.0),
    help="Flag a query when the Jaccard overlap of its top texts falls below this.",
)
@click.option("--top", default=3, show_default=True, type=click.IntRange(1, 50), help="Results compared per query.")
@click.option(
    "--out",
    "out_path",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Also write the JSON report to this file.",
)
@click.option("--json", "as_json", is_flag=True, help="Last line of stdout: the report as one JSON object.")
@click.option("--fail-on-flag", is_flag=True, help="Exit 1 when any query is flagged.")
@click.pass_context
def replay_command(
    ctx: click.Context,
    candidate_path: Path,
    current_path: Path | None,
    queries_path: Path | None,
    org_id: str | None,
    limit: int,
    threshold: float,
    top: int,
    out_path: Path | None,
    as_json: bool,
    fail_on_flag: bool,
) -> None:
    """Replay recorded queries against a candidate configuration and the current one;
    flag every query whose top results changed beyond the overlap threshold."""
    import psycopg

    from app.eval import replay
    from app.eval.history import replay_rows
    from app.retrieve.config import ConfigError, PipelineConfig
    from app.retrieve.service import Retriever
    from app.text.embed import embedders

    started_at = datetime.now(UTC)
    settings = context_settings(ctx)
    try:
        configured = PipelineConfig(reranker=settings.reranker)
        candidate = PipelineConfig.load(candidate_path, configured)
        current = PipelineConfig.load(current_path, configured) if current_path else configured
        recorded = replay.from_jsonl(queries_path, settings.principal, org_id) if queries_path else None
    except (ConfigError, replay.ReplayError) as exc:
        raise CliError(str(exc)) from exc
    dsn = open_database(settings)
    models = embedders(settings)
    with psycopg.connect(dsn) as conn:
        if recorded is None:
            try:
                selection = replay.from_traces(conn, org_id, limit)
            except psycopg.Error as exc:
                raise database_error(exc) from exc
            conn.rollback()
        else:
            selection = replay.Selection(recorded)
        recorded, skipped = replay.on_active_generation(selection)
        if not recorded:
            counts = replay.count_kinds((), (s.kind for s in skipped))
            raise CliError(
                ("no query to replay" if queries_path else "no recorded retrieval to replay")
                + (f" for org {org_id!r}" if org_id and not queries_path else "")
                + (f" ({len(skipped)} skipped: {replay.describe_kinds(counts)})" if skipped else "")
                + ("" if queries_path else "; run some queries first or pass --queries FILE")
            )
        current_retriever = Retriever.build(models, current, settings.torch_threads)
        with progress_bars() as progress:
            report = replay.replay(
                conn,
                recorded,
                (current, current_retriever),
                (candidate, Retriever.build(models, candidate, settings.torch_threads)),
                threshold,
                top,
                lambda done, total: progress("replaying", done, total),
                skipped=skipped,
            )
    options = {
        "candidate": candidate.to_dict(),
        "threshold": threshold,
        "top": top,
        "queries": str(queries_path) if queries_path else "traces",
    }
    run_id = record_run(
        dsn,
        "replay",
        current_retriever.pipeline_info() | {"config": current.to_dict()},
        options,
        started_at,
        replays=replay_rows(recorded, report),
    )
    body = report.to_dict() | {"eval_run_id": run_id}
    if out_path:
        out_path.parent.mkdir(parents=True, exist_ok=True)
        out_path.write_text(json.dumps(body, indent=2) + "\n", encoding="utf-8")
    text = replay.render_text(report)
    if as_json:
        console.print(text, highlight=False, markup=False)
        click.echo(json.dumps(body))
    else:
        click.echo(text)
    if fail_on_flag and report.flagged:
        ctx.exit(1)


@eval_group.command("agent")
@click.argument("tasks_path", metavar="TASKS", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--org", "org_id", default=None, help="Scope of tasks that name none.")
@click.option(
    "--agent-url",
    envvar="CONTEXTS_AGENT_URL",
    default=None,
    help="OpenAI-compatible base URL (…/v1) of the agent model. Env: CONTEXTS_AGENT_URL.",
)
@click.option("--agent-model", envvar="CONTEXTS_AGENT_MODEL", default=None, help="Env: CONTEXTS_AGENT_MODEL.")
@click.option("--agent-key", envvar="CONTEXTS_AGENT_KEY", default=None, help="Env: CONTEXTS_AGENT_KEY.")
@click.option(
    "--judge-url",
    envvar="CONTEXTS_JUDGE_URL",
    default=None,
    help="Judge endpoint. Env: CONTEXTS_JUDGE_URL. Default: the agent's.",
)
@click.option(
    "--judge-model",
    envvar="CONTEXTS_JUDGE_MODEL",
    default=None,
    help="Env: CONTEXTS_JUDGE_MODEL. Default: the agent's model.",
)
@click.option("--judge-key", envvar="CONTEXTS_JUDGE_KEY", default=None, help="Env: CONTEXTS_JUDGE_KEY.")
@click.option(
    "--budget", "budget_tokens", default=DEFAULT_BUDGET_TOKENS, show_default=True, type=click.IntRange(1, 200_000)
)
@click.option("--seed", default=7, show_default=True, type=int, help="Sent to both models; picks spot checks.")
@click.option(
    "--spot-check",
    default=5,
    show_default=True,
    type=click.IntRange(0, 10_000),
    help="Tasks picked (seeded) for a human to review.",
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=DEFAULT_OUT,
    show_default=True,
    help="Where per-task results (JSONL) and the summary go.",
)
@click.option("--json", "as_json", is_flag=True, help="Last line of stdout: the summary as one JSON object.")
@click.pass_context
def agent_command(
    ctx: click.Context,
    tasks_path: Path,
    org_id: str | None,
    agent_url: str | None,
    agent_model: str | None,
    agent_key: str | None,
    judge_url: str | None,
    judge_model: str | None,
    judge_key: str | None,
    budget_tokens: int,
    seed: int,
    spot_check: int,
    out_dir: Path,
    as_json: bool,
) -> None:
    """Graded tasks end to end: retrieve, let an agent model answer citing fragments,
    let a judge model grade correctness and unsupported claims (hallucination rate)."""
    import psycopg

    from app.eval import agent
    from app.retrieve.config import PipelineConfig
    from app.retrieve.service import Retriever
    from app.text.embed import embedders

    if not agent_url or not agent_model:
        raise CliError(
            "no agent endpoint configured: set CONTEXTS_AGENT_URL and CONTEXTS_AGENT_MODEL "
            "(and CONTEXTS_AGENT_KEY if it needs one), or pass --agent-url and --agent-model; "
            "agent evals report no figure without a real model"
        )
    try:
        tasks = agent.load_tasks(tasks_path, org_id)
    except agent.TaskError as exc:
        raise CliError(str(exc)) from exc
    agent_endpoint = agent.Endpoint(agent_url, agent_model, agent_key)
    judge_endpoint = agent.Endpoint(
        judge_url or agent_url, judge_model or agent_model, judge_key if judge_url else (judge_key or agent_key)
    )
    if judge_endpoint.describe() == agent_endpoint.describe():
        console.print("[yellow]note:[/] the judge is the agent's own model (set CONTEXTS_JUDGE_* for another)")
    settings = context_settings(ctx)
    dsn = open_database(settings)
    config = PipelineConfig(reranker=settings.reranker)
    retriever = Retriever.build(embedders(settings), config, settings.torch_threads)
    try:
        with psycopg.connect(dsn) as conn, progress_bars() as progress:
            summary, records = agent.run(
                conn,
                retriever,
                tasks,
                agent_endpoint,
                judge_endpoint,
                budget_tokens,
                seed,
                spot_check,
                settings.principal,
                lambda done, total: progress("tasks", done, total),
            )
    except agent.EndpointError as exc:
        raise CliError(f"model endpoint failed: {exc}") from exc
    except psycopg.Error as exc:
        raise database_error(exc) from exc
    out_dir.mkdir(parents=True, exist_ok=True)
    per_task = out_dir / f"agent-{tasks_path.stem}.jsonl"
    per_task.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    summary["per_task_file"] = str(per_task)
    (out_dir / f"agent-{tasks_path.stem}.summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    table = Table(title=f"agent tasks: {tasks_path.name}")
    table.add_column("measure")
    table.add_column("value", justify="right")
    for key in (
        "tasks",
        "graded",
        "ungraded",
        "accuracy",
        "mean_score",
        "claims",
        "hallucination_rate",
        "answers_with_unsupported_claims",
    ):
        table.add_row(key, "n/a" if summary[key] is None else str(summary[key]))
    (console if as_json else result_console()).print(table)
    console.print(f"per-task results: {per_task}; for human spot check: {', '.join(summary['spot_check']) or 'none'}")
    if as_json:
        click.echo(json.dumps(summary))
    if summary["graded"] == 0:
        raise CliError("the judge graded no answer (its replies were not the JSON asked for); see " + str(per_task))


@eval_group.command("gate")
@click.option(
    "--baseline",
    "baseline_path",
    type=click.Path(path_type=Path, dir_okay=False),
    default=EVAL_DIR / "baseline.json",
    show_default=True,
)
@click.option(
    "--waivers",
    "waivers_dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=EVAL_DIR / "waivers",
    show_default=True,
)
@click.option(
    "--dataset", "only", multiple=True, help="Run only these sets (repeatable). Default: every set of the baseline."
)
@click.option(
    "--update-baseline", is_flag=True, help="Write the figures measured now as the new baseline instead of gating."
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=DEFAULT_OUT,
    show_default=True,
    help="Per-query results of each set, and gate.json.",
)
@vectors_option()
@click.option("--json", "as_json", is_flag=True, help="Last line of stdout: every check as one JSON object.")
@click.pass_context
def gate_command(
    ctx: click.Context,
    baseline_path: Path,
    waivers_dir: Path,
    only: tuple[str, ...],
    update_baseline: bool,
    out_dir: Path,
    vectors_dir: Path,
    as_json: bool,
) -> None:
    """Run the development sets and fail when a gated figure (nDCG@10, recall@100 of
    any stage) drops more than 0.005 below the baseline without a waiver."""
    from app.eval import beir, gate
    from app.eval.history import gate_figures

    started_at = datetime.now(UTC)
    settings = context_settings(ctx)
    try:
        plan = gate.plan(baseline_path, waivers_dir, settings.datasets, only, update_baseline)
    except (gate.GateError, beir.DatasetError) as exc:
        raise CliError(str(exc)) from exc
    dsn = open_database(settings)
    components = golden_components(settings, None)

    def run_set(path: Path, split: str | None) -> dict:
        return run_golden_set(
            settings,
            dsn,
            path,
            split,
            STAGES,
            plan.depth,
            plan.rerank_top,
            "auto",
            None,
            out_dir,
            components=components,
            vectors_dir=vectors_dir,
        )

    def ran(name: str, report: dict, seconds: float) -> None:
        console.print(
            f"{name}: {seconds} s (ingest {report['seconds']['ingest']} s, "
            f"{report['ingested_now']} documents ingested now; "
            f"corpus vectors: {vectors_line(report['corpus_vectors'])})"
        )

    measured = gate.measure(plan, run_set, ran)
    warn_stale_vectors(measured.reports)
    pipeline = next(iter(measured.reports.values()))["pipeline_version"]
    options = {
        "depth": plan.depth,
        "rerank_top": plan.rerank_top,
        "baseline": str(baseline_path),
        "datasets": list(plan.datasets),
    }
    target = console if as_json else result_console()
    full_note = measured.full_stage
    target.print(metrics_table("golden sets", measured.rows(), f"full stage: {full_note}" if full_note else None))

    if update_baseline:
        gate.write_baseline(plan, measured, baseline_path)
        console.print(f"[green]baseline written:[/] {baseline_path}")
        record_run(
            dsn, "gate", pipeline, options, started_at, figures=gate_figures(plan, measured, None), outcome="baseline"
        )
        if as_json:
            click.echo(
                json.dumps(
                    {"baseline": str(baseline_path), "datasets": list(measured.reports), "seconds": measured.seconds}
                )
            )
        return

    verdict = gate.judge(plan, measured)
    run_id = record_run(
        dsn,
        "gate",
        pipeline,
        options,
        started_at,
        figures=gate_figures(plan, measured, verdict),
        outcome="passed" if verdict.passed else "failed",
    )
    table = Table(title=f"gate: nDCG@10 and recall@100 vs {baseline_path.name} (tolerance {gate.TOLERANCE})")
    for column in ("dataset", "stage", "metric", "baseline", "current", "delta", "status"):
        table.add_column(column, justify="right" if column in ("baseline", "current", "delta") else "left")
    colours = {"ok": "green", "improved": "cyan", "waived": "yellow", "regressed": "bold red", "missing": "bold red"}
    for c in verdict.checks:
        table.add_row(*c.cells(), f"[{colours[c.status]}]{c.status}[/]" + (f" ({c.waiver})" if c.waiver else ""))
    target.print(table)
    for name, margin in verdict.margins.items():
        if margin is not None:
            verdict_word = "[green]above[/]" if margin > 0 else "[yellow]not above[/]"
            console.print(f"{name}: hybrid nDCG@10 is {verdict_word} the better single side ({margin:+.4f})")
    gate.write_verdict(verdict, out_dir)
    if verdict.improved:
        console.print(
            f"[cyan]{len(verdict.improved)} figure(s) improved beyond the tolerance:[/] update the "
            "baseline in this commit (`make eval-baseline`)"
        )
    if as_json:
        click.echo(json.dumps(verdict.to_dict() | {"eval_run_id": run_id}))
    failure = verdict.failure()
    if failure:
        raise CliError(failure)
    console.print("[green]gate passed[/]")


def warn_stale_vectors(reports: dict[str, dict]) -> None:
    """A loud warning when the corpus vectors missed much: the cache is stale, the gate
    embedded what it missed (correct, only slower), and a rebuild brings it back."""
    from app.eval.embedding_cache import REBUILD, STALE_SHARE

    stale = {name: r["corpus_vectors"] for name, r in reports.items() if r.get("corpus_vectors", {}).get("stale")}
    if not stale:
        return
    console.print(
        f"[bold red]WARNING: the corpus vector cache is stale[/] for {len(stale)} set(s): more than "
        f"{STALE_SHARE:.0%} of their corpus texts missed it and were embedded now (correct, only slower)."
    )
    for name, vectors in stale.items():
        looked_up = vectors["hits"] + vectors["misses"]
        console.print(f"[bold red]  {name}: {vectors['misses']} of {looked_up} missed[/] ({vectors_line(vectors)})")
    console.print(f"[bold red]  Rebuild it and commit eval/embeddings/: {REBUILD}[/]")


@eval_group.group("cache")
def cache_group() -> None:
    """The golden sets' corpus vectors (eval/embeddings/, one file per set), read by the
    gate's ingestion before any model runs (docs/adr/0024)."""


def _cache_plan(settings: Settings, only: tuple[str, ...]) -> dict[str, Path]:
    from app.eval import beir, gate

    try:
        plan = gate.plan(EVAL_DIR / "baseline.json", EVAL_DIR / "waivers", settings.datasets, only, True)
    except (gate.GateError, beir.DatasetError) as exc:
        raise CliError(str(exc)) from exc
    return plan.datasets


def _load_set(path: Path) -> tuple[Dataset, str]:
    from app.eval import beir

    try:
        dataset = beir.load(path)
    except beir.DatasetError as exc:
        raise CliError(str(exc)) from exc
    return dataset, beir.detect_kind(dataset)


@cache_group.command("build")
@click.option(
    "--dataset", "only", multiple=True, help="Build only these sets (repeatable). Default: every set of the baseline."
)
@vectors_option("--dir", help="Where the vector files are.")
@click.option("--fresh", is_flag=True, help="Embed every text again instead of keeping the vectors that still hold.")
@click.option("--json", "as_json", is_flag=True, help="Last line of stdout: what was built, as one JSON object.")
@click.pass_context
def cache_build_command(
    ctx: click.Context, only: tuple[str, ...], vectors_dir: Path, fresh: bool, as_json: bool
) -> None:
    """Embed every corpus text of the golden sets (as the gate's ingestion chunks them)
    and write one vector file per set. Vectors whose model, dtype, chunker and text
    still hold are kept; the rest are embedded. Run it through `make eval-cache` (the
    gate's dtype, float32) and commit eval/embeddings/."""
    from app.eval import embedding_cache
    from app.ingest.pipeline import IngestPipeline
    from app.text.embed import embedders

    settings = context_settings(ctx)
    sets = _cache_plan(settings, only)
    pipeline = IngestPipeline(settings, embedders(settings))
    summary: dict[str, dict] = {}
    with progress_bars(as_json) as progress:
        for name, path in sets.items():
            dataset, kind = _load_set(path)
            target = embedding_cache.cache_path(vectors_dir, name)
            previous = None
            if target.is_file() and not fresh:
                try:
                    previous = embedding_cache.CacheFile.read(target)
                except (OSError, embedding_cache.CacheError) as exc:
                    console.print(f"{name}: {exc}: every text is embedded again")
            built = embedding_cache.build(pipeline, dataset, kind, previous, progress)
            size = built.file.write(target)
            summary[name] = {
                "file": str(target),
                "vectors": built.file.count,
                "embedded": built.embedded,
                "kept": built.kept,
                "dropped": built.dropped,
                "bytes": size,
            }
            console.print(
                f"{name}: {built.file.count} vectors ({', '.join(built.file.tables)}), {built.embedded} embedded now, "
                f"{built.kept} kept, {built.dropped} dropped: {target} ({size / 2**20:.1f} MiB)"
            )
    if not only:
        for extra in sorted(vectors_dir.glob(f"*{embedding_cache.SUFFIX}")):
            if extra.name[: -len(embedding_cache.SUFFIX)] not in sets:
                extra.unlink()
                console.print(f"removed {extra} (not a set of the baseline)")
    files = sorted(vectors_dir.glob(f"*{embedding_cache.SUFFIX}"))
    total = sum(f.stat().st_size for f in files)
    console.print(
        f"{vectors_dir}: {sum(s['vectors'] for s in summary.values())} vectors built now; "
        f"{len(files)} file(s), {total / 2**20:.1f} MiB in all"
    )
    if as_json:
        click.echo(json.dumps({"sets": summary, "files": len(files), "bytes": total}))


@cache_group.command("check")
@click.option("--dataset", "only", multiple=True, help="Check only these sets (repeatable).")
@vectors_option("--dir", help="Where the vector files are.")
@click.pass_context
def cache_check_command(ctx: click.Context, only: tuple[str, ...], vectors_dir: Path) -> None:
    """Say, without running any model, whether each set's vector file holds every text
    the gate would embed now (chunking the corpora takes seconds); exit 1 when one does not."""
    from app.eval import embedding_cache
    from app.ingest.pipeline import IngestPipeline
    from app.text.embed import embedders

    settings = context_settings(ctx)
    pipeline = IngestPipeline(settings, embedders(settings))
    stale: list[str] = []
    for name, path in _cache_plan(settings, only).items():
        dataset, kind = _load_set(path)
        found = embedding_cache.check(pipeline, dataset, kind, vectors_dir)
        line = f"{name}: {found.cached} of {found.texts} texts cached, {found.missing} missing, {found.unused} unused"
        console.print(line + "".join(f"; {p}" for p in found.problems))
        if not found.fresh:
            stale.append(name)
    if stale:
        raise CliError(
            f"the corpus vector cache is stale for {', '.join(stale)}: rebuild it ({embedding_cache.REBUILD}) "
            "and commit eval/embeddings/"
        )
    console.print("[green]corpus vectors fresh[/]")


COMMANDS = (eval_group,)
