"""The migrated schema and who may do what in it are committed as goldens, so any change
to either is one reviewed diff. Regenerate the goldens: `make goldens` (CONTEXTS_UPDATE_GOLDENS=1)."""

from __future__ import annotations

import pytest

from tests.sql.snapshot import (
    SCHEMA_HEADER,
    check_golden,
    privilege_matrix,
    schema_dump,
)


@pytest.fixture(scope="module")
def fresh(pg_server, template_db) -> dict[str, str]:
    """Snapshots of the test template: a fresh install by the normal migrate()."""
    url = pg_server.url(template_db)
    return {"schema": schema_dump(url), "privileges": privilege_matrix(url)}


def test_schema_matches_its_golden(fresh):
    check_golden(fresh["schema"], "schema.sql", header=SCHEMA_HEADER)


def test_privileges_match_their_golden(fresh):
    check_golden(fresh["privileges"], "privileges.tsv")

