"""What a reader learns from EXPLAIN ANALYZE of the views that filter rows themselves.

Views that run as their owner (api.retrieval_traces, api.query_vectors, the usage views,
api.fragment_authority, api.eval_replay_diffs) filter their rows in SQL, and a caller's
condition made of leakproof operators (=, <, starts_with) passes a security barrier:
evaluated on rows the view then drops, it is counted all the same in the plan's row
figures. That once told another org's query texts and document paths, a prefix at a
time. Here, for every such view, every column that holds a value another org, or a
session the reader holds no grant on, shows there, and each way of looking it up
(equality; a prefix for text), the reader (an analyst with an audit grant, logged in as
itself) runs the same generic plan for that value and for one nobody holds: every row
count of every step of the plan must be the same (non-interference: nothing it may not
read changes what it sees)."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import psycopg
import pytest
from psycopg import sql

from app.access import create_api_key, ensure_admin_principal
from tests.conftest import login_url
from tests.security.test_trace_redaction import NOTE_PATH, QUERY, world  # noqa: F401 (a fixture)

RIVAL_PATH = "vault/rival-canary-runbook.md"
RIVAL_NOTE = "# Rival canary runbook\n\nThe rival canary vault opens with quasar-77; rotate it on Fridays.\n"
RIVAL_QUERY = "rival canary vault quasar"

COUNTS = (
    "Actual Rows",
    "Actual Loops",
    "Rows Removed by Filter",
    "Rows Removed by Join Filter",
    "Rows Removed by Index Recheck",
    "Index Searches",
    "Heap Fetches",
    "Exact Heap Blocks",
    "Lossy Heap Blocks",
)
"""What EXPLAIN ANALYZE tells of each step without timing or buffers."""

PROBED_TYPES = {"text", "bigint", "integer", "uuid", "date"}
"""Column types probed (and timestamps of either kind); decoy() has a value of each."""


def owner_run_views(conn: psycopg.Connection) -> list[str]:
    """The api views that run as their owner (not security invoker) and that an analyst
    may select: those that filter rows themselves. Global ones (eval runs, figures)
    hold no tenant data and are left out."""
    rows = conn.execute(
        "select c.oid::regclass::text from pg_class c join pg_namespace n on n.oid = c.relnamespace"
        " where n.nspname = 'api' and c.relkind = 'v'"
        " and not coalesce('security_invoker=true' = any (c.reloptions), false)"
        " and has_table_privilege('contexts_analyst', c.oid, 'select') order by 1"
    ).fetchall()
    return [r[0] for r in rows if r[0] not in ("api.eval_runs", "api.eval_figures")]


def columns_of(conn: psycopg.Connection, view: str) -> dict[str, str]:
    rows = conn.execute(
        "select a.attname, format_type(a.atttypid, null) from pg_attribute a"
        " where a.attrelid = %s::regclass and a.attnum > 0 and not a.attisdropped order by a.attnum",
        (view,),
    ).fetchall()
    return {name: kind for name, kind in rows if kind in PROBED_TYPES or kind.startswith("timestamp")}


def rows_as(conn: psycopg.Connection, org: str, principal: str, view: str, columns: list[str]) -> list[tuple]:
    """The view's rows as this principal reads them (bound, as an analyst)."""
    conn.commit()  # a transaction of its own: the role it takes ends with it
    with conn.transaction():
        conn.execute("select service.bind_principal(%s, %s)", (org, principal))
        conn.execute("set local role contexts_analyst")
        query = sql.SQL("select {} from {}").format(
            sql.SQL(", ").join(map(sql.Identifier, columns)), sql.SQL(view)
        )  # fmt: skip
        return conn.execute(query).fetchall()


def signature(plan: dict) -> list[tuple]:
    """Every step that ran: its kind, table and counts, in plan order. Steps never
    executed are left out: which partitions of a table a generic plan keeps at run time
    follows the org named, and the partitions' bounds (the org ids) are no secret
    (docs/dba.md); a partition only counts here once it is read."""
    steps = []
    if plan.get("Actual Loops"):
        steps.append((plan["Node Type"], plan.get("Relation Name"), *(plan.get(k) for k in COUNTS)))
    for child in plan.get("Plans", []):
        steps.extend(signature(child))
    return steps


def decoy(kind: str) -> Any:
    if kind == "uuid":
        return str(uuid.uuid4())
    if kind.startswith("timestamp"):
        return dt.datetime(1971, 1, 1, tzinfo=dt.UTC)
    if kind == "date":
        return dt.date(1971, 1, 1)
    return {"text": "zz-nobody-holds-this", "bigint": -424242, "integer": -4242}[kind]


