"""`contexts pin add | list | remove` on the database, as --principal."""

from __future__ import annotations

import json

from click.testing import CliRunner

from app.cli import main
from tests.cli.test_cli import make_tree, run


def test_pin_add_list_and_remove(db_url, tmp_path, monkeypatch):
    monkeypatch.chdir(make_tree(tmp_path))
    assert run(db_url, "ingest", ".", "--org", "acme", "--owner", "Grace").exit_code == 0
    hits = json.loads(run(db_url, "query", "connections", "--org", "acme", "--json").stdout)["fragments"]
    fragment = hits[-1]["id"]

    added = run(db_url, "pin", "add", str(fragment), "--org", "acme", "--reason", "read first", "--json")
    assert added.exit_code == 0, added.output
    pin = json.loads(added.stdout)
    assert pin["fragment_id"] == fragment and pin["pinned_by"] == "admin"

    listed = run(db_url, "pin", "list", "--org", "acme")
    rows = [line.split("\t") for line in listed.stdout.splitlines() if "\t" in line]
    assert [(r[0], r[1], r[2]) for r in rows] == [(str(pin["pin_id"]), f"fragment {fragment}", "org")]
    first = json.loads(run(db_url, "query", "drain idle pool", "--org", "acme", "--json").stdout)["fragments"][0]
    assert (first["id"], first["pinned"]) == (fragment, True)
    assert f"id={fragment}  pinned" in run(db_url, "query", "drain idle pool", "--org", "acme").output
    only = run(db_url, "query", "drain idle pool", "--org", "acme", "--negatives", "only", "--json")
    assert json.loads(only.stdout)["fragments"] == [], "nothing here is negative, the pin included"

    twice = CliRunner().invoke(
        main, ["--db-url", db_url, "pin", "add", str(fragment), "--org", "acme", "--reason", "x"]
    )
    assert twice.exit_code != 0 and "Traceback" not in twice.output
    blank = CliRunner().invoke(main, ["--db-url", db_url, "pin", "add", "1", "--org", "acme", "--reason", " "])
    assert blank.exit_code != 0 and "reason" in blank.output

    removed = run(db_url, "pin", "remove", str(pin["pin_id"]), "--org", "acme")
    assert removed.exit_code == 0 and f"removed pin {pin['pin_id']}" in removed.output
    assert json.loads(run(db_url, "pin", "list", "--org", "acme", "--json").stdout) == {"pins": []}
    gone = CliRunner().invoke(main, ["--db-url", db_url, "pin", "remove", str(pin["pin_id"]), "--org", "acme"])
    assert gone.exit_code != 0 and "unknown pin" in gone.output
