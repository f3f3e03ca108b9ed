"""Ingestion in groups, for callers that hold a database connection (the CLI's `ingest`
and `serve --demo`, the eval corpora, the bench): prepare documents until a group is
full (a refused one is reported, not written), write the group acting as a principal,
commit, and hand back what happened. Each commit makes a long ingestion resumable and
bounds what one transaction holds; writing a group at once batches its embeddings.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Generic, TypeVar

import psycopg

from app.access import act_as
from app.ingest.normalize import NormalizedDocument, RejectedDocument, SourceDocument
from app.ingest.pipeline import IngestPipeline, IngestResult, PreparedDocument
from app.scope import Scope

T = TypeVar("T")

GROUP_SIZE = 64
"""Prepared documents written (and committed) together."""


@dataclass(slots=True)
class Group(Generic[T]):
    """One committed group."""

    items: int = 0
    """Items consumed: prepared ones and refused ones."""
    prepared: list[PreparedDocument] = field(default_factory=list)
    results: list[IngestResult] = field(default_factory=list)
    """One per prepared document (unchanged documents included)."""
    refused: list[tuple[T, RejectedDocument]] = field(default_factory=list)
    prepare_seconds: float = 0.0
    """Reading and preparing (normalize, chunk): no database."""
    write_seconds: float = 0.0
    """Binding the principal, writing (embedding included) and committing."""

    @property
    def changed(self) -> int:
        return sum(1 for r in self.results if r.changed)

    @property
    def fragments(self) -> int:
        return sum(r.fragments for r in self.results)

    @property
    def created(self) -> int:
        return sum(r.created for r in self.results)


def ingest_groups(
    conn: psycopg.Connection,
    pipeline: IngestPipeline,
    scope: Scope,
    principal: str,
    items: Iterable[T],
    source: Callable[[T], SourceDocument],
    size: int = GROUP_SIZE,
    on_refused: Callable[[T, RejectedDocument], None] | None = None,
    on_document: Callable[[IngestResult], None] | None = None,
) -> Iterator[Group[T]]:
    """Ingest `items` into `scope` as `principal` (act_as: its grants and row-level
    security apply, as over HTTP), `size` prepared documents per transaction; yields
    each group once committed. `source(item)` reads an item; `on_refused` may raise to
    stop (nothing of the group being prepared is written); `on_document` is called per
    written document. Items are read lazily: a caller may stop between groups. The
    embedding models must be registered already (`pipeline.register_models`, as the
    migrator); a database error rolls the group back and propagates."""
    pending = iter(items)
    while True:
        group: Group[T] = Group()
        started = time.perf_counter()
        normalized: list[NormalizedDocument] = []
        items_of: list[T] = []
        for item in pending:
            group.items += 1
            try:
                normalized.append(pipeline.normalize(source(item)))
                items_of.append(item)
            except RejectedDocument as exc:
                group.refused.append((item, exc))
                if on_refused:
                    on_refused(item, exc)
            if len(normalized) >= size:
                break
        if not group.items:
            return
        try:
            unchanged = _unchanged(conn, pipeline, scope, principal, normalized)
            # Only what changed is chunked: an unchanged re-ingest costs a normalisation
            # and one query per group (chunking is about nine tenths of `prepare`).
            for doc, item in zip(normalized, items_of, strict=True):
                if doc.path in unchanged:
                    continue
                try:
                    group.prepared.append(pipeline.chunk(doc))
                except RejectedDocument as exc:  # cut into more fragments than a document may hold
                    group.refused.append((item, exc))
                    if on_refused:
                        on_refused(item, exc)
            group.prepare_seconds = time.perf_counter() - started
            started = time.perf_counter()
            if group.prepared:
                act_as(conn, scope.org_id, principal)
                group.results = pipeline.write(conn, scope, group.prepared, on_document=on_document)
                conn.commit()
        except Exception:
            with contextlib.suppress(psycopg.Error):  # a lost connection has nothing to roll back
                conn.rollback()
            raise
        group.write_seconds = time.perf_counter() - started
        for result in unchanged.values():
            group.results.append(result)
            if on_document:
                on_document(result)
        yield group


def _unchanged(
    conn: psycopg.Connection, pipeline: IngestPipeline, scope: Scope, principal: str, docs: list[NormalizedDocument]
) -> dict[str, IngestResult]:
    """The documents of `docs` the scope holds already, unchanged (none when a path
    repeats: `write` refuses the group then, as it always did)."""
    paths = [d.path for d in docs]
    if not docs or len(set(paths)) != len(paths):
        return {}
    act_as(conn, scope.org_id, principal)
    unchanged = pipeline.unchanged(conn, scope, docs)
    conn.rollback()  # no transaction stays open while the group is chunked
    return unchanged
