"""Training data of the learned reranker (docs/adr/0015): each development set's
hybrid candidates per labelled query, with their documents and grades.

One file per set, `<cache>/<set>.jsonl.gz`: a header line (the set, its corpus hash,
the pipeline version, the rerank width), then one line per query holding the fused
list exactly as `Retriever.rank` returned it: the top `rerank_top` candidates with every
field the reranker's features read, the rest as fragment ids and documents only (they
follow the reranked head unchanged in the `full` stage). Each candidate carries the
corpus ids it retrieves (golden.document_ranking's order) and its grade: the best
grade of those documents, so several fragments of one document share its grade.

A set labelled per fragment (`PATH#L<n>`, beir.Dataset.fragment_level: mixed-click and
the other sets app.eval.mixed_set builds) is graded per fragment instead, as the gate
scores it (docs/adr/0033): every candidate also carries its key and its sources' line
spans (golden.fragment_keys), its grade is the best grade of the labels it satisfies
(metrics.fragment_grade: another fragment of the answer's file is not the answer), and
a ranking is one position per fragment (metrics.fragment_ranking).
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import psycopg

from app.eval import beir, golden
from app.eval.embedding_cache import CorpusVectors
from app.eval.metrics import Span, fragment_grade, fragment_ranking, score_query
from app.ingest.pipeline import IngestPipeline
from app.retrieve import rerank
from app.retrieve.candidates import Candidate
from app.retrieve.service import Retriever
from app.wire.retrieve import DEFAULT_RERANK_TOP

FAMILIES = {
    "locomo": ("locomo-conv-26", "locomo-conv-30", "locomo-conv-41"),
    "click": ("commits-click", "mixed-click"),
}
"""Sets built the same way from one source: leave-one-family-out holds them out together."""

# A reading is left out: the text is kept, and the features read it the same.
_KEPT = tuple(f.name for f in dataclasses.fields(Candidate) if f.name not in ("profile", "terms", "reading"))


@dataclass(slots=True)
class QueryRow:
    """One labelled query: its fused list (head as candidates, tail as documents only)."""

    dataset: str
    query_id: str
    query: str
    qrels: dict[str, int]
    head: list[Candidate]
    """The top `rerank_top` fused candidates, in fused order."""
    head_docs: list[list[str]]
    """Per head candidate: the corpus ids it retrieves, cited document first."""
    grades: list[int]
    """Per head candidate: the best grade of its documents (0: none relevant)."""
    tail_docs: list[list[str]]
    """Per candidate after the head, in fused order: its corpus ids."""
    head_keys: list[tuple[str, list[Span]]] | None = None
    """A fragment-labelled set's: per head candidate, its key and its sources' spans
    (golden.fragment_keys); None for a set labelled per document."""
    tail_keys: list[tuple[str, list[Span]]] | None = None
    """The same for the candidates after the head."""

    @property
    def fragment_level(self) -> bool:
        return self.head_keys is not None

    def ranking(self, order: list[int]) -> list[str]:
        """Rank positions when the head is put in `order` (indexes into `head`): corpus
        ids, or for a fragment-labelled set what each fragment stands for."""
        if self.head_keys is not None:
            keys = [self.head_keys[i] for i in order] + (self.tail_keys or [])
            return fragment_ranking(keys, self.qrels)
        out: list[str] = []
        seen: set[str] = set()
        for docs in [self.head_docs[i] for i in order] + self.tail_docs:
            for doc in docs:
                if doc not in seen:
                    seen.add(doc)
                    out.append(doc)
        return out

    def ndcg(self, order: list[int]) -> float:
        metrics = score_query(self.ranking(order), self.qrels)
        assert metrics is not None
        return metrics["ndcg@10"]


def family_of(dataset: str) -> str:
    return next((family for family, sets in FAMILIES.items() if dataset in sets), dataset)


def _candidate_json(c: Candidate) -> dict:
    out = {name: getattr(c, name) for name in _KEPT}
    for name in ("updated_at", "authority_refreshed_at"):
        if out[name] is not None:
            out[name] = out[name].isoformat()
    return out


def _candidate(row: dict) -> Candidate:
    row = dict(row)
    for name in ("updated_at", "authority_refreshed_at"):
        if row.get(name) is not None:
            row[name] = datetime.fromisoformat(row[name])
    return Candidate(**row)


def collect(
    conn: psycopg.Connection,
    pipeline: IngestPipeline,
    retriever: Retriever,
    dataset: beir.Dataset,
    path: Path,
    rerank_top: int = DEFAULT_RERANK_TOP,
    vectors_dir: Path | None = None,
) -> int:
    """Run the hybrid stage of every labelled query of `dataset` (ingesting its corpus
    first if needed, as `contexts eval run` does, reading its corpus vectors from
    `vectors_dir` first when given: the same org and vectors as the gate's) and write its
    rows to `path`."""
    kind = beir.detect_kind(dataset)
    if vectors_dir is not None:
        vectors = CorpusVectors.open(vectors_dir, dataset.name)
        pipeline = IngestPipeline(pipeline.settings, vectors.embedders(pipeline.embedders))
    version = golden.pipeline_version(conn, pipeline)
    org = golden.org_id_for(dataset.name, dataset.content_hash(), version, kind)
    golden.ensure_ingested(conn, pipeline, dataset, org, kind)
    sources = golden.fragment_documents(conn, org, kind)
    spans = golden.fragment_spans(conn, org, kind) if dataset.fragment_level else None
    options = golden.GoldenOptions(stages=("hybrid",), rerank_top=rerank_top, kind=kind)

    def docs(c: Candidate) -> list[str]:
        return golden.document_ranking([c], sources, kind)

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    # No name or time in the gzip header: the same rows give the same bytes (and hash).
    with tmp.open("wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", filename="", mtime=0) as gz:
        fh = io.TextIOWrapper(gz, encoding="utf-8")
        header = {"dataset": dataset.name, "corpus": dataset.content_hash(), "pipeline": version, "top": rerank_top}
        fh.write(json.dumps(header, sort_keys=True) + "\n")
        for query in dataset.queries.values():
            fused = golden.stage_rankings(retriever, conn, query.text, org, options)["hybrid"]
            qrels = dataset.qrels[query.id]
            head, tail = rerank.head_and_tail(fused, rerank_top)
            head_docs = [docs(c) for c in head]
            row: dict = {
                "query_id": query.id,
                "query": query.text,
                "qrels": qrels,
                "head": [_candidate_json(c) for c in head],
                "head_docs": head_docs,
                "grades": [max((qrels.get(d, 0) for d in ds), default=0) for ds in head_docs],
                "tail_docs": [docs(c) for c in tail],
            }
            if spans is not None:
                head_keys = golden.fragment_keys(head, spans, kind)
                row["head_keys"] = head_keys
                row["tail_keys"] = golden.fragment_keys(tail, spans, kind)
                row["grades"] = [fragment_grade(own, qrels) for _, own in head_keys]
            fh.write(json.dumps(row, sort_keys=True, ensure_ascii=False) + "\n")
        fh.flush()
        fh.detach()
    tmp.replace(path)
    return len(dataset.queries)


def read(path: Path) -> Iterator[QueryRow]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        header = json.loads(next(fh))
        for line in fh:
            row = json.loads(line)
            yield QueryRow(
                dataset=header["dataset"],
                query_id=row["query_id"],
                query=row["query"],
                qrels=row["qrels"],
                head=[_candidate(c) for c in row["head"]],
                head_docs=row["head_docs"],
                grades=row["grades"],
                tail_docs=row["tail_docs"],
                head_keys=_keys(row.get("head_keys")),
                tail_keys=_keys(row.get("tail_keys")),
            )


def _keys(rows: list | None) -> list[tuple[str, list[Span]]] | None:
    if rows is None:
        return None
    return [(key, [(doc, int(start), int(end)) for doc, start, end in spans]) for key, spans in rows]


def files_digest(paths: list[Path]) -> str:
    """SHA-256 over the training files' bytes, in name order: the model's data hash."""
    digest = hashlib.sha256()
    for path in sorted(paths, key=lambda p: p.name):
        digest.update(path.name.encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()
