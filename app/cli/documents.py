"""`contexts ingest PATH... | query TEXT | documents list|show|delete`: write and read
documents as a principal (--principal), its grants applying exactly as over HTTP; or,
with --url and --key (CONTEXTS_URL, CONTEXTS_KEY), through a running service with the
Python client (app.client), which loads no model: a query answers in well under a
second."""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import click
import msgspec
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from app.cli import admin
from app.cli.common import (
    ID,
    MAX_ID,
    CliError,
    as_principal,
    console,
    context_settings,
    database_error,
    echo,
    git_identity,
    open_database,
    print_json,
    print_skipped,
    remote,
    remote_options,
    required_org,
    validated,
)
from app.settings import Settings
from app.wire.bodies import DocumentQuery, DocumentRead
from app.wire.retrieve import (
    DEFAULT_BUDGET_TOKENS,
    DEFAULT_K_DENSE,
    DEFAULT_K_LEXICAL,
    DEFAULT_RERANK_TOP,
    RetrieveRequest,
    RetrieveResponse,
)

if TYPE_CHECKING:
    from app.eval.embedding_cache import CorpusVectors
    from app.ingest.files import FileEntry
    from app.ingest.normalize import RejectedDocument
    from app.scope import Scope


def files_to_ingest(paths: list[Path], base: Path | None, scope: Scope) -> list[FileEntry]:
    """The files a walk of `paths` finds to ingest (app.ingest.files), after the scope's own
    check: a local ingest and one through a service refuse alike, before reading anything."""
    from app.ingest.files import collect

    problem = scope.problem()
    if problem is not None:
        raise CliError(problem)
    try:
        entries = collect(paths, base)
    except FileNotFoundError as exc:
        raise CliError(str(exc)) from exc
    if not entries:
        raise CliError(
            "no file to ingest: every file under "
            + ", ".join(str(p) for p in paths)
            + " is hidden (a dot-name) or ignored by a .gitignore"
        )
    return entries


