"""A labelled retrieval set in the BEIR layout, read strictly.

    DATASET/corpus.jsonl       {"_id", "title", "text"} per line
    DATASET/queries.jsonl      {"_id", "text"} per line; optional "scope" (a string or
                               an object) or "metadata": {"scope": ...} for breakdowns
    DATASET/qrels/SPLIT.tsv    query-id <TAB> corpus-id <TAB> grade, after a header line

A corpus-id is a document ("any fragment of it is the answer"), or `ID#L<n>`: the
fragment of document ID whose line range holds line n of its text (fragment_label; the
mixed-repository sets of app/eval/mixed_set.py are labelled so). A set with such labels
is scored per fragment (app/eval/metrics.py: fragment_ranking).

Every malformed line is an error naming the file and line: a silently skipped label
would move the figures.
"""

from __future__ import annotations

import ast
import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path, PurePosixPath
from urllib.parse import quote, unquote

from app.eval.jsonl import json_objects
from app.ingest import conversation
from app.ingest.normalize import SourceDocument, syntax_of

KINDS = ("auto", "code", "prose", "files", "conversation")
_SAMPLE = 200
_FRAGMENT_LABEL = re.compile(r"(?P<doc>.+)#L(?P<line>[1-9][0-9]*)")
BUNDLED = Path(__file__).resolve().parents[2] / "eval" / "datasets"
"""Sets committed with the repository (eval/datasets/): found by name when
CONTEXTS_DATASETS holds no set of that name."""


class DatasetError(ValueError):
    """The directory is not a usable BEIR dataset; the message says what to fix."""


@dataclass(frozen=True, slots=True)
class Query:
    id: str
    text: str
    scope: str | None = None


@dataclass(frozen=True, slots=True)
class CorpusDoc:
    id: str
    title: str
    text: str
    window: str | None = None
    """A conversation turn's stored text (app/ingest/conversation.py: the turn under its
    session and date, then the question asked before it); set by Dataset.corpus on a
    conversation."""


@dataclass(slots=True)
class Dataset:
    name: str
    path: Path
    split: str
    queries: dict[str, Query]
    """Queries of this split that the qrels label, in file order."""
    qrels: dict[str, dict[str, int]]
    skipped_queries: list[str] = field(default_factory=list)
    """Query ids with no relevant (grade > 0) document: standard practice skips them."""
    corpus_size: int = 0
    unknown_labels: int = 0
    """Relevant labels naming a document absent from the corpus (they count as misses)."""
    fragment_level: bool = False
    """Some label names a fragment (`ID#L<n>`): the set is scored per fragment."""
    _conversation: bool | None = None

    @property
    def corpus_path(self) -> Path:
        return self.path / "corpus.jsonl"

    def corpus(self) -> Iterator[CorpusDoc]:
        """The documents in file order; a conversation's turns carry their window."""
        if not self.is_conversation():
            yield from read_corpus(self.corpus_path)
            return
        docs = list(read_corpus(self.corpus_path))
        windows = conversation.fragments(conversation.turns_of((d.id, d.title, d.text) for d in docs))
        for doc in docs:
            yield CorpusDoc(doc.id, doc.title, doc.text, windows[doc.id])

    def is_conversation(self) -> bool:
        """Whether the corpus is the turns of a conversation, in order: most documents
        open with a speaker's name (a few names in all) and a title shared by the turns
        of one session (LoCoMo's "session 3, 1:56 pm on 8 May, 2023")."""
        if self._conversation is None:
            sample = []
            for doc in read_corpus(self.corpus_path):
                sample.append((doc.title, doc.text))
                if len(sample) >= _SAMPLE:
                    break
            self._conversation = conversation.is_conversation(sample)
        return self._conversation

    def content_hash(self) -> str:
        """SHA-256 of the corpus file (and, for a conversation, of the version of the way
        its turns are stored): what the ingested copy depends on."""
        digest = hashlib.sha256()
        if self.is_conversation():
            digest.update(f"conversation {conversation.VERSION}\n".encode())
        with self.corpus_path.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
        return digest.hexdigest()


def _jsonl(path: Path) -> Iterator[tuple[int, dict]]:
    if not path.is_file():
        raise DatasetError(f"{path} is missing (a BEIR dataset has corpus.jsonl, queries.jsonl and qrels/SPLIT.tsv)")
    return json_objects(path, DatasetError)


def _id(row: dict, path: Path, number: int) -> str:
    value = row.get("_id")
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not value.strip():
        raise DatasetError(f'{path}:{number}: "_id" must be a non-empty string')
    return value


