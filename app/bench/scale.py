"""`make bench` at scale without hours of embedding: copies of the bench corpus written
through the real ingestion pipeline (normalize, chunk, deduplicate, write, BM25 postings,
HNSW inserts), with each chunk's vector taken from the one embedded for the original.

- `--copies K`: K-1 more copies inside the bench org, one repo each, so the tenant holds
  K times the corpus (100k fragments: a 20k corpus and `--copies 5`).
- `--tenants T`: T more orgs, each holding one copy: the database's size (1M fragments:
  a 20k corpus, `--copies 5 --tenants 45`).

A copy's texts are the original's, so BM25 sees each term's document frequency times the
number of copies (what a tenant of repositories that share code and docs looks like),
and each vector is the original's with a small seeded perturbation (cosine about 0.995 to
it), so the HNSW graph holds distinct points instead of exact duplicates, which would
degrade it in a way no real corpus does. A chunk with no original vector (near-duplicate
pointers can land on another document first) is embedded by the model: the report counts
them. What a retrieval then costs at that size is what `make bench` measures next.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import psycopg
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from app.access import ensure_admin_principal
from app.db.sql import scalar
from app.ingest.batches import ingest_groups
from app.ingest.normalize import SourceDocument
from app.ingest.pipeline import IngestPipeline, embedding_input
from app.scope import Scope
from app.text.embed import Embedder

JITTER = 0.005
"""Standard deviation of the noise added to each coordinate of a copied unit vector
(384 dimensions: a cosine of about 0.995 to the original)."""


def _key(namespace: str, text: str) -> bytes:
    return hashlib.sha256(f"{namespace}\0{text}".encode("utf-8", "surrogatepass")).digest()


@dataclass
class CopiedVectors:
    """An embedder that looks a text's vector up among the original corpus's and perturbs
    it for copy `copy`; texts it does not know go to the real model."""

    embedder: Embedder
    known: dict[bytes, np.ndarray]
    copy: int = 0
    missed: int = field(default=0)

    def __getattr__(self, name: str) -> Any:  # name, dims, load, ...: the real embedder's
        return getattr(self.embedder, name)

    def embed(self, texts: list[str]) -> list[list[float]]:
        out: list[list[float] | None] = []
        unknown: list[int] = []
        for i, text in enumerate(texts):
            digest = _key(self.embedder.namespace, text)
            vector = self.known.get(digest)
            if vector is None:
                unknown.append(i)
                out.append(None)
                continue
            rng = np.random.default_rng(int.from_bytes(digest[:8], "little") ^ self.copy)
            moved = vector + rng.normal(0.0, JITTER, vector.shape).astype(np.float32)
            out.append((moved / np.linalg.norm(moved)).tolist())
        if unknown:
            self.missed += len(unknown)
            for i, embedded in zip(unknown, self.embedder.embed([texts[i] for i in unknown])):
                out[i] = embedded
        return [v for v in out if v is not None]


def original_vectors(conn: psycopg.Connection, org: str, repo: str) -> dict[bytes, np.ndarray]:
    """Each embedded input of the corpus (path, headings and text, as the pipeline builds
    it) and its vector, per namespace."""
    rows = conn.execute(
        """
        select f.namespace, d.path, f.heading_path, f.text, e.embedding::text
        from data.fragments f
        join data.embeddings e on e.fragment_id = f.fragment_id and e.org_id = f.org_id
        join data.embedding_models em on em.model_id = e.model_id and em.status = 'active'
        join data.documents d on d.doc_id = f.doc_id
        where f.org_id = %s and f.repo_id = %s and f.active
        """,
        (org, repo),
    ).fetchall()
    return {
        _key(namespace, embedding_input(path, headings, text)): np.asarray(json.loads(vector), dtype=np.float32)
        for namespace, path, headings, text, vector in rows
    }


def corpus_documents(conn: psycopg.Connection, org: str, repo: str) -> list[SourceDocument]:
    """The corpus's documents as stored (current versions, normalised text)."""
    rows = conn.execute(
        """
        select d.path, d.kind, v.content
        from data.documents d
        join data.document_versions v on v.doc_id = d.doc_id and v.version = d.current_version
        where d.org_id = %s and d.repo_id = %s and d.current_version > 0
        order by d.path
        """,
        (org, repo),
    ).fetchall()
    return [SourceDocument(path, content, kind=kind) for path, kind, content in rows]


def copy_scopes(org: str, repo: str, copies: int, tenants: int) -> Iterator[tuple[int, Scope]]:
    """(copy number, scope) of every copy beyond the original: repos of the bench org,
    then one org per synthetic tenant."""
    for k in range(2, copies + 1):
        yield k, Scope(org, f"{repo}-copy-{k}")
    for t in range(1, tenants + 1):
        yield copies + t, Scope(f"{org}-tenant-{t}", repo)


def make_copies(
    dsn: str, pipeline: IngestPipeline, org: str, admin: str, repo: str, copies: int, tenants: int, console: Console
) -> dict:
    """Write the copies a previous run has not finished (a copy holding as many active
    fragments as the original counts as done). Returns what was written and how fast."""
    if copies <= 1 and tenants <= 0:
        return {}
    count_sql = "select count(*) from data.fragments where org_id = %s and repo_id = %s and active"
    with psycopg.connect(dsn) as conn:
        target = scalar(conn, count_sql, (org, repo))
        documents = corpus_documents(conn, org, repo)
        known = original_vectors(conn, org, repo)
        conn.rollback()
        scopes = list(copy_scopes(org, repo, copies, tenants))
        todo = [(k, s) for k, s in scopes if scalar(conn, count_sql, (s.org_id, s.repo_id)) < target]
        conn.rollback()
        wrapped = {ns: CopiedVectors(e, known) for ns, e in pipeline.embedders.items()}
        copier = IngestPipeline(pipeline.settings, wrapped)  # type: ignore[arg-type]
        written = 0
        started = time.perf_counter()
        with Progress(
            TextColumn("copies"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console
        ) as progress:
            task = progress.add_task("copies", total=len(todo) * len(documents))
            for k, scope in todo:
                for vectors in wrapped.values():
                    vectors.copy = k
                if scope.org_id != org:
                    conn.execute("select service.create_org(%s)", (scope.org_id,))
                    ensure_admin_principal(conn, scope.org_id, admin)
                    conn.commit()
                for group in ingest_groups(
                    conn, copier, scope, admin, documents, lambda d: d, size=64
                ):  # fmt: skip
                    written += group.fragments
                    progress.advance(task, group.items)
        seconds = time.perf_counter() - started
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("vacuum analyze")
        tenant = scalar(conn, "select count(*) from data.fragments where org_id = %s and active", (org,))
        database = scalar(conn, "select count(*) from data.fragments where active", ())
    return {
        "copies": copies,
        "tenants": tenants,
        "copies_written_now": len(todo),
        "fragments_written_now": written,
        "write_seconds": round(seconds, 1),
        "fragments_per_second_without_embedding": round(written / seconds, 1) if seconds and written else None,
        "embedded_for_lack_of_an_original": sum(v.missed for v in wrapped.values()),
        "tenant_fragments": tenant,
        "database_fragments": database,
        "how": "copies of the corpus through the ingestion pipeline, each vector the original's perturbed"
        f" (sigma {JITTER} per coordinate)",
    }
