"""API keys that expire and keys narrower than their principal, over HTTP, MCP and the
CLI: an expired key is a 401 that says so; a read-only key writes nothing; a key
restricted to repos reads and writes only there (and the org-wide knowledge every
principal reads), within its principal's grants. The randomized proof is
tests/security/test_key_restrictions.py."""

from __future__ import annotations

import datetime

import psycopg
import pytest
from click.testing import CliRunner

from app.access import create_api_key
from app.cli import main
from tests.api.test_api import ingest, problem

QUERY = {"query": "what to do when the storage volume is full", "scope": {"org_id": "acme"}}
RUNBOOK = "# Storage\n\nWhen the storage volume is full, rotate the journal and page the owner.\n"


def make_key(db_url: str, principal: str = "admin", **limits) -> tuple[str, dict[str, str]]:
    with psycopg.connect(db_url) as conn:
        key = create_api_key(conn, "acme", principal, **limits)
    return key.key_id, {"Authorization": f"Bearer {key.token}"}


def expire(db_url: str, key_id: str) -> None:
    with psycopg.connect(db_url) as conn:
        conn.execute(
            "update data.api_keys set created_at = now() - interval '2 days', expires_at = now() - interval '1 day' "
            "where key_id = %s",
            (key_id,),
        )


def test_a_key_works_until_it_expires_then_every_door_says_it_expired(client, db_url):
    soon = datetime.datetime.now(datetime.UTC) + datetime.timedelta(days=30)
    key_id, headers = make_key(db_url, expires_at=soon)
    assert client.post("/contexts/retrieve", json=QUERY, headers=headers).status_code == 200
    expire(db_url, key_id)
    for response in (
        client.post("/contexts/retrieve", json=QUERY, headers=headers),
        client.get("/whoami", headers=headers),
        client.post(
            "/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers=headers | {"Accept": "application/json, text/event-stream"},
        ),
    ):
        body = problem(response, 401)
        assert f"API key {key_id} expired at" in body["detail"], body
        assert response.headers["www-authenticate"].startswith("Bearer")


def test_an_expiry_must_lie_ahead_and_a_restriction_name_repos_of_the_org(client, db_url):
    with psycopg.connect(db_url) as conn:
        with pytest.raises(psycopg.errors.InvalidParameterValue, match="must lie ahead"):
            create_api_key(conn, "acme", "admin", expires_at=datetime.datetime(2001, 1, 1, tzinfo=datetime.UTC))
        conn.rollback()
        with pytest.raises(psycopg.errors.NoDataFound, match="unknown repo nosuch"):
            create_api_key(conn, "acme", "admin", repos=["nosuch"])
        conn.rollback()
        with pytest.raises(psycopg.errors.InvalidParameterValue, match="at least one"):
            create_api_key(conn, "acme", "admin", repos=[])
        conn.rollback()
        assert conn.execute("select count(*) from data.api_keys where principal_id = 'admin'").fetchone() == (1,)


def test_a_read_only_key_reads_everything_its_principal_reads_and_writes_nothing(client, db_url):
    assert ingest(client, {"runbooks/storage.md": RUNBOOK}, repo_id="platform").status_code == 201
    pinned = client.post("/contexts/retrieve", json=QUERY).json()["fragments"][0]["id"]
    _, headers = make_key(db_url, read_only=True)
    found = client.post("/contexts/retrieve", json=QUERY, headers=headers)
    assert found.status_code == 200 and found.json()["fragments"]
    assert client.get(f"/fragments/{pinned}", headers=headers).status_code == 200
    assert client.get("/whoami", headers=headers).json()["org_wide"] is True
    denied = [
        client.post(
            "/documents",
            headers=headers,
            json={"scope": {"org_id": "acme", "repo_id": "platform"}, "documents": [{"path": "n.md", "content": "x"}]},
        ),
        client.post("/sessions", headers=headers, json={"scope": {"org_id": "acme"}, "task": "rotate the journal"}),
        client.post(
            "/pins",
            headers=headers,
            json={"scope": {"org_id": "acme", "repo_id": "platform"}, "fragment_id": pinned, "reason": "x"},
        ),
        client.post("/contexts", headers=headers, json={"scope": {"org_id": "acme"}, "name": "bundle"}),
    ]
    for response in denied:
        problem(response, 403)
    with psycopg.connect(db_url) as conn:
        assert conn.execute("select count(*) from data.documents").fetchone() == (1,)
        assert conn.execute("select count(*) from data.sessions").fetchone() == (0,)
        assert conn.execute("select count(*) from data.pins").fetchone() == (0,)
        assert conn.execute("select count(*) from data.contexts").fetchone() == (0,)
    # The same principal's unrestricted key still writes.
    assert client.post("/sessions", json={"scope": {"org_id": "acme"}, "task": "rotate the journal"}).status_code == 200


