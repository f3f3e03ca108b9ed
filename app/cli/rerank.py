"""`contexts rerank collect | train | validate | readings`: the learned reranker of the
`full` stage (docs/adr/0015), trained on the development sets' qrels, and the readings
of stored fragments it decodes instead of tokenizing their texts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from app.cli.common import CliError, console, context_settings, open_database
from app.cli.eval import vectors_option
from app.settings import Settings
from app.wire.retrieve import DEFAULT_RERANK_TOP

if TYPE_CHECKING:
    from app.eval.rerank_data import QueryRow

DEFAULT_CACHE = Path(".contexts") / "rerank-data"
"""Where collected candidates are kept (gitignored): training then takes seconds."""
DEFAULT_SETS = (
    "cacm",
    "commits-click",
    "cosqa",
    "gorilla-tfhub",
    "gorilla-torchhub",
    "locomo-conv-26",
    "locomo-conv-30",
    "locomo-conv-41",
    "scifact",
    "mixed-click",
    "mixed-requests",
    "mixed-urllib3",
    "mixed-pyparsing",
    "mixed-google-auth",
)
"""The development sets (CONTEXTS_DATASETS, then eval/datasets) the shipped model is
trained on: the nine labelled per document, and five mixed repositories labelled per
fragment (app.eval.mixed_set)."""

_cache_option = click.option(
    "--cache",
    "cache_dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=DEFAULT_CACHE,
    show_default=True,
    help="Collected candidates, one file per set.",
)
_kind_option = click.option(
    "--kind",
    type=click.Choice(("linear", "lambdamart")),
    default="linear",
    show_default=True,
    help="linear: pairwise logistic regression over features standardized per list (shipped); "
    "lambdamart: LightGBM LambdaMART over the raw features.",
)
_share_option = click.option(
    "--fused-share",
    "share",
    type=click.FloatRange(0.0, 1.0),
    default=None,
    help="The fused order's share of the base score the held-out lists are scored with "
    "(app.retrieve.rerank.order). Default: the shipped reranker's (learned.FUSED_SHARE).",
)
_columns_option = click.option(
    "--column",
    "column_changes",
    multiple=True,
    metavar="+NAME|-NAME",
    help="Add (+) or drop (-) a feature column of the kind's default list (repeatable; "
    "app.retrieve.features.FEATURES names them), to measure or train a variant.",
)
_sets_option = click.option(
    "--dataset",
    "sets",
    multiple=True,
    help="A development set (repeatable). Default: the fourteen the shipped model is trained on.",
)


@click.group()
def rerank() -> None:
    """The learned reranker: collect training candidates, train, validate held out, and
    write stored fragments' readings."""


@rerank.command("collect")
@_sets_option
@_cache_option
@click.option("--rerank-top", default=DEFAULT_RERANK_TOP, show_default=True, type=click.IntRange(1, 1000))
@vectors_option()
@click.pass_context
def collect_command(
    ctx: click.Context, sets: tuple[str, ...], cache_dir: Path, rerank_top: int, vectors_dir: Path
) -> None:
    """Run the hybrid stage of each set's labelled queries (ingesting a corpus first if
    its ingested copy is missing or stale) and keep the top fused candidates with labels."""
    import psycopg

    from app.cli.eval import golden_components, resolve_dataset
    from app.eval import beir, rerank_data
    from app.retrieve.config import PipelineConfig
    from app.retrieve.service import Retriever

    settings = context_settings(ctx)
    dsn = open_database(settings)
    pipeline, _, config = golden_components(settings, None)
    retriever = Retriever(pipeline.embedders, None, PipelineConfig(**(config.to_dict() | {"reranker": None})))
    for name in sets or DEFAULT_SETS:
        try:
            dataset = beir.load(resolve_dataset(settings, name))
        except beir.DatasetError as exc:
            raise CliError(str(exc)) from exc
        target = cache_dir / f"{dataset.name}.jsonl.gz"
        with psycopg.connect(dsn) as conn, console.status(f"{dataset.name}: collecting...", spinner="dots"):
            count = rerank_data.collect(conn, pipeline, retriever, dataset, target, rerank_top, vectors_dir)
        console.print(f"{dataset.name}: {count} queries -> {target}")
    click.echo(json.dumps({"cache": str(cache_dir)}))


