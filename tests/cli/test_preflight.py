"""A PostgreSQL of the user's own (--db-url): what is wrong with it is one line that
says what to do and a non-zero exit, from every command, never a traceback."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from click.testing import CliRunner

from app.cli import main
from app.db.preflight import EXTENSIONS, DatabaseUnusable, preflight

COMMANDS = (
    ("migrate",),
    ("org", "create", "acme"),
    ("serve",),
    ("policy", "check"),
    ("analyst", "list"),
    ("query", "pool", "--org", "acme"),
    ("mcp",),
)
"""Commands that connect, each its own way (the migrate itself, the migrator's
transaction, the service, a principal's transaction, the MCP server)."""

SYSTEM_PG15 = Path("/usr/lib/postgresql/15/bin")


def run(*args: str, env: dict[str, str] | None = None):
    result = CliRunner().invoke(main, list(args), env={"CONTEXTS_KEY": "ctx_not_a_key", **(env or {})})
    return result


def assert_one_line(result, *needles: str) -> str:
    assert result.exit_code != 0
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit), result.exception
    text = result.output.strip()
    assert "Traceback" not in text
    assert len(text.splitlines()) == 1, text
    for needle in needles:
        assert needle in text, text
    return text


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c))
def test_a_url_that_is_not_one_is_a_line_from_every_command(command):
    result = run("--db-url", "not-a-url", *command)
    assert_one_line(result, "not a PostgreSQL URL", "'not-a-url'", "postgresql://USER:PASSWORD@HOST:PORT/DATABASE")
    result = run("--db-url", "postgresql://u:secret@h:notaport/x", *command)
    assert "secret" not in assert_one_line(result, "error:")


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c))
def test_a_refused_port_is_a_line_from_every_command(command):
    port = free_port()
    result = run("--db-url", f"postgresql://someone:secret@127.0.0.1:{port}/contexts", *command)
    text = assert_one_line(result, f"127.0.0.1:{port}", "nothing accepts connections", "--db-url")
    assert "secret" not in text


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c))
def test_a_home_that_cannot_hold_the_database_is_a_line_from_every_command(command, tmp_path):
    """CONTEXTS_HOME naming a file, or a folder that cannot be made, was a traceback."""
    home = tmp_path / "a-file"
    home.write_text("not a folder")
    assert_one_line(run(*command, env={"CONTEXTS_HOME": str(home)}), f"{home} (CONTEXTS_HOME): a file, not a folder")
    unmakeable = home / "below"
    assert_one_line(run(*command, env={"CONTEXTS_HOME": str(unmakeable)}), f"{unmakeable} (CONTEXTS_HOME)")


def as_login(db_url: str, login: str) -> str:
    assert db_url.startswith("postgresql://postgres@/")
    return db_url.replace("postgres@", f"{login}@", 1)


def test_an_unknown_role_or_database_says_which(db_url, pg_server):
    text = assert_one_line(run("--db-url", as_login(db_url, "no_such_login"), "migrate"))
    assert "has no role 'no_such_login'" in text and "create role" in text
    text = assert_one_line(run("--db-url", pg_server.url("no_such_db"), "org", "create", "acme"))
    assert "has no database 'no_such_db'" in text and "createdb no_such_db" in text


def test_a_missing_extension_is_named_with_what_to_do(db_url):
    """Through the same check as pgvector and contexts_bm25 (the test server has both)."""
    preflight(db_url)  # the real server passes
    wanted = {**EXTENSIONS, "no_such_extension": "install it on that server"}
    with pytest.raises(DatabaseUnusable) as missing:
        preflight(db_url, wanted)
    assert str(missing.value).startswith("the extension no_such_extension is not available on the PostgreSQL server")
    assert str(missing.value).endswith("install it on that server")


def test_a_login_that_does_not_own_the_schema_is_told_whose_it_is(db_url, logins):
    analyst = logins["analysts"][0]
    text = assert_one_line(run("--db-url", as_login(db_url, analyst), "migrate"))
    assert f"login '{analyst}' does not own Contexts' schema" in text and "'postgres'" in text


