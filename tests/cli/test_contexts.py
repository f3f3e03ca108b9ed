"""`contexts ctx ...` on the database, as --principal: create, version, list, show,
subscribe, accept, unsubscribe, retire."""

from __future__ import annotations

import json

import psycopg
from click.testing import CliRunner

from app.access import ensure_admin_principal
from app.cli import main
from tests.cli.test_cli import make_tree, run


def test_ctx_lifecycle(db_url, tmp_path, monkeypatch):
    monkeypatch.chdir(make_tree(tmp_path))
    assert run(db_url, "ingest", ".", "--org", "acme", "--owner", "Grace").exit_code == 0
    created = run(db_url, "ctx", "create", "pool docs", "--org", "acme", "--json")
    assert created.exit_code == 0, created.output
    ref = json.loads(created.stdout)["ref"]
    made = run(db_url, "ctx", "version", ref, "--org", "acme", "--glob", "*.md")
    assert made.exit_code == 0 and f"{ref}@1: 1 fragment\n" in made.output, made.output
    shown = json.loads(run(db_url, "ctx", "show", f"{ref}@latest", "--org", "acme", "--json").stdout)
    assert [f["source"].split("#")[0] for f in shown["fragments"]] == ["README.md"] and shown["trace_id"]
    assert f"{ref}@1 (1 fragment)" in run(db_url, "ctx", "list", "--org", "acme").output

    with psycopg.connect(db_url) as conn:
        conn.execute("select service.create_org('globex')")
        ensure_admin_principal(conn, "globex", "admin")
    sub = run(db_url, "ctx", "subscribe", ref, "--org", "acme", "--to-org", "globex", "--version", "1")
    assert sub.exit_code == 0 and f"{ref}@1\tfrom acme -> globex\tpending: " in sub.output, sub.output
    assert "contexts ctx accept" in sub.output
    sid = sub.output.split("\t")[0]
    offers = run(db_url, "ctx", "subscriptions", "--pending", "--org", "globex")
    assert offers.exit_code == 0 and offers.output.startswith(f"{sid}\t{ref}@1\tfrom acme"), offers.output
    refused = run(db_url, "ctx", "accept", sid, "--org", "acme")
    assert refused.exit_code != 0 and "not by its publisher" in refused.output, refused.output
    accepted = run(db_url, "ctx", "accept", sid, "--org", "globex")
    assert accepted.exit_code == 0 and f"{ref}@1\tfrom acme -> globex\tlive" in accepted.output, accepted.output
    assert run(db_url, "ctx", "subscriptions", "--pending", "--org", "globex").output.strip() == "no subscriptions"
    assert sid in run(db_url, "ctx", "subscriptions", "--org", "acme").output
    revoked = run(db_url, "ctx", "unsubscribe", sid, "--org", "acme")
    assert "revoked" in revoked.output and "acme/admin" in revoked.output

    assert f"retired {ref}" in run(db_url, "ctx", "retire", ref, "--org", "acme").output
    assert "no contexts" in run(db_url, "ctx", "list", "--org", "acme").output
    bad = CliRunner().invoke(main, ["--db-url", db_url, "ctx", "show", "ctx_1", "--org", "acme"])
    assert bad.exit_code != 0 and "malformed context reference" in bad.output and "Traceback" not in bad.output
    unknown = CliRunner().invoke(main, ["--db-url", db_url, "ctx", "show", "ctx_99@1", "--org", "acme"])
    assert unknown.exit_code != 0 and "unknown context" in unknown.output
    # The database's hint follows the error: here, where offers waiting are listed.
    assert "contexts ctx subscriptions --pending" in " ".join(unknown.output.split()), unknown.output


def test_the_latest_version_of_a_context_without_one_says_so(db_url, tmp_path, monkeypatch):
    """It read "unknown context", of a Context just created; another org still learns
    nothing (row-level security hides the Context from it)."""
    monkeypatch.chdir(make_tree(tmp_path))
    assert run(db_url, "ingest", ".", "--org", "acme").exit_code == 0
    ref = json.loads(run(db_url, "ctx", "create", "empty", "--org", "acme", "--json").stdout)["ref"]
    empty = CliRunner().invoke(main, ["--db-url", db_url, "ctx", "show", f"{ref}@latest", "--org", "acme"])
    assert empty.exit_code != 0 and f"{ref} has no version yet" in empty.output, empty.output
    assert run(db_url, "org", "create", "globex").exit_code == 0  # its administrator: admin
    other = CliRunner().invoke(main, ["--db-url", db_url, "ctx", "show", f"{ref}@latest", "--org", "globex"])
    assert other.exit_code != 0 and "unknown context" in other.output, other.output
