"""`make bench`'s ingest reference: writing the corpus's own fragments the way a user
would by hand, timed in the same run as our ingestion rate (issue 14).

The reference takes a sample of the bench org's stored fragments (so it embeds exactly
the texts the pipeline embedded: path, headings and text, per namespace), embeds them with
the same models, dtype and threads, and inserts them in batches into a side table per
namespace (schema bench_ingest_reference, dropped afterwards) holding the text, a
`to_tsvector('english', …)` column with a GIN index and the vector with an HNSW index,
one commit per batch. No normalisation, chunking, deduplication, BM25 statistics,
citations, row-level security or versions: it is the floor that embedding and indexing
cost, not an equal. Its embedding share says how much of any ingest rate the model takes.
Its indexes start empty (the product's hold the corpus), so its writes are if anything
cheaper than they would be at the corpus's size.
"""

from __future__ import annotations

import time

import psycopg

from app.ingest.pipeline import embedding_input
from app.text.embed import Embedder

SCHEMA = "bench_ingest_reference"
BATCH = 64


def sample(conn: psycopg.Connection, org: str, n: int) -> dict[str, list[tuple[str, str]]]:
    """Up to `n` active fragments of `org` in a fixed pseudo-random order, as (embedding
    input, text) per namespace."""
    rows = conn.execute(
        """
        select f.namespace, d.path, f.heading_path, f.text
        from data.fragments f join data.documents d on d.doc_id = f.doc_id
        where f.org_id = %s and f.active
        order by md5(f.fragment_id::text)
        limit %s
        """,
        (org, n),
    ).fetchall()
    by_namespace: dict[str, list[tuple[str, str]]] = {}
    for namespace, path, headings, text in rows:
        by_namespace.setdefault(namespace, []).append((embedding_input(path, headings, text), text))
    return by_namespace


def measure(conn: psycopg.Connection, models: dict[str, Embedder], org: str, n: int) -> dict:
    """Embed and insert a sample of `n` fragments by hand; fragments/s and where the time
    went. `conn` is the database owner's: it makes the side tables and drops them."""
    work = sample(conn, org, n)
    conn.rollback()
    embed_s = write_s = 0.0
    written = 0
    conn.execute(f"drop schema if exists {SCHEMA} cascade")
    conn.execute(f"create schema {SCHEMA}")
    conn.commit()
    try:
        for i, (namespace, items) in enumerate(sorted(work.items())):
            model = models[namespace]
            dims = len(model.embed(["warm up"])[0])
            table = f"{SCHEMA}.chunks_{i}"
            conn.execute(
                f"create table {table} (id bigint generated always as identity primary key, text text,"
                f" tsv tsvector, embedding extensions.vector({dims}))"
            )
            conn.execute(f"create index on {table} using gin (tsv)")
            conn.execute(f"create index on {table} using hnsw (embedding extensions.vector_cosine_ops)")
            conn.commit()
            for start in range(0, len(items), BATCH):
                batch = items[start : start + BATCH]
                began = time.perf_counter()
                vectors = model.embed([inputs for inputs, _ in batch])
                embed_s += time.perf_counter() - began
                began = time.perf_counter()
                conn.execute(
                    f"insert into {table} (text, tsv, embedding)"
                    " select x.text, to_tsvector('english', x.text), x.embedding::extensions.vector"
                    " from unnest(%s::text[], %s::text[]) as x(text, embedding)",
                    ([text for _, text in batch], [str(v) for v in vectors]),
                )
                conn.commit()
                write_s += time.perf_counter() - began
                written += len(batch)
    finally:
        if not conn.closed:  # a broken connection's error is the one to see
            conn.rollback()
            conn.execute(f"drop schema if exists {SCHEMA} cascade")
            conn.commit()
    seconds = embed_s + write_s
    return {
        "reference": "the same texts embedded by the same models, inserted by hand in batches of"
        f" {BATCH} (text, to_tsvector with a GIN index, vector with an HNSW index); as the owner",
        "fragments": written,
        "seconds": round(seconds, 2),
        "fragments_per_second": round(written / seconds, 1) if seconds else None,
        "embed_seconds": round(embed_s, 2),
        "embed_share": round(embed_s / seconds, 3) if seconds else None,
    }
