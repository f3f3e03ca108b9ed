"""The learned reranker's features (app.retrieve.features) on hand-made candidates."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.retrieve.candidates import Candidate
from app.retrieve.features import FEATURES, extract, identifiers
from app.text.stems import query_terms, stem, words


def candidate(
    fragment_id: int,
    text: str,
    path: str = "docs/a.md",
    lexical: tuple[int, float] | None = None,
    dense: tuple[int, float] | None = None,
    fused: float = 0.5,
    doc_id: int | None = None,
    namespace: str = "prose",
    heading_path: tuple[str, ...] = (),
    symbol: str | None = None,
    tokens: int = 100,
) -> Candidate:
    return Candidate(
        fragment_id=fragment_id,
        lexical_rank=lexical[0] if lexical else None,
        lexical_score=lexical[1] if lexical else None,
        dense_rank=dense[0] if dense else None,
        dense_similarity=dense[1] if dense else None,
        fused_score=fused,
        doc_id=doc_id if doc_id is not None else fragment_id,
        doc_version=1,
        path=path,
        anchor="",
        repo_id=None,
        namespace=namespace,
        kind="code" if namespace == "code" else "doc",
        owner="o",
        heading_path=list(heading_path),
        symbol=symbol,
        text=text,
        token_count=tokens,
        chunker_version="t",
        embedding_model=None,
        updated_at=datetime(2026, 1, 1, tzinfo=UTC),
    )


def encoded(text: str) -> list[int]:
    """The stem ids the features read of a text, in order (app.text.stems.token_ids)."""
    from itertools import chain

    from app.text.stems import token_ids

    return list(chain.from_iterable(token_ids(text)))


def features_of(row: list[float]) -> dict[str, float]:
    return dict(zip(FEATURES, row, strict=True))


def test_words_split_identifiers_and_stem():
    assert words("getUserName snake_case HTTPServer") == ["get", "user", "nam", "snak", "cas", "http", "server"]
    assert stem("rotating") == stem("rotate") and stem("keys") == "key"
    assert query_terms("How do I rotate the keys, and rotate them?") == ["rotat", "key"]
    assert identifiers("use CliRunner from click/testing.py or my_func, not plain words") == [
        "clirunner",
        "click/testing.py",
        "my_func",
    ]


def test_scores_are_relative_to_the_list_and_ranks_reciprocal():
    rows = extract(
        "rotate signing keys",
        [
            candidate(1, "Rotate the signing keys every 90 days.", lexical=(1, 8.0), dense=(2, 0.5), fused=0.9),
            candidate(2, "Keys are stored in the vault.", lexical=(2, 4.0), fused=0.45),
            candidate(3, "Unrelated text about lunch.", dense=(1, 0.6), fused=0.3),
        ],
    )
    first, second, third = (features_of(r) for r in rows)
    assert first["lexical_ratio"] == 1.0 and second["lexical_ratio"] == 0.5 and third["lexical_ratio"] == 0.0
    assert first["lexical_rr"] == 1.0 and second["lexical_rr"] == 0.5 and third["lexical_rr"] == 0.0
    assert first["dense_ratio"] == pytest.approx(0.5 / 0.6) and third["dense_gap"] == 0.0
    assert second["dense_gap"] == 1.0  # not in the dense list
    assert first["fused_ratio"] == 1.0 and first["fused_rr"] == 1.0 and third["fused_rr"] == pytest.approx(1 / 3)
    assert first["both_lists"] == 1.0 and second["both_lists"] == 0.0
    assert first["best_lexical"] == third["best_lexical"] == 8.0 and first["best_dense"] == 0.6


def test_coverage_proximity_and_bigrams():
    rows = extract(
        "rotate signing keys",
        [
            candidate(1, "To rotate signing keys, run the tool."),
            candidate(2, "Signing is done at build time. Much later, we rotate the backup keys."),
            candidate(3, "Keys only."),
        ],
    )
    adjacent, apart, one = (features_of(r) for r in rows)
    assert adjacent["coverage"] == apart["coverage"] == 1.0
    assert one["coverage"] == pytest.approx(1 / 3)
    assert adjacent["proximity"] == 1.0  # three terms in a window of three words
    assert apart["proximity"] < 0.5
    assert adjacent["bigram_coverage"] == 1.0 and apart["bigram_coverage"] == 0.0
    # "keys" is in every candidate: it weighs least in the list-local IDF.
    assert one["coverage_idf"] < one["coverage"]
    assert adjacent["lead_coverage"] == 1.0


def test_identifier_and_heading_matches_are_apart_from_the_body():
    rows = extract(
        "fix CliRunner in click/testing.py",
        [
            candidate(1, "class CliRunner: ...", path="src/click/testing.py", symbol="CliRunner", namespace="code"),
            candidate(2, "The CliRunner docs mention click/testing.py.", path="docs/api.md"),
        ],
    )
    code, prose = (features_of(r) for r in rows)
    assert code["identifier_match"] == 1.0 and prose["identifier_match"] == 0.0
    assert prose["identifier_text_match"] == 1.0
    assert code["head_coverage"] > prose["head_coverage"]
    assert code["is_code"] == 1.0 and prose["is_code"] == 0.0
    assert code["query_has_identifier"] == 1.0


def test_document_features_and_lengths():
    rows = extract(
        "alpha",
        [
            candidate(1, "alpha one", doc_id=7, tokens=100),
            candidate(2, "beta", doc_id=8, tokens=200),
            candidate(3, "alpha two", doc_id=7, tokens=400),
        ],
    )
    a, b, c = (features_of(r) for r in rows)
    assert a["doc_fragments"] == c["doc_fragments"] == 1.0 and b["doc_fragments"] == 0.0
    assert c["doc_best_fused_rr"] == 1.0 and b["doc_best_fused_rr"] == 0.5
    assert b["tokens_ratio"] == 1.0 and c["tokens_ratio"] == 2.0
    assert a["list_size"] == 3.0 and a["query_terms"] == 1.0


def test_feedback_favours_candidates_like_the_top_ones():
    top = [candidate(i, "postgres vacuum autovacuum tuning thresholds") for i in range(1, 6)]
    rows = extract(
        "vacuum",
        [
            *top,
            candidate(6, "autovacuum thresholds for postgres tables"),
            candidate(7, "a recipe for lemon cake"),
        ],
    )
    similar, unrelated = features_of(rows[5]), features_of(rows[6])
    assert similar["feedback_similarity"] > 0.5 and unrelated["feedback_similarity"] == 0.0


def test_no_candidates_no_rows_and_every_row_full_width():
    assert extract("anything", []).shape == (0, len(FEATURES))
    rows = extract("", [candidate(1, "")])
    assert rows.shape == (1, len(FEATURES))
    assert np.isfinite(rows).all()


def test_empty_texts_get_no_feedback_and_every_value_is_finite():
    rows = extract(
        "vacuum thresholds",
        [candidate(1, ""), candidate(2, "  \n "), candidate(3, "vacuum thresholds"), candidate(4, "été ünïcode ☃")],
    )
    assert np.isfinite(rows).all()
    empty, blank, full, foreign = (features_of(r) for r in rows)
    assert empty["feedback_similarity"] == blank["feedback_similarity"] == 0.0
    assert empty["coverage"] == empty["proximity"] == empty["term_density"] == 0.0
    assert full["coverage"] == 1.0 and foreign["coverage"] == 0.0


@pytest.mark.parametrize(
    "text",
    [
        "getUserName snake_case HTTPServer v2beta3 ABCdef",
        "café—naïve résumé; 東京 tokenizer\x00NUL\ttab\r\nCRLF",
        "emoji 🙂between🙂words and \ud800 a lone surrogate",
        "x" * 5000 + " tail",
        "--- *** /// ... 12.5e-3 0x1F __init__ a.b.c/d-e:f",
        "",
    ],
)
def test_encoding_gives_the_stems_of_words_in_order(text):
    from app.text.stems import stem_id

    assert encoded(text) == [stem_id(w) for w in words(text)]


def test_stop_words_have_negative_ids_and_content_stems_do_not():
    from app.text.stems import stem_id

    assert stem_id("the") < 0 and stem_id("would") < 0
    assert all(stem_id(w) >= 0 for w in words("rotate signing keys quarterly in the vault") if w not in ("in", "the"))
    assert stem_id("key") == stem_id("key") != stem_id("keys")


def test_the_token_memo_starts_afresh_when_full_and_stays_right(monkeypatch):
    from app.text import stems

    monkeypatch.setattr(stems, "MAX_TOKENS", 4)
    monkeypatch.setattr(stems, "_TOKENS", stems._Tokens())  # none of these tokens known yet
    text = "alpha beta gamma delta epsilon zeta eta theta alphaBeta"
    assert encoded(text) == [stems.stem_id(w) for w in words(text)]
    assert len(stems._TOKENS) <= 4


def test_tokenized_texts_are_cached_and_give_the_same_rows():
    from app.retrieve import features
    from app.text import stems

    listed = [
        candidate(1, "rotate the signing keys every quarter"),
        candidate(2, "signing keys live in the vault; rotate them with care"),
        candidate(3, "a recipe for lemon cake"),
    ]
    features.clear_cache()
    cold = extract("rotate signing keys", listed)
    assert stems.read.cache_info().currsize == 3
    # Another query over the same fragments reads them from the cache, unchanged by use.
    other = extract("lemon cake recipe", listed)
    assert stems.read.cache_info().hits >= 3
    assert np.array_equal(extract("rotate signing keys", listed), cold)
    features.clear_cache()
    assert stems.read.cache_info().currsize == 0
    assert np.array_equal(extract("lemon cake recipe", listed), other)


def test_asked_columns_are_the_full_rows_columns_and_unknown_ones_are_refused():
    query = "fix CliRunner in click/testing.py when the terminal width is unknown"
    listed = [
        candidate(1, "class CliRunner: ...\nterminal width", path="src/click/testing.py", symbol="CliRunner"),
        candidate(2, "The CliRunner docs mention click/testing.py.", path="docs/api.md", heading_path=("Testing",)),
        candidate(3, "terminal width is unknown here", lexical=(1, 3.0), dense=(1, 0.4)),
    ]
    full = extract(query, listed)
    for columns in (("coverage_idf", "identifier_match"), ("identifier_text_match", "lead_coverage"), FEATURES[::-1]):
        asked = extract(query, listed, columns)
        assert np.array_equal(asked, full[:, [FEATURES.index(c) for c in columns]])
    assert extract(query, [], ("proximity",)).shape == (0, 1)
    with pytest.raises(ValueError, match="does not compute: nope"):
        extract(query, listed, ("proximity", "nope"))


READING_TEXTS = [
    "rotate the signing keys every quarter\nthen restart the vault",
    "signing keys live in the vault; rotate them with care",
    "getUserName snake_case HTTPServer v2beta3 ABCdef",
    "café—naïve résumé; 東京 tokenizer\x00NUL\ttab\r\nCRLF",
    "emoji 🙂between🙂words and a rotate key",
    "x" * 5000 + " tail keys",
    "",
    "  \n ",
    "keys " * 400,
]


def _with_readings(listed: list[Candidate], which=lambda i: True) -> list[Candidate]:
    from dataclasses import replace

    from app.text.stems import reading

    return [replace(c, reading=reading(c.text)) if which(i) else c for i, c in enumerate(listed)]


def test_stored_readings_give_the_rows_of_the_texts_read_now():
    """A retrieval decodes the readings ingestion stored instead of tokenizing the texts:
    the rows are the same, every reading stored, some, or none."""
    from app.retrieve import features

    listed = [
        candidate(i + 1, text, lexical=(i + 1, 5.0 - i), dense=(len(READING_TEXTS) - i, 0.3 + 0.01 * i))
        for i, text in enumerate(READING_TEXTS)
    ]
    for query in ("rotate signing keys", "getUserName in HTTPServer", "keys", "the"):
        features.clear_cache()
        read_now = extract(query, listed)
        assert np.array_equal(extract(query, _with_readings(listed)), read_now)
        assert np.array_equal(extract(query, _with_readings(listed, lambda i: i % 2 == 0)), read_now)


def test_a_reading_starts_with_this_codes_prefix_and_the_texts_digest():
    import hashlib

    from app.text.stems import READING_PREFIX, reading

    text = "rotate the signing keys"
    blob = reading(text)
    assert blob.startswith(READING_PREFIX) and len(blob) % 4 == 0
    assert blob[8:12] == hashlib.sha256(text.encode()).digest()[:4]
    assert reading(text) == blob  # the same text, the same bytes


@pytest.mark.parametrize(
    "damage",
    [
        lambda b: b"",
        lambda b: b[:10],
        lambda b: b[:-4],
        lambda b: b + b"\x00",
        lambda b: b"\x02\x00\x00\x00" + b[4:],  # another format
        lambda b: b[:4] + b"\x01\x02\x03\x04" + b[8:],  # another tokenizer
        lambda b: b[:12] + (2**31 - 1).to_bytes(4, "little") + b[16:],  # sizes that do not add up
        lambda b: b[:12] + (2**32 - 1).to_bytes(4, "little") + b[16:],  # a negative size
        lambda b: b[:20] + (10**6).to_bytes(4, "little") + b[24:],  # a first line longer than the text
        lambda b: bytes(range(256)) * 3,
    ],
)
def test_a_reading_this_code_did_not_write_is_ignored_for_the_text(damage):
    """A reading of another format or tokenizer, or not well formed, is not decoded: the
    text is read instead (one such reading among good ones included)."""
    from dataclasses import replace

    from app.retrieve import features

    listed = _with_readings([candidate(i + 1, text) for i, text in enumerate(READING_TEXTS[:5])])
    features.clear_cache()
    expected = extract("rotate signing keys", [replace(c, reading=None) for c in listed])
    bad = [replace(c, reading=damage(c.reading)) if i == 1 else c for i, c in enumerate(listed)]
    assert np.array_equal(extract("rotate signing keys", bad), expected)
    all_bad = [replace(c, reading=damage(c.reading)) for c in listed]
    assert np.array_equal(extract("rotate signing keys", all_bad), expected)


PINNED_DIGEST = "b660e563f00b8cff951139f290ed1add683bb59db1b048e1607b355847e051b3"
PINNED_TEXT = (
    "Rotate the signing keys every quarter.\ngetUserName snake_case HTTPServer v2beta3; café 東京 🙂 the vault"
)


def test_a_reading_is_pinned_so_a_tokenizer_change_bumps_its_version():
    """Readings are stored: a change to how a text becomes stem ids must change the key
    in their first bytes (app.text.stems.TOKENIZER_VERSION), or old readings would be decoded
    as if they were new ones. This digest changes with the bytes; update it only with
    the version."""
    import hashlib

    from app.text.stems import reading

    assert hashlib.sha256(reading(PINNED_TEXT)).hexdigest() == PINNED_DIGEST, (
        "readings changed: bump TOKENIZER_VERSION in app/text/stems.py, then update PINNED_DIGEST"
    )


def _window_by_brute_force(ids: list[int], terms: set[int]) -> int:
    held = terms & set(ids)
    if len(held) < 1:
        return 1
    return min(
        right - left + 1
        for left in range(len(ids))
        for right in range(left, len(ids))
        if held <= set(ids[left : right + 1])
    )


@settings(max_examples=300, deadline=None)
@given(
    texts=st.lists(st.lists(st.integers(0, 6), max_size=25), min_size=1, max_size=6),
    query=st.lists(st.integers(0, 6), min_size=1, max_size=4, unique=True),
)
def test_proximity_windows_are_the_smallest_holding_every_held_term(texts, query):
    """`_windows` (array searches over every candidate at once) against trying every
    window of every candidate."""
    from app.retrieve.features import _owners, _windows

    seq = np.array([i for ids in texts for i in ids], dtype=np.int32)
    sizes = np.array([len(ids) for ids in texts], dtype=np.int64)
    starts = np.concatenate(([0], np.cumsum(sizes)))
    q = np.array(query, dtype=np.int32)
    present = np.array([[t in ids for t in query] for ids in texts], dtype=bool)
    found = _windows(seq, _owners(sizes), starts, q, present)
    assert found.tolist() == [_window_by_brute_force(ids, set(query)) for ids in texts]


def test_fragment_and_query_kinds_are_features():
    """What each fragment is and what the query asks (app.retrieve.kinds), as one-hots
    and the pairs a linear model reads as one column."""
    listed = [
        candidate(1, "def run(job):\n    return job.start()\n", "app/jobs.py", namespace="code", symbol="run"),
        candidate(2, "@dataclass\nclass Job:\n    name: str\n    size: int\n", "app/types.py", namespace="code"),
        candidate(3, "from app.jobs import run\nfrom app.types import Job\n", "app/cli.py", namespace="code"),
        candidate(4, "def test_run():\n    assert run(Job('a', 1))\n", "tests/test_jobs.py", namespace="code"),
        candidate(5, "A job runs when its queue has room. It starts at once and reports when done.\n"),
        candidate(6, "- `run`: start a job\n- `stop`: end it\n"),
    ]
    kinds = ("definition", "declaration", "imports", "test", "explaining", "reference")
    question = [features_of(r) for r in extract("how does a job start?", listed)]
    for row, kind in zip(question, kinds, strict=True):
        assert [k for k in kinds if row[f"kind_{k}"] == 1.0] == [kind]
        assert row["kind_turn"] == 0.0
        assert (row["query_question"], row["query_identifier"], row["query_error"], row["query_path"]) == (1, 0, 0, 0)
        assert row["question_non_answer"] == float(kind in ("declaration", "imports", "test"))
        assert row["name_definition"] == 0.0
    named = [features_of(r) for r in extract("run_job", listed)]
    assert [r["query_identifier"] for r in named] == [1.0] * 6
    assert [r["name_definition"] for r in named] == [1.0, 1.0, 0, 0, 0, 0]
    assert [r["question_non_answer"] for r in named] == [0.0] * 6