def read_corpus(path: Path) -> Iterator[CorpusDoc]:
    seen: set[str] = set()
    for number, row in _jsonl(path):
        doc_id = _id(row, path, number)
        if doc_id in seen:
            raise DatasetError(f"{path}:{number}: duplicate _id {doc_id!r}")
        seen.add(doc_id)
        title, text = row.get("title") or "", row.get("text") or ""
        if not isinstance(title, str) or not isinstance(text, str):
            raise DatasetError(f'{path}:{number}: "title" and "text" must be strings')
        yield CorpusDoc(doc_id, title, text)


def _scope_label(row: dict) -> str | None:
    scope = row.get("scope")
    metadata = row.get("metadata")
    if scope is None and isinstance(metadata, dict):
        scope = metadata.get("scope")
    if scope is None or scope == "":
        return None
    if isinstance(scope, dict):
        return ",".join(f"{k}={v}" for k, v in sorted(scope.items()) if v is not None) or None
    return str(scope)


def resolve_split(path: Path, split: str | None) -> Path:
    qrels_dir = path / "qrels"
    if not qrels_dir.is_dir():
        raise DatasetError(f"{qrels_dir} is missing: a BEIR dataset keeps its labels in qrels/SPLIT.tsv")
    available = sorted(p.stem for p in qrels_dir.glob("*.tsv"))
    if split is None:
        if len(available) == 1:
            return qrels_dir / f"{available[0]}.tsv"
        if not available:
            raise DatasetError(f"{qrels_dir} holds no .tsv file")
        raise DatasetError(f"{qrels_dir} holds several splits ({', '.join(available)}): choose one with --split")
    if split not in available:
        raise DatasetError(f"no split {split!r} in {qrels_dir} (available: {', '.join(available) or 'none'})")
    return qrels_dir / f"{split}.tsv"


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    if not lines:
        raise DatasetError(f"{path} is empty")
    header = lines[0].split("\t")
    if len(header) < 3 or re.fullmatch(r"-?\d+", header[2].strip()):
        raise DatasetError(f"{path}:1: expected a header line (query-id, corpus-id, score)")
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        parts = line.split("\t")
        if len(parts) != 3:
            raise DatasetError(f"{path}:{number}: expected 3 tab-separated columns, found {len(parts)}")
        query_id, doc_id, grade = (p.strip() for p in parts)
        try:
            value = int(grade)
        except ValueError:
            try:
                as_float = float(grade)
            except ValueError:
                raise DatasetError(f"{path}:{number}: grade {grade!r} is not a number") from None
            if not as_float.is_integer():
                raise DatasetError(f"{path}:{number}: grade {grade!r} must be an integer") from None
            value = int(as_float)
        if not query_id or not doc_id:
            raise DatasetError(f"{path}:{number}: empty query or corpus id")
        qrels.setdefault(query_id, {})[doc_id] = value
    return qrels


def fragment_label(corpus_id: str) -> tuple[str, int] | None:
    """(document id, line) of a fragment label `ID#L<n>`; None for a document label."""
    match = _FRAGMENT_LABEL.fullmatch(corpus_id)
    return (match.group("doc"), int(match.group("line"))) if match else None


def label_document(corpus_id: str) -> str:
    """The document a label names (itself, or a fragment label's document)."""
    fragment = fragment_label(corpus_id)
    return fragment[0] if fragment else corpus_id


def locate(datasets: Path, name_or_path: str, bundled: Path = BUNDLED) -> Path:
    """A dataset directory, or the name of a set under `datasets` (CONTEXTS_DATASETS),
    else of a set committed under eval/datasets/."""
    path = Path(name_or_path)
    if path.is_dir():
        return path
    if "/" not in name_or_path:
        for root in (datasets, bundled):
            if (root / name_or_path).is_dir():
                return root / name_or_path
    raise DatasetError(
        f"{name_or_path}: no such dataset directory (nor a set of that name under CONTEXTS_DATASETS={datasets} "
        f"or {bundled})"
    )


def load(path: Path, split: str | None = None) -> Dataset:
    path = Path(path)
    if not path.is_dir():
        raise DatasetError(f"{path} is not a directory")
    if not (path / "corpus.jsonl").is_file():
        raise DatasetError(f"{path / 'corpus.jsonl'} is missing")
    corpus_ids = {doc.id for doc in read_corpus(path / "corpus.jsonl")}  # validates every line
    if not corpus_ids:
        raise DatasetError(f"{path / 'corpus.jsonl'} holds no document")
    qrels_path = resolve_split(path, split)
    qrels = read_qrels(qrels_path)
    queries_path = path / "queries.jsonl"
    texts: dict[str, Query] = {}
    for number, row in _jsonl(queries_path):
        query_id = _id(row, queries_path, number)
        text = row.get("text")
        if not isinstance(text, str) or not text.strip():
            raise DatasetError(f"{queries_path}:{number}: query {query_id!r} has no text")
        texts[query_id] = Query(query_id, text, _scope_label(row))
    missing = [q for q in qrels if q not in texts]
    if missing:
        raise DatasetError(
            f"{qrels_path}: {len(missing)} labelled query id(s) are not in queries.jsonl (first: {missing[0]!r})"
        )
    queries: dict[str, Query] = {}
    skipped: list[str] = []
    for query_id in texts:
        if query_id not in qrels:
            continue
        if any(grade > 0 for grade in qrels[query_id].values()):
            queries[query_id] = texts[query_id]
        else:
            skipped.append(query_id)
    if not queries:
        raise DatasetError(f"{qrels_path}: no query has a relevant (grade > 0) document")
    unknown = sum(1 for q in queries for d, g in qrels[q].items() if g > 0 and label_document(d) not in corpus_ids)
    fragments = any(fragment_label(d) is not None for q in queries for d in qrels[q])
    return Dataset(
        path.resolve().name,
        path.resolve(),
        qrels_path.stem,
        queries,
        qrels,
        skipped,
        len(corpus_ids),
        unknown,
        fragments,
    )


