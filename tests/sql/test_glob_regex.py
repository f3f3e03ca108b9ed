"""data._glob_regex: a path glob as an anchored regular expression. Adjacent wildcards
become the one they amount to, so a glob of hundreds of `**` costs what one does (it
held a request for 30 s and more), and every glob still matches exactly the paths the
plain translation (one regex piece per wildcard) matches."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


def plain(glob: str) -> str:
    """The translation without merging: `**/` (.*/)?, `**` .*, `*` [^/]*, `?` [^/]."""
    out, i = "^", 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out, i = out + "(.*/)?", i + 3
        elif glob.startswith("**", i):
            out, i = out + ".*", i + 2
        elif glob[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif glob[i] == "?":
            out, i = out + "[^/]", i + 1
        else:
            out, i = out + re.escape(glob[i]), i + 1
    return out + "$"


PIECES = ["*", "**", "**/", "?", "a", "b", "/", ".", "+"]
GLOBS = st.lists(st.sampled_from(PIECES), min_size=1, max_size=12).map("".join)
PATHS = st.lists(st.sampled_from(["a", "b", "/", ".", "+", "ab/", "a.b"]), min_size=0, max_size=10).map("".join)


@given(glob=GLOBS, paths=st.lists(PATHS, min_size=1, max_size=8))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_a_glob_matches_what_its_plain_translation_matches(conn, glob, paths):
    pattern = conn.execute("select data._glob_regex(%s)", (glob,)).fetchone()[0]
    matched = conn.execute("select p ~ %s from unnest(%s::text[]) p", (pattern, paths)).fetchall()
    assert [m for (m,) in matched] == [re.match(plain(glob), p, re.DOTALL) is not None for p in paths], pattern


def test_hundreds_of_adjacent_wildcards_become_one(conn):
    """The regex holds one piece per run of wildcards (500 `.*` in a row took 1.9 ms a
    path to fail; one takes microseconds: measured, not timed here)."""
    assert conn.execute("select data._glob_regex(%s)", ("**" * 505 + "q00",)).fetchone()[0] == "^.*q00$"
    assert conn.execute("select data._glob_regex('src/***/x*****.py')").fetchone()[0] == r"^src/.*/x.*\.py$"
    assert conn.execute("select data._glob_regex('**/**/*.md')").fetchone()[0] == r"^(.*/)?[^/]*\.md$"
