"""Learned expansion terms (app/text/expansion.py): the model loads from its package's
files, and a turn's terms are whole words, at most TERMS, the same every time."""

from __future__ import annotations

import re

from app.text import expansion


def test_a_turns_terms_are_whole_words_it_implies_and_the_same_every_time():
    expander = expansion.shared(1)
    texts = [
        "Caroline: We adopted a puppy last week, he chews everything!",
        "Melanie: I ran a charity race for mental health on Saturday.",
        "",
    ]
    first = expander.expand(texts)
    assert expander.expand(list(reversed(texts))) == list(reversed(first))  # batching changes nothing
    puppy, race, empty = first
    assert {"dog", "adopt"} <= set(puppy)
    assert {"charity", "race", "running"} <= set(race)
    for terms in first:
        assert len(terms) <= expansion.TERMS and len(set(terms)) == len(terms)
        assert all(re.fullmatch(r"[a-z]{3,}", t) for t in terms), terms
    assert len(empty) <= expansion.TERMS
    assert expander.expand([]) == []


def test_the_model_is_read_from_the_installed_package():
    folder = expansion.model_dir()
    assert (folder / "model.safetensors").is_file() and folder.parent.name == "cognition"
