"""The CLI: ingest respects .gitignore and refuses binaries clearly; query prints JSON."""

from __future__ import annotations

import json

import psycopg
import pytest
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
    (tmp_path / "src" / "pool.py").write_text(
        'def drain_pool(pool):\n    """Close idle connections."""\n    for conn in pool.idle:\n        conn.close()\n'
    )
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

    assert "created org acme (its principal admin may read, write and audit" in " ".join(result.output.split())
    again = run(db_url, "ingest", ".", "--org", "acme", "--repo", "pool")
    assert "0 document(s) changed" in again.output and "created org" not in again.output

    result = run(db_url, "query", "drain_pool", "--org", "acme", "--json")
    assert result.exit_code == 0, result.output
    body = json.loads(result.output.strip().splitlines()[-1])
    assert body["fragments"][0]["source"] == "src/pool.py#L1-L4"
    assert body["fragments"][0]["owner"] == "Grace"

    # Read by a person: each fragment's relevance beside its score, and a floor that
    # leaves nothing says so and where each candidate's relevance is.
    shown = run(db_url, "query", "drain_pool", "--org", "acme")
    assert "src/pool.py#L1-L4  score=" in shown.output and "relevance=" in shown.output
    floored = run(db_url, "query", "sourdough bread proofing", "--org", "acme", "--min-relevance", "0.9")
    assert floored.exit_code == 0 and "0 fragment(s)" in floored.output
    assert "nothing reached relevance 0.9 (--min-relevance)" in " ".join(floored.output.split())


def test_a_tree_of_binary_files_is_one_line_that_counts_them(db_url, tmp_path, monkeypatch):
    """A package's __pycache__ or a folder of images is expected in a walk: one line
    counts the binary files and names the first three, where each used to be a line."""
    tree = make_tree(tmp_path)
    (tree / "cache").mkdir()
    for i in range(5):
        (tree / "cache" / f"m{i}.pyc").write_bytes(b"\x00\x01binary" * 10)
    monkeypatch.chdir(tree)
    result = run(db_url, "ingest", ".", "--org", "acme")
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("skipped:")]
    assert lines == ["skipped: 6 binary or non-UTF-8 file(s): logo.png, cache/m0.pyc, cache/m1.pyc and 3 more"]


def test_pipes_sockets_and_link_loops_are_skipped_or_refused_by_name(db_url, tmp_path, monkeypatch):
    """A named pipe blocked the ingest forever; a socket or a loop of links was a
    traceback. In a walk they are skipped and named; named on the command line, an error."""
    import os
    import socket

    tree = make_tree(tmp_path)
    os.mkfifo(tree / "src" / "pipe.md")
    listening = socket.socket(socket.AF_UNIX)
    listening.bind(str(tree / "src" / "sock.md"))
    (tree / "l1").symlink_to(tree / "l2")
    (tree / "l2").symlink_to(tree / "l1")
    monkeypatch.chdir(tree)
    try:
        result = run(db_url, "ingest", ".", "--org", "acme")
        assert result.exit_code == 0, result.output
        skipped = [line for line in result.output.splitlines() if line.startswith("skipped:")]
        assert "skipped: src/pipe.md: a named pipe, not a regular file" in skipped
        assert "skipped: src/sock.md: a socket, not a regular file" in skipped
        assert "2 document(s) changed" in result.output
        pipe = run(db_url, "ingest", "src/pipe.md", "--org", "acme")
        assert pipe.exit_code == 1 and "a named pipe, not a regular file" in pipe.output
        loop = run(db_url, "ingest", "l1", "--org", "acme")
        assert loop.exit_code == 1 and "l1: a loop of symbolic links" in loop.output
    finally:
        listening.close()


