"""What of docker/citus/distribute.sql plain PostgreSQL can check (Citus cannot be
installed here, docs/scale.md): it classifies every table of the schema, names
constraints that exist, and the layout it starts with (one DEFAULT partition per
partitioned tenant table, every org in it) keeps retrieval and row-level security."""

from __future__ import annotations

import re
from pathlib import Path

import msgspec
import pytest

from app.wire.retrieve import RetrieveRequest

DISTRIBUTE = Path(__file__).parents[2] / "docker" / "citus" / "distribute.sql"
NOT_DISTRIBUTED = {"principal_bindings"}
"""Unlogged, per backend: stays on each node (docs/scale.md, the binding trap)."""


def script() -> str:
    return DISTRIBUTE.read_text()


def test_every_table_is_distributed_or_replicated_and_named_constraints_exist(conn):
    text = script()
    reference = set(re.findall(r"create_reference_table\('data\.(\w+)'\)", text))
    distributed = set(re.findall(r"create_distributed_table\('data\.(\w+)', 'org_id'", text))
    assert not reference & distributed
    tables = {
        r[0]
        for r in conn.execute(
            "select c.relname from pg_class c where c.relnamespace = 'data'::regnamespace "
            "and c.relkind in ('r', 'p') and not c.relispartition"
        )
    }
    assert reference | distributed | NOT_DISTRIBUTED == tables
    has_org = {
        r[0]
        for r in conn.execute(
            "select c.relname from pg_attribute a join pg_class c on c.oid = a.attrelid "
            "where c.relnamespace = 'data'::regnamespace and a.attname = 'org_id' and not a.attisdropped"
        )
    }
    # The one distributed table without org_id yet is the schema prerequisite the script adds.
    assert distributed - has_org == {"document_versions"}
    assert "alter table data.document_versions add column org_id text" in text
    dropped = re.findall(r"alter table data\.(\w+) drop constraint (\w+)", text)
    assert len(dropped) >= 10
    for table, name in dropped:
        found = conn.execute(
            "select 1 from pg_constraint where conrelid = %s::regclass and conname = %s", (f"data.{table}", name)
        ).fetchone()
        assert found, f"distribute.sql drops {table}.{name}, which the schema does not have"


@pytest.fixture
def shared_partitions(conn):
    """Step 1 of distribute.sql, as written there."""
    block = re.search(r"^do \$\$.*?^\$\$;", script(), flags=re.S | re.M)
    assert block is not None
    conn.execute(block.group(0))
    conn.commit()


def test_every_org_lands_in_the_default_partition_under_the_same_security(
    shared_partitions, conn, ingest, as_principal, retriever
):
    ingest("acme", {"a.md": "# Failover\n\nPromote the standby when the primary is lost."})
    ingest("borg", {"b.md": "# Failover\n\nBorg promotes nothing; assimilation continues."})
    partitions = [
        r[0]
        for r in conn.execute(
            "select c.relname from pg_inherits i join pg_class c on c.oid = i.inhrelid "
            "where i.inhparent = 'data.fragments'::regclass order by 1"
        )
    ]
    assert partitions == ["fragments_shared"]
    assert conn.execute("select count(distinct org_id) from data.fragments_shared").fetchone()[0] == 2

    as_principal("acme")
    request = msgspec.convert({"query": "promote the standby", "scope": {"org_id": "acme"}}, RetrieveRequest)
    response = retriever.retrieve(conn, request)
    assert [f.source.split("#")[0] for f in response.fragments] == ["a.md"]
    assert conn.execute("select count(*) from data.fragments where org_id = 'borg'").fetchone()[0] == 0
    conn.rollback()