def _rows(settings: Settings, sets: tuple[str, ...], cache_dir: Path) -> tuple[list[QueryRow], list[Path]]:
    """Every cached row of the sets, collecting a set whose file is missing."""
    from app.eval import rerank_data

    names = sets or DEFAULT_SETS
    missing = [n for n in names if not (cache_dir / f"{n}.jsonl.gz").is_file()]
    if missing:
        ctx = click.get_current_context()
        ctx.invoke(collect_command, sets=tuple(missing), cache_dir=cache_dir, rerank_top=DEFAULT_RERANK_TOP)
    paths = [cache_dir / f"{n}.jsonl.gz" for n in names]
    rows = [row for path in paths for row in rerank_data.read(path)]
    return rows, paths


def _columns(kind: str, changes: tuple[str, ...]) -> tuple[str, ...] | None:
    """The kind's default columns with `+NAME` added and `-NAME` dropped (None: unchanged)."""
    from app.eval import rerank_train
    from app.retrieve import features

    if not changes:
        return None
    columns = list(rerank_train.columns_of(kind))
    for change in changes:
        sign, name = change[:1], change[1:]
        if sign not in ("+", "-") or name not in features.FEATURES:
            raise CliError(f"--column {change!r}: expected +NAME or -NAME of a feature this code computes")
        if sign == "+" and name not in columns:
            columns.append(name)
        elif sign == "-":
            if name not in columns:
                raise CliError(f"--column {change!r}: {name} is not a column of the {kind} model")
            columns.remove(name)
    if not columns:
        raise CliError("--column: no column left")
    return tuple(columns)


def _folds_table(title: str, folds: list) -> tuple[object, dict]:
    from statistics import mean

    from rich.table import Table

    table = Table(title=title)
    for column in ("held out", "set", "queries", "hybrid", "full", "delta"):
        table.add_column(column, justify="left" if column in ("held out", "set") else "right")
    figures: dict = {"sets": {}}
    for f in folds:
        delta = f"{f.full - f.hybrid:+.4f}"
        table.add_row(f.held_out, f.sets[0], str(f.queries), f"{f.hybrid:.4f}", f"{f.full:.4f}", delta)
        figures["sets"][f.sets[0]] = {"hybrid": round(f.hybrid, 4), "full": round(f.full, 4), "queries": f.queries}
    hybrid, full = mean(f.hybrid for f in folds), mean(f.full for f in folds)
    worst = min(f.full - f.hybrid for f in folds)
    table.add_row("mean", "", "", f"{hybrid:.4f}", f"{full:.4f}", f"{full - hybrid:+.4f}")
    figures |= {"mean_hybrid": round(hybrid, 4), "mean_full": round(full, 4), "worst_delta": round(worst, 4)}
    return table, figures


@rerank.command("validate")
@_sets_option
@_cache_option
@_kind_option
@_share_option
@_columns_option
@click.option("--json", "as_json", is_flag=True, help="Last line of stdout: the figures as one JSON object.")
@click.pass_context
def validate_command(
    ctx: click.Context,
    sets: tuple[str, ...],
    cache_dir: Path,
    kind: str,
    share: float | None,
    column_changes: tuple[str, ...],
    as_json: bool,
) -> None:
    """Held-out nDCG@10 of `full` (learned reranker) vs `hybrid`: leave one set out, then
    leave one family out (the locomo sets are one), training on the rest each time."""

    columns = _columns(kind, column_changes)
    rows, _ = _rows(context_settings(ctx), sets, cache_dir)
    report = _validation(rows, None, columns, kind, share)
    if not report:
        raise CliError("validation leaves one set out in turn: name two sets or more (--dataset)")
    if as_json:
        click.echo(json.dumps(report))


def _validation(
    rows: list, xs: list | None, columns: tuple[str, ...] | None, kind: str, share: float | None
) -> dict[str, object]:
    """Leave one set out, then one family out, each table printed; empty when the rows
    hold one set (nothing to train on when it is left out). A family protocol with one
    family only (the three locomo sets are one) is skipped with a line saying so."""
    from app.eval import rerank_train

    report: dict[str, object] = {}
    if len(rerank_train.held_out_groups(rows, "set")) < 2:
        return report
    xs = xs if xs is not None else rerank_train.featurize(rows)
    for by, title in (("set", "leave one set out"), ("family", "leave one family out")):
        groups = rerank_train.held_out_groups(rows, by)
        if len(groups) < 2:
            console.print(f"{title}: skipped (the sets are all of one {by}: {', '.join(groups)})")
            continue
        folds = rerank_train.validate(rows, by, xs, columns=columns, kind=kind, share=share)
        table, figures = _folds_table(f"nDCG@10, {title}", folds)
        console.print(table)
        report[f"leave_one_{by}_out"] = figures
    return report


