"""`contexts stale`, `owners reassign | settings`, `webhook set | show`, `nudges deliver`."""

from __future__ import annotations

import json

import psycopg
from click.testing import CliRunner

from app.cli import main
from tests.cli.test_cli import run
from tests.owners.helpers import fragments_of, record_returns
from tests.owners.test_nudges import Receiver


def test_owners_commands(db_url, tmp_path, monkeypatch):
    (tmp_path / "CODEOWNERS").write_text("*.md @docs-team\n")
    (tmp_path / "guide.md").write_text("# Guide\n\nPromote the replica, then repoint DNS to it.\n")
    monkeypatch.chdir(tmp_path)
    assert run(db_url, "ingest", ".", "--org", "acme", "--repo", "core").exit_code == 0
    with psycopg.connect(db_url) as conn:
        conn.execute("update data.fragments set updated_at = now() - interval '300 days'")
        record_returns(conn, "acme", fragments_of(conn, "acme", "guide.md"), times=5)

    listed = run(db_url, "stale", "--org", "acme", "--owner", "docs-team")
    assert listed.exit_code == 0 and "docs-team (codeowners)\tguide.md" in listed.stdout, listed.output
    moved = run(db_url, "owners", "reassign", "--org", "acme", "--from", "docs-team", "--to", "Ada", "--json")
    assert json.loads(moved.stdout)["documents"] == 1
    assert json.loads(run(db_url, "stale", "--org", "acme", "--json").stdout)["nudges"][0]["owner"] == "Ada"
    assert "default owner\tDana" in run(db_url, "owners", "settings", "--org", "acme", "--default-owner", "Dana").stdout

    for url in ("ftp://x.example/h", "ftp://x"):  # a short one was only "length >= 10"
        bad = CliRunner().invoke(main, ["--db-url", db_url, "webhook", "set", url, "--org", "acme"])
        assert bad.exit_code != 0 and "Traceback" not in bad.output
        assert "an http:// or https:// URL with a host" in bad.output, bad.output
    with Receiver() as hook:
        secret = "a-long-enough-secret"
        # The receiver is on 127.0.0.1: refused unless the operator allows private targets.
        refused = run(db_url, "webhook", "set", hook.url, "--org", "acme", "--secret", secret)
        assert refused.exit_code != 0 and "CONTEXTS_WEBHOOK_ALLOW_PRIVATE=1" in refused.output
        monkeypatch.setenv("CONTEXTS_WEBHOOK_ALLOW_PRIVATE", "1")
        shown = run(db_url, "webhook", "set", hook.url, "--org", "acme", "--secret", secret)
        assert shown.exit_code == 0 and "secret set" in shown.stdout and secret not in shown.output
        assert secret not in run(db_url, "webhook", "show", "--org", "acme").output
        delivered = run(db_url, "nudges", "deliver", "--json")
        assert json.loads(delivered.stdout)["delivered"] == 1 and len(hook.received) == 1


def test_an_owner_setting_out_of_range_names_that_setting_only(db_url):
    """The refusal listed every rule, whichever value broke one."""
    assert run(db_url, "org", "create", "acme").exit_code == 0
    for args, words in ((["--default-owner", "\x01"], "default owner: no control characters"),):
        result = CliRunner().invoke(main, ["--db-url", db_url, "owners", "settings", "--org", "acme", *args])
        assert result.exit_code != 0 and words in result.output, result.output
        assert "period" not in result.output
