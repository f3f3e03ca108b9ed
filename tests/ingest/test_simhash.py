"""R-ING-4 in Python: near copies land within distance 3, different texts far apart."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest

from app.ingest.dedupe import hamming, simhash64, to_signed

SOURCE = (Path(__file__).parents[2] / "app" / "ingest" / "pipeline.py").read_text()


def test_near_copy_is_within_threshold():
    near = SOURCE.replace("inside the caller's transaction", "inside the callers transaction")
    assert near != SOURCE
    assert hamming(simhash64(SOURCE), simhash64(near)) <= 3


def test_different_texts_are_far_apart():
    other = (Path(__file__).parents[2] / "app" / "ingest" / "chunk_prose.py").read_text()
    assert hamming(simhash64(SOURCE), simhash64(other)) > 10
    assert hamming(simhash64("def a():\n    return 1"), simhash64("def b():\n    return 2")) > 3


def test_signed_round_trip():
    value = simhash64(SOURCE)
    signed = to_signed(value)
    assert -(1 << 63) <= signed < (1 << 63)
    assert signed & ((1 << 64) - 1) == value


def test_values_are_those_stored_already():
    """Stored fragments hold the SimHash a fresh ingest gives (migration 0043 computed them
    again with these features): a faster computation must give the same bits, and a change
    of features needs a migration like 0043, or near copies of stored text stop matching."""
    assert simhash64("def fetch(url):\n    return httpx.get(url, timeout=5)") == 7215906720108294390
    assert simhash64("İstanbul İİ ß ﬁ x") == 10915173136078128272  # each word lowered on its own
    assert simhash64("a b") == 3873934935111206759
    repeated = "total = 0\n" * 4 + "def add(a, b):\n    return a + b\n\nprint(add(total, 1))\n"
    assert simhash64(repeated) == 3295712423680847676  # a shingle that repeats weighs 1 + ln(count)
    assert simhash64("") == 0


MARKUP = [
    lambda words: f"{words[0].title()} {words[1]}\n{'=' * random.randint(12, 40)}\n\n{' '.join(words[2:])}",
    lambda words: (
        f"| {words[0]} | {words[1]} |\n|---|---|\n| {' | '.join(words[2:4])} |\n|---|---|\n{' '.join(words[4:])}"
    ),
    lambda words: f"# {'-' * 60}\n# {' '.join(words)}\n# {'-' * 60}",
    lambda words: (
        f"{random.randint(0, 9)}.{random.randint(0, 30)}.0 (2013-05-{random.randint(10, 28)})\n"
        f"{'-' * 18}\n\n-   {' '.join(words)}"
    ),
    lambda words: "".join(f'{{"id":"{random.randint(1, 99999)}", "name":"{w}", "approved":"1"}},\n' for w in words),
]


@pytest.mark.parametrize("seed", range(4))
def test_sections_that_share_only_their_markup_are_far_apart(seed):
    """A run of punctuation is one token and a repeated shingle weighs 1 + ln(count): short
    sections, changelog entries, tables and data records that share only their markup are
    not near copies of each other (before, every short section of a reST page and every short entry of
    a changelog fell within distance 3 of one another and collapsed into one fragment)."""
    random.seed(seed)
    vocabulary = [f"w{i}" for i in range(400)]
    texts = {make(random.sample(vocabulary, random.randint(3, 14))) for make in MARKUP for _ in range(40)}
    hashes = [(simhash64(t), t) for t in texts]
    near = [(a, b) for (x, a), (y, b) in itertools.combinations(hashes, 2) if hamming(x, y) <= 3]
    assert near == []


def test_case_and_spacing_variants_of_a_short_text_stay_at_distance_0():
    assert simhash64("Release History\n=====") == simhash64("release   history\n=====")
    assert simhash64("def a(): return 1") != simhash64("def a(): return 2")


def test_kept_digests_change_no_bit(monkeypatch):
    """Digests kept between texts, or dropped when the table is full, give the same bits."""
    from app.ingest import dedupe

    texts = [SOURCE, SOURCE[:500], "def a():\n    return 1", "İstanbul İİ ß ﬁ x " * 3]
    dedupe._digests.clear()
    cold = [simhash64(t) for t in texts]
    warm = [simhash64(t) for t in texts]
    monkeypatch.setattr(dedupe, "DIGESTS_KEPT", 3)
    dedupe._digests.clear()
    cramped = [simhash64(t) for t in texts]
    assert cold == warm == cramped
    assert len(dedupe._digests) <= 3 + max(len(dedupe._features(t)) for t in texts)
