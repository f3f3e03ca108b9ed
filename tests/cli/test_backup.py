"""`contexts backup FILE` / `contexts restore FILE`: the database with its logins. A backup
restored into a new cluster keeps every analyst's login and password, so the analyst logs
in (proving the password: the new server trusts no one but its superuser) and reads."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from psycopg.conninfo import conninfo_to_dict

from app.cli import main

ROOT = Path(__file__).resolve().parents[2]


def run(db_url: str, *args: str):
    return CliRunner().invoke(main, ["--db-url", db_url, *args])


@pytest.fixture
def new_default_home() -> Iterator[tuple[dict[str, str], Path]]:
    """An environment without CONTEXTS_HOME whose default home (under XDG_DATA_HOME) is
    new; outside pytest's base temp, whose mode would lock the server's OS user out."""
    root = Path(tempfile.mkdtemp(prefix="contexts-test-restore-"))
    os.chmod(root, 0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONTEXTS_")}
    env.update(XDG_DATA_HOME=str(root / "share"), HF_HUB_OFFLINE="1")
    try:
        yield env, root / "share" / "contexts"
    finally:
        shutil.rmtree(root, ignore_errors=True)


def contexts(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """The CLI in its own process: the embedded server it starts stops when it exits."""
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )


def test_a_restore_into_a_new_cluster_keeps_the_analysts_logins(db_url, new_default_home, tmp_path):
    env, home = new_default_home
    login = f"bob_{uuid.uuid4().hex[:8]}"
    assert run(db_url, "org", "create", "acme").exit_code == 0
    created = run(db_url, "analyst", "create", "acme", login, "--grant", "org", "--grant", "audit")
    assert created.exit_code == 0, created.output
    password = str(conninfo_to_dict(created.stdout.strip())["password"])

    file = tmp_path / "contexts.backup"
    done = run(db_url, "backup", str(file))
    assert done.exit_code == 0, done.output
    assert f"to {file}" in done.stderr

    restored = contexts(env, "restore", str(file))
    assert restored.returncode == 0, restored.stderr
    # The first command on a new default home says it made a new, empty database, and where.
    assert f"contexts: created a new, empty database in {home / 'pgdata'} (CONTEXTS_HOME is not set" in (
        restored.stderr
    )
    created_roles = restored.stderr.split("role(s) created: ", 1)[1].split(";", 1)[0].split(", ")
    assert {login, "contexts_analyst", "contexts_service"} <= set(created_roles)
    assert "schema already at" in restored.stderr

    read = (
        "select principal_id, org_id from api.whoami(); select org_id from data.orgs; "
        "select count(*) from api.retrieval_traces"
    )
    analyst = contexts({**env, "PGPASSWORD": password}, "psql", "--as", login, "-At", "-c", read)
    assert analyst.returncode == 0, analyst.stderr
    assert analyst.stdout.split() == [f"{login}|acme", "acme", "0"]
    assert "created a new" not in analyst.stderr  # only the first time
    wrong = contexts({**env, "PGPASSWORD": "not-the-password"}, "psql", "--as", login, "-c", "select 1")
    assert wrong.returncode != 0 and "password authentication failed" in wrong.stderr


def test_a_restore_refuses_a_database_that_holds_contexts_and_a_file_that_is_no_backup(db_url, tmp_path):
    file = tmp_path / "contexts.backup"
    assert run(db_url, "backup", str(file)).exit_code == 0
    done = run(db_url, "restore", str(file))
    assert done.exit_code == 1
    assert "the target database holds a Contexts schema already: restore into a new, empty database" in done.output
    other = tmp_path / "notes.txt"
    other.write_text("not a backup\n")
    done = run(db_url, "restore", str(other))
    assert done.exit_code == 1 and f"{other} is not a Contexts backup" in done.output
    assert "Traceback" not in done.output and done.output.strip().endswith(": not a tar archive")
    assert len(done.output.strip().splitlines()) == 1
    tarred = tmp_path / "notes.tar"
    with tarfile.open(tarred, "w") as archive:
        archive.add(other, arcname="notes.txt")
    done = run(db_url, "restore", str(tarred))
    assert done.exit_code == 1 and done.output.strip().endswith(": it lacks VERSION, contexts.dump, roles.sql")
    with tarfile.open(file) as real, tarfile.open(tarred, "w") as forged:
        for member in real.getmembers():
            if member.name == "contexts.dump":
                member.size = len(b"not a dump\n")
                forged.addfile(member, io.BytesIO(b"not a dump\n"))
            else:
                forged.addfile(member, real.extractfile(member))
    done = run(db_url, "restore", str(tarred))
    assert done.exit_code == 1 and done.output.strip().endswith(": its contexts.dump is not a pg_dump archive")
    # The signature alone does not pass: pg_restore must read its table of contents.
    forged_bytes = b"PGDMP" + bytes(range(256)) * 12
    with tarfile.open(file) as real, tarfile.open(tarred, "w") as forged:
        for member in real.getmembers():
            if member.name == "contexts.dump":
                member.size = len(forged_bytes)
                forged.addfile(member, io.BytesIO(forged_bytes))
            else:
                forged.addfile(member, real.extractfile(member))
    done = run(db_url, "restore", str(tarred))
    assert done.exit_code == 1 and done.output.strip().endswith(": its contexts.dump is not a pg_dump archive")


def test_a_file_that_is_no_backup_is_refused_before_a_database_is_made(tmp_path):
    home = tmp_path / "home"
    other = tmp_path / "notes.txt"
    other.write_text("not a backup\n")
    env = {k: v for k, v in os.environ.items() if k not in ("CONTEXTS_DATABASE_URL", "DATABASE_URL")}
    done = contexts({**env, "CONTEXTS_HOME": str(home)}, "restore", str(other))
    assert done.returncode == 1 and "is not a Contexts backup" in done.stderr, done.stderr
    assert not home.exists(), "no embedded database is made for a file that is no backup"