@pytest.fixture
def rival(world, client, db_url):  # noqa: F811 (the imported fixture)
    """A second org with a document and a retrieval of its own, authority refreshed,
    and the usage roll-ups holding some traces while others are still pending."""
    with psycopg.connect(db_url) as conn:
        conn.execute("select service.create_org('rival')")
        ensure_admin_principal(conn, "rival", "admin")
        token = create_api_key(conn, "rival", "admin").token
    headers = {"Authorization": f"Bearer {token}"}
    # A second document citing the first: citation authority scores what is cited.
    citing = {"path": "vault/index.md", "content": f"# Index\n\nSee [the runbook]({RIVAL_PATH.split('/')[-1]}).\n"}
    documents = [{"path": RIVAL_PATH, "content": RIVAL_NOTE}, citing]
    body = {"scope": {"org_id": "rival"}, "documents": documents}
    assert client.post("/documents", headers=headers, json=body).status_code == 201
    first = {"query": RIVAL_QUERY, "scope": {"org_id": "rival"}}
    asked = client.post("/contexts/retrieve", headers=headers, json=first)
    assert asked.status_code == 200 and asked.json()["fragments"]
    with psycopg.connect(db_url) as conn:
        conn.execute("select service.refresh_authority(null)")
        conn.execute("select data._usage_fold_all()")
    # Traces written after the fold stay pending: both halves of each usage view.
    again = {"query": RIVAL_QUERY + " again", "scope": {"org_id": "rival"}}
    assert client.post("/contexts/retrieve", headers=headers, json=again).status_code == 200
    return world


def test_explain_analyze_of_an_owner_run_view_tells_nothing_it_may_not_read(rival, db_url, logins):
    reader_url = login_url(db_url, logins["analysts"][0])  # carol: audit and a repo grant, no session grant
    probed = 0
    with psycopg.connect(db_url) as admin, psycopg.connect(reader_url, autocommit=True) as reader:
        reader.execute("set plan_cache_mode = force_generic_plan")
        views = owner_run_views(admin)
        assert {"api.retrieval_traces", "api.query_vectors", "api.fragment_authority"} <= set(views)
        found: dict[str, set] = {}
        # What the reader may read anywhere is no secret in any view (a trace id it reads
        # in api.retrieval_traces may look up a trace whose vectors it may not read).
        seen: dict[str, set] = {}
        rows: dict[str, tuple[dict[str, str], list[tuple]]] = {}
        for view in views:
            columns = columns_of(admin, view)
            names = list(columns)
            for i, row in enumerate(zip(*rows_as(admin, "acme", "carol", view, names))):
                seen.setdefault(names[i], set()).update(row)
            theirs = rows_as(admin, "rival", "admin", view, names) + rows_as(admin, "acme", "alice", view, names)
            rows[view] = (columns, theirs)
        for n, (view, (columns, theirs)) in enumerate(rows.items()):
            for i, (name, kind) in enumerate(columns.items()):
                hidden = sorted({row[i] for row in theirs} - seen.get(name, set()) - {None}, key=str)[:6]
                found.setdefault(view, set()).update(str(v) for v in hidden)
                tests = [("=", sql.SQL("{} = $1"))]
                if kind == "text":
                    tests.append(("prefix", sql.SQL("starts_with({}, $1)")))
                for m, (how, condition) in enumerate(tests):
                    statement = f"probe_{n}_{i}_{m}"
                    type_name = "timestamptz" if kind.startswith("timestamp") else kind
                    reader.execute(
                        sql.SQL("prepare {} ({}) as select 1 from {} where {}").format(
                            sql.Identifier(statement),
                            sql.SQL(type_name),
                            sql.SQL(view),
                            condition.format(sql.Identifier(name)),
                        )
                    )

                    def plan(value: Any, statement: str = statement) -> list[tuple]:
                        explain = sql.SQL(
                            "explain (analyze, format json, costs off, timing off, summary off, buffers off)"
                            " execute {} ({})"
                        ).format(sql.Identifier(statement), sql.Literal(value))
                        return signature(reader.execute(explain).fetchone()[0][0]["Plan"])

                    for value in hidden:
                        looked = value[:3] if how == "prefix" else value
                        probed += 1
                        told, untold = plan(looked), plan(decoy(kind) if how == "=" else "zz-")
                        if told != untold:
                            steps = [(a, b) for a, b in zip(told, untold) if a != b] or (told, untold)
                            pytest.fail(f"{view}.{name} {how} {looked!r} changes what EXPLAIN ANALYZE reports: {steps}")
    # The probes reached what matters: the rival's query and path, the session's query.
    assert RIVAL_QUERY in found["api.retrieval_traces"] | found["api.query_vectors"]
    assert QUERY in found["api.query_vectors"] or QUERY in found["api.retrieval_traces"]
    assert RIVAL_PATH in found["api.fragment_authority"]
    assert probed > 50