@rerank.command("misses")
@_sets_option
@_cache_option
@click.option("--json", "as_json", is_flag=True, help="Last line of stdout: the figures as one JSON object.")
@click.pass_context
def misses_command(ctx: click.Context, sets: tuple[str, ...], cache_dir: Path, as_json: bool) -> None:
    """Where the fused order misses (its first candidate unrelated, a relevant one further
    down), the share of misses where the first relevant candidate is above / below that
    first candidate on each piece of evidence: what a feature could see (ADR 0015)."""
    from rich.table import Table

    from app.eval import rerank_train

    rows, _ = _rows(context_settings(ctx), sets, cache_dir)
    found = rerank_train.fused_misses(rows, rerank_train.featurize(rows))
    table = Table(title="fused misses: share above / below the fused first")
    table.add_column("set")
    table.add_column("misses", justify="right")
    for column in rerank_train.MISS_COLUMNS:
        table.add_column(column, justify="right")
    for name, (count, shares) in found.items():
        table.add_row(name, str(count), *(f"{a:.2f} / {b:.2f}" for a, b in shares.values()))
    console.print(table)
    if as_json:
        click.echo(json.dumps({name: {"misses": n, "above_below": shares} for name, (n, shares) in found.items()}))


@rerank.command("train")
@_sets_option
@_cache_option
@click.option(
    "--out",
    "out_path",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Model file to write. Default: the shipped one (app/retrieve/learned_reranker.json).",
)
@click.option("--no-validate", is_flag=True, help="Skip the held-out figures (recorded in the file otherwise).")
@_kind_option
@_share_option
@_columns_option
@click.pass_context
def train_command(
    ctx: click.Context,
    sets: tuple[str, ...],
    cache_dir: Path,
    out_path: Path | None,
    no_validate: bool,
    kind: str,
    share: float | None,
    column_changes: tuple[str, ...],
) -> None:
    """Train the learned reranker on every set's collected candidates (collecting what
    is missing) and write the model file: the model plus the data's hash, the feature
    list, parameters, calibration and the held-out figures."""
    from app.eval import rerank_data, rerank_train
    from app.retrieve import learned

    columns = _columns(kind, column_changes)
    rows, paths = _rows(context_settings(ctx), sets, cache_dir)
    xs = rerank_train.featurize(rows)
    validation: dict[str, object] = {}
    if not no_validate:
        validation.update(_validation(rows, xs, columns, kind, share))
        if validation:
            validation["fused_share"] = learned.FUSED_SHARE if share is None else share
        else:
            console.print("held-out figures: none (one set: nothing to train on when it is left out)")
    text, metadata = rerank_train.model_file(
        rows, xs, rerank_data.files_digest(paths), validation, columns=columns, kind=kind
    )
    target = out_path or learned.MODEL_PATH
    target.write_text(text, encoding="utf-8")
    console.print(f"model {metadata['version']} written: {target}")
    click.echo(json.dumps({"model": str(target), "version": metadata["version"], "validation": validation}))


COMMANDS = (rerank,)


@rerank.command("readings")
@click.option("--batch", default=500, show_default=True, type=click.IntRange(1, 100_000), help="Fragments per commit.")
@click.option("--quiet", is_flag=True, help="No progress bar.")
@click.option("--json", "as_json", is_flag=True, help="Print the run as one JSON object on stdout.")
@click.pass_context
def readings_command(ctx: click.Context, batch: int, quiet: bool, as_json: bool) -> None:
    """Write each stored fragment's reading (what the learned reranker reads of its text)
    where it is missing or was written by another tokenizer. Ingestion writes it for new
    fragments; without it the reranker reads the text at every retrieval (slower, same
    scores). Committed batch by batch: running it again resumes."""
    from app.cli.admin import admin_connection
    from app.cli.eval import progress_bars
    from app.ingest.readings import write_readings

    settings = context_settings(ctx)
    with admin_connection(settings, details=True) as conn, progress_bars(quiet or as_json) as progress:
        result = write_readings(conn, batch, lambda done, total: progress("readings", done, total))
    if as_json:
        figures = {"written": result.written, "batches": result.batches, "seconds": round(result.seconds, 2)}
        click.echo(json.dumps(figures))
    else:
        console.print(f"{result.written} reading(s) written in {result.seconds:.1f} s")
