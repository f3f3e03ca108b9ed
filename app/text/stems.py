"""How the learned reranker reads a text (docs/adr/0015): its tokenizer (lower-cased
stems, identifiers split at case changes, each stem as an int32 id) and a fragment's
*reading*, the tokenized text written once at ingest (data.fragments.reading) so that a
retrieval does not tokenize every candidate's text again.

Both lanes use it: ingestion writes readings (app.ingest.pipeline, app.ingest.readings),
retrieval decodes them or reads the text (app.retrieve.features). A change to how a text
becomes stem ids changes TOKENIZER_VERSION (and so the key every reading carries).
"""

from __future__ import annotations

import hashlib
import re
import struct
import zlib
from functools import lru_cache
from itertools import chain
from typing import NamedTuple

import numpy as np

TEXT_CHARS = 800
"""Text read per fragment, from its start. Held out, 800 characters did as well as 1200
(leave one set out: mean +0.0104 against +0.0092, worst set -0.0015 against -0.0032;
600: worst -0.0051) and tokenizing costs two thirds as much. A model file records the
value it was trained with, and loading refuses another."""
BODY_CACHE = 8192
"""Fragments whose tokenized text is kept between queries (a few KiB each)."""
MAX_TOKENS = 1 << 17
"""Distinct raw tokens whose stem ids are remembered before starting afresh: about 40 MiB
at most (2^17 random mixed-case tokens measured 41 MiB, the stem memo included)."""

_PIECE = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
_STOP = frozenset(
    """a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have
    having he her here hers herself him himself his how i if in into is it its itself just me more most
    my myself no nor not now of off on once only or other our ours ourselves out over own same she should
    so some such than that the their theirs them themselves then there these they this those through to
    too under until up very was we were what when where which while who whom why will with would you your
    yours yourself yourselves""".split()
)


_SUFFIX = re.compile(r"^(.{3,}?)(?:ations|ation|ings|ing|edly|ed|ies|es|s|ly|e)$")


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """A crude suffix strip: enough that "rotating" meets "rotate" and "keys" "key"."""
    match = _SUFFIX.match(word)
    return match.group(1) if match else word


def words(text: str) -> list[str]:
    """Lower-cased stems; identifiers split at case changes, underscores and digits."""
    return [stem(piece.lower()) for piece in _PIECE.findall(text)]


def query_terms(query: str) -> list[str]:
    """The query's distinct content stems, in order of first use."""
    seen: dict[str, None] = {}
    for w in words(query):
        if w not in _STOP and (len(w) > 1 or w.isdigit()):
            seen.setdefault(w, None)
    return list(seen)


_SEPARATORS = bytes(b if chr(b).isascii() and chr(b).isalnum() else 32 for b in range(256))
"""bytes.translate table: ASCII letters and digits stay, every other byte is a space."""


class Read(NamedTuple):
    """What the features read of one fragment's text, whatever the query (read-only:
    every query shares it)."""

    ids: np.ndarray
    """Its words' stem ids in order, stop words included."""
    terms: np.ndarray
    """Its distinct stem ids without stop words, ascending."""
    counts: np.ndarray
    """How often each of `terms` occurs."""
    lead: int
    """How many of `ids` are its first line's."""


def stem_id(stem: str) -> int:
    """A stem as an int32: its CRC-32 in 31 bits, negated (below 0) for a stop word. A
    hash needs no vocabulary shared between threads or processes; two stems of one
    query's list meet in 31 bits about once in 10^5 queries, and then only blur a
    feature."""
    code = zlib.crc32(stem.encode()) & 0x7FFFFFFF
    return ~code if stem in _STOP else code


class _Tokens(dict[bytes, tuple[int, ...]]):
    """A raw token (the bytes between two separators) to its words' stem ids. After the
    first sight of a token, tokenizing it is one dict lookup in C: splitting every text
    with the regular expression cost about 50 us per fragment, most of a cold list."""

    def __missing__(self, token: bytes) -> tuple[int, ...]:
        ids = tuple(stem_id(w) for w in words(token.decode("ascii")))
        if len(self) >= MAX_TOKENS:  # a service that has read millions of distinct tokens
            self.clear()
        self[token] = ids
        return ids


_TOKENS = _Tokens()


def token_ids(text: str) -> list[tuple[int, ...]]:
    """Each raw token's stem ids. The same words as `words(text)`, in order: the regular
    expression's pieces never hold a byte the table turns into a space."""
    return list(map(_TOKENS.__getitem__, text.encode("ascii", "replace").translate(_SEPARATORS).split()))


@lru_cache(maxsize=BODY_CACHE)
def read(text: str) -> Read:
    # Tokenizing is most of the features' cost, and a fragment's text does not change:
    # the same fragments come back query after query.
    body = text[:TEXT_CHARS].lstrip()
    pieces = token_ids(body)
    ids = np.fromiter(chain.from_iterable(pieces), dtype=np.int32)
    terms, counts = np.unique(ids[ids >= 0], return_counts=True)
    end = body.find("\n")
    lead = ids.size if end < 0 else sum(map(len, pieces[: len(token_ids(body[:end]))]))
    for array in (ids, terms, counts):
        array.flags.writeable = False
    return Read(ids, terms, counts, lead)


# A fragment's reading: what `read` makes of its text, written once at ingest
# (data.fragments.reading) so that a retrieval takes it as it is instead of tokenizing
# every candidate's text again, most of a cold list's cost. Little-endian: the format and
# the tokenizer's key (int32), the first 4 bytes of the SHA-256 of the whole text (the
# database refuses a reading of another text), the sizes (int32: ids, terms, lead), then
# ids, terms and counts (int32). Hand-written: a fixed layout numpy takes without a copy,
# where a general serializer (pickle, msgpack) would build Python objects.
READING_FORMAT = 1
TOKENIZER_VERSION = 1
"""Bump it with any change to how a text becomes stem ids that the key below does not
see (`stem_id`, `words`, `token_ids`, `read`): a test pins the bytes of a reading and
fails until it is bumped."""
HEADER = struct.Struct("<ii4siii")
TOKENIZER_KEY = (
    zlib.crc32(
        "\x00".join(
            (
                str(TOKENIZER_VERSION),
                str(TEXT_CHARS),
                _PIECE.pattern,
                _SUFFIX.pattern,
                " ".join(sorted(_STOP)),
                _SEPARATORS.hex(),
            )
        ).encode()
    )
    & 0x7FFFFFFF
)
"""Changes with the tokenizer's version, the characters read, the regular expressions,
the stop words and the separators: a reading written under another key is ignored (the
text is read instead) and `contexts rerank readings` writes it again."""
READING_PREFIX = struct.pack("<ii", READING_FORMAT, TOKENIZER_KEY)
"""The first bytes of every reading this code writes and reads."""


def reading(text: str) -> bytes:
    """The reading of a fragment's text, for data.fragments.reading."""
    r = read(text[:TEXT_CHARS])
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()[:4]
    header = HEADER.pack(READING_FORMAT, TOKENIZER_KEY, digest, r.ids.size, r.terms.size, r.lead)
    return header + np.concatenate((r.ids, r.terms, r.counts)).astype("<i4").tobytes()
