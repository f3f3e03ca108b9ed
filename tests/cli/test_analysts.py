"""`contexts analyst ...` and `principal create --db-role` against the test server: bad
input is a clear message and a non-zero exit, a DBA's existing login is mapped as it is,
and a migrator that may not create roles is told the SQL its DBA runs. (Connecting over
TCP with the printed URL, and refused passwords: tests/security/test_door.py.)"""

from __future__ import annotations

import uuid

import psycopg
import pytest
from click.testing import CliRunner
from psycopg.conninfo import conninfo_to_dict

from app.cli import main
from app.db.logins import create_analyst


def run(db_url: str, *args: str):
    return CliRunner().invoke(main, ["--db-url", db_url, *args])


def unique(prefix: str) -> str:
    """Logins are cluster-wide: each test names its own."""
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


@pytest.fixture
def acme(db_url):
    assert run(db_url, "org", "create", "acme").exit_code == 0
    return db_url


def test_bad_input_is_a_message_and_an_exit_status(acme):
    login = unique("ana")
    first = run(acme, "analyst", "create", "acme", login, "--grant", "org")
    assert first.exit_code == 0, first.output
    cases = [
        (("analyst", "create", "nope", unique("x")), "unknown org: nope"),
        (("analyst", "create", "acme", login), f"principal {login} already exists in org acme"),
        (("analyst", "create", "acme", unique("y"), "--login", login), f"login {login} is already mapped"),
        (("analyst", "create", "acme", unique("z"), "--grant", "repo"), "invalid grant: repo"),
        (("analyst", "create", "acme", unique("z"), "--grant", "team:a"), "invalid grant: team:a"),
        (("analyst", "create", "acme", unique("z"), "--grant", "org:globex"), "invalid grant: org:globex"),
        (("analyst", "create", "acme", unique("z"), "--grant", "repo:typo-repo"), "unknown repo typo-repo in org acme"),
        (("analyst", "create", "acme", unique("z"), "--grant", "persona:nobody"), "unknown persona nobody in org acme"),
        (("analyst", "create", "acme", "Alice"), "invalid login name: Alice"),
        (("analyst", "create", "acme", "pg_reader"), "invalid login name: pg_reader"),
        (("analyst", "create", "acme", unique("w"), "--login", "postgres"), "login postgres bypasses row-level"),
        (("analyst", "password", "acme", "ghost"), "unknown principal ghost"),
        (("analyst", "revoke", "acme", "admin"), "principal admin of org acme has no login"),
        (("principal", "create", "acme", "bot", "--db-role", "Bad Name"), "invalid login name: Bad Name"),
        (("principal", "create", "acme", "bot", "--db-role", login), f"login {login} is already mapped"),
    ]
    for args, message in cases:
        done = run(acme, *args)
        assert done.exit_code != 0, args
        assert message in done.stderr, (args, done.stderr)
        assert "Traceback" not in done.output, args
    with psycopg.connect(acme) as conn:  # nothing of a refused call was kept
        principals = [r[0] for r in conn.execute("select principal_id from data.principals order by 1")]
        assert principals == sorted(["admin", login])
        assert conn.execute("select count(*) from pg_roles where rolname like 'z\\_%'").fetchone() == (0,)
        assert conn.execute("select count(*) from data.repos").fetchone() == (0,)  # no typo became a repo
        assert conn.execute("select count(*) from data.personas").fetchone() == (0,)


def test_create_prints_a_url_of_the_configured_database_and_list_shows_the_login(acme):
    login = unique("ana")
    done = run(acme, "analyst", "create", "acme", login, "--grant", "repo:platform", "--grant", "audit", "--new")
    assert done.exit_code == 0, done.output
    url = done.stdout.strip()
    # An external database (--db-url): its own host (here a socket) and database, the
    # new login in place of the migrator, who appears nowhere.
    assert url.startswith(f"postgresql://{login}:")
    assert {k: v for k, v in conninfo_to_dict(url).items() if k != "password"} == {
        **{k: v for k, v in conninfo_to_dict(acme).items() if k != "user"},
        "user": login,
    }
    with psycopg.connect(url) as conn:
        assert conn.execute("select current_user, current_database()").fetchone() == (
            login,
            conninfo_to_dict(acme)["dbname"],
        )
        assert conn.execute("select principal_id, repos, audit from api.whoami()").fetchone() == (
            login,
            ["platform"],
            True,
        )
    with psycopg.connect(acme) as conn:
        assert conn.execute(
            "select kind, db_role from data.principals where principal_id = %s", (login,)
        ).fetchone() == (
            "human",
            login,
        )
    listed = CliRunner().invoke(main, ["--db-url", acme, "analyst", "list", "acme"], env={"COLUMNS": "200"})
    assert listed.exit_code == 0 and login in listed.stdout and "repo:platform" in listed.stdout


def test_an_existing_login_made_by_a_dba_is_mapped_as_it_is(acme):
    login = unique("dba_made")
    with psycopg.connect(acme, autocommit=True) as conn:
        conn.execute(f"create role {login} login password 'set-by-the-dba'")
    done = run(acme, "analyst", "create", "acme", login, "--grant", "org")
    assert done.exit_code == 0, done.output
    assert done.stdout.strip().startswith(f"postgresql://{login}@")  # no password: it is the DBA's
    assert "its owner or DBA set" in done.stderr
    with psycopg.connect(acme) as conn:
        member, stored = conn.execute(
            "select pg_has_role(%s, 'contexts_analyst', 'member'), rolpassword from pg_authid where rolname = %s",
            (login, login),
        ).fetchone()
        assert member
        assert stored.startswith("SCRAM-SHA-256$")  # untouched: still the DBA's
        with psycopg.connect(acme) as check:
            check.execute(f"set role {login}")
            check.execute("select 1")


def test_a_migrator_without_createrole_is_told_the_sql_its_dba_runs(acme):
    """A managed PostgreSQL: the migrator may not create roles. The login, principal and
    grants are one transaction, so nothing is left half made."""
    lite = unique("lite")
    login = unique("ana")
    with psycopg.connect(acme, autocommit=True) as conn:
        # It reads past row-level security as a migrator would (a superuser or the owner).
        conn.execute(f"create role {lite} nologin bypassrls")
        for fn in ("service.create_analyst(text, text, text, text, text[], text)", "service.create_login(text, text)"):
            conn.execute(f"grant execute on function {fn} to {lite}")
        conn.execute(f"grant execute on all functions in schema data to {lite}")
        conn.execute(f"grant usage on schema data, api, service to {lite}")
        conn.execute(f"grant select on all tables in schema data to {lite}")
    with psycopg.connect(acme) as conn:
        conn.execute(f"set role {lite}")
        with pytest.raises(psycopg.errors.InsufficientPrivilege) as refused:
            create_analyst(conn, "acme", login, login, ["org"])
        conn.rollback()
    diag = refused.value.diag
    assert diag.message_primary == f"role {lite} may not create logins"
    assert f"create role {login} login in role contexts_analyst" in (diag.message_hint or "")
    with psycopg.connect(acme) as conn:
        assert conn.execute("select count(*) from pg_roles where rolname = %s", (login,)).fetchone() == (0,)
        assert conn.execute("select count(*) from data.principals where principal_id = %s", (login,)).fetchone() == (0,)


def test_passwords_reach_the_server_only_as_scram_verifiers(acme):
    with psycopg.connect(acme) as conn:
        with pytest.raises(psycopg.errors.InvalidParameterValue, match="SCRAM-SHA-256 verifier"):
            conn.execute("select service.create_login(%s, 'plain text')", (unique("x"),))
