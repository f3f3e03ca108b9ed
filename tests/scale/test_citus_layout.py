"""What of docker/citus/distribute.sql plain PostgreSQL can check (Citus cannot be
installed here, docs/scale.md): it classifies every table of the schema, names
constraints that exist, and its schema steps (1: one DEFAULT partition per partitioned
tenant table; 2: keys with org_id; 5: foreign keys with org_id) run against the schema
and leave one Citus accepts (every key and foreign key between tenant tables names
org_id), under which ingestion, retrieval, citation authority and row-level security
work as before. Steps 0, 3, 4 and 7 call Citus and never ran here."""

from __future__ import annotations

import re
from pathlib import Path

import msgspec
import psycopg
import pytest

from app.wire.retrieve import RetrieveRequest

DISTRIBUTE = Path(__file__).parents[2] / "docker" / "citus" / "distribute.sql"


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
    assert reference | distributed == tables
    # Every tenant table names its tenant, not null: the script adds no column.
    with_org = {
        r[0]
        for r in conn.execute(
            "select c.relname from pg_attribute a join pg_class c on c.oid = a.attrelid "
            "where c.relnamespace = 'data'::regnamespace and a.attname = 'org_id' and not a.attisdropped "
            "and a.attnotnull"
        )
    }
    assert distributed <= with_org, distributed - with_org
    assert {"fragment_authority", "bm25_blocks", "bm25_terms", "bm25_corpus", "document_versions"} <= distributed
    assert "add column" not in text
    assert conn.execute("select relkind from pg_class where oid = 'data.fragment_authority'::regclass").fetchone() == (
        "r",
    )
    dropped = re.findall(r"alter table data\.(\w+) drop constraint (\w+)", text)
    assert len(dropped) >= 10
    for table, name in dropped:
        found = conn.execute(
            "select 1 from pg_constraint where conrelid = %s::regclass and conname = %s", (f"data.{table}", name)
        ).fetchone()
        assert found, f"distribute.sql drops {table}.{name}, which the schema does not have"


def step(number: int) -> str:
    """The SQL of one numbered step of distribute.sql, as written there."""
    parts = re.split(r"^-- (\d+)\. ", script(), flags=re.M)
    steps = dict(zip(parts[1::2], parts[2::2], strict=True))
    return "-- " + steps[str(number)].replace("commit;", "")


@pytest.fixture
def shared_partitions(conn):
    """Step 1 of distribute.sql, as written there."""
    conn.execute(step(1))
    conn.commit()


@pytest.fixture
def plain_steps(conn):
    """Steps 1, 2 and 5 of distribute.sql (plain PostgreSQL DDL), as written there, in
    the order the script runs them (3 and 4, which only call Citus, between 2 and 5)."""
    for number in (1, 2, 5):
        conn.execute(step(number))
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


def test_the_schema_steps_leave_keys_and_foreign_keys_that_name_org_id(plain_steps, conn):
    """Citus refuses a unique constraint or a foreign key between distributed tables that
    does not include the distribution column; after steps 1, 2 and 5 none is left."""
    distributed = set(re.findall(r"create_distributed_table\('data\.(\w+)', 'org_id'", script()))
    keys = conn.execute(
        """
        select c.relname, i.indexrelid::regclass::text,
               array(select a.attname from unnest(i.indkey) k join pg_attribute a
                     on a.attrelid = i.indrelid and a.attnum = k)::text[]
        from pg_index i join pg_class c on c.oid = i.indrelid
        where c.relnamespace = 'data'::regnamespace and i.indisunique and not c.relispartition
        """
    ).fetchall()
    unique = [(table, index, columns) for table, index, columns in keys if table in distributed]
    assert len(unique) >= len(distributed) - 2
    assert [u for u in unique if "org_id" not in u[2]] == []
    foreign = conn.execute(
        """
        select c.conrelid::regclass::text, c.confrelid::regclass::text, c.conname,
               array(select a.attname from unnest(c.conkey) k join pg_attribute a
                     on a.attrelid = c.conrelid and a.attnum = k)::text[],
               array(select a.attname from unnest(c.confkey) k join pg_attribute a
                     on a.attrelid = c.confrelid and a.attnum = k)::text[]
        from pg_constraint c
        where c.contype = 'f' and c.connamespace = 'data'::regnamespace and c.conparentid = 0
        """
    ).fetchall()
    between = [f for f in foreign if {f[0].removeprefix("data."), f[1].removeprefix("data.")} <= distributed]
    assert len(between) >= 7
    assert [f for f in between if "org_id" not in f[3] or "org_id" not in f[4]] == []