def read_file(entry: FileEntry) -> tuple[bytes, datetime]:
    """A walked file's bytes and modification time; RejectedDocument when the walk found it
    unusable or it cannot be read now (permission denied, or gone since the walk)."""
    from app.ingest.normalize import RejectedDocument

    if entry.problem is not None:
        raise RejectedDocument(f"{entry.relative}: {entry.problem}")
    try:
        return entry.path.read_bytes(), entry.modified()
    except OSError as exc:
        raise RejectedDocument(f"{entry.relative}: not read ({exc.strerror or exc})") from exc


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
    vectors: CorpusVectors | None = None,
) -> tuple[int, int, int, list[RejectedDocument]]:
    """Ingest files as settings.principal; returns (documents changed, fragments, new
    fragments, refusals). With `vectors` (the demo's), a text they hold is read from
    them instead of embedded."""
    import psycopg

    from app.ingest.batches import ingest_groups
    from app.ingest.normalize import SourceDocument
    from app.ingest.pipeline import IngestPipeline
    from app.scope import Scope
    from app.text.embed import embedders

    scope = Scope(org_id, repo, persona, session)
    entries = files_to_ingest(paths, base, scope)
    models = embedders(settings)
    pipeline = IngestPipeline(settings, vectors.embedders(models) if vectors is not None else models)
    author = owner or git_identity() or os.environ.get("USER")
    refused: list[RejectedDocument] = []
    changed = fragments = created = 0

    def source(entry: FileEntry) -> SourceDocument:
        content, modified = read_file(entry)
        return SourceDocument(
            path=entry.relative, content=content, kind=kind, author=author, owner=owner, timestamp=modified
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
        if create_org and not admin.org_exists(conn, org_id):
            admin.create_org(conn, org_id, settings.principal)
            if not quiet:
                console.print(
                    f"created org {org_id} (its principal {settings.principal} may read, write and audit all of it: "
                    f"`contexts key create {org_id} {settings.principal}` makes a key)"
                )
        pipeline.register_models(conn)  # as the migrator, before acting for the principal
        conn.commit()
        task = progress.add_task("ingesting", total=len(entries))

        def refuse(entry: FileEntry, exc: RejectedDocument) -> None:
            refused.append(exc)
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
@click.option(
    "--owner",
    default=None,
    help="Owner of the fragments (over front matter owner:). Default: CODEOWNERS, then the org's default owner.",
)
@click.option("--create-org/--no-create-org", default=True, show_default=True, help="Create the org if missing.")
@click.option(
    "--refresh-authority/--no-refresh-authority",
    default=True,
    show_default=True,
    help="Refresh citation authority afterwards (contexts rank refresh).",
)
@remote_options
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
    refresh_authority: bool,
    url: str | None,
    key: str | None,
) -> None:
    """Ingest files or directories (directories respect .gitignore): into the database,
    or with --url and --key through a running service (its key's org must exist; the
    service refreshes citation authority itself, unless CONTEXTS_AUTHORITY_REFRESH_S is 0
    there)."""
    if url:
        from click.core import ParameterSource

        from app.cli.remote_ingest import ingest_through_service

        given = [
            "/".join(param.opts + param.secondary_opts)
            for param in ctx.command.params
            if param.name in ("create_org", "refresh_authority")
            and ctx.get_parameter_source(param.name) == ParameterSource.COMMANDLINE
        ]
        parent = ctx.parent
        given += [
            f"--{name}"
            for name, param in (("db-url", "db_url"), ("principal", "principal_id"))
            if parent is not None and parent.get_parameter_source(param) == ParameterSource.COMMANDLINE
        ]
        if given:
            console.print(
                f"[yellow]note:[/] {', '.join(given)}: for a local ingest only; through --url the key's "
                "principal writes, its org must exist, and the service refreshes citation authority itself "
                "(one started with CONTEXTS_AUTHORITY_REFRESH_S=0 never does: run `contexts rank refresh` there)"
            )
        from app.scope import Scope

        changed, fragments, created, refused = ingest_through_service(
            url, key, list(paths), Scope(org_id, repo, persona, session), kind, owner
        )
        refresh_authority = False
    else:
        settings = context_settings(ctx)
        dsn = open_database(settings)
        changed, fragments, created, refused = ingest_paths(
            settings, dsn, list(paths), org_id, repo, persona, session, kind, owner, create_org
        )
    print_skipped(refused)
    console.print(
        f"{changed} document(s) changed, {fragments} fragment(s) written, "
        f"{created} new, {fragments - created} collapsed into existing fragments"
    )
    if changed and refresh_authority:
        from app.cli.rank import rank_refresh

        ctx.invoke(rank_refresh)


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
@click.option("--min-relevance", default=0.0, show_default=True, type=float, help="Absolute floor (0 to 1).")
@click.option("--top-k", default=None, type=int, help="At most this many fragments.")
@click.option("--kind", "kinds", multiple=True, help="Only fragments of this kind (repeatable).")
@click.option("--path-prefix", default=None, help="Only fragments of documents under this path.")
@click.option(
    "--negatives",
    type=click.Choice(["include", "only", "exclude"]),
    default="include",
    show_default=True,
    help="Negative fragments (anti-patterns): keep, keep only them, or leave them out.",
)
@click.option(
    "--as-of",
    default=None,
    help="What was current at this time (ISO 8601 with an offset, e.g. 2026-03-01T00:00:00Z).",
)
@click.option(
    "--include-superseded", is_flag=True, help="Keep superseded and expired fragments too (each shows its window)."
)
@click.option(
    "--touching",
    multiple=True,
    help="A file (or path#Symbol) the step touches: matching workflow rules bring their Contexts (repeatable).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the response as JSON.")
