"""`contexts analyst create` limits a new login (statement timeout, connection limit,
defaults or as given), leaves a DBA's login as it is unless told, refuses a bad limit
before anything is made, and says that usage views stay empty without an audit grant."""

from __future__ import annotations

import psycopg
import pytest

from tests.cli.test_analysts import run, unique


@pytest.fixture
def acme(db_url):
    assert run(db_url, "org", "create", "acme").exit_code == 0
    return db_url


def limits(db_url: str, login: str) -> tuple[int, list[str]]:
    with psycopg.connect(db_url) as conn:
        row = conn.execute(
            "select r.rolconnlimit, coalesce((select s.setconfig from pg_db_role_setting s"
            " where s.setrole = r.oid and s.setdatabase = 0), '{}')"
            " from pg_roles r where r.rolname = %s",
            (login,),
        ).fetchone()
    assert row is not None
    return row[0], row[1]


def test_a_new_login_gets_limits_by_default_or_as_given(acme):
    default, given = unique("ana"), unique("ana")
    done = run(acme, "analyst", "create", "acme", default, "--grant", "org")
    assert done.exit_code == 0, done.output
    assert limits(acme, default) == (5, ["statement_timeout=5min"])
    assert "statements stop after 5min, at most 5 sessions" in done.stderr
    done = run(
        acme, "analyst", "create", "acme", given, "--grant", "org", "--grant", "audit",
        "--statement-timeout", "30s", "--connection-limit", "2",
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    assert limits(acme, given) == (2, ["statement_timeout=30s"])


def test_the_limits_hold_for_the_login(acme):
    login = unique("ana")
    done = run(acme, "analyst", "create", "acme", login, "--statement-timeout", "200ms", "--connection-limit", "1")
    assert done.exit_code == 0, done.output
    url = done.stdout.strip().splitlines()[-1]
    with psycopg.connect(url) as conn:
        assert conn.execute("show statement_timeout").fetchone() == ("200ms",)
        with pytest.raises(psycopg.errors.QueryCanceled):
            conn.execute("select pg_sleep(2)")
        conn.rollback()
        with pytest.raises(psycopg.OperationalError, match="too many connections"):
            psycopg.connect(url).close()


def test_an_existing_login_keeps_its_limits_unless_given(acme):
    mapped, limited = unique("dba"), unique("dba")
    with psycopg.connect(acme, autocommit=True) as conn:
        for login in (mapped, limited):
            conn.execute(f"create role {login} login in role contexts_analyst connection limit 9")
    assert run(acme, "analyst", "create", "acme", mapped).exit_code == 0
    assert limits(acme, mapped) == (9, [])
    done = run(acme, "analyst", "create", "acme", limited, "--statement-timeout", "1h")
    assert done.exit_code == 0, done.output
    assert limits(acme, limited) == (9, ["statement_timeout=1h"])


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--statement-timeout", "soon", "'soon' is no duration"),
        ("--statement-timeout", "5 minutes", "is no duration"),
        ("--statement-timeout", "-1s", "is no duration"),
        ("--statement-timeout", "30d", "longer than PostgreSQL allows"),
        ("--connection-limit", "-2", "-2 is not in the range"),
        ("--connection-limit", "many", "'many' is not a valid integer"),
    ],
)
def test_a_bad_limit_is_refused_before_anything_is_made(acme, option, value, message):
    login = unique("ana")
    done = run(acme, "analyst", "create", "acme", login, option, value)
    assert done.exit_code != 0
    assert message in done.stderr, done.stderr
    assert "Traceback" not in done.output
    with psycopg.connect(acme) as conn:
        assert conn.execute("select 1 from pg_roles where rolname = %s", (login,)).fetchone() is None
        assert conn.execute("select 1 from data.principals where principal_id = %s", (login,)).fetchone() is None


def test_creation_says_usage_views_need_an_audit_grant(acme):
    without, with_audit = unique("ana"), unique("ana")
    done = run(acme, "analyst", "create", "acme", without, "--grant", "org")
    assert "without `--grant audit`" in done.stderr and "--audit" in done.stderr
    done = run(acme, "analyst", "create", "acme", with_audit, "--grant", "org", "--grant", "audit")
    assert "--grant audit" not in done.stderr
