"""Exporting as an analyst (docs/analysts.md, "Exporting"): every command the section
shows runs and exports rows; a plain COPY of a partitioned table exports nothing under
row-level security (PostgreSQL copies ONLY its empty parent), which the section says of
every partitioned table of schema data."""

from __future__ import annotations

import re
from pathlib import Path

import psycopg
import pytest

from tests.conftest import login_url

DOC = Path(__file__).resolve().parents[2] / "docs" / "analysts.md"


def exporting_section() -> str:
    text = DOC.read_text()
    return text[text.index("## Exporting") :]


@pytest.fixture
def analyst_url(db_url, logins):
    """An analyst of acme reading repo r1 (and audit), over fragments in r1, r2 and org-wide."""
    with psycopg.connect(db_url) as conn:
        conn.execute("select service.create_org('acme')")
        conn.execute("insert into data.repos (org_id, repo_id) values ('acme', 'r1'), ('acme', 'r2')")
        conn.execute(
            "insert into data.fragments (fragment_id, org_id, repo_id, namespace, kind, owner, heading_path, text,"
            " content_hash, token_count, chunker_version, simhash, tsv)"
            " select nextval('data.fragment_id_seq'), 'acme', r, 'prose', 'prose', 'o', array['h'], 'text ' || n,"
            " 'h' || n, 10, 'test', 1, api.lexical_document('h', 'text')"
            " from generate_series(1, 3) n, unnest(array['r1', 'r2', null]) r"
        )
        conn.execute("select service.create_principal('acme', 'ana', 'human', '', %s)", (logins["analysts"][0],))
        conn.execute("select service.grant_scope('acme', 'ana', 'repo', 'r1')")
        conn.execute("select service.grant_scope('acme', 'ana', 'audit', null)")
        conn.commit()
    return login_url(db_url, logins["analysts"][0])


def copy_out(conn: psycopg.Connection, statement: str) -> list[str]:
    with conn.cursor().copy(statement) as copy:
        return b"".join(bytes(block) for block in copy).decode().splitlines()


def test_the_documented_exports_run_and_export_what_the_analyst_may_read(analyst_url):
    commands = re.findall(r"^\\copy \((.*)\) to '[^']+' csv header$", exporting_section(), flags=re.M)
    assert len(commands) >= 3
    with psycopg.connect(analyst_url, autocommit=True) as conn:
        for query in commands:
            lines = copy_out(conn, f"copy ({query}) to stdout csv header")
            assert lines, query
        fragments = copy_out(conn, "copy (select fragment_id, repo_id from data.fragments) to stdout csv")
        assert sorted(line.split(",")[1] for line in fragments) == ["", "", "", "r1", "r1", "r1"]


def test_a_plain_copy_of_a_partitioned_table_is_refused_saying_what_works(analyst_url, db_url):
    with psycopg.connect(db_url) as conn:
        partitioned = [
            r[0]
            for r in conn.execute(
                "select c.relname from pg_class c join pg_namespace n on n.oid = c.relnamespace"
                " where n.nspname = 'data' and c.relkind = 'p' order by 1"
            )
        ]
    assert "fragments" in partitioned
    section = exporting_section()
    for table in partitioned:
        assert f"`data.{table}`" in section, f"docs/analysts.md, Exporting: name data.{table}"
    with psycopg.connect(analyst_url, autocommit=True) as conn:
        assert conn.execute("select count(*) from data.fragments").fetchone() == (6,)
        # PostgreSQL would export nothing here, silently (it copies ONLY the partitioned
        # parent under row-level security); the lexical engine's library refuses it instead.
        for table in partitioned:
            with pytest.raises(psycopg.errors.WrongObjectType, match="would export nothing") as refused:
                copy_out(conn, f"copy data.{table} to stdout")
            assert f"COPY (SELECT * FROM data.{table}) TO" in (refused.value.diag.message_hint or "")
        assert len(copy_out(conn, "copy (select * from data.fragments) to stdout")) == 6


def test_contexts_own_server_loads_the_copy_guard_in_every_session(tmp_path):
    """contexts.conf names the library in session_preload_libraries when it is installed
    (make install builds it into the embedded server)."""
    from app.db import embedded

    pgdata = tmp_path / "pgdata"
    pgdata.mkdir()
    (pgdata / "postgresql.conf").write_text("# initdb's\n")
    assert embedded.write_access_rules(pgdata)
    assert embedded.GUARD in (pgdata / embedded.SETTINGS_FILE).read_text()
    assert embedded.INCLUDE in (pgdata / "postgresql.conf").read_text()
