"""Engines outside PostgreSQL timed beside ours in the same run, query by query and
interleaved (issue 31): Tantivy and bm25s beside our BM25 top k, LanceDB's hybrid beside
our candidates call and our whole retrieval. They are references for the bench only,
from the optional `bench` extra (`pip install -e '.[bench]'`): never a dependency of the
service, imported here lazily, and when one is missing the bench says so in one line and
leaves its rows out.

- **Tantivy** (0.27, Python bindings) indexes the same texts (heading and body in one
  field) with its English stemmer tokenizer (`en_stem`) on one writer thread, in a
  temporary folder; the query is the same text, its terms OR-ed (punctuation becomes
  spaces, lower case: no query syntax), top k. Its index's size on disk and its build
  time stand beside our lexical index's bytes (`service.metrics_org_sizes`) and our write.
- **bm25s** (0.3, sparse matrices, no pruning) is fed *our* lexemes: each fragment's
  terms and term frequencies as our BM25 indexes them (`unnest(tsv)`, a term's frequency
  its number of positions), and the query's lexemes from `api.lexical_query_terms` (a
  lexeme the query says twice, twice: Okapi's query term frequency, as ours), with
  k1 = 1.2, b = 0.75 and Lucene's idf, as ours. Its top k is the reference for our
  scores: overlap@10 and @100 of our top k with its, and whether our scores are its
  scores times one constant (ours keeps Okapi's (k1 + 1) factor, Lucene drops it: the
  constant is 2.2). Copies of a text score the same: a fragment of ours tied with
  bm25s's k-th score counts as in its top k.
- **LanceDB** (0.40) holds the same texts and the same stored vectors (each fragment's
  embedding under its namespace's active model), its own full-text index (English,
  stemmed, stop words removed) and no vector index (an exact scan); a hybrid query with
  the same query vector, fused by its RRF reranker (k 60), top k, each hit's id and text.

Ours is timed as the rest of the bench times it: data._bm25_top as the owner (the lexical
bench's call), api.retrieve_candidates and a whole retrieval as a principal under
row-level security (reference.py's calls). Tantivy's time is its query parse and search
(hits as document addresses); bm25s's its scoring, top k and ids.
"""

from __future__ import annotations

import importlib
import re
import shutil
import tempfile
import time
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any

import msgspec
import psycopg

from app.access import act_as
from app.bench import reference as bench_reference
from app.bench.reference import alternate
from app.bench.stats import percentile
from app.retrieve.fusion import fusion_spec
from app.retrieve.service import Retriever
from app.wire.retrieve import DEFAULT_BUDGET_TOKENS, DEFAULT_K_DENSE, DEFAULT_K_LEXICAL, RetrieveRequest

EXTRA = {"tantivy": "0.27.0", "bm25s": "0.3.16", "lancedb": "0.40.0"}
"""The bench extra (pyproject.toml): each reference and the version measured."""

K1, B = 1.2, 0.75
"""BM25's parameters, ours (data._bm25_top's defaults) and bm25s's alike."""

TEXTS = """
    select f.fragment_id, array_to_string(f.heading_path, ' ') || E'\\n' || f.text
    from data.fragments f where f.org_id = %s and f.active order by f.fragment_id
"""
"""What Tantivy and LanceDB index: each active fragment's heading and body."""

LEXEMES = """
    select f.fragment_id, array_agg(t.lexeme order by t.lexeme),
           array_agg(coalesce(array_length(t.positions, 1), 1) order by t.lexeme)
    from data.fragments f, unnest(f.tsv) t
    where f.org_id = %s and f.active
    group by f.fragment_id order by f.fragment_id
"""
"""Each active fragment's terms and term frequencies, as data._bm25_index counts them."""

QUERY_LEXEMES = (
    "select coalesce(array_agg(q.term order by q.term), '{}') from api.lexical_query_terms(%s) q,"
    " generate_series(1, q.times::int)"
)
"""The query's lexemes, each as often as the query says it: bm25s, like ours, counts a
repeated query term once per repetition."""