def test_a_repo_key_reads_and_writes_only_its_repos_within_its_principals_grants(client, db_url):
    for repo in ("platform", "secret"):
        body = RUNBOOK.replace("Storage", f"Storage of {repo}")
        assert ingest(client, {f"{repo}/storage.md": body}, repo_id=repo).status_code == 201
    assert ingest(client, {"policy.md": "# Policy\n\nThe storage volume policy: rotate weekly.\n"}).status_code == 201
    _, headers = make_key(db_url, repos=["platform"])
    whoami = client.get("/whoami", headers=headers).json()
    assert (whoami["org_wide"], whoami["repos"], whoami["audit"]) == (False, ["platform"], False)
    found = client.post("/contexts/retrieve", json=QUERY, headers=headers).json()["fragments"]
    assert {f["source"].split("#")[0] for f in found} == {"platform/storage.md", "policy.md"}
    problem(
        client.post(
            "/contexts/retrieve", headers=headers, json=QUERY | {"scope": {"org_id": "acme", "repo_id": "secret"}}
        ),
        403,
    )
    secret_ids = [
        f["id"] for f in client.post("/contexts/retrieve", json=QUERY).json()["fragments"] if "secret" in f["source"]
    ]
    assert secret_ids
    for fragment_id in secret_ids:
        problem(client.get(f"/fragments/{fragment_id}", headers=headers), 404)

    def write(scope: dict) -> int:
        document = {"path": "new.md", "content": "# New\n\nA note.\n"}
        return client.post("/documents", headers=headers, json={"scope": scope, "documents": [document]}).status_code

    assert write({"org_id": "acme", "repo_id": "platform"}) == 201  # the principal writes the org: so may the key here
    assert write({"org_id": "acme", "repo_id": "secret"}) == 403
    assert write({"org_id": "acme"}) == 403  # org-wide knowledge is no repo of the key
    # Within the principal's grants: a key of a principal reading one repo gets no more.
    with psycopg.connect(db_url) as conn:
        conn.execute("select service.create_principal('acme', 'reader')")
        conn.execute("select service.grant_scope('acme', 'reader', 'repo', 'platform')")
    _, narrow = make_key(db_url, "reader", repos=["platform", "secret"])
    assert client.get("/whoami", headers=narrow).json()["repos"] == ["platform"]
    problem(
        client.post(
            "/contexts/retrieve", headers=narrow, json=QUERY | {"scope": {"org_id": "acme", "repo_id": "secret"}}
        ),
        403,
    )
    problem(
        client.post(
            "/documents",
            headers=narrow,
            json={"scope": {"org_id": "acme", "repo_id": "platform"}, "documents": [{"path": "x.md", "content": "x"}]},
        ),
        403,
    )


def cli(db_url: str, *args: str):
    return CliRunner().invoke(main, ["--db-url", db_url, *args], env={"COLUMNS": "240"})


