"""The demo `make run` serves: this repository's README, docs/ and app/ ingested as org
'demo', with its fragments' vectors computed ahead and committed (app/cli/demo.vectors,
the format of the eval lane's vector files: docs/adr/0024). Embedding the ~2,000
fragments on two cores takes minutes; with the file, a cold start embeds only the texts
that changed since it was built, and reads the rest (each vector rounded through
float16, as the eval lane's are). The file is computed in float32 and serves either torch
dtype (a CPU with native bfloat16 embeds in it: the committed vectors are what it
approximates). A file built under another model misses as a whole, and the demo embeds
everything, as before: slower, never wrong; one built by another chunker serves the
texts it cut the same way.

`make demo-vectors` (python -m app.cli.demo) rebuilds the file, keeping the vectors whose
text still holds; tests/cli/test_demo.py fails once it covers less than
DEMO_FRESH_SHARE of the corpus."""

from __future__ import annotations

import hashlib
import sys
from dataclasses import replace
from pathlib import Path

from app.eval.embedding_cache import (
    REFERENCE_DTYPE,
    CacheError,
    CacheFile,
    CorpusVectors,
    build_texts,
    sources_inputs,
)
from app.ingest.files import collect
from app.ingest.normalize import SourceDocument
from app.ingest.pipeline import IngestPipeline

ROOT = Path(__file__).resolve().parents[2]
VECTORS = Path(__file__).with_name("demo.vectors")
DEMO_NAME = "demo"
"""The file's set name (VECTORS is <directory>/<name>.vectors)."""
DEMO_FRESH_SHARE = 0.8
"""The share of the demo corpus's texts the committed file must hold (tests/cli/test_demo.py)."""


def demo_paths() -> list[Path]:
    return [p for p in (ROOT / "README.md", ROOT / "docs", ROOT / "app") if p.exists()]


def demo_vectors() -> CorpusVectors:
    """The committed vectors, for the demo's ingestion (a missing or unreadable file:
    every text is embedded, and `problems` says why)."""
    return CorpusVectors.open(VECTORS.parent, DEMO_NAME, serves_any_torch_dtype=True)


def demo_inputs(pipeline: IngestPipeline) -> dict[str, list[str]]:
    """Per namespace, every text the demo's ingestion may embed (as ingest_paths reads
    the files: relative to the repository's root)."""
    entries = collect(demo_paths(), ROOT)
    readable = (e for e in entries if e.problem is None)
    return sources_inputs(pipeline, (SourceDocument(path=e.relative, content=e.path.read_bytes()) for e in readable))


def corpus_digest(inputs: dict[str, list[str]]) -> str:
    digest = hashlib.sha256()
    for namespace, texts in sorted(inputs.items()):
        for text in sorted(texts):
            digest.update(f"{namespace}\0{text}\0".encode())
    return digest.hexdigest()


def main() -> int:
    """Rebuild app/cli/demo.vectors (the model runs for the texts it does not hold)."""
    from app.settings import Settings
    from app.text.embed import embedders

    settings = replace(Settings.from_env(), embed_dtype=REFERENCE_DTYPE)
    pipeline = IngestPipeline(settings, embedders(settings))
    inputs = demo_inputs(pipeline)
    previous = None
    if VECTORS.is_file():
        try:
            previous = CacheFile.read(VECTORS)
        except (OSError, CacheError) as exc:
            print(f"{VECTORS}: {exc}: every text is embedded again", file=sys.stderr)

    def progress(label: str, done: int, total: int) -> None:
        print(f"{label}: {done}/{total} embedded", file=sys.stderr)

    built = build_texts(pipeline, DEMO_NAME, corpus_digest(inputs), "demo", inputs, previous, progress)
    size = built.file.write(VECTORS)
    print(
        f"{VECTORS.relative_to(ROOT)}: {built.file.count} vectors, {built.embedded} embedded now, "
        f"{built.kept} kept, {built.dropped} dropped ({size / 2**20:.1f} MiB)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
