"""R-ING-4 in Python: near copies land within distance 3, different texts far apart."""

from __future__ import annotations

from pathlib import Path

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
    """Stored fragments keep the SimHash they were written with: a faster computation
    must give the same bits, or near copies of stored text stop matching them."""
    assert simhash64("def fetch(url):\n    return httpx.get(url, timeout=5)") == 5482023101248639227
    assert simhash64("İstanbul İİ ß ﬁ x") == 10641822534142687489  # each word lowered on its own
    assert simhash64("a b") == 31668276862140965
    assert simhash64("") == 0


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
