"""An owner's name shows something and displays as it reads: the rule in SQL (every
door) and in Python (ingest, before embedding) agree on every code point."""

from __future__ import annotations

import sys
import unicodedata

import pytest
from click.testing import CliRunner

from app.cli import main
from app.owners import BIDI_CONTROL, VISIBLE, CodeOwners, owner_problem
from tests.api.test_readable_values import post_document

SURROGATES = range(0xD800, 0xE000)


def accepted_in_sql(conn, prefix: str) -> set[int]:
    rows = conn.execute(
        "select c from generate_series(1, %s) c where c not between 55296 and 57343"
        " and data._owner_problem(%s || chr(c)) is null",
        (sys.maxunicode, prefix),
    ).fetchall()
    return {c for (c,) in rows}


@pytest.mark.parametrize("prefix", ["", "Ada "])
def test_sql_and_python_accept_the_same_names_on_every_code_point(conn, prefix):
    """Alone (is it visible?) and after a visible name (is it refused anywhere?)."""
    in_python = {
        c for c in range(1, sys.maxunicode + 1) if c not in SURROGATES and owner_problem(prefix + chr(c)) is None
    }
    assert accepted_in_sql(conn, prefix) == in_python


def test_every_separator_and_format_character_is_invisible():
    """The listed characters are Unicode's Z* and Cf, complete for this Python's tables."""
    for c in range(sys.maxunicode + 1):
        ch = chr(c)
        if c not in SURROGATES and unicodedata.category(ch) in ("Zs", "Zl", "Zp", "Cf"):
            assert not VISIBLE.match(ch), f"U+{c:04X}"


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("\u202e", "bidirectional"),
        ("\u202enimda", "bidirectional"),
        ("Ada\u2066", "bidirectional"),
        ("\u200b\u00a0\u3000", "at least one visible character"),
        ("\ufeff", "at least one visible character"),
        ("A\tB", "control characters"),
    ],
)
def test_a_name_that_hides_or_reverses_is_refused_at_every_door(client, db_url, name, words):
    _, response = post_document(client, owner=name)  # refused before it is embedded: 422, as a rejected document
    assert response.status_code == 422 and words in response.text, response.text
    reassign = client.post("/owners/reassign", json={"org_id": "acme", "from_owner": "Ada", "to_owner": name})
    assert reassign.status_code == 400 and words in reassign.text, reassign.text
    commands = (["owners", "settings", "--default-owner", name], ["owners", "reassign", "--from", "Ada", "--to", name])
    for args in commands:
        refused = CliRunner().invoke(main, ["--db-url", db_url, *args, "--org", "acme"])
        assert refused.exit_code != 0 and words in refused.output, refused.output


def test_names_in_any_script_are_owners(client):
    for name in ("عائشة", "דוד", "李雷", "José Ñúñez", "@docs-team/sre", "Ω"):
        assert owner_problem(name) is None and not BIDI_CONTROL.search(name)
        _, response = post_document(client, owner=name)
        assert response.status_code == 201, (name, response.text)


def test_a_codeowners_line_naming_such_an_owner_is_skipped_and_the_ingest_goes_on(conn, ingest):
    """GitHub skips a CODEOWNERS line it cannot read; here a line naming a reversed name
    would have stopped the whole ingest at the database's refusal."""
    text = "* @docs-team\n*.md @\u202enimda\n"
    assert CodeOwners(text).owner_of("guide.md") == "docs-team"
    ingest("acme", {"CODEOWNERS": text, "guide.md": "# Guide\n\nPromote the replica.\n"}, repo="core")
    owners = conn.execute("select owner, owner_source from data.documents where path = 'guide.md'").fetchall()
    assert owners == [("docs-team", "codeowners")]