def test_key_create_expires_and_restricts_and_key_list_shows_it(db_url):
    assert cli(db_url, "org", "create", "acme").exit_code == 0
    assert cli(db_url, "grant", "add", "acme", "admin", "--repo", "platform", "--new").exit_code == 0
    made = cli(db_url, "key", "create", "acme", "admin", "--expires", "30d", "--read-only", "--repo", "platform")
    assert made.exit_code == 0, made.output
    assert "read-only; repos platform; expires" in made.output
    token = made.output.strip().splitlines()[-1]
    key_id = token.split("_")[1]
    dated = cli(db_url, "key", "create", "acme", "admin", "--expires", "2999-12-31", "--label", "ci")
    assert dated.exit_code == 0, dated.output
    with psycopg.connect(db_url) as conn:
        rows = conn.execute(
            "select key_id, expires_at - created_at, read_only, repos, expires_at from data.api_keys "
            "order by created_at"
        ).fetchall()
    assert rows[0][0] == key_id and abs(rows[0][1].total_seconds() - 30 * 86400) < 60
    assert rows[0][2:4] == (True, ["platform"])
    assert rows[1][2:] == (False, None, datetime.datetime(2999, 12, 31, tzinfo=datetime.UTC))
    listed = cli(db_url, "key", "list", "acme")
    assert listed.exit_code == 0
    lines = _rows(listed.output)
    assert "read-only; repos platform" in lines[key_id] and "live" in lines[key_id]
    assert "2999-12-31" in lines[rows[1][0]] and "read/write " in lines[rows[1][0]]
    expire(db_url, key_id)
    assert _rows(cli(db_url, "key", "list", "acme").output)[key_id].rstrip(" │").endswith("expired")
    for bad, message in (
        ("yesterday", "give a duration"),
        ("0d", "longer"),
        ("2001-01-01", "past"),
        ("2020-01-01T00:00:00+00:00", "past"),
    ):
        refused = cli(db_url, "key", "create", "acme", "admin", "--expires", bad)
        assert refused.exit_code != 0 and message in refused.output, (bad, refused.output)
    unknown = cli(db_url, "key", "create", "acme", "admin", "--repo", "nosuch")
    assert unknown.exit_code != 0 and "unknown repo nosuch" in unknown.output and "Traceback" not in unknown.output
    with psycopg.connect(db_url) as conn:
        assert conn.execute("select count(*) from data.api_keys").fetchone() == (2,)


def _rows(table: str) -> dict[str, str]:
    return {line.split("│")[1].strip(): line for line in table.splitlines() if line.count("│") > 5}


def test_parse_expiry_reads_durations_dates_and_times():
    from app.cli.admin import parse_expiry

    now = datetime.datetime(2030, 1, 1, 12, tzinfo=datetime.UTC)
    assert parse_expiry("30d", now) == now + datetime.timedelta(days=30)
    assert parse_expiry("12h", now) == now + datetime.timedelta(hours=12)
    assert parse_expiry("90m", now) == now + datetime.timedelta(minutes=90)
    assert parse_expiry("2w", now) == now + datetime.timedelta(weeks=2)
    assert parse_expiry("2030-02-01", now) == datetime.datetime(2030, 2, 1, tzinfo=datetime.UTC)
    assert parse_expiry("2030-01-01T18:00:00+02:00", now).astimezone(datetime.UTC).hour == 16
    assert parse_expiry("2030-01-01T18:00", now) == datetime.datetime(2030, 1, 1, 18, tzinfo=datetime.UTC)
    assert parse_expiry(" 1D ", now) == now + datetime.timedelta(days=1)  # case and spaces


@pytest.mark.parametrize("raw", ["99999999999d", "999999w", "9999-12-31", "4000000d"])
def test_an_expiry_past_what_readers_decode_is_refused_in_words(raw):
    """A duration of many digits read as "give a duration"; one that overflowed was a
    traceback; a date past 9999-12-30 cannot be read back by every client."""
    from app.cli.admin import parse_expiry
    from app.cli.common import CliError

    with pytest.raises(CliError) as refused:
        parse_expiry(raw, datetime.datetime(2030, 1, 1, 12, tzinfo=datetime.UTC))
    assert "every reader can decode" in refused.value.message
