"""Features of each (query, candidate) pair for the learned reranker (docs/adr/0015).

Python and numpy over the candidate list the SQL call returned: no database, no model. A
feature means the same thing on every corpus where it can: scores come as they are
and also relative to this list's best (and as ranks), term matches as fractions of the
query's terms, weighted by how rare a term is *among these candidates* (a list-local
IDF: no document frequencies are needed from the database).

FEATURES names the columns in order (MEANINGS says each in words); `extract` returns one
row per candidate (a float array), computed for the whole list at once over the texts'
stem ids. A change to a feature's meaning needs a retrained model (the model file
records this list and TEXT_CHARS, and loading refuses a model trained otherwise). How a
text becomes stem ids (the tokenizer, and the readings ingestion stores) is
app.text.stems.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from itertools import chain
from typing import NamedTuple

import numpy as np

from app.retrieve.candidates import Candidate
from app.retrieve.kinds import candidate_kind, query_kind
from app.text.stems import (
    BODY_CACHE,
    HEADER,
    READING_FORMAT,
    TEXT_CHARS,
    TOKENIZER_KEY,
    Read,
    query_terms,
    read,
    stem_id,
    token_ids,
)

MEANINGS: dict[str, str] = {
    "lexical_score": "its Okapi BM25 score, as the SQL call computed it (0: not in the lexical list)",
    "lexical_ratio": "its BM25 score over the best BM25 score of this list",
    "lexical_rr": "1 / its lexical rank (0: outside the lexical list)",
    "dense_similarity": "its cosine with the query under its namespace's model (0: not in the dense list)",
    "dense_ratio": "its cosine over the best cosine of this list",
    "dense_gap": "the best cosine of this list minus its cosine",
    "dense_rr": "1 / its dense rank (0: outside the dense list)",
    "fused_ratio": "its fused score over the best fused score of this list",
    "fused_rr": "1 / its place in the fused list",
    "both_lists": "1 when both the lexical and the dense list hold it",
    "coverage": "the query's distinct terms found in its text, over the query's terms",
    "coverage_idf": "the query's distinct terms found in its text, each weighted by its rarity among these candidates",
    "head_coverage": "the query's terms found in its path, heading path and symbol",
    "head_coverage_idf": "the query's terms found in its path, heading path and symbol, each weighted by its rarity",
    "lead_coverage": "the query's terms found in the first line of its text (often a title)",
    "bigram_coverage": "the query's word pairs found as adjacent words in its text",
    "proximity": "matched terms over the smallest window of words that holds them all",
    "identifier_match": "the query's code-like tokens (snake_case, camelCase, dotted, paths) in its path or symbol",
    "identifier_text_match": "the query's code-like tokens found in its text",
    "term_density": "occurrences of the query's terms over its words",
    "log_tokens": "log(1 + its tokens)",
    "tokens_ratio": "its tokens over the median tokens of this list",
    "is_code": "1 when it is in the code namespace",
    "doc_fragments": "other fragments of its document in this list",
    "doc_best_fused_rr": "1 / the best fused place among its document's fragments",
    "authority": "its citation authority in [0, 1] (how much what cites it is cited)",
    "query_terms": "the query's distinct terms (the same for every candidate)",
    "query_has_identifier": "1 when the query holds an identifier-like token (the same for every candidate)",
    "list_size": "candidates in this list, at most rerank_top (the same for every candidate)",
    "feedback_similarity": "cosine of its words with those of the best fused candidates (pseudo-relevance feedback)",
    "lists_agreement": "share of the top 10 candidates that both lists hold (the same for every candidate)",
    "best_lexical": "the list's best BM25 score (the same for every candidate)",
    "best_dense": "the list's best cosine (the same for every candidate)",
    # What the fragment is and what the query asks (app.retrieve.kinds): one-hots, and
    # the pairs a linear model over per-list z-scores can only read as one column.
    "kind_definition": "1 when it is a function or method with a body, or a class with methods",
    "kind_declaration": "1 when it is a type that only declares (fields, no logic) or a type alias",
    "kind_imports": "1 when it is imports, __all__, registration or wiring",
    "kind_test": "1 when it is a test function or a test file's fragment",
    "kind_explaining": "1 when it is prose in sentences",
    "kind_reference": "1 when it is prose that lists: tables, bullets, changelogs",
    "kind_turn": "1 when it is a conversation turn",
    "query_question": "1 when the query is a natural-language question",
    "query_identifier": "1 when the query names code",
    "query_error": "1 when the query is an error message",
    "query_path": "1 when the query is a file path",
    "question_non_answer": "1 when the query is a question and it is a declaration-only type, imports or a test",
    "name_definition": "1 when the query is an identifier, path or error and it is a definition or declaration",
}
"""What each column says about a candidate, in words: the trace page's glossary
(GET /ui/glossary.json) shows them beside the reranker's contributions."""
FEATURES = tuple(MEANINGS)
_FRAGMENT_COLUMNS = ("definition", "declaration", "imports", "test", "explaining", "reference", "turn")
_QUERY_KINDS = ("question", "identifier", "error", "path")
_PAIRS = {"question_non_answer", "name_definition"}
_KIND_COLUMNS = {f"kind_{k}" for k in _FRAGMENT_COLUMNS} | _PAIRS
_ASKS_COLUMNS = {f"query_{k}" for k in _QUERY_KINDS} | _PAIRS
FEEDBACK_TOP = 5
"""Fused candidates whose words make the feedback vector."""