@remote_options
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
    min_relevance: float,
    top_k: int | None,
    kinds: tuple[str, ...],
    path_prefix: str | None,
    negatives: str,
    as_of: str | None,
    include_superseded: bool,
    touching: tuple[str, ...],
    as_json: bool,
    url: str | None,
    key: str | None,
) -> None:
    """Retrieve fragments for TEXT, exactly as POST /contexts/retrieve does: through the
    service at --url with --key, or else on the database as the principal the top-level
    option names (`contexts --principal NAME query ...`; its grants apply)."""
    payload = {
        "query": text,
        "scope": {"org_id": org_id, "repo_id": repo, "persona_id": persona, "session_id": session},
        "budget_tokens": budget_tokens,
        "k_lexical": k_lexical,
        "k_dense": k_dense,
        "rerank_top": rerank_top,
        "min_score": min_score,
        "min_relevance": min_relevance,
        "top_k": top_k,
        "kinds": list(kinds) or None,
        "path_prefix": path_prefix,
        "negatives": negatives,
        "as_of": as_of,
        "include_superseded": include_superseded,
        "touching": list(touching) or None,
    }
    request = validated(payload, RetrieveRequest)
    if url:
        response = remote(url, key, lambda client: client.send(request))
    else:
        response = _query_database(context_settings(ctx), org_id, request)
    if as_json:
        echo(msgspec.json.encode(response).decode())
        return
    out = Console(soft_wrap=True, highlight=False)
    for f in response.fragments:
        marks = (
            ("  [bold]pinned[/]" if f.pinned else "")
            + (f"  [magenta]rule {f.rule} ({f.rule_name})[/]" if f.rule is not None else "")
            + ("  [bold red]negative: do not do this[/]" if f.negative else "")
        )
        if f.valid_until is not None or f.valid_from is not None:
            window = [f"from {f.valid_from.isoformat()}"] if f.valid_from else []
            window += [f"until {f.valid_until.isoformat()}"] if f.valid_until else []
            marks += f"  [yellow]current {' '.join(window)}[/]"
        out.print(
            f"[bold cyan]{f.source}[/]  score={f.score:.3f}  relevance={f.relevance:.3f}  tokens={f.tokens}  id={f.id}"
            + marks
        )
        echo(f.text)
        echo()
    console.print(
        f"{len(response.fragments)} fragment(s), {response.tokens_used}/{response.budget_tokens} tokens, "
        f"trace {response.trace_id}"
        + (
            "; pins left out: " + ", ".join(f"{p.pin_id} ({p.detail})" for p in response.pins_left_out_reasons)
            if response.pins_left_out_reasons
            else (f"; pins left out: {response.pins_left_out}" if response.pins_left_out else "")
        )
    )
    if not response.fragments and request.min_relevance > 0:
        console.print(
            f"nothing reached relevance {request.min_relevance:g} (--min-relevance); the trace lists each "
            f"candidate's: GET /traces/{response.trace_id}, or the trace page /ui/traces/{response.trace_id}"
        )


def _query_database(settings: Settings, org_id: str, request: RetrieveRequest) -> RetrieveResponse:
    """The retrieval in this process: loads the embedding models (seconds)."""
    import psycopg

    from app.access import act_as
    from app.retrieve.config import PipelineConfig
    from app.retrieve.service import Retriever
    from app.retrieve.usage_fold import UsageFolder
    from app.text.embed import embedders

    dsn = open_database(settings)
    retriever = Retriever.build(embedders(settings), PipelineConfig(reranker=settings.reranker), settings.torch_threads)
    # A fold of the usage roll-ups this retrieval made due runs once its transaction has
    # committed, in one of its own (app.retrieve.usage_fold).
    retriever.usage_folder = folder = UsageFolder(lambda: psycopg.connect(dsn), background=False)
    try:
        with psycopg.connect(dsn) as conn:
            act_as(conn, org_id, settings.principal)
            response = retriever.retrieve(conn, request)
        folder.close()
        return response
    except psycopg.Error as exc:
        raise database_error(exc) from exc


# -- documents list | show | delete -------------------------------------------------


@click.group()
def documents() -> None:
    """List, show and delete documents (as --principal, or through --url with --key)."""