def looks_like_python(text: str) -> bool:
    """Source that parses and defines or imports something at top level."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return any(
        isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom))
        for node in tree.body
    )


def looks_like_file_path(doc_id: str) -> bool:
    """A relative path whose last segment has an extension ("src/click/core.py",
    "CHANGES.rst"): what a corpus of a repository's files is keyed by."""
    if not doc_id or any(c.isspace() for c in doc_id) or "\\" in doc_id or doc_id.startswith("/"):
        return False
    path = PurePosixPath(doc_id)
    return ".." not in path.parts and bool(re.fullmatch(r"\.[A-Za-z][A-Za-z0-9]{0,9}", path.suffix))


def detect_kind(dataset: Dataset) -> str:
    """ "files" when the documents are a repository's files, keyed by their paths (most
    ids are relative paths, and at least half name a language or markup the pipeline
    knows): each is then ingested under its own path, so the pipeline chooses chunker
    and namespace per file as it does for `contexts ingest`. Else "conversation" when the
    documents are a conversation's turns (Dataset.is_conversation: each turn is stored
    with its session, date and the question before it, as prose), "code" when most of the first
    documents are Python source, else "prose" (one namespace per set).

    Decided from the ids and the content, for the whole corpus at once."""
    sample = []
    for doc in dataset.corpus():
        sample.append(doc)
        if len(sample) >= _SAMPLE:
            break
    if not sample:
        raise DatasetError(f"{dataset.corpus_path} holds no document")
    paths = [doc.id for doc in sample if looks_like_file_path(doc.id)]
    known = sum(1 for p in paths if syntax_of(p) != "text" or p.lower().endswith(".txt"))
    if len(paths) * 10 >= len(sample) * 8 and known * 2 >= len(sample):
        return "files"
    if dataset.is_conversation():
        return "conversation"
    code = sum(1 for doc in sample if looks_like_python(doc.text))
    return "code" if code * 10 >= len(sample) * 8 else "prose"


def document_path(doc_id: str, kind: str) -> str:
    """Path a corpus document is ingested under: a file's own path ("files"), else its
    id (quoted) and a suffix that selects the chunker and namespace (.py: code; .txt:
    prose)."""
    if kind == "files":
        return doc_id
    return quote(doc_id, safe="-_.") + (".py" if kind == "code" else ".txt")


@lru_cache(maxsize=1 << 16)
def corpus_id(path: str, kind: str) -> str:
    """The corpus id of a document ingested under `path` (document_path's inverse).
    Remembered: a run asks it for every candidate of every query and stage (470,000
    times for 688 queries), about 2% of the run."""
    if kind == "files":
        return path
    suffix = ".py" if kind == "code" else ".txt"
    return unquote(path[: -len(suffix)] if path.endswith(suffix) else path)


def document_text(doc: CorpusDoc, kind: str) -> str:
    """Title then text, as BEIR evaluations join them; code keeps a title as a comment;
    a file is its text (its title, when it is only the path, is the path it is stored under);
    a conversation's turn is its window (Dataset.corpus), else as prose."""
    title, text = doc.title.strip(), doc.text.strip("\n")
    if kind == "conversation" and doc.window is not None:
        return doc.window
    if kind == "files":
        return text if title in ("", doc.id) else f"{title}\n\n{text}"
    if kind == "code":
        return f"# {title}\n{text}" if title else text
    return f"{title}\n\n{text}" if title and text.strip() else (title or text)


def source_document(doc: CorpusDoc, kind: str) -> SourceDocument:
    """What the eval lane ingests of a corpus document (and the embedding cache chunks)."""
    return SourceDocument(
        path=document_path(doc.id, kind),
        content=document_text(doc, kind),
        kind=conversation.TURN_KIND if kind == "conversation" else None,
        author="eval",
        owner="eval",
    )
