"""Reads on a streaming replica (docs/adr/0020-read-replicas.md): a hot standby of the
test server, made with the embedded wheel's pg_basebackup, answers the service's
retrievals under the same row-level security, sees the primary's writes within moments,
and never answers for a key revoked on the primary or before it has replayed what the
service itself just wrote."""

from __future__ import annotations

import time

import psycopg
import pytest

from app.access import create_api_key, key_id_of
from app.db.replica import EmbeddedStandby
from tests.conftest import login_url, serving

VISIBLE_WITHIN_S = 10.0
METRICS_TOKEN = "replica-metrics"


@pytest.fixture(scope="module")
def standby(pg_server, template_db):
    """A hot standby of the session's server, removed (with its slot) even when a test fails."""
    replica = EmbeddedStandby(pg_server, slot="contexts_test_standby")
    try:
        yield replica.start()
    finally:
        replica.stop()


@pytest.fixture
def replica_url(standby, db_url, logins):
    """The test database on the standby, as the service's login."""
    name = psycopg.conninfo.conninfo_to_dict(db_url)["dbname"]
    standby.wait_for_database(name)
    return login_url(standby.url(name), logins["service"])


@pytest.fixture
def served(settings, db_url, logins, replica_url):
    with serving(settings, db_url, logins, read_database_url=replica_url, metrics_token=METRICS_TOKEN) as (
        client,
        token,
    ):
        client.headers["Authorization"] = f"Bearer {token}"
        yield client, token


def retrieve(client, query: str, org: str = "acme", **fields):
    response = client.post("/contexts/retrieve", json={"query": query, "scope": {"org_id": org}, **fields})
    return response


def read_of(db_url: str, trace_id: str) -> dict:
    """Where a traced retrieval read its candidates (pipeline.read)."""
    with psycopg.connect(db_url) as conn:
        row = conn.execute("select pipeline -> 'read' from data.retrieval_traces where trace_id = %s", (trace_id,))
        return row.fetchone()[0]


def write_on_primary(db_url: str, pipeline, org: str, path: str, text: str) -> None:
    """A write the service did not make (the CLI, another service process): the service
    has no position of it to wait for."""
    from app.access import act_as
    from app.ingest.normalize import SourceDocument
    from app.scope import Scope

    with psycopg.connect(db_url) as conn:
        act_as(conn, org, "admin")
        pipeline.write(conn, Scope(org), [pipeline.prepare(SourceDocument(path=path, content=text))])


def test_retrievals_read_the_replica_and_see_a_primary_write_within_seconds(served, db_url, pipeline):
    client, _ = served
    stored = client.post(
        "/documents",
        json={
            "scope": {"org_id": "acme"},
            "documents": [{"path": "runbook.md", "content": "# Failover\n\nPromote the standby with pg_ctl promote."}],
        },
    )
    assert stored.status_code == 201, stored.text
    # Read-your-writes: the service's own write is found at once, wherever it is read.
    first = retrieve(client, "promote the standby")
    assert first.status_code == 200, first.text
    assert [f["source"].split("#")[0] for f in first.json()["fragments"]] == ["runbook.md"]

    # A write the service did not make becomes visible through the replica.
    write_on_primary(db_url, pipeline, "acme", "lag.md", "# Replication lag\n\nWatch pg_last_xact_replay_timestamp.")
    deadline = time.monotonic() + VISIBLE_WITHIN_S
    while True:
        body = retrieve(client, "replication lag replay timestamp", k_dense=0).json()
        if any(f["source"].startswith("lag.md") for f in body["fragments"]):
            break
        assert time.monotonic() < deadline, "the primary's write never became visible on the replica"
        time.sleep(0.1)
    read = read_of(db_url, body["trace_id"])
    assert read["server"] == "replica" and 0 <= read["lag_s"] <= 5, read
    assert "lag_s" in read