def test_ingestion_retrieval_and_authority_work_after_the_schema_steps(
    plain_steps, conn, ingest, as_principal, retriever
):
    ingest("acme", {"a.md": "# Failover\n\nPromote the standby when the primary is lost. See [b](b.md)."})
    ingest("acme", {"b.md": "# Standby\n\nA standby replays the primary's WAL."})
    ingest("borg", {"b.md": "# Failover\n\nBorg promotes nothing; assimilation continues."})
    ingest("acme", {"a.md": "# Failover\n\nPromote the standby when the primary is gone. See [b](b.md)."})
    versions = conn.execute(
        "select d.org_id, d.path, v.version, v.org_id from data.documents d "
        "join data.document_versions v on v.org_id = d.org_id and v.doc_id = d.doc_id order by 1, 2, 3"
    ).fetchall()
    expected = [("acme", "a.md", 1), ("acme", "a.md", 2), ("acme", "b.md", 1), ("borg", "b.md", 1)]
    assert [(o, p, n) for o, p, n, _ in versions] == expected
    assert all(org == version_org for org, _, _, version_org in versions)
    conn.execute("select service.refresh_authority()")
    assert conn.execute("select count(distinct org_id) from data.fragment_authority").fetchone()[0] >= 1
    conn.commit()

    as_principal("acme")
    request = msgspec.convert({"query": "promote the standby", "scope": {"org_id": "acme"}}, RetrieveRequest)
    response = retriever.retrieve(conn, request)
    assert response.fragments and {f.source.split("#")[0] for f in response.fragments} <= {"a.md", "b.md"}
    assert conn.execute("select count(*) from data.document_versions where org_id = 'borg'").fetchone()[0] == 0
    conn.rollback()


def test_a_document_version_names_its_documents_org(conn, ingest):
    """service.begin_document writes it; any other writer that leaves it out gets the
    document's, and one naming another org is refused."""
    ingest("acme", {"a.md": "# A\n\nText."})
    ingest("borg", {"b.md": "# B\n\nText."})
    assert conn.execute("select count(*) from data.document_versions where org_id is null").fetchone() == (0,)
    acme_doc = conn.execute("select doc_id from data.documents where org_id = 'acme'").fetchone()[0]
    conn.execute(
        "insert into data.document_versions (doc_id, version, content_hash, content) values (%s, 9, 'h', 'x')",
        (acme_doc,),
    )
    assert conn.execute(
        "select org_id from data.document_versions where doc_id = %s and version = 9", (acme_doc,)
    ).fetchone() == ("acme",)
    with pytest.raises(psycopg.errors.CheckViolation, match="belongs to org acme"):
        conn.execute(
            "insert into data.document_versions (org_id, doc_id, version, content_hash, content) "
            "values ('borg', %s, 10, 'h', 'x')",
            (acme_doc,),
        )
    conn.rollback()
    with pytest.raises(psycopg.errors.CheckViolation):
        conn.execute("update data.document_versions set org_id = 'borg' where doc_id = %s", (acme_doc,))
    conn.rollback()


def test_authority_is_refreshed_per_org_and_matches_a_refresh_of_every_org(conn, ingest):
    for org in ("acme", "borg"):
        files = {"a.md": "# A\n\nSee [b](b.md) and [c](c.md).", "b.md": "# B\n\nSee [c](c.md).", "c.md": "# C\n\nEnd."}
        ingest(org, files)
    conn.execute("select service.refresh_authority()")
    everything = conn.execute("select * from data.fragment_authority order by 1, 2").fetchall()
    assert {r[0] for r in everything} == {"acme", "borg"}
    conn.execute("delete from data.fragment_authority")
    conn.execute("select service.refresh_authority('acme')")
    assert {r[0] for r in conn.execute("select org_id from data.fragment_authority")} == {"acme"}
    conn.execute("select service.refresh_authority('borg')")
    per_org = conn.execute("select * from data.fragment_authority order by 1, 2").fetchall()
    assert per_org == everything
    with pytest.raises(psycopg.errors.NoDataFound):
        conn.execute("select service.refresh_authority('nobody')")
    conn.rollback()
