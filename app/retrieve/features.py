"""Features of each (query, candidate) pair for the learned reranker (docs/adr/0015).

Pure Python over the candidate list the SQL call returned: no database, no model. A
feature means the same thing on every corpus where it can: scores come as they are
and also relative to this list's best (and as ranks), term matches as fractions of the
query's terms, weighted by how rare a term is *among these candidates* (a list-local
IDF: no document frequencies are needed from the database).

FEATURES names the columns in order; `extract` returns one row per candidate. A change
to a feature's meaning needs a retrained model (the model file records this list, and
loading refuses a model whose list differs).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping
from functools import lru_cache
from types import MappingProxyType
from typing import NamedTuple

import numpy as np

from app.retrieve.candidates import Candidate

FEATURES = (
    "lexical_score",  # Okapi BM25, as the SQL call computed it (0: not in the lexical list)
    "lexical_ratio",  # BM25 over the best BM25 of this list
    "lexical_rr",  # 1 / lexical rank (0: outside the lexical list)
    "dense_similarity",  # cosine with the namespace's model (0: not in the dense list)
    "dense_ratio",  # cosine over the best cosine of this list
    "dense_gap",  # best cosine of this list minus this cosine
    "dense_rr",  # 1 / dense rank
    "fused_ratio",  # fused score over the best fused score of this list
    "fused_rr",  # 1 / place in the fused list
    "both_lists",  # 1 when both the lexical and the dense list hold it
    "coverage",  # distinct query terms found in the fragment, over the query's terms
    "coverage_idf",  # the same, each term weighted by its list-local IDF
    "head_coverage",  # query terms found in the path, heading path and symbol
    "head_coverage_idf",
    "lead_coverage",  # query terms found in the fragment's first line (often a title)
    "bigram_coverage",  # query bigrams found as adjacent words in the fragment
    "proximity",  # matched terms over the smallest window of words that holds them all
    "identifier_match",  # identifier-like query tokens (snake, camel, dotted, paths) found in path or symbol
    "identifier_text_match",  # the same, found in the text
    "term_density",  # occurrences of query terms over the fragment's words
    "log_tokens",  # log(1 + the fragment's tokens)
    "tokens_ratio",  # tokens over the median tokens of this list
    "is_code",  # namespace code
    "doc_fragments",  # other fragments of the same document in this list
    "doc_best_fused_rr",  # 1 / best fused place among this document's fragments
    "authority",  # citation authority in [0, 1]
    "query_terms",  # distinct terms of the query
    "query_has_identifier",  # 1 when the query holds an identifier-like token
    "list_size",  # candidates in this list (at most rerank_top)
    "feedback_similarity",  # cosine of its words to those of the top fused candidates (pseudo-relevance feedback)
    "lists_agreement",  # share of the top 10 candidates that both lists hold (the query's)
    "best_lexical",  # the list's best BM25 (the query's)
    "best_dense",  # the list's best cosine (the query's)
)
TEXT_CHARS = 1200
"""Text read per fragment (about the 256 wordpieces the embedding model reads): keeps
the features within a few milliseconds for 100 candidates of 512 tokens."""
BODY_CACHE = 2048
"""Fragments whose tokenized text is kept between queries (about 15 KiB each at most)."""
FEEDBACK_TOP = 5
"""Fused candidates whose words make the feedback vector."""

_PIECE = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
_TOKEN = re.compile(r"[A-Za-z0-9_./:-]+")
_CAMEL = re.compile(r"[a-z][A-Z]|[A-Z]{2}[a-z]")
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


def identifiers(query: str) -> list[str]:
    """Query tokens that look like code or file names: snake_case, camelCase, dotted
    or slashed names, names with an extension."""
    out = []
    for token in _TOKEN.findall(query):
        token = token.strip(".:-/")
        if len(token) < 3:
            continue
        if "_" in token or "/" in token or _CAMEL.search(token) or re.search(r"\w\.\w", token):
            out.append(token.lower())
    return list(dict.fromkeys(out))


def _ratio(value: float | None, best: float) -> float:
    return (value or 0.0) / best if best > 0 else 0.0


def _window(positions: dict[str, list[int]]) -> int:
    """The smallest span of word positions holding one occurrence of every key."""
    events = sorted((p, term) for term, ps in positions.items() for p in ps)
    need = len(positions)
    count: Counter[str] = Counter()
    have, left, best = 0, 0, len(events) + 10**6
    for pos, term in events:
        count[term] += 1
        if count[term] == 1:
            have += 1
        while have == need:
            best = min(best, pos - events[left][0] + 1)
            lterm = events[left][1]
            count[lterm] -= 1
            if count[lterm] == 0:
                have -= 1
            left += 1
    return best


class _Read(NamedTuple):
    """What the features read of one fragment's text, whatever the query."""

    words: tuple[str, ...]
    distinct: frozenset[str]
    counts: Mapping[str, int]
    """Term counts without stop words (the feedback vector's terms); read-only, as
    every query shares it."""
    norm: float


@lru_cache(maxsize=BODY_CACHE)
def _body(text: str) -> _Read:
    # Tokenizing is most of the features' cost, and a fragment's text does not change:
    # the same fragments come back query after query. Callers only read the result.
    body = tuple(words(text))
    counts = Counter(w for w in body if w not in _STOP)
    norm = math.sqrt(sum(v * v for v in counts.values())) or 1.0
    return _Read(body, frozenset(body), MappingProxyType(dict(counts)), norm)


