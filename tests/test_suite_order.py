"""The suite's start order names modules that exist (tests/conftest.py's LONGEST_FIRST):
a renamed module would otherwise drop out of it without a word."""

from __future__ import annotations

from tests.conftest import LONGEST_FIRST, ROOT


def test_every_module_started_first_exists():
    assert [name for name in LONGEST_FIRST if not (ROOT / name).is_file()] == []
    assert len(set(LONGEST_FIRST)) == len(LONGEST_FIRST)