_TOKEN = re.compile(r"[A-Za-z0-9_./:-]+")
_CAMEL = re.compile(r"[a-z][A-Z]|[A-Z]{2}[a-z]")


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


def _windows(seq: np.ndarray, owner: np.ndarray, starts: np.ndarray, q: np.ndarray, present: np.ndarray) -> np.ndarray:
    """Per candidate, the smallest span of word positions holding one occurrence of each
    query term it holds (1 when it holds none). `seq`: every candidate's ids end to end,
    `owner` the candidate of each, `starts` where each begins (and the end), `present`
    (candidate x query term) whether it holds the term.

    A smallest window starts at an occurrence of a query term and ends at the farthest of
    the held terms' next occurrences from there: per term, one search over all the
    candidates' occurrences at once (a sliding window per candidate, in Python, cost ten
    times as much)."""
    n = starts.size - 1
    at = np.nonzero(np.isin(seq, q))[0]  # occurrences of query terms, in position order
    cand = owner[at]
    right = at.copy()
    feasible = np.ones(at.size, dtype=bool)
    for j, term in enumerate(q.tolist()):
        places = at[seq[at] == term]
        if places.size == 0:
            continue
        k = np.searchsorted(places, at)
        nxt = places[np.minimum(k, places.size - 1)]
        needed = present[cand, j]
        found = (k < places.size) & (nxt < starts[cand + 1])
        feasible &= found | ~needed
        right = np.where(needed & found, np.maximum(right, nxt), right)
    spans = np.full(n, np.inf)
    np.minimum.at(spans, cand[feasible], (right - at + 1)[feasible])
    return np.where(np.isfinite(spans), spans, 1.0)


class _Texts(NamedTuple):
    """What the features read of a candidate list's texts, laid end to end."""

    seq: np.ndarray
    """Every candidate's ids (`Read.ids`), one after the other."""
    sizes: np.ndarray
    """How many of `seq` are each candidate's."""
    terms: np.ndarray
    """Every candidate's distinct content ids (`Read.terms`), one after the other."""
    counts: np.ndarray
    """Their counts (float)."""
    term_sizes: np.ndarray
    """How many of `terms` are each candidate's."""
    leads: np.ndarray
    """How many of each candidate's ids are its first line's."""


