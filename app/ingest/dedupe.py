"""R-ING-4: 64-bit SimHash of a fragment, for near-duplicate collapse (distance <= 3).

Hand-written: datasketch offers MinHash/LSH but no SimHash, and the algorithm is a
few lines. Features are word 3-shingles (plus single words for very short texts),
weighted by count and hashed with BLAKE2b, so one changed token in a short text moves
several features and near-duplicates stay reserved for genuinely near-identical text.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable

import numpy as np

_WORD = re.compile(r"\w+|[^\w\s]", re.UNICODE)
HAMMING_THRESHOLD = 3


DIGESTS_KEPT = 131_072
"""Shingles whose digests are kept between texts (about 20 MB at most): code repeats its
shingles across fragments (three in five, measured on installed packages' sources), and
a digest is most of a SimHash's cost."""
_digests: dict[str, bytes] = {}


def _features(text: str) -> Counter[str]:
    # Each word lowered on its own (lowering the whole text first can split a character
    # in two and change the words; not an ASCII text, lowered alike at a tenth of the
    # cost); map and zip: the shingles without a Python loop.
    words = _WORD.findall(text.lower()) if text.isascii() else list(map(str.lower, _WORD.findall(text)))
    if len(words) < 3:
        return Counter(words)
    return Counter(map(" ".join, zip(words, words[1:], words[2:])))


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
    digests = _digests_of(features)
    # Row i holds feature i's 64 bits, most significant first.
    bits = np.unpackbits(np.frombuffer(digests, dtype=np.uint8).reshape(-1, 8), axis=1)
    counts = np.fromiter(features.values(), dtype=np.int64, count=len(features))
    weights = counts @ (bits.astype(np.int64) * 2 - 1)
    return int.from_bytes(np.packbits(weights > 0).tobytes(), "big")


def to_signed(value: int) -> int:
    """PostgreSQL bigint is signed; keep the same 64 bits."""
    return value - (1 << 64) if value >= 1 << 63 else value


def hamming(a: int, b: int) -> int:
    return ((a ^ b) & ((1 << 64) - 1)).bit_count()
