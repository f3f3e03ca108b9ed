"""`contexts policy check` reads the catalog: every table of schema data with its
row-level security, policies and privileges, and fails when tenant data is unprotected."""

from __future__ import annotations

import json

import psycopg
from click.testing import CliRunner

from app.cli import main


def check(db_url: str, *args: str):
    return CliRunner().invoke(main, ["--db-url", db_url, "policy", "check", *args])


def test_a_fresh_schema_passes_and_every_table_is_reported(db_url):
    with psycopg.connect(db_url) as conn:
        conn.execute("select service.create_org('acme')")
        tables = {
            r[0]
            for r in conn.execute("""
            select c.relname from pg_class c join pg_namespace n on n.oid = c.relnamespace
            where n.nspname = 'data' and c.relkind in ('r', 'p') and not c.relispartition""")
        }
    done = check(db_url)
    assert done.exit_code == 0, done.output
    for table in tables:
        assert f"data.{table}: " in done.stdout, table
    assert "data.documents: tenant data; row-level security enabled, forced" in done.stdout
    assert "data.embedding_models: shared (no tenant data)" in done.stdout
    assert "  partitions: 1, each forced with its own policy" in done.stdout  # acme's fragments, ...
    assert "policy scope_read: select to public" in done.stdout
    assert "every table with tenant data has forced row-level security" in done.stderr

    report = json.loads(check(db_url, "--json").stdout)
    by_name = {t["table_name"]: t for t in report["tables"]}
    assert set(by_name) == tables
    fragments = by_name["fragments"]
    assert (fragments["tenant"], fragments["rls_enabled"], fragments["rls_forced"]) == (True, True, True)
    assert {"contexts_analyst", "contexts_service"} <= set(fragments["may_select"])
    assert not any(r.startswith("contexts_") for r in fragments["may_insert"] + fragments["may_delete"])
    keys = by_name["api_keys"]["may_select"]
    assert "contexts_service (some columns)" in keys and "contexts_service" not in keys
    # Traces are read through the redacting view only: no caller role selects the table.
    traces = by_name["retrieval_traces"]["may_select"]
    assert len(traces) == 1 and traces[0].endswith("(owner)"), traces
    assert "postgres" in report["bypass_rls"]
    assert report["unprotected"] == []


def test_tenant_data_without_forced_rls_fails_the_check(db_url):
    with psycopg.connect(db_url) as conn:
        conn.execute("create table data.leaky_notes (org_id text, note text)")
        conn.execute("alter table data.documents no force row level security")
    done = check(db_url)
    assert done.exit_code != 0
    assert "data.leaky_notes: tenant data; row-level security DISABLED, NOT FORCED" in done.stdout
    assert "data.documents: tenant data; row-level security enabled, NOT FORCED" in done.stdout
    assert "2 table(s) with tenant data lack forced row-level security: documents, leaky_notes" in done.stderr
    assert "Traceback" not in done.output


def test_an_unforced_partition_fails_the_check(db_url):
    with psycopg.connect(db_url) as conn:
        conn.execute("select service.create_org('acme')")
        partition = conn.execute("select 'fragments_' || org_no from data.orgs where org_id = 'acme'").fetchone()[0]
        conn.execute(f"alter table data.{partition} no force row level security")
    done = check(db_url)
    assert done.exit_code != 0
    assert f"NOT FORCED: {partition}" in done.stdout
    assert partition in done.stderr
