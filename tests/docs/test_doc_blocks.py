"""Every ```sql, ```sh and ```bash block of docs/dba.md and docs/analysts.md runs as
written, against a live database, as the role the block names (the convention is in
docs/dba.md, "Running the examples"):

- a comment line `-- as: NAME` (SQL) or `# as: NAME` (shell) says who runs it: `dba`
  (the migrator, the default) or a login (`alice`, `carol`); SQL runs in psql, in
  autocommit unless the block opens a transaction;
- `given: A, B` on the same line names what must exist first: `alice` (an analyst login
  mapped to acme/alice, reading repo platform), `alice-login` (only the login, made by a
  DBA), `carol` (an auditor login mapped to acme/carol: audit and repo platform), `demo`
  (an org named demo), `repo:ORG/NAME`, `persona:ORG/NAME`; the org acme with its admin
  always exists;
- a statement meant to fail says so on its line: `-- ERROR: what (SQLSTATE)`;
- a block that cannot run inside a test (it installs into a server, or serves until
  interrupted) says why on a line `not run by tests/docs: REASON`.

Each block gets a fresh database; shell blocks run with `contexts` on PATH acting on it
(CONTEXTS_DATABASE_URL)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
from click.testing import CliRunner

from app.cli import main
from app.pgtools import binary

ROOT = Path(__file__).resolve().parents[2]
DOCS = ("docs/dba.md", "docs/analysts.md")
LOGINS = ("alice", "carol")
FENCE = re.compile(r"^```(sql|sh|bash)[ \t]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
AS = re.compile(
    r"^\s*(?:--|#)\s*as:\s*([\w-]+)(?:\s*,\s*given:\s*([\w:/-]+(?:\s*,\s*[\w:/-]+)*))?(?:\s.*)?$", re.MULTILINE
)
SKIP = re.compile(r"not run by tests/docs: (\S.*)")
EXPECTED_ERROR = re.compile(r"--\s*ERROR\b[^\n]*?(?:\((\w{5})\))?\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Block:
    doc: str
    number: int
    language: str
    text: str

    @property
    def id(self) -> str:
        return f"{Path(self.doc).stem}-{self.number:02d}"

    @property
    def role(self) -> str:
        found = AS.search(self.text)
        return found.group(1) if found else "dba"

    @property
    def given(self) -> list[str]:
        found = AS.search(self.text)
        return [g.strip() for g in (found.group(2) or "").split(",") if g.strip()] if found else []


def blocks() -> list[Block]:
    found = []
    for doc in DOCS:
        text = (ROOT / doc).read_text(encoding="utf-8")
        for number, match in enumerate(FENCE.finditer(text), 1):
            found.append(Block(doc, number, match.group(1), match.group(2)))
    return found


def cli(db_url: str, *args: str) -> None:
    done = CliRunner().invoke(main, ["--db-url", db_url, *args])
    assert done.exit_code == 0, done.output


def prepare(db_url: str, given: list[str]) -> None:
    cli(db_url, "org", "create", "acme")
    with psycopg.connect(db_url, autocommit=True) as conn:
        for name in given:
            if name == "alice-login":
                conn.execute("create role alice login in role contexts_analyst")
            elif name == "carol":
                conn.execute("create role carol login in role contexts_auditor")
    for name in given:
        if name == "alice":
            cli(db_url, "analyst", "create", "acme", "alice", "--grant", "repo:platform", "--new")
        elif name == "carol":
            cli(db_url, "analyst", "create", "acme", "carol", "--grant", "audit", "--grant", "repo:platform", "--new")
        elif name == "demo":
            cli(db_url, "org", "create", "demo")
        elif name.startswith(("repo:", "persona:")):
            kind, _, path = name.partition(":")
            org, _, scope = path.partition("/")
            with psycopg.connect(db_url) as conn:
                conn.execute(
                    "select service.ensure_scope(%s, p_repo_id => %s, p_persona_id => %s)",
                    (org, scope if kind == "repo" else None, scope if kind == "persona" else None),
                )
        elif name != "alice-login":
            raise AssertionError(f"unknown given: {name}")


@pytest.fixture
def database(pg_server, template_db: str):
    """A fresh clone of the migrated template named `contexts`, as deployed (blocks name
    their database). Each pytest worker has its own server, so the name is free."""
    from tests.conftest import _dsn, _janitor

    with _janitor(pg_server, "contexts", template_dbname=template_db):
        db_url = _dsn(pg_server, "contexts")
        yield db_url
        # Logins are cluster-wide: the next block makes its own.
        with psycopg.connect(db_url, autocommit=True) as conn:
            for login in LOGINS:
                if conn.execute("select 1 from pg_roles where rolname = %s", (login,)).fetchone():
                    conn.execute(f"drop owned by {login}")
                    conn.execute(f"drop role {login}")


def run_sql(block: Block, db_url: str, tmp_path: Path) -> None:
    from psycopg.conninfo import make_conninfo

    script = tmp_path / "block.sql"
    script.write_text(block.text)
    user = "postgres" if block.role == "dba" else block.role
    done = subprocess.run(
        [str(binary("psql")), "-X", "-q", "-v", "VERBOSITY=verbose", "-d", make_conninfo(db_url, user=user)]
        + ["-f", str(script)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    errors = [line for line in done.stderr.splitlines() if re.search(r"\bERROR:", line)]
    expected = EXPECTED_ERROR.findall(block.text)
    assert len(errors) == len(expected), f"{block.id} as {block.role}:\n{done.stderr}"
    for state in filter(None, expected):
        assert any(f"ERROR:  {state}:" in line for line in errors), f"{block.id}: no {state}\n{done.stderr}"
    assert done.returncode == 0, done.stderr


def run_shell(block: Block, db_url: str, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "contexts"
    wrapper.write_text(f'#!/bin/sh\ncd {ROOT} && exec {sys.executable} -m app.cli "$@"\n')
    wrapper.chmod(0o755)
    (tmp_path / ".venv").symlink_to(ROOT / ".venv")
    (tmp_path / "block.sh").write_text("set -eu -o pipefail\n" + block.text)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONTEXTS_")}
    env.update(PATH=f"{bin_dir}:{env.get('PATH', '')}", CONTEXTS_DATABASE_URL=db_url, HF_HUB_OFFLINE="1")
    done = subprocess.run(
        ["bash", "block.sh"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=300,
    )
    assert done.returncode == 0, f"{block.id}:\n{done.stdout}\n{done.stderr}"


ALL = blocks()


def test_the_docs_have_blocks_and_each_names_a_known_role():
    assert {b.doc for b in ALL} == set(DOCS)
    for block in ALL:
        assert block.role in ("dba", *LOGINS), block.id


@pytest.mark.parametrize("block", ALL, ids=lambda b: b.id)
def test_a_documented_block_runs_as_written(block: Block, database: str, tmp_path: Path):
    skipped = SKIP.search(block.text)
    if skipped:
        pytest.skip(skipped.group(1))
    prepare(database, block.given)
    if block.language == "sql":
        run_sql(block, database, tmp_path)
    else:
        run_shell(block, database, tmp_path)