@documents.command("list")
@click.option("--org", "org_id", required=True)
@click.option("--repo", default=None)
@click.option("--persona", default=None)
@click.option("--session", default=None)
@click.option("--path-prefix", default=None)
@click.option("--kind", default=None)
@click.option("--owner", default=None)
@click.option("--updated-since", default=None, help="ISO 8601 with an offset, e.g. 2026-11-01T00:00:00Z.")
@click.option("--limit", default=50, show_default=True, type=int)
@click.option("--after", default=None, type=click.IntRange(0, MAX_ID), help="Last doc_id of the previous page.")
@click.option("--json", "as_json", is_flag=True)
@remote_options
@click.pass_context
def documents_list(
    ctx: click.Context,
    org_id: str,
    repo: str | None,
    persona: str | None,
    session: str | None,
    path_prefix: str | None,
    kind: str | None,
    owner: str | None,
    updated_since: str | None,
    limit: int,
    after: int | None,
    as_json: bool,
    url: str | None,
    key: str | None,
) -> None:
    """A page of the documents a scope holds (GET /documents)."""
    payload = {
        "scope": {"org_id": org_id, "repo_id": repo, "persona_id": persona, "session_id": session},
        "path_prefix": path_prefix,
        "limit": limit,
        "after": after,
        "kind": kind,
        "owner": owner,
        "updated_since": updated_since,
    }
    q = validated(payload, DocumentQuery)
    if url:
        page = remote(
            url,
            key,
            lambda client: client.list_documents(
                org_id=org_id,
                repo_id=repo,
                persona_id=persona,
                session_id=session,
                path_prefix=path_prefix,
                kind=kind,
                owner=owner,
                updated_since=q.updated_since,
                limit=limit,
                after=after,
            ),
        )
    else:
        from app.operations.queries import list_documents_on

        page = as_principal(context_settings(ctx), org_id, lambda conn: list_documents_on(conn, q))
    if as_json:
        print_json(page)
        return
    for d in page.documents:
        scope = "/".join(x for x in (d.repo_id, d.persona_id, d.session_id) if x) or "org"
        echo(f"{d.doc_id}\t{d.path}\tv{d.version}\t{d.kind}\t{d.owner or '-'}\t{scope}\t{d.updated_at:%Y-%m-%d %H:%M}")
    console.print(
        f"{len(page.documents)} document(s)" + (f"; next page: --after {page.next_after}" if page.next_after else "")
    )


@documents.command("show")
@click.argument("doc_id", type=ID)
@click.option("--org", "org_id", default=None, help="Org of --principal (database mode).")
@click.option("--version", default=None, type=int, help="Default: the current one.")
@click.option("--json", "as_json", is_flag=True)
@remote_options
@click.pass_context
def documents_show(
    ctx: click.Context,
    doc_id: int,
    org_id: str | None,
    version: int | None,
    as_json: bool,
    url: str | None,
    key: str | None,
) -> None:
    """A document's text, versions and fragments (GET /documents/{id})."""
    read = validated({"doc_id": doc_id, "version": version}, DocumentRead)
    if url:
        detail = remote(url, key, lambda client: client.get_document(doc_id, version=version))
    else:
        from app.operations.queries import read_document_on

        detail = as_principal(context_settings(ctx), required_org(org_id), lambda conn: read_document_on(conn, read))
    if as_json:
        print_json(detail)
        return
    console.print(
        f"{detail.path}  document {detail.doc_id}, version {detail.version} of {detail.current_version}, "
        f"kind {detail.kind}, owner {detail.owner or '-'}"
    )
    for v in detail.versions:
        console.print(
            f"  v{v.version}  {v.created_at:%Y-%m-%d %H:%M}  {v.chars} chars  {v.author or '-'}"
            + ("  (current)" if v.current else "")
        )
    echo(detail.content)


@documents.command("delete")
@click.argument("doc_id", type=ID)
@click.option("--org", "org_id", default=None, help="Org of --principal (database mode).")
@click.option("--json", "as_json", is_flag=True)
@remote_options
@click.pass_context
def documents_delete(
    ctx: click.Context, doc_id: int, org_id: str | None, as_json: bool, url: str | None, key: str | None
) -> None:
    """Delete a document: its fragments leave retrieval; its history stays (DELETE /documents/{id})."""
    if url:
        deleted = remote(url, key, lambda client: client.delete_document(doc_id))
    else:
        from app.ingest.pipeline import IngestPipeline
        from app.operations.documents import delete_on
        from app.text.embed import embedders

        settings = context_settings(ctx)
        pipeline = IngestPipeline(settings, embedders(settings))  # loads a model only to re-home pointers
        deleted = as_principal(settings, required_org(org_id), lambda conn: delete_on(conn, pipeline, doc_id))
    if as_json:
        print_json(deleted)
        return
    console.print(
        f"deleted {deleted.path} (document {deleted.doc_id}, version {deleted.version}): "
        f"{deleted.fragments_retired} fragment(s) retired, {deleted.rehomed} pointer(s) re-homed"
    )


COMMANDS = (ingest, query, documents)