def test_row_level_security_binds_the_same_on_the_replica(served, db_url, replica_url, ingest, standby):
    client, token = served
    ingest("borg", {"secret.md": "# Borg plans\n\nAssimilation schedule for the next quarter."})
    with psycopg.connect(db_url) as conn:
        borg_key = create_api_key(conn, "borg", "admin").token
    name = psycopg.conninfo.conninfo_to_dict(db_url)["dbname"]
    with psycopg.connect(standby.url(name)) as su:  # until the standby has replayed borg's key
        deadline = time.monotonic() + VISIBLE_WITHIN_S
        while su.execute("select count(*) from data.api_keys where org_id = 'borg'").fetchone()[0] < 1:
            assert time.monotonic() < deadline
            time.sleep(0.05)
            su.rollback()

    # Through the service: org A's key is refused org B's scope, and never sees its text.
    assert retrieve(client, "assimilation schedule", org="borg").status_code == 403
    assert retrieve(client, "assimilation schedule").json()["fragments"] == []

    with psycopg.connect(replica_url) as conn:
        assert conn.execute("select pg_is_in_recovery()").fetchone()[0]
        conn.execute("select service.authenticate(%s)", (token,))
        assert conn.execute("select org_id, principal_id from api.whoami()").fetchone() == ("acme", "admin")
        assert conn.execute("select count(*) from data.fragments where org_id = 'borg'").fetchone()[0] == 0
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("select * from api.search_lexical('borg', 'assimilation', 10)")
        conn.rollback()

        # Org B's key, on the replica, reads org B: the binding is per key, not per login.
        conn.execute("select service.authenticate(%s)", (borg_key,))
        assert conn.execute("select count(*) from data.fragments where org_id = 'borg'").fetchone()[0] >= 1
        binding = conn.execute("select current_setting('contexts.binding')").fetchone()[0]
        conn.rollback()

        # A binding replayed in a later transaction, or forged, binds nobody.
        for forged in (binding, binding.replace(binding.split(".")[1], "0" * 64)):
            conn.execute("select set_config('contexts.binding', %s, true)", (forged,))
            assert conn.execute("select org_id from api.whoami()").fetchone()[0] is None
            assert conn.execute("select count(*) from data.fragments").fetchone()[0] == 0
            conn.rollback()


def test_a_lagging_replica_never_answers_for_a_revoked_key_or_before_the_services_own_write(
    served, db_url, replica_url, standby
):
    client, token = served
    name = psycopg.conninfo.conninfo_to_dict(db_url)["dbname"]
    with psycopg.connect(standby.url(name), autocommit=True) as su:
        su.execute("select pg_wal_replay_pause()")
        try:
            # Written through the service while the replica replays nothing: the retrieval
            # reads the primary, which has it.
            stored = client.post(
                "/documents",
                json={
                    "scope": {"org_id": "acme"},
                    "documents": [{"path": "paused.md", "content": "# Paused replay\n\nWrites wait on the primary."}],
                },
            )
            assert stored.status_code == 201, stored.text
            body = retrieve(client, "paused replay writes wait").json()
            assert [f["source"].split("#")[0] for f in body["fragments"]] == ["paused.md"]
            read = read_of(db_url, body["trace_id"])
            assert read["server"] == "primary" and "replayed" in read["reason"], read

            # Revoked on the primary, still valid on the paused replica: refused.
            with psycopg.connect(db_url) as conn:
                conn.execute("select service.revoke_api_key(%s)", (key_id_of(token),))
            with psycopg.connect(replica_url) as conn:
                assert conn.execute("select org_id from service.authenticate(%s)", (token,)).fetchone()[0] == "acme"
            assert retrieve(client, "paused replay writes wait").status_code == 401
        finally:
            su.execute("select pg_wal_replay_resume()")


def test_metrics_show_the_replica_lag(served):
    client, _ = served
    text = client.get("/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"}).text
    line = next(line for line in text.splitlines() if line.startswith("contexts_replica_lag_seconds"))
    assert 0 <= float(line.split()[-1]) < 5


def test_a_keys_restriction_binds_on_the_replica_too(served, db_url, replica_url, ingest, standby):
    """The binding a standby signs names the key, so its restriction follows it there;
    stripping the key from a signed binding (to read as the whole principal) binds nobody."""
    ingest("acme", {"platform.md": "# Platform\n\nThe platform journal."}, repo="platform")
    ingest("acme", {"secret.md": "# Secret\n\nThe secret journal."}, repo="secret")
    with psycopg.connect(db_url) as conn:
        narrow = create_api_key(conn, "acme", "admin", read_only=True, repos=["platform"])
    name = psycopg.conninfo.conninfo_to_dict(db_url)["dbname"]
    with psycopg.connect(standby.url(name)) as su:
        deadline = time.monotonic() + VISIBLE_WITHIN_S
        while su.execute("select count(*) from data.api_keys where key_id = %s", (narrow.key_id,)).fetchone()[0] < 1:
            assert time.monotonic() < deadline
            time.sleep(0.05)
            su.rollback()
    with psycopg.connect(replica_url) as conn:
        conn.execute("select service.authenticate(%s)", (narrow.token,))
        assert conn.execute("select org_wide, repos from api.whoami()").fetchone() == (False, ["platform"])
        repos = {r[0] for r in conn.execute("select distinct repo_id from data.fragments")}
        assert repos == {"platform"}
        binding = conn.execute("select current_setting('contexts.binding')").fetchone()[0]
        assert binding.endswith("." + narrow.key_id.encode().hex())
        # The same binding without its key, in the same transaction: its signature fails.
        conn.execute("select set_config('contexts.binding', %s, true)", (binding.rsplit(".", 1)[0] + ".",))
        assert conn.execute("select org_id from api.whoami()").fetchone()[0] is None
        assert conn.execute("select count(*) from data.fragments").fetchone()[0] == 0
