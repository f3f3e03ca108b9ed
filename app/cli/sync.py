"""`contexts sync PATH --org ORG --repo REPO`: bring a repo's documents to the files git
tracks at HEAD, touching only what changed since the commit last synced (docs/sync.md).

The last synced commit lives in data.git_syncs (api.sync_state, service.sync_record). A sync
asks git for the changes between that commit and HEAD, ingests the added, modified and
renamed files through the ingestion loop `contexts ingest` uses (app.ingest.batches),
deletes the documents of deleted files (and of a rename's old path) as `contexts
documents delete` does, and records HEAD. An unchanged HEAD reads no file at all. When
the recorded commit is gone from the repository (history rewritten, then pruned), every
tracked file is compared with what is stored instead (unchanged ones cost a
normalisation each, no write), and documents a sync wrote for files no longer tracked
are deleted. Only committed content is synced; uncommitted changes are counted and
reported, never read."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from app.cli.admin import org_exists
from app.cli.common import (
    CliError,
    console,
    context_settings,
    database_error,
    echo,
    git_identity,
    open_database,
    print_skipped,
)
from app.ingest.git import Change, GitError, WorkTree
from app.readable import SURROGATE
from app.scope import Scope
from app.settings import Settings

if TYPE_CHECKING:
    import psycopg

    from app.ingest.normalize import RejectedDocument
    from app.ingest.pipeline import IngestPipeline


@dataclass(frozen=True, slots=True)
class _File:
    path: str
    blob: str
    renamed_from: str | None = None
    new: bool = True
    """Added (or renamed) since the last sync, or any file of a full scan: its document
    records when git added it (`git_added_at`, where a supersession starts)."""
    unchanged: bool = False
    """Read again though unchanged since the last sync (a document marked rewrite_due):
    when it last changed is looked up in the whole history."""


@dataclass(slots=True)
class Plan:
    """What one sync does: from which commit to which, the files to write and the
    documents to delete."""

    head: str
    ref: str | None
    last: str | None
    full_scan: bool
    writes: list[_File] = field(default_factory=list)
    deletes: list[tuple[str, int]] = field(default_factory=list)
    """(path, doc_id) of documents to delete."""
    reason: str = ""


@dataclass(slots=True)
class SyncReport:
    plan: Plan
    uncommitted: int
    written: int = 0
    """Files read and ingested (unchanged content included)."""
    changed: int = 0
    """Documents that got a new version."""
    fragments: int = 0
    created: int = 0
    deleted: int = 0
    refused: list[RejectedDocument] = field(default_factory=list)

    @property
    def up_to_date(self) -> bool:
        return self.plan.last == self.plan.head and not self.plan.writes


def _plan(conn: psycopg.Connection, tree: WorkTree, org_id: str, repo: str) -> Plan:
    plan = _changes(conn, tree, org_id, repo)
    _skip_stored_blobs(conn, org_id, repo, plan)
    if not plan.full_scan:
        _add_rewrites(conn, tree, org_id, repo, plan)
    return plan


def _skip_stored_blobs(conn: psycopg.Connection, org_id: str, repo: str, plan: Plan) -> None:
    """Leave out the files whose document a sync wrote from the same git blob: a full
    comparison (rewritten history) reads only what differs, and a change git reports
    with the same content (a mode change) writes nothing. Their versions keep the commit
    they were written at; a version records its blob since 2026-12-07, so a document
    synced before is read once more, and its version then records its blob."""
    if not plan.writes:
        return
    rows = conn.execute(
        "select path, blob from api.sync_documents(%s, %s, %s) where blob is not null and not rewrite_due",
        (org_id, repo, [_stored(f.path) for f in plan.writes]),
    ).fetchall()
    stored: dict[str, str] = dict(rows)
    plan.writes = [f for f in plan.writes if f.renamed_from is not None or stored.get(_stored(f.path)) != f.blob]


def _add_rewrites(conn: psycopg.Connection, tree: WorkTree, org_id: str, repo: str, plan: Plan) -> None:
    """Read again the tracked files whose documents a migration marked for re-chunking
    (data.documents.rewrite_due, migration 0044), even when HEAD did not change: their
    content is unchanged, so the changes since the last sync never name them."""
    rows = conn.execute("select path from api.sync_documents(%s, %s) where rewrite_due", (org_id, repo))
    due = {path for (path,) in rows}
    due -= {_stored(f.path) for f in plan.writes}
    due -= {path for path, _doc_id in plan.deletes}
    if not due:
        return
    rewrites = [_File(f.path, f.blob, unchanged=True) for f in tree.tracked(plan.head) if _stored(f.path) in due]
    if rewrites:
        plan.writes.extend(rewrites)
        note = f"{len(rewrites)} unchanged file(s) read again to re-chunk them (a migration asked for it)"
        plan.reason = f"{plan.reason}; {note}" if plan.reason else note


def _changes(conn: psycopg.Connection, tree: WorkTree, org_id: str, repo: str) -> Plan:
    head = tree.head()
    row = conn.execute("select commit_sha from api.sync_state(%s, %s)", (org_id, repo)).fetchone()
    last = row[0] if row else None
    plan = Plan(head, tree.ref(), last, full_scan=False)
    if last == head:
        return plan
    if last is not None and tree.has_commit(last):
        changes: list[Change] = tree.changes(last, head)
        plan.writes = [
            _File(c.path, c.blob, c.old_path if c.status == "R" else None, c.status in ("A", "R"))
            for c in changes
            if c.blob
        ]
        written = {f.path for f in plan.writes}
        gone = [c.old_path or c.path for c in changes if c.status == "R" or c.blob is None]
        gone = [p for p in gone if p not in written]  # a path renamed away and refilled keeps its document
        if gone:
            rows = conn.execute(
                "select path, doc_id from api.sync_documents(%s, %s, %s)", (org_id, repo, [_stored(p) for p in gone])
            ).fetchall()
            plan.deletes = [(path, doc_id) for path, doc_id in rows]
        plan.reason = f"{len(changes)} path(s) changed since {last[:12]}"
        return plan
    plan.full_scan = True
    plan.reason = (
        "first sync of this repo: every tracked file"
        if last is None
        else f"the last synced commit {last[:12]} is no longer in this repository (history rewritten?): "
        "comparing every tracked file with what is stored"
    )
    tracked = tree.tracked(head)
    plan.writes = [_File(f.path, f.blob) for f in tracked]
    paths = {_stored(f.path) for f in tracked}
    stored = conn.execute("select path, doc_id from api.sync_documents(%s, %s)", (org_id, repo)).fetchall()
    plan.deletes = [(path, doc_id) for path, doc_id in stored if path not in paths]
    return plan


def _stored(path: str) -> str:
    """The path a document of this file is stored under (NFC, as ingestion normalises it;
    git keeps the bytes it was given, NFD from some file systems)."""
    from app.ingest.normalize import RejectedDocument, normalize_path

    try:
        return normalize_path(path)
    except RejectedDocument:
        return path  # never stored: ingestion refuses it too


def sync_tree(
    settings: Settings,
    dsn: str,
    path: Path,
    org_id: str,
    repo: str,
    owner: str | None = None,
    kind: str | None = None,
    create_repo: bool = False,
    dry_run: bool = False,
    quiet: bool = False,
) -> SyncReport:
    """Sync the work tree at `path` into (org, repo) as settings.principal."""
    import psycopg

    from app.access import act_as

    try:
        tree = WorkTree(path)
        uncommitted = tree.uncommitted()
    except GitError as exc:
        raise CliError(str(exc)) from exc
    scope = Scope(org_id, repo, None, None)
    author = owner or git_identity() or os.environ.get("USER")
    try:
        with psycopg.connect(dsn) as conn:
            act_as(conn, org_id, settings.principal)
            if not org_exists(conn, org_id):
                raise CliError(f"unknown org: {org_id} (create it with `contexts org create {org_id}`)")
            known = conn.execute(
                "select 1 from data.repos where org_id = %s and repo_id = %s", (org_id, repo)
            ).fetchone()
            if known is None and not create_repo:
                raise CliError(
                    f"unknown repo {repo} in org {org_id}: pass --create-repo on its first sync "
                    "(a misspelt --repo must not start a second copy of the repository)"
                )
            try:
                plan = _plan(conn, tree, org_id, repo) if known else _first_plan(tree)
            except GitError as exc:
                raise CliError(str(exc)) from exc
            report = SyncReport(plan, uncommitted)
            if report.up_to_date or dry_run:
                return report  # before loading the pipeline (seconds of imports): nothing to write
            # A principal that may only read the repo is refused now, before any model loads.
            conn.execute("select service.authorize_write(%s, %s)", (org_id, repo))
            conn.rollback()
            from app.ingest.pipeline import IngestPipeline
            from app.operations.documents import delete_on
            from app.text.embed import embedders

            pipeline = IngestPipeline(settings, embedders(settings))
            _write(conn, pipeline, tree, scope, settings.principal, plan, report, author, owner, kind, quiet)
            if plan.deletes:
                act_as(conn, org_id, settings.principal)
                for _path, doc_id in plan.deletes:
                    delete_on(conn, pipeline, doc_id)
                    report.deleted += 1
                conn.commit()
            act_as(conn, org_id, settings.principal)
            conn.execute(
                "select * from service.sync_record(%s, %s, %s, %s, %s, %s, %s, %s)",
                (org_id, repo, plan.head, plan.ref, plan.last, report.written, report.deleted, plan.full_scan),
            )
            conn.commit()
            return report
    except psycopg.Error as exc:
        raise database_error(exc, detail=True) from exc


def _first_plan(tree: WorkTree) -> Plan:
    """A repo the org does not have yet (--create-repo): every tracked file, nothing stored."""
    head = tree.head()
    plan = Plan(head, tree.ref(), None, full_scan=True, reason="first sync of this repo: every tracked file")
    plan.writes = [_File(f.path, f.blob) for f in tree.tracked(head)]
    return plan


def _write(
    conn: psycopg.Connection,
    pipeline: IngestPipeline,
    tree: WorkTree,
    scope: Scope,
    principal: str,
    plan: Plan,
    report: SyncReport,
    author: str | None,
    owner: str | None,
    kind: str | None,
    quiet: bool,
) -> None:
    """The added, modified and renamed files, through the ingestion loop of `contexts
    ingest`: each version records the commit (and a rename its old path) in its metadata."""
    from app.access import act_as
    from app.ingest.batches import ingest_groups
    from app.ingest.normalize import SourceDocument

    if not plan.writes:
        return
    pipeline.register_models(conn)  # as the migrator, before acting for the principal
    conn.commit()
    head_time = tree.committed_at(plan.head)
    since = None if plan.full_scan else plan.last
    changed_at = tree.last_changed(plan.head, [f.path for f in plan.writes if not f.unchanged], since)
    changed_at |= tree.last_changed(plan.head, [f.path for f in plan.writes if f.unchanged])
    added_at = tree.added_at(plan.head, [f.path for f in plan.writes if f.new])

    refused: list[str] = []

    def items() -> Iterator[tuple[_File, bytes]]:
        for file, (_blob, content) in zip(plan.writes, tree.read(f.blob for f in plan.writes)):
            yield file, content

    def source(item: tuple[_File, bytes]) -> SourceDocument:
        file, content = item
        metadata: dict = {"git_commit": plan.head, "git_blob": file.blob}
        if file.renamed_from:
            metadata["git_renamed_from"] = file.renamed_from
        if file.path in added_at:
            metadata["git_added_at"] = added_at[file.path].isoformat()
        return SourceDocument(
            path=file.path,
            content=content,
            kind=kind,
            author=author,
            owner=owner,
            timestamp=changed_at.get(file.path, head_time),
            metadata=metadata,
        )

    with Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        disable=quiet,
    ) as progress:
        task = progress.add_task("syncing", total=len(plan.writes))

        def refuse(item: tuple[_File, bytes], exc: RejectedDocument) -> None:
            report.refused.append(exc)
            refused.append(item[0].path)
            progress.advance(task)

        for group in ingest_groups(
            conn,
            pipeline,
            scope,
            principal,
            items(),
            source,
            on_refused=refuse,
            on_document=lambda _r: progress.advance(task),
        ):
            report.written += len(group.results)
            report.changed += group.changed
            report.fragments += group.fragments
            report.created += group.created
    # A name git holds in bytes that are not UTF-8 was never stored (ingestion refuses it):
    # it has no document to look up, and the database cannot be sent it.
    refused = [path for path in refused if not SURROGATE.search(path)]
    if refused:
        # A file git still tracks but that can no longer be indexed (now binary, empty or
        # too large) takes its document with it: the repo must not serve stale content.
        act_as(conn, scope.org_id, principal)
        stale = conn.execute(
            "select path, doc_id from api.sync_documents(%s, %s, %s)", (scope.org_id, scope.repo_id, refused)
        ).fetchall()
        conn.rollback()
        plan.deletes.extend((path, doc_id) for path, doc_id in stale)


def _summary(org_id: str, repo: str, report: SyncReport, dry_run: bool) -> dict:
    plan = report.plan
    return {
        "org_id": org_id,
        "repo_id": repo,
        "from_commit": plan.last,
        "to_commit": plan.head,
        "ref": plan.ref,
        "up_to_date": report.up_to_date,
        "dry_run": dry_run,
        "full_scan": plan.full_scan,
        "to_write": len(plan.writes),
        "to_delete": len(plan.deletes),
        "written": report.written,
        "changed": report.changed,
        "deleted": report.deleted,
        "refused": [str(exc) for exc in report.refused],
        "uncommitted": report.uncommitted,
    }


def _short(commit: str | None) -> str:
    return commit[:12] if commit else "nothing"


@click.command()
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--org", "org_id", required=True, help="Org (tenant) to sync into; it must exist.")
@click.option("--repo", required=True, help="Repository scope the work tree's files belong to.")
@click.option("--create-repo", is_flag=True, help="Create the repo if the org does not have it (first sync).")
@click.option("--kind", default=None, help="Document kind of every file. Default: inferred per file.")
@click.option(
    "--owner",
    default=None,
    help="Owner of the fragments (over front matter owner:). Default: CODEOWNERS, then the org's default owner.",
)
@click.option("--dry-run", is_flag=True, help="Say what would be written and deleted; change nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print what the sync did as one JSON object on stdout.")
@click.option(
    "--refresh-authority/--no-refresh-authority",
    default=True,
    show_default=True,
    help="Refresh citation authority afterwards when documents changed (contexts rank refresh).",
)
@click.pass_context
def sync(
    ctx: click.Context,
    path: Path,
    org_id: str,
    repo: str,
    create_repo: bool,
    kind: str | None,
    owner: str | None,
    dry_run: bool,
    as_json: bool,
    refresh_authority: bool,
) -> None:
    """Sync a git work tree's committed files into a repo: only what changed since the
    last synced commit (additions, modifications, renames, deletions; .gitignore
    honoured, uncommitted changes left out)."""
    settings = context_settings(ctx)
    dsn = open_database(settings)
    report = sync_tree(settings, dsn, path, org_id, repo, owner, kind, create_repo, dry_run)
    plan = report.plan
    if as_json:
        echo(json.dumps(_summary(org_id, repo, report, dry_run)))
    if report.uncommitted:
        console.print(
            f"[yellow]note:[/] {report.uncommitted} uncommitted change(s) in the work tree are not synced "
            "(sync reads committed files only: commit them, then sync)"
        )
    if report.up_to_date:
        console.print(f"up to date at {plan.head} ({plan.ref or 'detached HEAD'}): nothing to do")
        return
    console.print(f"{org_id}/{repo}: {_short(plan.last)} -> {_short(plan.head)}: {plan.reason}")
    if dry_run:
        for file in plan.writes:
            echo(f"write\t{file.path}" + (f"\t(renamed from {file.renamed_from})" if file.renamed_from else ""))
        for doc_path, doc_id in plan.deletes:
            echo(f"delete\t{doc_path}\t(document {doc_id})")
        console.print(f"dry run: {len(plan.writes)} file(s) to write, {len(plan.deletes)} document(s) to delete")
        return
    print_skipped(report.refused)
    console.print(
        f"synced to {plan.head}: {report.written} file(s) read, {report.changed} document(s) changed "
        f"({report.fragments} fragment(s) written, {report.created} new), {report.deleted} deleted"
    )
    if (report.changed or report.deleted) and refresh_authority:
        from app.cli.rank import rank_refresh

        ctx.invoke(rank_refresh)


COMMANDS = (sync,)
