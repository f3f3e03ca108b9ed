"""`contexts profile set | show | list | delete` on the database, as --principal."""

from __future__ import annotations

import json

from click.testing import CliRunner

from app.cli import main
from tests.cli.test_cli import make_tree, run


def test_profile_set_show_list_and_delete(db_url, tmp_path, monkeypatch):
    monkeypatch.chdir(make_tree(tmp_path))
    assert run(db_url, "ingest", ".", "--org", "acme", "--owner", "Grace").exit_code == 0

    shown = run(db_url, "profile", "show", "--org", "acme")
    assert shown.exit_code == 0, shown.output
    assert "nothing stored" in shown.stdout and "rerank=0.75 freshness=0.1" in shown.stdout

    args = ["profile", "set", "--org", "acme", "--w-freshness", "0.3", "--halflife", "runbook=30", "--json"]
    stored = run(db_url, *args)
    assert stored.exit_code == 0, stored.output
    profile = json.loads(stored.stdout)
    assert profile["w_freshness"] == 0.3 and profile["updated_by"] == "admin"
    assert profile["effective"]["halflife_days"] == {"default": 90, "policy": 365, "runbook": 30}

    listed = run(db_url, "profile", "list", "--org", "acme")
    assert "org default" in listed.stdout and "freshness=0.3" in listed.stdout and "1 profile(s)" in listed.output

    hit = json.loads(run(db_url, "query", "drain idle connections", "--org", "acme", "--json").stdout)
    assert hit["fragments"] and all(0.0 <= f["score"] <= 1.0 for f in hit["fragments"])

    removed = run(db_url, "profile", "delete", "--org", "acme")
    assert removed.exit_code == 0 and "removed the ranking profile" in removed.output
    assert json.loads(run(db_url, "profile", "list", "--org", "acme", "--json").stdout) == {"profiles": []}


def test_bad_profiles_exit_non_zero(db_url):
    assert run(db_url, "org", "create", "acme").exit_code == 0
    for args in (
        ["--w-rerank", "-1"],
        ["--halflife", "adr=0"],
        ["--halflife", "adr"],
        ["--halflife", "Bad Kind=3"],
        ["--w-rerank", "0", "--w-freshness", "0", "--w-authority", "0", "--w-pinned", "0"],
        ["--persona", "nobody", "--w-persona", "1"],
    ):
        result = CliRunner().invoke(main, ["--db-url", db_url, "profile", "set", "--org", "acme", *args])
        assert result.exit_code != 0, args
        assert "Traceback" not in result.output, args
    gone = CliRunner().invoke(main, ["--db-url", db_url, "profile", "delete", "--org", "acme"])
    assert gone.exit_code != 0 and "no ranking profile" in gone.output


def test_a_persona_description_set_from_the_cli_is_embedded(db_url, pipeline):
    import psycopg

    assert run(db_url, "org", "create", "acme").exit_code == 0
    with psycopg.connect(db_url) as conn:
        conn.execute("select service.ensure_scope('acme', null, 'sre', null)")
        pipeline.register_models(conn)  # as an ingestion does (before one, there is no model)
    args = ["profile", "set", "--org", "acme", "--persona", "sre", "--w-persona", "0.3"]
    stored = run(db_url, *args, "--description", "Alerts, SLOs and incident response.", "--json")
    assert stored.exit_code == 0, stored.output
    with psycopg.connect(db_url) as conn:
        rows = conn.execute("select description from data.persona_vectors where persona_id = 'sre'").fetchall()
    assert rows and {r[0] for r in rows} == {"Alerts, SLOs and incident response."}
