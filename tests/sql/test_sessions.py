"""Opening sessions under concurrency: the first writes into one new session race."""

from __future__ import annotations

import threading

import psycopg
import pytest

from app.access import act_as, ensure_admin_principal


@pytest.fixture
def org(conn):
    conn.execute("select service.create_org('acme')")
    ensure_admin_principal(conn, "acme", "admin")
    conn.execute("select service.create_principal('acme', 'bob', 'agent', '')")
    conn.execute("select service.grant_scope('acme', 'bob', 'repo', 'platform', true)")
    conn.commit()
    return "acme"


def _open_in_thread(db_url: str, principal: str, session: str, outcome: dict) -> threading.Thread:
    def run() -> None:
        try:
            with psycopg.connect(db_url) as conn:
                act_as(conn, "acme", principal)
                outcome["expires"] = conn.execute("select service.open_session(%s)", (session,)).fetchone()[0]
        except psycopg.Error as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def _wait_until_blocked(db_url: str) -> None:
    """Until the second opener waits on the first one's uncommitted session row."""
    with psycopg.connect(db_url, autocommit=True) as watcher:
        for _ in range(200):
            if watcher.execute(
                "select count(*) from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()"
            ).fetchone()[0]:
                return
            threading.Event().wait(0.05)
    raise AssertionError("the second opener never waited on the first")


def test_concurrent_first_opens_of_one_session_both_succeed(db_url, org):
    with psycopg.connect(db_url) as first:
        act_as(first, "acme", "admin")
        first.execute("select service.open_session('s-new')")
        outcome: dict = {}
        thread = _open_in_thread(db_url, "admin", "s-new", outcome)
        _wait_until_blocked(db_url)
        first.commit()
    thread.join(30)
    assert "error" not in outcome, outcome
    assert outcome["expires"] is not None


def test_a_concurrent_opener_without_a_grant_on_it_is_refused(db_url, org):
    """Racing the opener does not let another principal join a session it was not given."""
    with psycopg.connect(db_url) as first:
        act_as(first, "acme", "admin")
        first.execute("select service.open_session('s-private')")
        outcome: dict = {}
        thread = _open_in_thread(db_url, "bob", "s-private", outcome)
        _wait_until_blocked(db_url)
        first.commit()
    thread.join(30)
    assert isinstance(outcome.get("error"), psycopg.errors.InsufficientPrivilege), outcome


def test_an_invalid_session_identifier_is_22023(conn, org):
    act_as(conn, "acme", "admin")
    with pytest.raises(psycopg.errors.InvalidParameterValue):
        conn.execute("select service.open_session(%s)", ("bad id with spaces",))
