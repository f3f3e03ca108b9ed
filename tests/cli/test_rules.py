"""`contexts rules ...` and `contexts query --touching` on the database, as --principal."""

from __future__ import annotations

import json

from click.testing import CliRunner

from app.cli import main
from tests.cli.test_cli import make_tree, run


def test_rules_lifecycle(db_url, tmp_path, monkeypatch):
    monkeypatch.chdir(make_tree(tmp_path))
    assert run(db_url, "ingest", ".", "--org", "acme", "--owner", "Grace").exit_code == 0
    ref = json.loads(run(db_url, "ctx", "create", "pool docs", "--org", "acme", "--json").stdout)["ref"]
    assert run(db_url, "ctx", "version", ref, "--org", "acme", "--glob", "*.md").exit_code == 0

    added = run(
        db_url, "rules", "add", "pool code pulls the docs", "--org", "acme", "--context", f"{ref}@latest",
        "--path", "src/**", "--symbol", "drain_*", "--json",
    )  # fmt: skip
    assert added.exit_code == 0, added.output
    rule = json.loads(added.stdout)
    assert (rule["path_globs"], rule["symbol_globs"], rule["context_ref"]) == (["src/**"], ["drain_*"], f"{ref}@latest")
    listed = run(db_url, "rules", "list", "--org", "acme").output
    assert f"{rule['rule_id']}\torg\tpool code pulls the docs\tsrc/** #drain_*\t-> {ref}@latest" in listed

    query = ["query", "idle connections", "--org", "acme", "--json"]
    touched = json.loads(run(db_url, *query, "--touching", "src/pool.py").stdout)
    assert [(f["source"].split("#")[0], f["rule"]) for f in touched["fragments"]][0] == ("README.md", rule["rule_id"])
    assert all(f["rule"] is None for f in json.loads(run(db_url, *query).stdout)["fragments"])
    shown = run(db_url, "query", "idle connections", "--org", "acme", "--touching", "lib/x.py#drain_pool").output
    assert f"rule {rule['rule_id']} (pool code pulls the docs)" in shown

    bad = CliRunner().invoke(main, ["--db-url", db_url, *query, "--touching", "../etc/passwd"])
    assert bad.exit_code != 0 and "inside the repo" in bad.output and "Traceback" not in bad.output
    none = CliRunner().invoke(main, ["--db-url", db_url, "rules", "add", "x", "--org", "acme", "--context", "ctx_1@1"])
    assert none.exit_code != 0 and "path_globs or symbol_globs" in none.output
    assert (
        f"removed rule {rule['rule_id']}"
        in run(db_url, "rules", "remove", str(rule["rule_id"]), "--org", "acme").output
    )
    assert "0 rule(s)" in run(db_url, "rules", "list", "--org", "acme").output