def test_a_query_of_bytes_that_are_not_utf8_is_one_line(db_url, tmp_path):
    """Python reads such command-line bytes as lone surrogates; the tokenizer failed with a
    traceback on them."""
    run(db_url, "ingest", str(make_tree(tmp_path)), "--org", "acme")
    result = CliRunner().invoke(main, ["--db-url", db_url, "query", "retry \udcff\udcfe", "--org", "acme"])
    assert result.exit_code == 1 and "lone UTF-16 surrogate" in result.output, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["org", "create", "ttl-nan", "--session-ttl-hours", "nan"], "not a number of hours"),
        (["org", "create", "ttl-huge", "--session-ttl-hours", "1e9"], "not in the range"),
        (["org", "create", "a" * 100], "1 to 63 lowercase letters"),
        (["principal", "create", "acme", "bad name!"], "invalid principal id 'bad name!'"),
        (["ingest", "README.md", "--org", "acme", "--repo", "bad repo!"], "invalid repo id 'bad repo!'"),
        (["serve", "--port", "99999"], "0<=x<=65535"),
        (["backup", "/nonexistent/folder/file.dump"], "no such folder"),
        (["key", "list", "nosuchorg"], "unknown org: nosuchorg"),
        (["grant", "list", "nosuchorg"], "unknown org: nosuchorg"),
        (["analyst", "list", "nosuchorg"], "unknown org: nosuchorg"),
        (["nudges", "deliver", "--org", "nosuchorg"], "unknown org: nosuchorg"),
        (["models", "upgrade", "prose", "/nonexistent/model"], "did not load"),
        # Ids past bigint reached SQL as numerics: "function service.rule_delete(numeric) does not exist".
        (["rules", "remove", "99999999999999999999999", "--org", "acme"], "is not in the range 1<=x<="),
        (["pin", "remove", "99999999999999999999999"], "is not in the range 1<=x<="),
        (["documents", "delete", "99999999999999999999999", "--org", "acme"], "is not in the range 1<=x<="),
        (["ctx", "retire", "99999999999999999999999"], "is not a context id"),
    ],
)
def test_operator_commands_refuse_bad_values_in_one_line(db_url, tmp_path, monkeypatch, args, words):
    """Each was a traceback, an exit 0 with an empty table, a constraint's name, or a
    value taken that broke the org later (a session TTL of 1e9 hours)."""
    run(db_url, "org", "create", "acme")
    monkeypatch.chdir(make_tree(tmp_path))
    result = CliRunner().invoke(main, ["--db-url", db_url, *args])
    assert result.exit_code in (1, 2), (result.exit_code, result.output)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert words in " ".join(result.output.split()), result.output


def test_an_error_quoting_an_escape_sequence_shows_it_and_does_not_run_it(db_url):
    """`key revoke $'\\x1b[2J'` printed the escape back: the terminal cleared its screen."""
    result = CliRunner().invoke(main, ["--db-url", db_url, "key", "revoke", "\x1b[2Jabc\x07"])
    assert result.exit_code == 1 and "\x1b" not in result.output and "\x07" not in result.output
    assert "\\x1b[2Jabc\\x07" in result.output, result.output


def test_a_refused_value_names_the_option_that_gave_it(db_url):
    """msgspec names the request's field (`$.budget_tokens`); the user typed `--budget`."""
    run(db_url, "org", "create", "acme")
    result = CliRunner().invoke(main, ["--db-url", db_url, "query", "x", "--org", "acme", "--budget", "0"])
    assert result.exit_code == 1 and "(option --budget)" in result.output, result.output
    bad_org = CliRunner().invoke(main, ["--db-url", db_url, "query", "x", "--org", "bad org"])
    assert "(option --org)" in bad_org.output and "starting with a letter or digit" in bad_org.output


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
    assert "(in the database of --db-url / CONTEXTS_DATABASE_URL)" in " ".join(unknown.output.split())
    empty = run(db_url, "query", "", "--org", "acme")
    assert empty.exit_code != 0
    bad_org = run(db_url, "org", "create", "Not Valid!")
    assert bad_org.exit_code != 0 and "invalid org id" in bad_org.output
    (tmp_path / "f.md").write_text("# F\n\ntext\n")
    bad_ingest = run(db_url, "ingest", str(tmp_path / "f.md"), "--org", "Bad Org")
    assert bad_ingest.exit_code != 0 and "invalid org id" in bad_ingest.output


