"""Failed authentication is throttled (app/api/throttle.py): per client address (before any
key is looked up) and per key id (for wrong secrets only), 429 with Retry-After once the
window is full, on the HTTP API and the MCP door alike; successful requests count nothing
and a key's holder keeps working."""

from __future__ import annotations

import secrets

import pytest
from prometheus_client.exposition import generate_latest

from app.settings import Settings
from tests.api.test_api import problem
from tests.conftest import serving

QUERY = {"query": "what to do when the storage volume is full", "scope": {"org_id": "acme"}}
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}
MCP_LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}


def bogus() -> dict[str, str]:
    """A token of the right shape for a key id nobody has."""
    return {"Authorization": f"Bearer ctx_{secrets.token_hex(6)}_{secrets.token_urlsafe(32)}"}


class Clock:
    """The wall clock of the limiter's windows, stopped: Litestar's windows are fixed
    ones that start at whole seconds, so a real clock crossing a boundary between two
    requests of a test would empty the window under it."""

    def __init__(self) -> None:
        self.now = 1_800_000_000.25

    def __call__(self) -> float:
        return self.now


@pytest.fixture(autouse=True)
def clock(monkeypatch) -> Clock:
    stopped = Clock()
    monkeypatch.setattr("litestar.middleware.rate_limit.time", stopped)
    monkeypatch.setattr("app.api.throttle.wall_time", stopped)
    return stopped


@pytest.fixture
def throttled(settings, models, db_url, logins, request):
    limits = {"auth_failures_per_client": 5, "auth_failures_per_key": 0} | getattr(request, "param", {})
    with serving(settings, db_url, logins, **limits) as (client, token):
        client.headers["Authorization"] = f"Bearer {token}"
        yield client


def test_a_client_that_fails_too_often_gets_429_before_any_key_is_checked(throttled, monkeypatch):
    client = throttled
    services = client.app.state.services
    assert client.post("/contexts/retrieve", json=QUERY).status_code == 200  # the admin's key authenticated
    checked: list[str] = []
    original = services.auth.authenticate
    monkeypatch.setattr(services.auth, "authenticate", lambda t: checked.append(t) or original(t))
    for _ in range(5):
        problem(client.post("/contexts/retrieve", json=QUERY, headers=bogus()), 401)
    assert len(checked) == 5
    refused = [
        client.post("/contexts/retrieve", json=QUERY, headers=bogus()),
        client.get("/fragments/1", headers={"Authorization": ""}),
        client.get("/whoami", headers={"Authorization": "Basic YWRtaW46YWRtaW4="}),
        client.post("/mcp", json=MCP_LIST, headers=bogus() | MCP_HEADERS),
    ]
    for response in refused:
        body = problem(response, 429)
        assert "too many failed authentications" in body["detail"]
        assert 1 <= int(response.headers["retry-after"]) <= 60
    assert len(checked) == 5, "a refused request had its key looked up"
    # Successful requests are unaffected: the key that authenticated, and what needs no key.
    assert client.post("/contexts/retrieve", json=QUERY).status_code == 200
    assert client.post("/mcp", json=MCP_LIST, headers=MCP_HEADERS).status_code == 200
    assert client.get("/health").status_code == 200
    assert client.get("/schema/openapi.json").status_code == 200
    metrics = generate_latest(client.app.state.metrics.registry).decode()
    assert 'contexts_http_requests_total{method="POST",route="/contexts/retrieve",status="429"} 1.0' in metrics


def test_the_mcp_door_counts_failures_too(throttled):
    client = throttled
    for _ in range(5):
        problem(client.post("/mcp", json=MCP_LIST, headers=bogus() | MCP_HEADERS), 401)
    problem(client.post("/contexts/retrieve", json=QUERY, headers=bogus()), 429)
    problem(client.post("/mcp", json=MCP_LIST, headers=bogus() | MCP_HEADERS), 429)


@pytest.mark.parametrize("throttled", [{"auth_failures_per_client": 0, "auth_failures_per_key": 3}], indirect=True)
def test_failures_naming_one_key_id_lock_that_id_only(throttled, db_url):
    client = throttled
    key_id = secrets.token_hex(6)
    guess = lambda: {"Authorization": f"Bearer ctx_{key_id}_{secrets.token_urlsafe(32)}"}  # noqa: E731
    for _ in range(3):
        problem(client.get("/whoami", headers=guess()), 401)
    body = problem(client.get("/whoami", headers=guess()), 429)
    assert "key" in body["detail"]
    for _ in range(5):  # other key ids, from the same client (not limited here): still checked
        problem(client.get("/whoami", headers=bogus()), 401)
    assert client.get("/whoami").status_code == 200


