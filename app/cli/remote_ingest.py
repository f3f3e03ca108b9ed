"""`contexts ingest PATH... --url URL --key KEY`: the same walk of files as a local
ingest, written through a running service (POST /documents) as the key's principal.

Without it, `contexts ingest` with CONTEXTS_URL and CONTEXTS_KEY exported (as for `query`
and `documents`) wrote into the database of CONTEXTS_HOME, which the service at that URL
may never read. Loads no model: the service embeds."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from app.cli.common import CliError, console, git_identity, print_skipped

if TYPE_CHECKING:
    from app.client import Client
    from app.ingest.files import FileEntry
    from app.ingest.normalize import RejectedDocument
    from app.scope import Scope

BATCH_DOCUMENTS = 16
"""Documents a request carries at most (the API takes up to 1,000): the service embeds a
batch before it answers, and smaller ones move the progress bar."""
BATCH_BYTES = 256 * 1024
"""Content bytes a request carries at most, well under the service's default body limit
(8 MiB) once encoded as JSON; a larger file travels alone."""
TIMEOUT_S = 900.0
"""How long a request may wait for its answer: the service embeds the whole batch first,
and one file of 2 MiB (its default largest document) is a few thousand fragments, minutes
on a CPU."""
RETRIES = 5
"""Times a batch is sent again after a 429 or 503 (a busy write lane, another writer on the
org), each after the service's Retry-After (at most RETRY_WAIT_S)."""
RETRY_WAIT_S = 30.0


def ingest_through_service(
    url: str,
    key: str | None,
    paths: list[Path],
    scope: Scope,
    kind: str | None,
    owner: str | None,
) -> tuple[int, int, int, list[RejectedDocument]]:
    """Walk `paths` as a local ingest does and write the files in batches; returns
    (documents changed, fragments, new fragments, refusals). A document the service
    refuses (422: empty, binary, an unusable path; 413: over its body limit) is skipped and
    reported, as a local ingest does; any other refusal (a key without write, an unknown
    org) stops the command with the service's message. Batches already written stay."""
    import time

    from app.cli.documents import files_to_ingest, read_file
    from app.client import Client, ContextsError, InvalidCall
    from app.ingest.normalize import RejectedDocument, UnreadableContent, decode

    if not key:
        raise CliError("--url needs --key (or CONTEXTS_KEY): the service acts for the key's principal")
    entries = files_to_ingest(paths, None, scope)
    author = owner or git_identity() or os.environ.get("USER")
    refused: list[RejectedDocument] = []
    changed = fragments = created = 0

    def refuse(entry: FileEntry, exc: RejectedDocument) -> None:
        if entry.explicit:  # named on the command line: an error, not a skip
            raise CliError(str(exc)) from exc
        refused.append(exc)

    def document(entry: FileEntry) -> dict | None:
        """The request body's document for a file, or None once refused here."""
        try:
            content, modified = read_file(entry)
            # The JSON body carries text: bytes that are not UTF-8 cannot travel. The
            # service then judges the text by its control characters; so is it here.
            text = decode(content, entry.relative)
            decode(text, entry.relative)
        except (RejectedDocument, UnreadableContent) as exc:
            refuse(entry, exc)
            progress.advance(task)
            return None
        body: dict = {"path": entry.relative, "content": text, "timestamp": modified.isoformat()}
        for name, value in (("kind", kind), ("author", author), ("owner", owner)):
            if value is not None:
                body[name] = value
        return body

    def send(client: Client, batch: list[tuple[FileEntry, dict]], attempt: int = 0) -> None:
        nonlocal changed, fragments, created
        try:
            written = client.ingest(
                [doc for _, doc in batch],
                org_id=scope.org_id,
                repo_id=scope.repo_id,
                persona_id=scope.persona_id,
                session_id=scope.session_id,
            )
        except ContextsError as exc:
            if exc.status in (429, 503) and attempt < RETRIES:
                time.sleep(min(getattr(exc, "retry_after", None) or 1.0, RETRY_WAIT_S))
                send(client, batch, attempt + 1)
                return
            # 422, 413, or a body the client itself refused to send (a path or name the
            # API does not accept): one document's fault, found by sending each alone.
            if exc.status not in (413, 422) and not isinstance(exc, InvalidCall):
                raise CliError(str(exc)) from exc
            if len(batch) > 1:  # the whole request was refused: find which document, alone
                for one in batch:
                    send(client, [one])
                return
            entry, _ = batch[0]
            reason = "larger than the service accepts in one request (413)" if exc.status == 413 else exc.detail
            named = reason if reason.startswith(entry.relative) else f"{entry.relative}: {reason}"
            refuse(entry, RejectedDocument(named))  # the bar advances with its batch
            return
        for result in written.documents:
            if result.changed:
                changed += 1
                fragments += result.fragments
                created += result.created

    progress = Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
    )
    task = progress.add_task("ingesting", total=len(entries))
    try:
        with Client(url, key, timeout=TIMEOUT_S) as client, progress:
            for batch in _batches(entries, document):
                send(client, batch)
                progress.advance(task, len(batch))
    except CliError as exc:
        if not (changed or refused):
            raise
        # What was written stays written: say so, with what was skipped, before the error.
        print_skipped(refused)
        raise CliError(
            f"{exc} (before it: {changed} document(s) changed, {fragments} fragment(s) written; "
            "running the command again skips what is unchanged)"
        ) from exc
    return changed, fragments, created, refused


def _batches(
    entries: list[FileEntry], document: Callable[[FileEntry], dict | None]
) -> Iterator[list[tuple[FileEntry, dict]]]:
    """The files' documents in batches of at most BATCH_DOCUMENTS and, but for a file
    larger than that alone, BATCH_BYTES of content."""
    batch: list[tuple[FileEntry, dict]] = []
    size = 0
    for entry in entries:
        body = document(entry)
        if body is None:
            continue
        length = len(body["content"].encode("utf-8"))
        if batch and (len(batch) >= BATCH_DOCUMENTS or size + length > BATCH_BYTES):
            yield batch
            batch, size = [], 0
        batch.append((entry, body))
        size += length
    if batch:
        yield batch