def test_a_login_that_may_not_create_the_extensions_is_told_so(pg_server):
    """A new database on a server where the login is no superuser."""
    name, login = f"bare_{os.getpid()}", f"plain_{os.getpid()}"
    with psycopg.connect(pg_server.url(), autocommit=True) as admin:
        admin.execute(f"create role {login} login")
        admin.execute(f"create database {name} owner {login}")
    try:
        text = assert_one_line(run("--db-url", pg_server.url(name, user=login), "migrate"))
        assert f"login '{login}' may not create the extension" in text and "as a superuser" in text
    finally:
        with psycopg.connect(pg_server.url(), autocommit=True) as admin:
            admin.execute(f"drop database {name}")
            admin.execute(f"drop role {login}")


@pytest.fixture(scope="module")
def postgres15() -> Iterator[str]:
    """The system's PostgreSQL 15 (no pgvector), password logins only, on a free port;
    skipped when absent (as root, it runs as the OS user postgres)."""
    import pwd

    if not (SYSTEM_PG15 / "initdb").exists():
        pytest.skip("no PostgreSQL 15 at /usr/lib/postgresql/15")
    as_user: list[str] = []
    root = Path(tempfile.mkdtemp(prefix="contexts-pg15-"))
    if os.geteuid() == 0:  # initdb refuses root
        try:
            owner = pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root without an OS user postgres to run PostgreSQL 15 as")
        as_user = ["runuser", "-u", "postgres", "--"]
        os.chown(root, owner.pw_uid, owner.pw_gid)
    port = free_port()
    script = (
        f"echo right > {root}/pw && {SYSTEM_PG15}/initdb -D {root}/data -U postgres --auth=scram-sha-256 "
        f"--pwfile {root}/pw >/dev/null && {SYSTEM_PG15}/pg_ctl -D {root}/data -l {root}/log -w "
        f"-o '-p {port} -k {root} -c listen_addresses=127.0.0.1' start >/dev/null"
    )
    started = subprocess.run([*as_user, "sh", "-c", script], capture_output=True, text=True, timeout=120)
    if started.returncode != 0:
        shutil.rmtree(root, ignore_errors=True)
        pytest.skip(f"PostgreSQL 15 did not start: {started.stderr.strip()[-300:]}")
    try:
        yield f"127.0.0.1:{port}"
    finally:
        subprocess.run(
            [*as_user, f"{SYSTEM_PG15}/pg_ctl", "-D", f"{root}/data", "-m", "immediate", "stop"],
            capture_output=True,
            timeout=60,
        )
        shutil.rmtree(root, ignore_errors=True)


def test_a_wrong_password_is_a_line(postgres15):
    text = assert_one_line(run("--db-url", f"postgresql://postgres:wrong@{postgres15}/postgres", "migrate"))
    assert "refused the password of 'postgres'" in text and "wrong" not in text


@pytest.mark.parametrize("command", (("migrate",), ("org", "create", "acme"), ("serve",)), ids=lambda c: " ".join(c))
def test_postgresql_15_without_pgvector_is_refused_in_one_line(postgres15, command):
    text = assert_one_line(run("--db-url", f"postgresql://postgres:right@{postgres15}/postgres", *command))
    assert "PostgreSQL 15" in text and "needs PostgreSQL 16 or later" in text


def test_a_refused_key_on_an_empty_database_says_it_is_empty(db_url):
    text = assert_one_line(run("--db-url", db_url, "mcp"))
    assert "the database at postgres@" in text and "is empty (new: no org, no key)" in text
    assert "CONTEXTS_HOME" in text
    assert run("--db-url", db_url, "org", "create", "acme").exit_code == 0
    text = assert_one_line(run("--db-url", db_url, "mcp"))
    assert "CONTEXTS_KEY is not a valid API key: it is unknown or revoked" in text