def test_a_path_with_nothing_to_ingest_says_so(db_url, tmp_path, monkeypatch):
    tree = make_tree(tmp_path)
    monkeypatch.chdir(tree)
    (tree / ".cache").mkdir()
    (tree / ".cache" / ".hidden.md").write_text("# h\n")
    nothing = run(db_url, "ingest", ".cache", "--org", "acme")
    assert nothing.exit_code != 0 and "no file to ingest" in nothing.output and ".gitignore" in nothing.output


def test_principals_grants_and_keys_from_the_cli(db_url, tmp_path, monkeypatch):
    tree = make_tree(tmp_path)
    monkeypatch.chdir(tree)
    assert run(db_url, "ingest", "README.md", "--org", "acme", "--repo", "pool").exit_code == 0
    assert run(db_url, "ingest", "src", "--org", "acme", "--repo", "secret").exit_code == 0

    assert run(db_url, "principal", "create", "acme", "bot").exit_code == 0
    added = run(db_url, "grant", "add", "acme", "bot", "--repo", "pool")
    assert added.exit_code == 0, added.output
    both = run(db_url, "grant", "add", "acme", "bot", "--repo", "pool", "--org-wide")
    assert both.exit_code != 0 and "exactly one" in both.output
    listed = run(db_url, "grant", "list", "acme")
    assert "bot" in listed.output and "pool" in listed.output

    # The CLI acts for a principal: its grants bound what query returns, or refuses.
    mine = run(db_url, "--principal", "bot", "query", "idle connections", "--org", "acme", "--json")
    body = json.loads(mine.output.strip().splitlines()[-1])
    assert body["fragments"] and {f["source"].split("#")[0] for f in body["fragments"]} == {"README.md"}
    denied = run(db_url, "--principal", "bot", "query", "drain", "--org", "acme", "--repo", "secret")
    assert denied.exit_code != 0 and "no grant on repo secret" in denied.output
    nobody = run(db_url, "--principal", "ghost", "query", "drain", "--org", "acme")
    assert nobody.exit_code != 0 and "unknown principal ghost" in nobody.output
    readonly = run(db_url, "--principal", "bot", "ingest", "README.md", "--org", "acme", "--repo", "pool")
    assert readonly.exit_code != 0 and "may not write" in readonly.output

    created = run(db_url, "key", "create", "acme", "bot", "--label", "ci")
    assert created.exit_code == 0, created.output
    token = created.output.strip().splitlines()[-1]
    assert token.startswith("ctx_")
    key_id = token.split("_")[1]
    # Piped (no terminal, no COLUMNS), a table keeps whole rows instead of rich's 80 columns.
    listed_keys = CliRunner(env={"COLUMNS": None}).invoke(main, ["--db-url", db_url, "key", "list", "acme"])
    assert key_id in listed_keys.output
    # bot holds read grants only: its key writes nothing, whatever the key itself allows.
    assert "read (its principal's)" in next(line for line in listed_keys.output.splitlines() if key_id in line)
    with psycopg.connect(db_url) as conn:
        assert conn.execute("select org_id, principal_id from service.authenticate(%s)", (token,)).fetchone() == (
            "acme",
            "bot",
        )
    assert run(db_url, "key", "revoke", key_id).exit_code == 0
    again = run(db_url, "key", "revoke", key_id)
    assert again.exit_code != 0 and "no live key" in again.output
    with psycopg.connect(db_url) as conn, pytest.raises(psycopg.errors.InvalidAuthorizationSpecification):
        conn.execute("select service.authenticate(%s)", (token,))

    assert run(db_url, "grant", "revoke", "acme", "bot", "--repo", "pool").exit_code == 0
    gone = run(db_url, "--principal", "bot", "query", "idle connections", "--org", "acme", "--repo", "pool")
    assert gone.exit_code != 0 and "no grant on repo pool" in gone.output

    # A repo or persona the org does not have is a typo until said otherwise (--new).
    typo = run(db_url, "grant", "add", "acme", "bot", "--repo", "pol")
    assert typo.exit_code != 0 and "unknown repo pol in org acme (it has: pool, secret)" in typo.output
    assert "--new" in typo.output
    persona = run(db_url, "grant", "add", "acme", "bot", "--persona", "sre")
    assert persona.exit_code != 0 and "unknown persona sre" in persona.output
    with psycopg.connect(db_url) as conn:
        assert conn.execute("select count(*) from data.repos where repo_id = 'pol'").fetchone() == (0,)
    made = run(db_url, "grant", "add", "acme", "bot", "--repo", "web", "--new", "--write")
    assert made.exit_code == 0, made.output
    assert "web" in run(db_url, "grant", "list", "acme").output


