"""What a relevance floor (`min_relevance`) keeps: the relevant answers, and nothing for a
question about something else (docs/adr/0009, amendment of 2026-12-06).

Each development set's questions are asked twice with the default request and no floor:
of their own corpus, and of another set's (a question about scientific claims asked of a
code corpus has no answer there). Per floor, two shares:

- `relevant_kept`: of the questions whose first result is labelled relevant, those whose
  first result the floor keeps (the floor should not cost right answers);
- `unrelated_answered`: of the questions asked of the other corpus, those of which the
  floor keeps any of the first TOP results (each one is a wrong answer handed over).

Some pairs are less unrelated than others (a question about a Python API asked of
computing abstracts can meet words it shares with them): PAIRS says which are which, and
the report keeps the two apart.

    python -m app.eval.relevance_floor [--home H] [--datasets D] [--queries 80]

Corpora are ingested once per home with their committed vectors (eval/embeddings/), so a
second run only asks the questions (about 3 minutes for the five sets here, first run).
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

import msgspec
import psycopg

from app.access import act_as
from app.eval import VECTORS_DIR, beir, golden
from app.ingest.pipeline import IngestPipeline
from app.retrieve.config import PipelineConfig
from app.retrieve.service import Retriever
from app.settings import Settings
from app.wire.retrieve import RetrieveRequest

PAIRS: dict[str, tuple[str, bool]] = {
    "scifact": ("cosqa", True),
    "cosqa": ("locomo-conv-26", True),
    "locomo-conv-26": ("gorilla-torchhub", True),
    "gorilla-torchhub": ("cacm", False),
    "cacm": ("cosqa", False),
}
"""Each set's questions are also asked of this corpus; True where the two share no
subject (False: both are about computing, so some questions do meet related text)."""
FLOORS = (0.2, 0.3, 0.4, 0.5)
TOP = 5


@dataclass(frozen=True, slots=True)
class Asked:
    """One question asked of one corpus: its first TOP results' relevance, and whether
    the first is labelled relevant (None when asked of another set's corpus)."""

    dataset: str
    corpus: str
    unrelated: bool
    first_relevant: bool | None
    relevance: tuple[float, ...]


def ask_all(
    conn: psycopg.Connection,
    pipeline: IngestPipeline,
    retriever: Retriever,
    datasets: dict[str, beir.Dataset],
    pairs: dict[str, tuple[str, bool]],
    max_queries: int,
) -> list[Asked]:
    corpora = {}
    for name, dataset in datasets.items():
        kind = beir.detect_kind(dataset)
        corpus = golden.ingested_corpus(conn, pipeline, dataset, kind, VECTORS_DIR)
        corpora[name] = (corpus.org, kind, corpus.sources)
        conn.commit()
    asked = []
    for name, dataset in datasets.items():
        other, unrelated = pairs[name]
        for target, own in ((name, True), (other, False)):
            if target not in corpora:
                continue
            org, kind, sources = corpora[target]
            for query in list(dataset.queries.values())[:max_queries]:
                act_as(conn, org, golden.EVAL_PRINCIPAL)
                request = msgspec.convert({"query": query.text, "scope": {"org_id": org}}, RetrieveRequest)
                ranked = retriever.rank(conn, retriever.config.apply(request)).ranked[:TOP]
                conn.rollback()
                first = None
                if own and ranked:
                    documents = golden.document_ranking(ranked[:1], sources, kind)
                    first = any(dataset.qrels[query.id].get(d, 0) > 0 for d in documents)
                relevance = tuple(c.relevance or 0.0 for c in ranked)
                asked.append(Asked(name, target, not own and unrelated, first, relevance))
    return asked


def shares(asked: Iterable[Asked], floors: Iterable[float] = FLOORS) -> list[dict]:
    """Per floor: relevant_kept and unrelated_answered (see the module's docstring), and
    related_answered for the pairs that share a subject."""
    asked = list(asked)
    right = [a for a in asked if a.first_relevant]
    unrelated = [a for a in asked if a.unrelated]
    related = [a for a in asked if a.first_relevant is None and not a.unrelated]

    def kept(group: list[Asked], floor: float, first_only: bool) -> float | None:
        hits = sum(any(r >= floor for r in (a.relevance[:1] if first_only else a.relevance)) for a in group)
        return round(hits / len(group), 3) if group else None

    rows = []
    for floor in floors:
        rows.append(
            {
                "floor": floor,
                "relevant_kept": kept(right, floor, first_only=True),
                "unrelated_answered": kept(unrelated, floor, first_only=False),
                "related_answered": kept(related, floor, first_only=False),
                "questions": {"relevant_first": len(right), "unrelated": len(unrelated), "related": len(related)},
            }
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--home", type=Path, default=Path(".contexts/relevance-floor"), help="embedded server data")
    parser.add_argument("--datasets", type=Path, default=None, help="BEIR sets (default: CONTEXTS_DATASETS)")
    parser.add_argument("--queries", type=int, default=80, help="questions per set")
    parser.add_argument("--out", type=Path, default=None, help="also write every question's figures (JSONL)")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from app.db.database import resolve_database_url
    from app.db.migrate import migrate
    from app.text.embed import embedders

    overrides = {"home": args.home, "torch_threads": 1, "embed_dtype": "float32"}
    settings = Settings.from_env(**overrides, **({"datasets": args.datasets} if args.datasets else {}))
    dsn = resolve_database_url(settings)
    migrate(dsn)
    models = embedders(settings)
    retriever = Retriever.build(models, PipelineConfig(reranker=settings.reranker), settings.torch_threads)
    datasets = {name: beir.load(beir.locate(settings.datasets, name)) for name in PAIRS}
    with psycopg.connect(dsn) as conn:
        asked = ask_all(conn, IngestPipeline(settings, models), retriever, datasets, PAIRS, args.queries)
    if args.out:
        args.out.write_text("".join(json.dumps(asdict(a)) + "\n" for a in asked), encoding="utf-8")
    for row in shares(asked):
        print(json.dumps(row))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