def _ranges(starts: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """The indices start, start + 1, ... (size of them) of each range, end to end."""
    ends = np.cumsum(sizes)
    return np.repeat(starts - (ends - sizes), sizes) + np.arange(int(ends[-1]) if ends.size else 0)


_HEADER_WORDS = HEADER.size // 4


def _decoded(blobs: list[bytes | None]) -> tuple[np.ndarray, _Texts]:
    """Which of these stored readings are well-formed readings of this code (None, another
    format or tokenizer, sizes that do not add up: not), and those decoded, all at once:
    a few array operations whatever the list's length."""
    lens = np.fromiter((0 if b is None else len(b) for b in blobs), dtype=np.int64, count=len(blobs))
    ok = (lens >= HEADER.size) & (lens % 4 == 0)
    kept = lens[ok]
    words = np.frombuffer(b"".join(b for b, good in zip(blobs, ok.tolist()) if good), dtype="<i4")  # type: ignore[misc]
    starts = (np.cumsum(kept) - kept) // 4
    header = words[starts[:, None] + np.arange(_HEADER_WORDS)].astype(np.int64)
    n_ids, n_terms, leads = header[:, 3], header[:, 4], header[:, 5]
    good = (
        (header[:, 0] == READING_FORMAT)
        & (header[:, 1] == TOKENIZER_KEY)
        & (n_ids >= 0)
        & (n_terms >= 0)
        & (leads >= 0)
        & (leads <= n_ids)
        & (_HEADER_WORDS + n_ids + 2 * n_terms == kept // 4)
    )
    ok[ok] = good
    n_ids, n_terms, leads, starts = n_ids[good], n_terms[good], leads[good], starts[good]
    ids_at = starts + _HEADER_WORDS
    ids = words[_ranges(ids_at, n_ids)].astype(np.int32)
    terms = words[_ranges(ids_at + n_ids, n_terms)].astype(np.int32)
    counts = words[_ranges(ids_at + n_ids + n_terms, n_terms)].astype(np.float64)
    return ok, _Texts(ids, n_ids, terms, counts, n_terms, leads)


def _texts(candidates: list[Candidate]) -> _Texts:
    """What the features read of the candidates' texts: each one's stored reading when it
    is this code's (the database keeps a reading only with the text it was made of: a
    trigger checks the digest), else its text read now."""
    ok, stored = _decoded([c.reading for c in candidates])
    if ok.all():
        return stored
    # Some are read from their text (stored before readings were): the decoded ones in
    # their places among them.
    reads: list[Read] = []
    id_at = term_at = 0
    sizes, term_sizes, leads = stored.sizes.tolist(), stored.term_sizes.tolist(), stored.leads.tolist()
    j = 0
    for c, good in zip(candidates, ok.tolist()):
        if good:
            k, t = sizes[j], term_sizes[j]
            terms = slice(term_at, term_at + t)
            reads.append(Read(stored.seq[id_at : id_at + k], stored.terms[terms], stored.counts[terms], leads[j]))
            id_at, term_at, j = id_at + k, term_at + t, j + 1
        else:
            reads.append(read(c.text[:TEXT_CHARS]))
    return _Texts(
        np.concatenate([r.ids for r in reads]),
        np.array([r.ids.size for r in reads], dtype=np.int64),
        np.concatenate([r.terms for r in reads]),
        np.concatenate([r.counts for r in reads]).astype(np.float64),
        np.array([r.terms.size for r in reads], dtype=np.int64),
        np.array([r.lead for r in reads], dtype=np.int64),
    )


@lru_cache(maxsize=BODY_CACHE)
def _head(path: str, heading_path: tuple[str, ...], symbol: str | None) -> frozenset[int]:
    return frozenset(chain.from_iterable(token_ids(" ".join((path, *heading_path, symbol or "")))))


def clear_cache() -> None:
    """Forget every tokenized text (benchmarks time the cold case with it); the tokens'
    ids stay known, as the words of a running service's corpus do."""
    read.cache_clear()
    _head.cache_clear()


def standardized(x: np.ndarray) -> np.ndarray:
    """Each column as a z-score within its list (0 where the list does not vary): what a
    feature says about a candidate relative to the others of its query, which means the
    same on every corpus, where raw magnitudes (scores, lengths, term counts) do not.
    Query-level columns become 0."""
    spread = x.std(axis=0)
    return np.divide(x - x.mean(axis=0), spread, out=np.zeros_like(x), where=spread > 1e-12)


def _ratio(values: np.ndarray, best: float) -> np.ndarray:
    return values / best if best > 0 else np.zeros_like(values)


def _owners(sizes: np.ndarray) -> np.ndarray:
    """For arrays of these sizes laid end to end: which one each element came from."""
    return np.repeat(np.arange(sizes.size), sizes)


def _lookup(values: np.ndarray, table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each of `values` is in the ascending `table`: (found mask, its index there)."""
    if table.size == 0:
        return np.zeros(values.shape, dtype=bool), np.zeros(values.shape, dtype=np.intp)
    at = np.minimum(np.searchsorted(table, values), table.size - 1)
    return table[at] == values, at


def term_coverage(query: str, candidates: list[Candidate]) -> np.ndarray:
    """Each candidate's share of the query's distinct content terms found in what is read
    of its text: the `coverage` feature, for any list (absolute relevance reads it). A
    query of stop words only covers every candidate (1.0): it has no term to miss."""
    terms = query_terms(query)
    if not terms:
        return np.ones(len(candidates))
    if not candidates:
        return np.zeros(0)
    texts = _texts(candidates)
    q = np.unique(np.array([stem_id(t) for t in terms], dtype=np.int32))
    found, _at = _lookup(texts.terms, q)
    matched = np.bincount(_owners(texts.term_sizes)[found], minlength=len(candidates))
    return matched / len(terms)  # distinct ids found: at most len(q) <= len(terms)


def extract(query: str, candidates: list[Candidate], columns: Sequence[str] = FEATURES) -> np.ndarray:
    """One row of `columns` (FEATURES by default) per candidate, in the given order (the
    fused order). Columns not asked for and costly to compute (matches in the heading
    path and first line, identifiers searched in the text) are not computed."""
    unknown = set(columns) - set(FEATURES)
    if unknown:
        raise ValueError(f"features this code does not compute: {', '.join(sorted(unknown))}")
    asked = set(columns)
    n = len(candidates)
    if n == 0:
        return np.zeros((0, len(columns)))
    texts = _texts(candidates)
    terms = query_terms(query)
    m = len(terms)
    q = np.array([stem_id(t) for t in terms], dtype=np.int32)
    idents = identifiers(query)
    lengths = texts.sizes.astype(np.float64)

    # Each query term's count in each candidate (stop words are never query terms).
    all_terms, all_counts = texts.terms, texts.counts
    term_owner = _owners(texts.term_sizes)
    squares = np.bincount(term_owner, weights=all_counts * all_counts, minlength=n)
    norms = np.sqrt(squares)
    norms[norms == 0] = 1.0
    tf = np.zeros((n, m))
    if m:
        order = np.argsort(q, kind="stable")
        found, at = _lookup(all_terms, q[order])
        tf[term_owner[found], order[at[found]]] = all_counts[found]
    matched = tf > 0
    matched_count = matched.sum(axis=1)
    # List-local IDF: a term every candidate holds tells them apart least.
    idf = np.log((n + 1) / (matched.sum(axis=0) + 0.5))
    idf_total = float(idf.sum()) or 1.0
    q_list = q.tolist()
    head_matched = lead_matched = np.zeros((n, m), dtype=bool)
    if asked & {"head_coverage", "head_coverage_idf"}:
        heads = [_head(c.path, tuple(c.heading_path), c.symbol) for c in candidates]
        head_matched = np.array([[t in h for t in q_list] for h in heads], dtype=bool).reshape(n, m)

    # Bigrams, proximity and the first line read the words in order, all candidates'
    # words end to end.
    seq = texts.seq
    seq_owner = _owners(texts.sizes)
    starts = np.concatenate(([0], np.cumsum(lengths, dtype=np.int64)))
    if "lead_coverage" in asked and m:
        lead = np.nonzero(np.arange(seq.size) - starts[seq_owner] < texts.leads[seq_owner])[0]
        lead_matched = np.zeros((n, m), dtype=bool)
        for j, term in enumerate(q_list):
            lead_matched[seq_owner[lead[seq[lead] == term]], j] = True
    bigram = np.zeros(n)
    pairs = set(zip(q_list, q_list[1:]))
    if pairs and seq.size > 1:
        codes = (seq[:-1].astype(np.int64) << 32) | seq[1:]
        wanted = np.array(sorted((a << 32) | b for a, b in pairs), dtype=np.int64)
        hit = np.isin(codes, wanted) & (seq_owner[:-1] == seq_owner[1:])
        seen = set(zip(seq_owner[:-1][hit].tolist(), codes[hit].tolist()))
        bigram = np.bincount(np.array([owner for owner, _ in seen], dtype=np.intp), minlength=n) / (m - 1)
    proximity = matched_count.astype(np.float64)
    if (matched_count > 1).any():
        proximity = matched_count / _windows(seq, seq_owner, starts, q, matched)

    # Pseudo-relevance feedback: the top fused candidates' words, each text weighing 1.
    top = min(FEEDBACK_TOP, n)
    top_end = int(texts.term_sizes[:top].sum())
    feedback, inverse = np.unique(all_terms[:top_end], return_inverse=True)
    weights = np.bincount(inverse, weights=all_counts[:top_end] / norms[term_owner[:top_end]])
    feedback_norm = math.sqrt(float(weights @ weights)) or 1.0
    found, at = _lookup(all_terms, feedback)
    dot = np.bincount(term_owner[found], weights=all_counts[found] * weights[at[found]], minlength=n).astype(float)
    # Its own words are in the feedback: take them out.
    dot[:top] -= squares[:top] / norms[:top]

    lexical = np.array([c.lexical_score or 0.0 for c in candidates])
    dense = np.array([c.dense_similarity or 0.0 for c in candidates])
    in_dense = np.array([c.dense_similarity is not None for c in candidates])
    fused = np.array([c.fused_score for c in candidates])
    tokens = np.array([c.token_count for c in candidates], dtype=np.float64)
    lexical_rank = np.array([c.lexical_rank or 0 for c in candidates], dtype=np.float64)
    dense_rank = np.array([c.dense_rank or 0 for c in candidates], dtype=np.float64)
    best_lexical, best_dense = float(lexical.max()), float(dense.max())
    doc_count = Counter(c.doc_id for c in candidates)
    doc_best: dict[int, int] = {}
    for place, c in enumerate(candidates, start=1):
        doc_best.setdefault(c.doc_id, place)
    top10 = candidates[:10]
    agreement = sum(1 for c in top10 if c.lexical_rank is not None and c.dense_rank is not None) / len(top10)
    in_head = in_text = [0] * n
    if idents and "identifier_match" in asked:
        in_head = [sum(1 for i in idents if i in f"{c.path} {c.symbol or ''}".lower()) for c in candidates]
    if idents and "identifier_text_match" in asked:
        in_text = [sum(1 for i in idents if i in c.text[:TEXT_CHARS].lower()) for c in candidates]
    per_term = 1.0 / m if m else 0.0
    # Only for a model that reads them (the shipped one does not): no work on its path.
    kinds = [candidate_kind(c) for c in candidates] if asked & _KIND_COLUMNS else [""] * n
    asks = query_kind(query) if asked & _ASKS_COLUMNS else ""
    is_kind = {k: np.array([f == k for f in kinds], dtype=np.float64) for k in _FRAGMENT_COLUMNS}

    def share(matches: np.ndarray) -> np.ndarray:
        return matches @ idf / idf_total if m else np.zeros(n)

    values = {
        "lexical_score": lexical,
        "lexical_ratio": _ratio(lexical, best_lexical),
        "lexical_rr": np.divide(1.0, lexical_rank, out=np.zeros(n), where=lexical_rank > 0),
        "dense_similarity": dense,
        "dense_ratio": _ratio(dense, best_dense),
        "dense_gap": np.where(in_dense, best_dense - dense, 1.0),
        "dense_rr": np.divide(1.0, dense_rank, out=np.zeros(n), where=dense_rank > 0),
        "fused_ratio": _ratio(fused, float(fused.max())),
        "fused_rr": 1.0 / np.arange(1, n + 1),
        "both_lists": (lexical_rank > 0) & (dense_rank > 0),
        "coverage": matched_count * per_term,
        "coverage_idf": share(matched),
        "head_coverage": head_matched.sum(axis=1) * per_term,
        "head_coverage_idf": share(head_matched),
        "lead_coverage": lead_matched.sum(axis=1) * per_term,
        "bigram_coverage": bigram,
        "proximity": proximity,
        "identifier_match": np.array(in_head) / max(1, len(idents)),
        "identifier_text_match": np.array(in_text) / max(1, len(idents)),
        "term_density": np.divide(tf.sum(axis=1), lengths, out=np.zeros(n), where=lengths > 0),
        "log_tokens": np.log1p(tokens),
        "tokens_ratio": tokens / (sorted(tokens.tolist())[n // 2] or 1),
        "is_code": np.array([c.namespace == "code" for c in candidates]),
        "doc_fragments": np.array([doc_count[c.doc_id] - 1 for c in candidates]),
        "doc_best_fused_rr": np.array([1.0 / doc_best[c.doc_id] for c in candidates]),
        "authority": np.array([c.authority or 0.0 for c in candidates]),
        "query_terms": np.full(n, float(m)),
        "query_has_identifier": np.full(n, float(bool(idents))),
        "list_size": np.full(n, float(n)),
        "feedback_similarity": dot / (norms * feedback_norm),
        "lists_agreement": np.full(n, agreement),
        "best_lexical": np.full(n, best_lexical),
        "best_dense": np.full(n, best_dense),
        **{f"kind_{k}": is_kind[k] for k in _FRAGMENT_COLUMNS},
        **{f"query_{k}": np.full(n, float(asks == k)) for k in _QUERY_KINDS},
        "question_non_answer": (asks == "question") * (is_kind["declaration"] + is_kind["imports"] + is_kind["test"]),
        "name_definition": (asks != "question") * (is_kind["definition"] + is_kind["declaration"]),
    }
    return np.column_stack([np.asarray(values[name], dtype=np.float64) for name in columns])
