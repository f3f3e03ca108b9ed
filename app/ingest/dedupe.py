"""R-ING-4: 64-bit SimHash of a fragment, for near-duplicate collapse (distance <= 3).

Hand-written: datasketch offers MinHash/LSH but no SimHash, and the algorithm is a
few lines. Features are 3-shingles of tokens, hashed with BLAKE2b and weighted by
1 + ln(count). A token is a word or a whole run of punctuation: one token per character,
weighted by count, made an underline of "=", a table's "|---|---|" or a banner of "-"
dozens of identical shingles that outweighed the rest of a short text, and sections
sharing nothing else fell within distance 3 of each other (every short entry of a
changelog, every reST page's title section); the same went for the records of a data
file, whose punctuation repeats on every line. A text of fewer than MIN_FEATURES
distinct shingles gets the hash of its whole shingle set instead: its near copies differ
in case or spacing only (one changed token moves most of a short text's shingles anyway).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable

import numpy as np

_TOKEN = re.compile(r"\w+|[^\w\s]+", re.UNICODE)
HAMMING_THRESHOLD = 3
VERSION = 2
"""Of the features: stored values are recomputed when it changes (migration 0043 for 2),
and the golden sets' ingested copies are keyed by it (app.eval.golden.pipeline_version)."""
MIN_FEATURES = 8
"""Fewer distinct shingles than this: the text matches only its case and spacing variants."""


DIGESTS_KEPT = 131_072
"""Shingles whose digests are kept between texts (about 20 MB at most): code repeats its
shingles across fragments (three in five, measured on installed packages' sources), and
a digest is most of a SimHash's cost."""
_digests: dict[str, bytes] = {}


def _features(text: str) -> Counter[str]:
    # Each token lowered on its own (lowering the whole text first can split a character
    # in two and change the words; an ASCII text is lowered alike at a tenth of the
    # cost); map and zip: the shingles without a Python loop.
    tokens = _TOKEN.findall(text.lower()) if text.isascii() else list(map(str.lower, _TOKEN.findall(text)))
    if len(tokens) < 3:
        return Counter(tokens)
    return Counter(map(" ".join, zip(tokens, tokens[1:], tokens[2:])))


def _digests_of(features: Iterable[str]) -> bytes:
    """The features' digests, in order (a list of lookups: a function call per feature
    cost as much as the digest it saved)."""
    get = _digests.get
    found = [get(feature) for feature in features]
    if None in found:
        if len(_digests) >= DIGESTS_KEPT:
            _digests.clear()
        for i, feature in enumerate(features):
            if found[i] is None:
                found[i] = _digests[feature] = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    return b"".join(found)  # type: ignore[arg-type]  # no None is left


def simhash64(text: str) -> int:
    """Unsigned 64-bit SimHash."""
    features = _features(text)
    if not features:
        return 0
    if len(features) < MIN_FEATURES:
        whole = "\n".join(sorted(features)).encode("utf-8")
        return int.from_bytes(hashlib.blake2b(whole, digest_size=8, person=b"short").digest(), "big")
    digests = _digests_of(features)
    # Row i holds feature i's 64 bits, most significant first.
    bits = np.unpackbits(np.frombuffer(digests, dtype=np.uint8).reshape(-1, 8), axis=1)
    counts = np.fromiter(features.values(), dtype=np.float64, count=len(features))
    weights = (1.0 + np.log(counts)) @ (bits.astype(np.float64) * 2 - 1)
    return int.from_bytes(np.packbits(weights > 0).tobytes(), "big")


def to_signed(value: int) -> int:
    """PostgreSQL bigint is signed; keep the same 64 bits."""
    return value - (1 << 64) if value >= 1 << 63 else value


def hamming(a: int, b: int) -> int:
    return ((a ^ b) & ((1 << 64) - 1)).bit_count()
