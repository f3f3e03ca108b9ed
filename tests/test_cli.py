"""The CLI: ingest respects .gitignore and refuses binaries clearly; query prints JSON."""

from __future__ import annotations

import json

import psycopg
from click.testing import CliRunner

from app.cli import main


def run(db_url: str, *args: str):
    return CliRunner().invoke(main, ["--db-url", db_url, *args], catch_exceptions=False)


def make_tree(tmp_path):
    (tmp_path / ".gitignore").write_text("build/\n*.log\n")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "out.md").write_text("# Generated\n\nshould be ignored\n")
    (tmp_path / "debug.log").write_text("ignored log line\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "pool.py").write_text("def drain_pool(pool):\n    \"\"\"Close idle connections.\"\"\"\n"
                                               "    for conn in pool.idle:\n        conn.close()\n")
    (tmp_path / "README.md").write_text("# Pool service\n\nDrains idle connections every minute.\n")
    (tmp_path / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    return tmp_path


def test_ingest_directory_and_query(db_url, tmp_path, monkeypatch):
    tree = make_tree(tmp_path)
    monkeypatch.chdir(tree)
    result = run(db_url, "ingest", ".", "--org", "acme", "--repo", "pool", "--owner", "Grace")
    assert result.exit_code == 0, result.output
    assert "logo.png" in result.output and "binary" in result.output
    with psycopg.connect(db_url) as conn:
        paths = [r[0] for r in conn.execute("select path from data.documents order by path")]
    assert paths == ["README.md", "src/pool.py"]

    again = run(db_url, "ingest", ".", "--org", "acme", "--repo", "pool")
    assert "0 document(s) changed" in again.output

    result = run(db_url, "query", "drain_pool", "--org", "acme", "--json")
    assert result.exit_code == 0, result.output
    body = json.loads(result.output.strip().splitlines()[-1])
    assert body["fragments"][0]["source"] == "src/pool.py#L1-L4"
    assert body["fragments"][0]["owner"] == "Grace"


def test_explicit_binary_file_fails_with_message(db_url, tmp_path):
    tree = make_tree(tmp_path)
    result = run(db_url, "ingest", str(tree / "logo.png"), "--org", "acme")
    assert result.exit_code != 0
    assert "binary" in result.output


def test_bad_arguments_fail_cleanly(db_url, tmp_path):
    missing = run(db_url, "ingest", str(tmp_path / "nope"), "--org", "acme")
    assert missing.exit_code != 0 and "no such file" in missing.output
    unknown = run(db_url, "query", "anything", "--org", "nobody")
    assert unknown.exit_code != 0 and "unknown org" in unknown.output
    empty = run(db_url, "query", "", "--org", "acme")
    assert empty.exit_code != 0
    bad_org = run(db_url, "org", "create", "Not Valid!")
    assert bad_org.exit_code != 0 and "invalid org id" in bad_org.output
    (tmp_path / "f.md").write_text("# F\n\ntext\n")
    bad_ingest = run(db_url, "ingest", str(tmp_path / "f.md"), "--org", "Bad Org")
    assert bad_ingest.exit_code != 0 and "invalid org id" in bad_ingest.output