@lru_cache(maxsize=BODY_CACHE)
def _head(path: str, heading_path: tuple[str, ...], symbol: str | None) -> frozenset[str]:
    return frozenset(words(" ".join((path, *heading_path, symbol or ""))))


def clear_cache() -> None:
    """Forget every tokenized text (benchmarks time the cold case with it)."""
    _body.cache_clear()
    _head.cache_clear()


def standardized(x: np.ndarray) -> np.ndarray:
    """Each column as a z-score within its list (0 where the list does not vary): what a
    feature says about a candidate relative to the others of its query, which means the
    same on every corpus, where raw magnitudes (scores, lengths, term counts) do not.
    Query-level columns become 0."""
    spread = x.std(axis=0)
    return np.divide(x - x.mean(axis=0), spread, out=np.zeros_like(x), where=spread > 1e-12)


def extract(query: str, candidates: list[Candidate]) -> list[list[float]]:
    """One row of FEATURES per candidate, in the given order (the fused order)."""
    n = len(candidates)
    if n == 0:
        return []
    terms = query_terms(query)
    term_set = set(terms)
    bigrams = set(zip(terms, terms[1:]))
    idents = identifiers(query)
    best_lex = max((c.lexical_score or 0.0) for c in candidates)
    best_dense = max((c.dense_similarity or 0.0) for c in candidates)
    best_fused = max(c.fused_score for c in candidates)
    median_tokens = sorted(c.token_count for c in candidates)[n // 2] or 1
    doc_count = Counter(c.doc_id for c in candidates)
    doc_best: dict[int, int] = {}
    for place, c in enumerate(candidates, start=1):
        doc_best.setdefault(c.doc_id, place)

    read = [_body(c.text[:TEXT_CHARS]) for c in candidates]
    bodies = [r.words for r in read]
    body_sets = [r.distinct for r in read]
    heads = [_head(c.path, tuple(c.heading_path), c.symbol) for c in candidates]
    # List-local IDF: a term every candidate holds tells them apart least.
    df = {t: sum(1 for s in body_sets if t in s) for t in terms}
    idf = {t: math.log((n + 1) / (df[t] + 0.5)) for t in terms}
    idf_total = sum(idf.values()) or 1.0
    q_terms = float(len(terms))
    counts = [r.counts for r in read]
    norms = [r.norm for r in read]
    feedback: dict[str, float] = {}
    for tf, norm in zip(counts[:FEEDBACK_TOP], norms):
        for w, v in tf.items():
            feedback[w] = feedback.get(w, 0.0) + v / norm
    feedback_norm = math.sqrt(sum(v * v for v in feedback.values())) or 1.0
    top = candidates[:10]
    agreement = sum(1 for c in top if c.lexical_rank is not None and c.dense_rank is not None) / len(top)

    rows = []
    for place, (c, body, body_set, head) in enumerate(zip(candidates, bodies, body_sets, heads), start=1):
        tf, norm = counts[place - 1], norms[place - 1]
        dot = sum(v * feedback.get(w, 0.0) for w, v in tf.items())
        if place <= FEEDBACK_TOP:  # its own words are in the feedback: take them out
            dot -= norm
        similarity = dot / (norm * feedback_norm)
        matched = term_set & body_set
        head_matched = term_set & head
        first_line = c.text.lstrip().split("\n", 1)[0]
        lead = set(words(first_line)) & term_set
        if bigrams and len(body) > 1:
            pairs = set(zip(body, body[1:]))
            bigram = sum(1 for b in bigrams if b in pairs) / len(bigrams)
        else:
            bigram = 0.0
        if len(matched) > 1:
            positions: dict[str, list[int]] = {}
            for i, w in enumerate(body):
                if w in matched:
                    positions.setdefault(w, []).append(i)
            proximity = len(matched) / _window(positions)
        else:
            proximity = float(len(matched))
        lowered_head = f"{c.path} {c.symbol or ''}".lower()
        lowered_text = c.text[:TEXT_CHARS].lower() if idents else ""
        occurrences = sum(tf.get(t, 0) for t in matched)
        rows.append(
            [
                c.lexical_score or 0.0,
                _ratio(c.lexical_score, best_lex),
                1.0 / c.lexical_rank if c.lexical_rank else 0.0,
                c.dense_similarity or 0.0,
                _ratio(c.dense_similarity, best_dense),
                best_dense - (c.dense_similarity or 0.0) if c.dense_similarity is not None else 1.0,
                1.0 / c.dense_rank if c.dense_rank else 0.0,
                _ratio(c.fused_score, best_fused),
                1.0 / place,
                float(c.lexical_rank is not None and c.dense_rank is not None),
                len(matched) / q_terms if terms else 0.0,
                sum(idf[t] for t in matched) / idf_total if terms else 0.0,
                len(head_matched) / q_terms if terms else 0.0,
                sum(idf[t] for t in head_matched) / idf_total if terms else 0.0,
                len(lead) / q_terms if terms else 0.0,
                bigram,
                proximity,
                sum(1 for i in idents if i in lowered_head) / len(idents) if idents else 0.0,
                sum(1 for i in idents if i in lowered_text) / len(idents) if idents else 0.0,
                occurrences / len(body) if body else 0.0,
                math.log1p(c.token_count),
                c.token_count / median_tokens,
                float(c.namespace == "code"),
                float(doc_count[c.doc_id] - 1),
                1.0 / doc_best[c.doc_id],
                c.authority or 0.0,
                q_terms,
                float(bool(idents)),
                float(n),
                similarity,
                agreement,
                best_lex,
                best_dense,
            ]
        )
    return rows