def test_sessions_expire_and_are_purged(db_url, tmp_path):
    assert run(db_url, "org", "create", "acme", "--session-ttl-hours", "1").exit_code == 0
    (tmp_path / "note.md").write_text("# Note\n\nThe flaky test is test_pool_drain.\n")
    assert run(db_url, "ingest", str(tmp_path / "note.md"), "--org", "acme", "--session", "s1").exit_code == 0
    found = run(db_url, "query", "flaky test", "--org", "acme", "--session", "s1", "--json")
    assert json.loads(found.output.strip().splitlines()[-1])["fragments"]
    assert "0 expired session(s)" in run(db_url, "sessions", "purge").output
    with psycopg.connect(db_url) as conn:
        ttl = conn.execute("select expires_at - created_at from data.sessions where session_id = 's1'").fetchone()[0]
        assert ttl.total_seconds() == 3600
        conn.execute("update data.sessions set expires_at = now() - interval '1 minute'")
    expired = run(db_url, "query", "flaky test", "--org", "acme", "--session", "s1")
    assert expired.exit_code != 0 and "live session" in expired.output
    purged = run(db_url, "sessions", "purge")
    assert "acme/s1: 1 document(s), 1 fragment(s)" in purged.output
    with psycopg.connect(db_url) as conn:
        assert conn.execute("select count(*) from data.fragments").fetchone() == (0,)


def test_demo_key_reads_the_demo_org(db_url, tmp_path):
    from app.cli.serve import DEMO_ORG, _demo_key

    assert run(db_url, "org", "create", DEMO_ORG).exit_code == 0
    token = _demo_key(db_url, tmp_path)  # kept and replaced as tests/serve/test_serve.py shows
    with psycopg.connect(db_url) as conn:
        assert conn.execute("select principal_id from service.authenticate(%s)", (token,)).fetchone() == ("demo-agent",)


