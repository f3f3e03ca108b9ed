"""`contexts ingest PATH... | query TEXT`: write and read documents as a principal
(--principal), its grants applying exactly as over HTTP."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import click
import msgspec
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from app.cli import admin
from app.cli.common import CliError, console, context_settings, database_error, open_database
from app.retrieve.models import (
    DEFAULT_BUDGET_TOKENS,
    DEFAULT_K_DENSE,
    DEFAULT_K_LEXICAL,
    DEFAULT_RERANK_TOP,
    RetrieveRequest,
)
from app.settings import Settings


def _git_identity() -> str | None:
    try:
        out = subprocess.run(["git", "config", "user.name"], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def ingest_paths(
    settings: Settings,
    dsn: str,
    paths: list[Path],
    org_id: str,
    repo: str | None,
    persona: str | None,
    session: str | None,
    kind: str | None,
    owner: str | None,
    create_org: bool,
    base: Path | None = None,
    quiet: bool = False,
) -> tuple[int, int, int, list[str]]:
    """Ingest files as settings.principal; returns (documents changed, fragments, new
    fragments, refusals)."""
    import psycopg

    from app.ingest.batches import ingest_groups
    from app.ingest.embed import embedders
    from app.ingest.files import FileEntry, collect
    from app.ingest.normalize import RejectedDocument, SourceDocument
    from app.ingest.pipeline import IngestPipeline
    from app.scope import Scope

    try:
        entries = collect(paths, base)
    except FileNotFoundError as exc:
        raise CliError(str(exc)) from exc
    pipeline = IngestPipeline(settings, embedders(settings))
    scope = Scope(org_id, repo, persona, session)
    author = owner or _git_identity() or os.environ.get("USER")
    refused: list[str] = []
    changed = fragments = created = 0

    def source(entry: FileEntry) -> SourceDocument:
        return SourceDocument(
            path=entry.relative,
            content=entry.path.read_bytes(),
            kind=kind,
            author=author,
            owner=owner or author,
            timestamp=entry.modified(),
        )

    with (
        psycopg.connect(dsn) as conn,
        Progress(
            TextColumn("[progress.description]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            disable=quiet,
        ) as progress,
    ):
        if create_org and conn.execute("select 1 from data.orgs where org_id = %s", (org_id,)).fetchone() is None:
            admin.create_org(conn, org_id, settings.principal)
        pipeline.register_models(conn)  # as the migrator, before acting for the principal
        conn.commit()
        task = progress.add_task("ingesting", total=len(entries))

        def refuse(entry: FileEntry, exc: RejectedDocument) -> None:
            refused.append(str(exc))
            if entry.explicit:  # named on the command line: an error, not a skip
                raise CliError(str(exc)) from exc
            progress.advance(task)

        try:
            for group in ingest_groups(
                conn,
                pipeline,
                scope,
                settings.principal,
                entries,
                source,
                on_refused=refuse,
                on_document=lambda _r: progress.advance(task),
            ):
                changed += group.changed
                fragments += group.fragments
                created += group.created
        except psycopg.Error as exc:
            raise database_error(exc) from exc
    return changed, fragments, created, refused


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--org", "org_id", required=True, help="Org (tenant) to ingest into.")
@click.option("--repo", default=None, help="Repository scope of these files.")
@click.option("--persona", default=None, help="Persona scope.")
@click.option("--session", default=None, help="Session scope.")
@click.option("--kind", default=None, help="Document kind (code, adr, runbook, policy, ...). Default: inferred.")
@click.option("--owner", default=None, help="Owner of the fragments. Default: git user.name or $USER.")
@click.option("--create-org/--no-create-org", default=True, show_default=True, help="Create the org if missing.")
@click.pass_context
def ingest(
    ctx: click.Context,
    paths: tuple[Path, ...],
    org_id: str,
    repo: str | None,
    persona: str | None,
    session: str | None,
    kind: str | None,
    owner: str | None,
    create_org: bool,
) -> None:
    """Ingest files or directories (directories respect .gitignore)."""
    settings = context_settings(ctx)
    dsn = open_database(settings)
    changed, fragments, created, refused = ingest_paths(
        settings, dsn, list(paths), org_id, repo, persona, session, kind, owner, create_org
    )
    for message in refused:
        console.print(f"[yellow]skipped:[/] {message}")
    console.print(
        f"{changed} document(s) changed, {fragments} fragment(s) written, "
        f"{created} new, {fragments - created} collapsed into existing fragments"
    )


@click.command()
@click.argument("text")
@click.option("--org", "org_id", required=True)
@click.option("--repo", default=None)
@click.option("--persona", default=None)
@click.option("--session", default=None)
@click.option("--budget", "budget_tokens", default=DEFAULT_BUDGET_TOKENS, show_default=True, type=int)
@click.option("--k-lexical", default=DEFAULT_K_LEXICAL, show_default=True, type=int)
@click.option("--k-dense", default=DEFAULT_K_DENSE, show_default=True, type=int)
@click.option("--rerank-top", default=DEFAULT_RERANK_TOP, show_default=True, type=int)
@click.option("--min-score", default=0.0, show_default=True, type=float)
@click.option("--json", "as_json", is_flag=True, help="Print the response as JSON.")
@click.pass_context
def query(
    ctx: click.Context,
    text: str,
    org_id: str,
    repo: str | None,
    persona: str | None,
    session: str | None,
    budget_tokens: int,
    k_lexical: int,
    k_dense: int,
    rerank_top: int,
    min_score: float,
    as_json: bool,
) -> None:
    """Retrieve fragments for TEXT, exactly as POST /contexts/retrieve does, as the
    principal named by --principal (its grants apply)."""
    import psycopg

    from app.access import act_as
    from app.ingest.embed import embedders
    from app.retrieve.config import PipelineConfig
    from app.retrieve.service import Retriever

    settings = context_settings(ctx)
    payload = {
        "query": text,
        "scope": {"org_id": org_id, "repo_id": repo, "persona_id": persona, "session_id": session},
        "budget_tokens": budget_tokens,
        "k_lexical": k_lexical,
        "k_dense": k_dense,
        "rerank_top": rerank_top,
        "min_score": min_score,
    }
    try:
        request = msgspec.convert(payload, RetrieveRequest)
    except msgspec.ValidationError as exc:
        raise CliError(str(exc)) from exc
    dsn = open_database(settings)
    retriever = Retriever.build(embedders(settings), PipelineConfig(reranker=settings.reranker), settings.torch_threads)
    try:
        with psycopg.connect(dsn) as conn:
            act_as(conn, org_id, settings.principal)
            response = retriever.retrieve(conn, request)
    except psycopg.Error as exc:
        raise database_error(exc) from exc
    if as_json:
        click.echo(msgspec.json.encode(response).decode())
        return
    out = Console(soft_wrap=True, highlight=False)
    for f in response.fragments:
        out.print(f"[bold cyan]{f.source}[/]  score={f.score:.3f}  tokens={f.tokens}  id={f.id}")
        click.echo(f.text)
        click.echo()
    console.print(
        f"{len(response.fragments)} fragment(s), {response.tokens_used}/{response.budget_tokens} tokens, "
        f"trace {response.trace_id}"
    )


COMMANDS = (ingest, query)