def missing(*names: str) -> str | None:
    """None when every named reference imports, else the one line the bench prints."""
    absent = []
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError:
            absent.append(name)
    if not absent:
        return None
    return f"bench extra missing ({', '.join(absent)}): its rows are skipped; install it with pip install -e '.[bench]'"


def _import(name: str) -> Any:
    module: ModuleType = importlib.import_module(name)
    return module


def _folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def ratio(ours: float | None, theirs: float | None) -> float | None:
    return round(ours / theirs, 2) if ours and theirs else None


def ratios(ours: list[float], theirs: list[float]) -> dict:
    """Ours over theirs at p50 and p95, from the unrounded percentiles."""
    if not ours or not theirs:
        return {"p50": None, "p95": None}
    return {q: ratio(percentile(ours, n), percentile(theirs, n)) for q, n in (("p50", 50), ("p95", 95))}


class TantivyIndex:
    """The same texts in a Tantivy index of a temporary folder (close() removes it)."""

    def __init__(self, texts: list[tuple[int, str]]) -> None:
        tantivy = _import("tantivy")
        self.folder = Path(tempfile.mkdtemp(prefix="bench-tantivy-"))
        builder = tantivy.SchemaBuilder()
        builder.add_text_field("text", stored=False, tokenizer_name="en_stem")
        self.index = tantivy.Index(builder.build(), path=str(self.folder))
        started = time.perf_counter()
        writer = self.index.writer(heap_size=256_000_000, num_threads=1)
        for _, text in texts:
            writer.add_document(tantivy.Document(text=text))
        writer.commit()
        writer.wait_merging_threads()
        self.build_seconds = round(time.perf_counter() - started, 2)
        self.index.reload()
        self.searcher = self.index.searcher()
        self.bytes = _folder_bytes(self.folder)
        self.documents = len(texts)

    def top(self, query: str, k: int) -> list:
        text = re.sub(r"\W+", " ", query).lower().strip()
        if not text:
            return []
        return self.searcher.search(self.index.parse_query(text, ["text"]), k).hits

    def close(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


class Bm25sIndex:
    """bm25s over our lexemes: the fragments that have terms, as our BM25 counts them."""

    def __init__(self, conn: psycopg.Connection, org: str) -> None:
        bm25s = _import("bm25s")
        vocab: dict[str, int] = {}
        ids: list[int] = []
        corpus: list[list[int]] = []
        for fragment_id, lexemes, tfs in conn.execute(LEXEMES, (org,)):
            tokens: list[int] = []
            for lexeme, tf in zip(lexemes, tfs, strict=True):
                tokens.extend([vocab.setdefault(lexeme, len(vocab))] * tf)
            ids.append(fragment_id)
            corpus.append(tokens)
        conn.rollback()
        started = time.perf_counter()
        self.retriever = bm25s.BM25(k1=K1, b=B, method="lucene")
        self.retriever.index((corpus, vocab), show_progress=False)
        self.build_seconds = round(time.perf_counter() - started, 2)
        self.fragment_ids = ids
        self.vocab = vocab

    def terms(self, conn: psycopg.Connection, query: str) -> list[str]:
        """The query's lexemes (ours) that some fragment holds, repeated as the query repeats them."""
        row = conn.execute(QUERY_LEXEMES, (query,)).fetchone()
        conn.rollback()
        return sorted(t for t in (row[0] if row else []) if t in self.vocab)

    def top(self, terms: list[str], k: int) -> tuple[list[int], list[float]]:
        """Its top k (fragment ids, scores), best first; nothing when no term is known."""
        if not terms:
            return [], []
        k = min(k, len(self.fragment_ids))
        docs, scores = self.retriever.retrieve([terms], k=k, show_progress=False, n_threads=0)
        pairs = [(float(s), self.fragment_ids[int(d)]) for d, s in zip(docs[0], scores[0], strict=True) if s > 0]
        pairs.sort(key=lambda p: (-p[0], p[1]))
        return [f for _, f in pairs], [s for s, _ in pairs]

    def scores(self, terms: list[str]) -> dict[int, float]:
        """Its score of every fragment holding a term of the query."""
        if not terms:
            return {}
        every = self.retriever.get_scores(terms)
        return {self.fragment_ids[i]: float(s) for i, s in enumerate(every) if s > 0}


def agreement(ours: list[tuple[int, float]], reference: dict[int, float], k: int) -> float | None:
    """Of our top k, the share the reference also ranks in its top k, a fragment tied
    with its k-th score (to float32's precision) counting as in it: copies of a text tie,
    and either engine may keep any of them. None when the reference finds nothing."""
    ranked = sorted(reference.values(), reverse=True)
    if not ranked:
        return None if not ours else 0.0
    kth = ranked[min(k, len(ranked)) - 1]
    mine = ours[:k]
    if not mine:
        return 0.0
    wanted = min(k, len(ranked))
    inside = sum(1 for fragment_id, _ in mine if reference.get(fragment_id, 0.0) >= kth * (1 - 1e-5))
    return min(inside, wanted) / max(len(mine), wanted)


def lexical(
    conn: psycopg.Connection,
    org: str,
    sets: dict[str, list[str]],
    k: int = DEFAULT_K_LEXICAL,
    ours_build_seconds: float | None = None,
) -> dict:
    """Our BM25 top k (data._bm25_top, as the lexical bench calls it) beside Tantivy's and
    bm25s's on each set of queries (e.g. ordinary and long), interleaved, as the owner;
    storage and build beside Tantivy's. `{"skipped": reason}` without the bench extra."""
    reason = missing("tantivy", "bm25s")
    if reason:
        return {"skipped": reason}
    texts = [(int(i), t) for i, t in conn.execute(TEXTS, (org,)).fetchall()]
    conn.rollback()
    tantivy = TantivyIndex(texts)
    try:
        bm25 = Bm25sIndex(conn, org)
        row = conn.execute(
            "select sum(bm25_bytes) from service.metrics_org_sizes() where org_id = %s", (org,)
        ).fetchone()
        conn.rollback()
        ours_bytes = int(row[0]) if row and row[0] is not None else None
        report: dict = {
            "references": {
                "tantivy": f"Tantivy {EXTRA['tantivy']}: the same texts (heading + body), en_stem tokenizer,"
                f" terms OR-ed, top {k}; one writer thread, index in a temporary folder",
                "bm25s": f"bm25s {EXTRA['bm25s']} fed our lexemes and term frequencies, k1 {K1}, b {B},"
                f" Lucene idf, top {k}",
            },
            "fragments": len(texts),
            "storage": {
                "ours_bytes": ours_bytes,
                "tantivy_bytes": tantivy.bytes,
                "ratio": ratio(ours_bytes, tantivy.bytes),
            },
            "build": {
                "ours_seconds": ours_build_seconds,
                "ours": "fragments written through the BM25 triggers, this run"
                if ours_build_seconds is not None
                else "not timed: the corpus was written by an earlier run or by the ingest pipeline",
                "tantivy_seconds": tantivy.build_seconds,
                "ratio": ratio(ours_build_seconds, tantivy.build_seconds),
                "bm25s_seconds": bm25.build_seconds,
            },
        }
        for label, queries in sets.items():
            report[label] = _lexical_set(conn, org, queries, k, tantivy, bm25)
        return report
    finally:
        tantivy.close()


def _lexical_set(
    conn: psycopg.Connection, org: str, queries: list[str], k: int, tantivy: TantivyIndex, bm25: Bm25sIndex
) -> dict:
    timings: dict[str, list[float]] = {"ours": [], "tantivy": [], "bm25s": []}
    at10: list[float] = []
    at100: list[float] = []
    factors: list[float] = []
    for i, q in enumerate(queries):
        params = {"org": org, "query": q, "k": k}
        terms = bm25.terms(conn, q)
        rows = alternate(
            i,
            [
                ("ours", partial(bench_reference.owner_rows, conn, bench_reference.PRUNED, params)),
                ("tantivy", partial(tantivy.top, q, k)),
                ("bm25s", partial(bm25.top, terms, k)),
            ],
            timings,
            conn.rollback,
        )
        ours = [(int(f), float(s)) for f, s in rows["ours"]]
        reference = bm25.scores(terms)
        for into, at in ((at10, 10), (at100, k)):
            shared = agreement(ours, reference, at)
            if shared is not None:
                into.append(shared)
        factors.extend(score / reference[f] for f, score in ours if reference.get(f))
    # To the hundredth of a ms: a Tantivy search takes about one.
    summaries = {name: bench_reference.latency_summary(values, 2) for name, values in timings.items()}
    constant = sorted(factors)[len(factors) // 2] if factors else None
    spread = max(abs(f / constant - 1) for f in factors) if factors and constant else None
    return {
        "queries": len(queries),
        **summaries,
        "ours_over_tantivy": ratios(timings["ours"], timings["tantivy"]),
        "ours_over_bm25s": ratios(timings["ours"], timings["bm25s"]),
        "overlap_at_10_bm25s": round(sum(at10) / len(at10), 4) if at10 else None,
        f"overlap_at_{k}_bm25s": round(sum(at100) / len(at100), 4) if at100 else None,
        "score_constant_bm25s": round(constant, 4) if constant else None,
        "score_max_relative_deviation": round(spread, 6) if spread is not None else None,
        "scores_agree_up_to_a_constant": spread is not None and spread < 1e-4,
    }


def engine_rows(engines: dict) -> list[tuple[str, str]]:
    """Table rows of bench_engines.lexical's report: each set of queries, storage, build."""
    rows = []
    for label in ("ordinary", "long"):
        r = engines.get(label)
        if not r:
            continue
        for engine in ("tantivy", "bm25s"):
            over = r[f"ours_over_{engine}"]
            rows.append(
                (
                    f"{label} queries: ours vs {engine}, p50 / p95 (ms); ours / it",
                    f"{r['ours']['p50_ms']} / {r['ours']['p95_ms']} vs {r[engine]['p50_ms']} / "
                    f"{r[engine]['p95_ms']}; x{over['p50']} / x{over['p95']}",
                )
            )
        rows.append(
            (
                f"{label} queries: overlap@10 / @{DEFAULT_K_LEXICAL} with bm25s; scores = its x a constant",
                f"{r['overlap_at_10_bm25s']} / {r[f'overlap_at_{DEFAULT_K_LEXICAL}_bm25s']};"
                f" {r['scores_agree_up_to_a_constant']} (x{r['score_constant_bm25s']})",
            )
        )
    st, b = engines["storage"], engines["build"]
    rows.append(
        ("lexical index bytes: ours vs Tantivy", f"{st['ours_bytes']} vs {st['tantivy_bytes']}  (x{st['ratio']})")
    )
    rows.append(
        (
            "index build (s): ours (through the triggers) vs Tantivy (one thread)",
            f"{b['ours_seconds']} vs {b['tantivy_seconds']}  (x{b['ratio']})",
        )
    )
    return rows


HYBRID_ROWS = """
    select f.fragment_id, array_to_string(f.heading_path, ' ') || E'\\n' || f.text, e.embedding::real[]
    from data.fragments f
    join data.embedding_models m on m.namespace = f.namespace and m.status = 'active'
    join data.embeddings e on e.org_id = f.org_id and e.fragment_id = f.fragment_id and e.model_id = m.model_id
    where f.org_id = %s and f.active
    order by f.fragment_id
"""
"""Each active fragment's text and its stored vector under its namespace's active model."""


class LanceTable:
    """The org's texts and stored vectors in a LanceDB table of a temporary folder, with
    its own full-text index and no vector index (close() removes it)."""

    def __init__(self, conn: psycopg.Connection, org: str) -> None:
        lancedb = _import("lancedb")
        pyarrow = _import("pyarrow")
        rows = conn.execute(HYBRID_ROWS, (org,)).fetchall()
        conn.rollback()
        if not rows:
            raise ValueError(f"{org} has no active fragment with a vector")
        dims = len(rows[0][2])
        self.folder = Path(tempfile.mkdtemp(prefix="bench-lancedb-"))
        started = time.perf_counter()
        data = pyarrow.table(
            {
                "fragment_id": pyarrow.array([r[0] for r in rows], pyarrow.int64()),
                "text": pyarrow.array([r[1] for r in rows], pyarrow.string()),
                "vector": pyarrow.array([r[2] for r in rows], pyarrow.list_(pyarrow.float32(), dims)),
            }
        )
        self.table = lancedb.connect(str(self.folder)).create_table("fragments", data=data)
        fts = _import("lancedb.index").FTS(language="English", stem=True, remove_stop_words=True)
        self.table.create_index("text", config=fts)
        self.build_seconds = round(time.perf_counter() - started, 2)
        self.reranker = _import("lancedb.rerankers").RRFReranker()
        self.rows = len(rows)

    def hybrid(self, query: str, vector: list[float], k: int) -> list[int]:
        found = (
            self.table.search(query_type="hybrid", vector_column_name="vector")
            .vector(vector)
            .text(query)
            .distance_type("cosine")
            .rerank(self.reranker)
            .select(["fragment_id", "text"])
            .limit(k)
            .to_arrow()
        )
        return found.column("fragment_id").to_pylist()

    def close(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


def _one_vector(vectors: dict[str, list[float]]) -> list[float] | None:
    """The query vector LanceDB searches with: the namespaces' one vector (they share a
    model), else None."""
    distinct = {tuple(v) for v in vectors.values()}
    return list(next(iter(distinct))) if len(distinct) == 1 else None


def hybrid(
    conn: psycopg.Connection, retriever: Retriever, org: str, principal: str, queries: list[str], k: int = 100
) -> dict:
    """LanceDB's hybrid beside our candidates call (api.retrieve_candidates as
    `principal`, as reference.py calls it) and our whole retrieval (principal bound,
    candidates, composition, trace, commit), all three with the same query vectors,
    interleaved. `{"skipped": reason}` without the bench extra, or when the namespaces'
    query vectors differ (LanceDB's hybrid takes one vector column)."""
    reason = missing("lancedb", "pyarrow")
    if reason:
        return {"skipped": reason}
    vectors = {q: retriever.query_embeddings(q) for q in queries}
    if any(_one_vector(v) is None for v in vectors.values()):
        return {"skipped": "the namespaces embed queries with different models: LanceDB's hybrid takes one vector"}
    table = LanceTable(conn, org)
    try:
        timings: dict[str, list[float]] = {"candidates": [], "whole": [], "lancedb": []}
        found: list[int] = []
        for i, q in enumerate(queries):
            fusion = fusion_spec(retriever.config, q)
            request = msgspec.convert(
                {"query": q, "scope": {"org_id": org}, "budget_tokens": DEFAULT_BUDGET_TOKENS}, RetrieveRequest
            )

            def whole(request: RetrieveRequest = request, q: str = q) -> None:
                act_as(conn, org, principal)
                retriever.retrieve(conn, request, vectors[q])
                conn.commit()

            rows = alternate(
                i,
                [
                    (
                        "candidates",
                        partial(
                            bench_reference.run_ours,
                            conn,
                            org,
                            principal,
                            q,
                            vectors[q],
                            DEFAULT_K_DENSE,
                            retriever.config.rrf_k,
                            fusion,
                        ),
                    ),
                    ("whole", whole),
                    ("lancedb", partial(table.hybrid, q, _one_vector(vectors[q]) or [], k)),
                ],
                timings,
                conn.rollback,
            )
            found.append(len(rows["lancedb"]))
        summaries = {name: bench_reference.latency_summary(values, 2) for name, values in timings.items()}
        return {
            "reference": f"LanceDB {EXTRA['lancedb']}: the same texts and stored vectors, its own FTS (English,"
            f" stemmed, stop words removed) + an exact cosine scan, its RRF reranker (k 60), top {k}",
            "fragments": table.rows,
            "lancedb_build_seconds": table.build_seconds,
            "queries": len(queries),
            **summaries,
            "lancedb_hits_median": sorted(found)[len(found) // 2] if found else None,
            "candidates_over_lancedb": ratios(timings["candidates"], timings["lancedb"]),
            "whole_over_lancedb": ratios(timings["whole"], timings["lancedb"]),
        }
    finally:
        table.close()