def test_the_cli_runs_as_a_module():
    import subprocess
    import sys
    from pathlib import Path

    done = subprocess.run(
        [sys.executable, "-m", "app.cli", "--help"],
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "eval" in done.stdout and "serve" in done.stdout


def test_documents_list_show_and_delete_on_the_database(db_url, tmp_path, monkeypatch):
    tree = make_tree(tmp_path)
    monkeypatch.chdir(tree)
    assert run(db_url, "ingest", ".", "--org", "acme", "--repo", "pool", "--owner", "Grace").exit_code == 0
    listed = CliRunner().invoke(main, ["--db-url", db_url, "documents", "list", "--org", "acme", "--kind", "code"])
    assert listed.exit_code == 0, listed.output
    rows = [line.split("\t") for line in listed.stdout.splitlines() if "\t" in line]
    assert [(r[1], r[3], r[4]) for r in rows] == [("src/pool.py", "code", "Grace")]
    shown = run(db_url, "documents", "show", rows[0][0], "--org", "acme", "--json")
    assert json.loads(shown.stdout)["versions"][0]["current"] is True
    deleted = run(db_url, "documents", "delete", rows[0][0], "--org", "acme")
    assert deleted.exit_code == 0 and "deleted src/pool.py" in deleted.output
    gone = CliRunner().invoke(main, ["--db-url", db_url, "documents", "delete", rows[0][0], "--org", "acme"])
    assert gone.exit_code != 0 and "unknown document" in gone.output
    missing_org = CliRunner().invoke(main, ["--db-url", db_url, "documents", "show", rows[0][0]])
    assert missing_org.exit_code != 0 and "--org is required" in missing_org.output
    result = run(db_url, "query", "drain_pool", "--org", "acme", "--json")
    assert "src/pool.py" not in result.output


def test_rank_refresh_recomputes_authority(db_url, tmp_path, monkeypatch):
    (tmp_path / "a.md").write_text("# A\n\nSee [b](b.md).\n")
    (tmp_path / "b.md").write_text("# B\n\nThe cited page.\n")
    monkeypatch.chdir(tmp_path)
    result = run(db_url, "ingest", ".", "--org", "acme")
    assert result.exit_code == 0, result.output
    assert "citation authority refreshed" in result.output  # ingest refreshes at its end
    result = run(db_url, "rank", "refresh", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output.strip().splitlines()[-1])
    assert report["scored"] == 2 and report["duration_ms"] >= 0
    with psycopg.connect(db_url) as conn:
        cited = conn.execute(
            "select d.path from data.fragment_authority a join data.fragments f using (fragment_id)"
            " join data.documents d on d.doc_id = f.doc_id where a.authority = 1"
        ).fetchall()
    assert cited == [("b.md",)]


def test_query_as_of_and_superseded_from_the_cli(db_url, tmp_path, monkeypatch):
    adr = tmp_path / "docs" / "adr"
    adr.mkdir(parents=True)
    (adr / "0003-rabbitmq.md").write_text("# ADR 3\n\nServices use RabbitMQ as the message broker for events.\n")
    (adr / "0007-kafka.md").write_text("# ADR 7\n\nSupersedes ADR-3.\n\nEvents between services go through Kafka.\n")
    monkeypatch.chdir(tmp_path)
    assert run(db_url, "ingest", ".", "--org", "acme").exit_code == 0
    query = ("query", "which message broker for events", "--org", "acme")
    assert "0003-rabbitmq.md" not in run(db_url, *query).output
    shown = run(db_url, *query, "--include-superseded").output
    line = next(line for line in shown.splitlines() if "0003-rabbitmq.md" in line)
    assert "current until " in line
    bad = CliRunner().invoke(main, ["--db-url", db_url, *query, "--as-of", "yesterday"])
    assert bad.exit_code != 0 and "as_of" in bad.output


def test_stored_text_is_printed_with_its_escape_sequences_shown_not_run(capsys):
    """A pin's reason or a Context's description holding `ESC ] 0 ; ... BEL` retitled the
    terminal of whoever listed it (`contexts pin list`), and a lone CR overwrote the line:
    every listing and every table the CLI prints shows them as escapes."""
    import io

    from rich.table import Table

    from app.cli.common import SafeConsole, echo

    hostile = "\x1b]0;pwned\x07\x1b[2Jred\r\rXX"
    echo(f"12\t{hostile}")
    printed = capsys.readouterr().out
    assert "\x1b" not in printed and "\r" not in printed and "\x07" not in printed
    assert "\\x1b]0;pwned\\x07\\x1b[2Jred\\x0d\\x0dXX" in printed
    out = io.StringIO()
    table = Table("reason")
    table.add_row(hostile)
    SafeConsole(file=out, force_terminal=True, color_system="standard", width=200).print(table, "[bold]styled[/]")
    assert "\\x1b]0;pwned\\x07" in out.getvalue() and "\x07" not in out.getvalue()
    assert "\x1b[1mstyled" in out.getvalue()  # rich's own styling still reaches the terminal
