"""Schema api holds what an analyst at psql may use, and nothing else (`\\df api.*`,
`\\dv api.*`): the service's writes, ingest, authentication, trace writing and
administration live in schema service, on which no analyst or auditor holds USAGE."""

from __future__ import annotations

import psycopg
import pytest

from app.access import act_as
from tests.conftest import login_url

DOOR_ROLES = ("contexts_analyst", "contexts_auditor")
"""The roles of the SQL door: analyst logins, and auditors (an audit grant)."""


def test_every_function_of_api_is_one_an_analyst_may_run(conn):
    functions = conn.execute("""
        select p.oid::regprocedure::text, has_function_privilege('contexts_analyst', p.oid, 'execute'),
               has_function_privilege('contexts_auditor', p.oid, 'execute'), p.prosecdef
        from pg_proc p where p.pronamespace = 'api'::regnamespace order by 1""").fetchall()
    assert len(functions) > 30
    refused = [name for name, analyst, auditor, _ in functions if not (analyst or auditor)]
    assert refused == [], "functions of schema api that no analyst or auditor may execute"
    # Only the auditor's report of who may read a fragment is out of a plain analyst's reach.
    assert [name.split("(")[0] for name, analyst, *_ in functions if not analyst] == ["api.fragment_readers"]
    # Nothing in api writes: none runs as its owner (an analyst holds no privilege that
    # writes a table, so an invoker function cannot), and no body writes a table.
    assert [name for name, *_, definer in functions if definer] == []
    writers = conn.execute(r"""
        select p.proname from pg_proc p where p.pronamespace = 'api'::regnamespace
          and p.prosrc ~* '\m(insert\s+into|update\s+data\.|delete\s+from|truncate|perform\s+service\.)'""").fetchall()
    assert writers == []


def test_views_of_api_are_ones_an_analyst_or_auditor_may_select(conn):
    views = conn.execute("""
        select c.oid::regclass::text from pg_class c
        where c.relnamespace = 'api'::regnamespace and c.relkind in ('v', 'm')
          and not (has_table_privilege('contexts_analyst', c.oid, 'select')
                   or has_table_privilege('contexts_auditor', c.oid, 'select'))""").fetchall()
    assert views == []


def test_the_service_schema_is_the_service_s_alone(conn):
    usage = dict(
        conn.execute(
            "select r, has_schema_privilege(r, 'service', 'usage') from unnest(%s::text[]) r",
            (["contexts_service", *DOOR_ROLES, "public"],),
        ).fetchall()
    )
    assert usage == {"contexts_service": True, "contexts_analyst": False, "contexts_auditor": False, "public": False}
    moved = conn.execute("""
        select count(*), count(*) filter (where has_function_privilege('contexts_service', p.oid, 'execute'))
        from pg_proc p where p.pronamespace = 'service'::regnamespace""").fetchone()
    assert moved[0] > 60 and moved[1] > 30
    # No function name stays in both schemas (a stale copy left in api by an upgrade).
    both = conn.execute("""
        select a.proname from pg_proc a join pg_proc s on s.proname = a.proname
        where a.pronamespace = 'api'::regnamespace and s.pronamespace = 'service'::regnamespace""").fetchall()
    assert both == []


def test_an_analyst_login_reads_through_api_and_cannot_reach_the_service(conn, db_url, logins):
    conn.execute("select service.create_org('acme')")
    conn.execute("select service.create_principal('acme', 'alice', 'human', 'Alice', %s)", (logins["analysts"][0],))
    conn.execute("select service.grant_scope('acme', 'alice', 'org', null, false)")
    conn.commit()
    with psycopg.connect(login_url(db_url, logins["analysts"][0]), autocommit=True) as analyst:
        assert analyst.execute("select (api.whoami()).principal_id").fetchone()[0] == "alice"
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="schema service"):
            analyst.execute("select service.pin_add('acme', null, 'fragment', 1, null)")
        listed = analyst.execute(
            "select count(*) from pg_proc p where p.pronamespace = 'api'::regnamespace "
            "and not has_function_privilege(p.oid, 'execute') and p.proname <> 'fragment_readers'"
        ).fetchone()[0]
        assert listed == 0
    # ... while the service's role runs the service's functions: the key check (over a
    # login of the role), and a write check as a principal with write grants.
    with psycopg.connect(login_url(db_url, logins["service"]), autocommit=True) as service:
        with pytest.raises(psycopg.errors.InvalidAuthorizationSpecification, match="invalid or revoked API key"):
            service.execute("select * from service.authenticate('ctx_not_a_key')")
    conn.execute("select service.grant_scope('acme', 'alice', 'org', null, true)")
    act_as(conn, "acme", "alice")
    conn.execute("select service.authorize_write('acme')")
    assert conn.execute("select current_user").fetchone()[0] == "contexts_service"
