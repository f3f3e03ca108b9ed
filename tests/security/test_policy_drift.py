"""`contexts policy check` sees drift between the database's policies and sql/policies:
a policy made by hand (or removed from the files, which a migrate leaves in place), one
missing from the database, one changed; each is named, and the exit is non-zero."""

from __future__ import annotations

import json

import psycopg
from click.testing import CliRunner

from app.cli import main


def check(db_url: str, *args: str):
    return CliRunner().invoke(main, ["--db-url", db_url, "policy", "check", *args])


def sql(db_url: str, *statements: str) -> None:
    with psycopg.connect(db_url) as conn:
        for statement in statements:
            conn.execute(statement)


def test_policies_as_the_files_make_them_are_no_drift(db_url):
    sql(db_url, "select service.create_org('acme')")
    done = check(db_url)
    assert done.exit_code == 0, done.output
    assert "drift" not in done.stdout and "the policies are those of sql/policies" in done.stderr
    assert json.loads(check(db_url, "--json").stdout)["drift"] == []


def test_a_hand_made_policy_is_reported_and_fails(db_url):
    sql(db_url, "select service.create_org('acme')", "create policy peek on data.documents for select using (true)")
    done = check(db_url)
    assert done.exit_code == 1
    line = "policy peek on data.documents is in the database but not in sql/policies"
    assert f"drift: {line}" in done.stdout and line in done.stderr
    assert "drop policy peek on data.documents" in done.stderr
    report = json.loads(check(db_url, "--json").stdout)
    assert report["drift"] == [{"table": "documents", "policy": "peek", "kind": "unknown"}]
    # The check changed nothing: the hand-made policy is still there, and the files' ones too.
    with psycopg.connect(db_url) as conn:
        names = {r[0] for r in conn.execute("select policyname from pg_policies where tablename = 'documents'")}
    assert names == {"peek", "scope_read"}


def test_a_policy_missing_from_the_database_or_changed_is_reported(db_url):
    sql(
        db_url,
        "drop policy scope_read on data.pins",
        "alter policy member_read on data.repos using (true)",
    )
    done = check(db_url, "--json")
    assert done.exit_code == 1
    assert json.loads(done.stdout)["drift"] == [
        {"table": "pins", "policy": "scope_read", "kind": "missing"},
        {"table": "repos", "policy": "member_read", "kind": "changed"},
    ]
    assert "policy scope_read on data.pins is in sql/policies but not in the database: run contexts migrate" in (
        done.stderr
    )


def test_a_policy_on_a_partition_other_than_the_denial_is_reported(db_url):
    sql(db_url, "select service.create_org('acme')")
    with psycopg.connect(db_url) as conn:
        (partition,) = conn.execute(
            "select c.relname from pg_inherits i join pg_class c on c.oid = i.inhrelid "
            "where i.inhparent = 'data.fragments'::regclass"
        ).fetchone()
        conn.execute(f"create policy back_door on data.{partition} for select using (true)")
    done = check(db_url)
    assert done.exit_code == 1
    assert f"policy back_door on data.{partition} is in the database but not in sql/policies" in done.stdout
