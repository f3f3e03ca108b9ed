"""Eval history in the database: `contexts eval replay` stores each replayed query, and
api.eval_replay_diffs shows each reader exactly what api.retrieval_traces would show it
of the same retrieval; runs and figures are global. service.record_eval_run refuses bad
input with 22023 (P0002 for an unknown org)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import msgspec
import psycopg
import pytest
from click.testing import CliRunner

from app.access import act_as
from app.cli import main
from app.eval import history
from app.wire.retrieve import RetrieveRequest
from tests.conftest import login_url

SESSION = "s-heron-19ab"
DOCS = {
    "runbooks/pool.md": "# Connection pool\n\nDrain idle connections from the pool every minute.\n",
    "runbooks/cache.md": "# Cache\n\nThe cache evicts least recently used entries when memory runs low.\n",
}
NOTE = "# Heron\n\nThe heron rollout drains the connection pool of the ledger twice.\n"


@pytest.fixture
def replayed(conn, ingest, retriever, db_url, logins, tmp_path):
    """admin retrieves org-wide and in its session; alice (repo platform) retrieves
    org-wide; then `contexts eval replay` replays every trace. alice and carol are
    analyst logins: carol audits the org but holds no grant on the session."""
    ingest("acme", DOCS)
    ingest("acme", {"platform/pool.md": "# Pool\n\nThe platform pool drains idle connections.\n"}, repo="platform")
    ingest("acme", {"notes/heron.md": NOTE}, session=SESSION)
    conn.execute("select service.grant_scope('acme', 'admin', 'session', %s)", (SESSION,))
    conn.execute("select service.create_principal('acme', 'alice', 'human', '', %s)", (logins["analysts"][0],))
    conn.execute("select service.grant_scope('acme', 'alice', 'repo', 'platform')")
    conn.execute("select service.create_principal('acme', 'carol', 'human', '', %s)", (logins["analysts"][1],))
    conn.execute("select service.grant_scope('acme', 'carol', 'audit', null)")
    conn.commit()
    for principal, query, scope in (
        ("admin", "drain idle connections", {}),
        ("admin", "heron rollout ledger pool", {"session_id": SESSION}),
        ("alice", "pool drains idle connections", {}),
    ):
        act_as(conn, "acme", principal)
        body = {"query": query, "scope": {"org_id": "acme", **scope}}
        retriever.retrieve(conn, msgspec.convert(body, RetrieveRequest))
        conn.commit()
    candidate = tmp_path / "candidate.json"
    candidate.write_text('{"k_lexical": 1, "k_dense": 0}')
    result = CliRunner().invoke(
        main, ["--db-url", db_url, "eval", "replay", "--candidate", str(candidate), "--org", "acme", "--json"]
    )
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout.strip().splitlines()[-1])


def diffs(db_url: str, login: str) -> dict[str, dict]:
    with psycopg.connect(login_url(db_url, login)) as sql:
        return {
            r[0]["principal_id"] + ":" + str(r[0]["trace_id"]): r[0]
            for r in sql.execute("select to_jsonb(d) from api.eval_replay_diffs d")
        }


def test_replay_diffs_are_redacted_like_traces(replayed, conn, db_url, logins):
    run_id = replayed["eval_run_id"]
    assert replayed["queries"] == 3
    assert conn.execute("select command from api.eval_runs where run_id = %s", (run_id,)).fetchone() == ("replay",)
    stored = conn.execute(
        "select principal_id, query, trace_id is not null from data.eval_replays where run_id = %s order by ordinal",
        (run_id,),
    ).fetchall()
    assert sorted(stored) == [
        ("admin", "drain idle connections", True),
        ("admin", "heron rollout ledger pool", True),
        ("alice", "pool drains idle connections", True),
    ]

    alice = diffs(db_url, logins["analysts"][0])
    assert [d["principal_id"] for d in alice.values()] == ["alice"]  # her own replay only
    (mine,) = alice.values()
    assert mine["query"] == "pool drains idle connections" and mine["redacted"] == []
    assert mine["current"] and all(c["redacted"] is False and c["preview"] for c in mine["current"])

    carol = diffs(db_url, logins["analysts"][1])  # audit: all three, the session's withheld
    assert sorted(d["principal_id"] for d in carol.values()) == ["admin", "admin", "alice"]
    by_query = {d["query"]: d for d in carol.values()}
    hidden = by_query[None]
    assert hidden["redacted"] == ["query", "request.query", "request.scope.session_id"]
    assert hidden["request"]["scope"]["session_id"] is None
    dumped = json.dumps(carol)
    assert SESSION not in dumped and "heron" not in dumped.lower()
    # A listed result carol may not read keeps only its score.
    for d in carol.values():
        for c in d["current"] + d["candidate"]:
            assert c["redacted"] or "notes/heron.md" not in c["source"]
            if c["redacted"]:
                assert set(c) == {"final_score", "redacted"}
    # alice's platform fragment is not carol's either (she holds no repo grant).
    assert all(
        c["redacted"]
        for c in by_query["pool drains idle connections"]["current"]
        if c.get("source", "").startswith("platform/") or c["redacted"]
    )

    # Runs and figures are global: every analyst reads the run itself.
    for login in logins["analysts"]:
        with psycopg.connect(login_url(db_url, login)) as sql:
            assert sql.execute("select command from api.eval_runs").fetchall() == [("replay",)]
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                sql.execute("select * from data.eval_replays")


def test_record_eval_run_refuses_bad_input(conn):
    conn.execute("select service.create_org('acme')")
    started = datetime.now(UTC)
    figure = {"dataset": "geo", "split": "test", "stage": "lexical", "metric": "ndcg@10", "value": 0.5}
    replay_row = {
        "org_id": "acme",
        "principal_id": "admin",
        "origin": "q.jsonl:1",
        "query": "q",
        "request": {"query": "q", "scope": {"org_id": "acme"}},
        "flagged": False,
        "current": [],
        "candidate": [],
    }
    cases = [
        (("bench", {}, {}, [], []), None, psycopg.errors.InvalidParameterValue, "run, gate or replay"),
        (("run", [], {}, [], []), None, psycopg.errors.InvalidParameterValue, "JSON objects"),
        (("run", {}, {}, [figure | {"value": "high"}], []), None, psycopg.errors.InvalidParameterValue, "figure 1"),
        (("run", {}, {}, [figure, figure], []), None, psycopg.errors.InvalidParameterValue, "figure 2"),
        (("run", {}, {}, [figure | {"value": None}], []), None, psycopg.errors.InvalidParameterValue, "figure 1"),
        (("run", {}, {}, [figure | {"status": "great"}], []), None, psycopg.errors.InvalidParameterValue, "figure 1"),
        (("run", {}, {}, [], []), "passed", psycopg.errors.InvalidParameterValue, "only a gate run"),
        (
            ("replay", {}, {}, [], [replay_row | {"flagged": "yes"}]),
            None,
            psycopg.errors.InvalidParameterValue,
            "replay 1",
        ),
        (
            ("replay", {}, {}, [], [replay_row | {"trace_id": "nope"}]),
            None,
            psycopg.errors.InvalidParameterValue,
            "replay 1",
        ),
        (
            ("replay", {}, {}, [], [replay_row | {"current": [1]}]),
            None,
            psycopg.errors.InvalidParameterValue,
            "replay 1",
        ),
        (("replay", {}, {}, [], [replay_row | {"org_id": "nowhere"}]), None, psycopg.errors.NoDataFound, "unknown org"),
    ]
    for (command, pipeline, options, figures, replays), outcome, error, message in cases:
        with pytest.raises(error, match=message), conn.transaction():  # noqa: PT012
            conn.execute(
                "select service.record_eval_run(%s, %s, %s, %s, '0', %s, %s, %s)",
                (
                    command,
                    json.dumps(pipeline),
                    json.dumps(options),
                    started,
                    json.dumps(figures),
                    json.dumps(replays),
                    outcome,
                ),
            )
    run_id = history.record(
        conn, "gate", {"chunker": "x"}, {}, started, [figure | {"status": "ok", "baseline": 0.5}], outcome="passed"
    )
    row = conn.execute(
        'select command, outcome, pipeline_version = left(md5(\'{"chunker": "x"}\'::jsonb::text), 12), datasets '
        "from api.eval_runs where run_id = %s",
        (run_id,),
    ).fetchone()
    assert row == ("gate", "passed", True, ["geo"])
    assert conn.execute("select metric, value, delta, status from api.eval_figures").fetchall() == [
        ("ndcg@10", 0.5, 0.0, "ok")
    ]
