"""docs/dba.md's policy walk-through is run verbatim, statement by statement, and each
`-- expect:` comment is checked against what the statement returns: the page cannot
drift from the schema."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import psycopg

from app.access import ensure_admin_principal

DOC = Path(__file__).resolve().parents[2] / "docs" / "dba.md"
MARKER = "<!-- run verbatim by tests/security/test_dba_doc.py -->"


def walkthrough() -> list[tuple[str, str | None]]:
    """(statement, expected first value or None) for each statement of the marked block."""
    text = DOC.read_text()
    assert text.count(MARKER) == 1, "docs/dba.md must hold exactly one tested walk-through"
    block = re.search(r"```sql\n(.*?)```", text[text.index(MARKER) :], re.S)
    assert block is not None
    statements, pending = [], []
    for line in block.group(1).splitlines():
        code, _, comment = line.partition("--")
        if not code.strip() and not pending:
            continue  # a comment or a blank line between statements
        pending.append(line)
        if code.rstrip().endswith(";"):
            expect = re.match(r"\s*expect:\s*(.*)$", comment)
            statements.append(("\n".join(pending), expect.group(1).strip() if expect else None))
            pending = []
    assert not pending, f"unterminated statement: {pending}"
    return statements


def seed(conn: psycopg.Connection) -> None:
    conn.execute("select service.create_org('acme')")
    ensure_admin_principal(conn, "acme", "admin")
    conn.execute("select service.bind_principal('acme', 'admin')")
    for repo, path, kind in (
        (None, "policy.md", "policy"),
        ("platform", "platform/journal.md", "runbook"),
        ("secret", "secret/keys.md", "runbook"),
    ):
        text = f"# {path}\n\nText of {path}.\n"
        conn.execute(
            "select service.begin_document('acme', %s, null, null, %s, %s, %s, %s)",
            (repo, path, kind, text, hashlib.sha256(text.encode()).hexdigest()),
        )
    conn.execute("select service.create_principal('acme', 'alice', 'human')")
    conn.execute("select service.grant_scope('acme', 'alice', 'repo', 'platform')")
    conn.commit()


def test_the_policy_walkthrough_runs_as_written(db_url):
    statements = walkthrough()
    assert sum(expected is not None for _, expected in statements) >= 4
    with psycopg.connect(db_url) as conn:
        seed(conn)
    with psycopg.connect(db_url, autocommit=True) as conn:  # the block's own begin/rollback
        for statement, expected in statements:
            cursor = conn.execute(statement)
            if expected is not None:
                row = cursor.fetchone()
                assert row is not None and str(row[0]) == expected, (statement, row)
        # It ended in rollback: the policy was only tried.
        assert conn.execute("select count(*) from pg_policy where polname = 'runbooks_org_wide'").fetchone() == (0,)
