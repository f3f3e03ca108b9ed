"""The migrated schema and who may do what in it are committed as goldens, so any change
to either is one reviewed diff; and upgrading from the previous revision gives exactly
a fresh install. Regenerate the goldens: `make goldens` (CONTEXTS_UPDATE_GOLDENS=1)."""

from __future__ import annotations

import os

import psycopg
import pytest
from pytest_postgresql.janitor import DatabaseJanitor

from app.db.migrate import migrate
from tests.sql.snapshot import (
    SCHEMA_HEADER,
    check_golden,
    head_revision,
    previous_revision,
    privilege_matrix,
    schema_dump,
    schema_outline,
    unified_diff,
)


@pytest.fixture(scope="module")
def fresh(pg_server, template_db) -> dict[str, str]:
    """Snapshots of the test template: a fresh install by the normal migrate()."""
    url = pg_server.url(template_db)
    return {"schema": schema_dump(url), "privileges": privilege_matrix(url)}


def test_schema_matches_its_golden(fresh):
    check_golden(schema_outline(fresh["schema"]), "schema.sql", header=SCHEMA_HEADER)


def test_privileges_match_their_golden(fresh):
    check_golden(fresh["privileges"], "privileges.tsv")


def test_upgrade_from_the_previous_revision_equals_a_fresh_install(pg_server, fresh):
    """The revision before head comes from alembic/versions. That revision's own
    functions, views and grants are not at hand (sql/ holds head's), so the database is
    brought there by its migrations only, as in test_upgrade.py."""
    previous = previous_revision()
    if previous is None:
        pytest.skip("a single migration: nothing to upgrade from")
    name = f"contexts_upgrade_prev_{os.getpid()}"
    janitor = DatabaseJanitor(user="postgres", host=pg_server.socket_dir, port=5432, dbname=name, password=None)
    janitor.drop()
    with janitor:
        url = pg_server.url(name)
        migrate(url, revision=previous, reapply=False)
        with psycopg.connect(url) as conn:
            assert conn.execute("select version_num from alembic_version").fetchall() == [(previous,)]
        migrate(url)
        with psycopg.connect(url) as conn:
            assert conn.execute("select version_num from alembic_version").fetchall() == [(head_revision(),)]
        upgraded = {"schema": schema_dump(url), "privileges": privilege_matrix(url)}
    differences = [
        f"{kind}:\n" + unified_diff(fresh[kind], upgraded[kind], "fresh install", "upgraded")
        for kind in fresh
        if upgraded[kind] != fresh[kind]
    ]
    if differences:
        pytest.fail(
            f"upgrading {previous} -> {head_revision()} does not give a fresh install (a migration misses "
            "a change, or leaves behind what a fresh install lacks):\n" + "\n".join(differences),
            pytrace=False,
        )