@pytest.mark.parametrize("throttled", [{"auth_failures_per_client": 0, "auth_failures_per_key": 3}], indirect=True)
def test_guesses_at_a_key_id_never_lock_out_its_holder(throttled, db_url):
    """A key id is no secret (it opens the token; `contexts key list` shows it): wrong
    secrets for it get 429 once its window is full, and the right one still passes, even
    for a key never used before (nothing of it is trusted yet)."""
    import psycopg

    from app.access import create_api_key

    client = throttled
    with psycopg.connect(db_url) as conn:
        key = create_api_key(conn, "acme", "admin")
    guess = lambda: {"Authorization": f"Bearer ctx_{key.key_id}_{secrets.token_urlsafe(32)}"}  # noqa: E731
    for _ in range(3):
        problem(client.get("/whoami", headers=guess()), 401)
    problem(client.get("/whoami", headers=guess()), 429)
    assert client.get("/whoami", headers={"Authorization": f"Bearer {key.token}"}).status_code == 200
    assert "key" in problem(client.get("/whoami", headers=guess()), 429)["detail"]


@pytest.mark.parametrize("throttled", [{"auth_failures_per_client": 2}], indirect=True)
def test_successes_count_nothing(throttled):
    client = throttled
    for _ in range(10):
        assert client.get("/whoami").status_code == 200
    problem(client.get("/whoami", headers=bogus()), 401)
    problem(client.get("/whoami", headers=bogus()), 401)
    problem(client.get("/whoami", headers=bogus()), 429)
    assert client.get("/whoami").status_code == 200


@pytest.mark.parametrize("throttled", [{"auth_failures_per_client": 2}], indirect=True)
def test_the_lock_out_ends_with_its_window(throttled, clock):
    client = throttled
    problem(client.get("/whoami", headers=bogus()), 401)
    problem(client.get("/whoami", headers=bogus()), 401)
    refused = client.get("/whoami", headers=bogus())
    problem(refused, 429)
    assert refused.headers["retry-after"] == "60"
    clock.now += 59
    refused = client.get("/whoami", headers=bogus())
    problem(refused, 429)
    assert refused.headers["retry-after"] == "1"
    clock.now += 1  # the minute's window has ended
    problem(client.get("/whoami", headers=bogus()), 401)
    problem(client.get("/whoami", headers=bogus()), 401)
    problem(client.get("/whoami", headers=bogus()), 429)


def test_a_revoked_key_loses_its_exemption(throttled, db_url):
    import psycopg

    from app.access import create_api_key

    client = throttled
    with psycopg.connect(db_url) as conn:
        key = create_api_key(conn, "acme", "admin")
    headers = {"Authorization": f"Bearer {key.token}"}
    assert client.get("/whoami", headers=headers).status_code == 200
    with psycopg.connect(db_url) as conn:
        conn.execute("select service.revoke_api_key(%s)", (key.key_id,))
    for _ in range(5):
        problem(client.get("/whoami", headers=headers), 401)
    problem(client.get("/whoami", headers=headers), 429)


def test_limits_are_settings():
    settings = Settings.from_env(
        {
            "CONTEXTS_AUTH_FAILURES_PER_CLIENT": "7",
            "CONTEXTS_AUTH_FAILURES_PER_KEY": "0",
            "CONTEXTS_AUTH_FAILURE_WINDOW": "hour",
        }
    )
    assert (settings.auth_failures_per_client, settings.auth_failures_per_key, settings.auth_failure_window) == (
        7,
        0,
        "hour",
    )
    with pytest.raises(ValueError, match="second, minute, hour or day"):
        Settings.from_env({"CONTEXTS_AUTH_FAILURE_WINDOW": "week"})
    with pytest.raises(ValueError, match="at least 0"):
        Settings.from_env({"CONTEXTS_AUTH_FAILURES_PER_CLIENT": "-1"})


def test_a_refused_request_is_logged_with_the_status_it_was_answered(throttled, caplog, monkeypatch):
    """The 429 is answered by Litestar's handler outside the request log's middleware: the
    log said 500 for it. A client that left before its body was read is a 499, not a 500."""
    import json
    import logging

    from litestar.exceptions import InternalServerException

    from app.api.errors import http_failure, logged_status
    from app.api.request_log import JsonFormatter

    client = throttled
    for _ in range(5):
        problem(client.post("/contexts/retrieve", json=QUERY, headers=bogus()), 401)
    monkeypatch.setattr(logging.getLogger("contexts.request"), "propagate", True)
    with caplog.at_level(logging.INFO, logger="contexts.request"):
        caplog.clear()
        problem(client.get("/whoami", headers=bogus()), 429)
    (entry,) = [json.loads(JsonFormatter().format(r)) for r in caplog.records if r.name == "contexts.request"]
    assert (entry["path"], entry["status"]) == ("/whoami", 429), entry
    gone = InternalServerException("client disconnected prematurely")
    assert logged_status(gone) == 499 and http_failure(gone).status == 499
    assert logged_status(InternalServerException("boom")) == 500 and logged_status(RuntimeError()) == 500
