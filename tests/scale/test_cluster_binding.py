"""The principal binding every node verifies (docs/scale.md, "Tenants on Citus"): a
setting signed with data.binding_keys over the transaction's identity, set with a
SET LOCAL statement (which Citus propagates to the workers), and checked by
data.current_principal wherever row-level security is evaluated. Citus cannot be
installed here: these run on one plain PostgreSQL server, as the service's login (row-level
security applies), and show what a worker relies on: a valid binding binds, a forged,
tampered or replayed one binds nobody and reads no row."""

from __future__ import annotations

import psycopg
import pytest

from app.access import create_api_key
from tests.conftest import login_url

TEXT = "# Journal\n\nRotate the write-ahead journal before the volume fills up.\n"


@pytest.fixture
def keys(conn, ingest):
    """Two orgs with a document each; an admin key for acme, a repo-restricted one too."""
    ingest("acme", {"journal.md": TEXT})
    ingest("acme", {"platform.md": TEXT}, repo="platform")
    ingest("globex", {"journal.md": TEXT})
    admin = create_api_key(conn, "acme", "admin")
    narrow = create_api_key(conn, "acme", "admin", repos=["platform"])
    conn.commit()
    return admin.token, narrow.token


@pytest.fixture
def service(db_url, logins):
    with psycopg.connect(login_url(db_url, logins["service"])) as connection:
        yield connection


def bound(conn: psycopg.Connection) -> tuple[str | None, int]:
    """Who the transaction acts for, and how many fragments it reads."""
    org = conn.execute("select org_id from api.whoami()").fetchone()[0]
    return org, conn.execute("select count(*) from data.fragments").fetchone()[0]


def binding(conn: psycopg.Connection) -> str:
    return conn.execute("select current_setting('contexts.binding')").fetchone()[0]


def hexed(text: str) -> str:
    return text.encode().hex()


def test_a_valid_signed_binding_binds_and_names_its_transaction(keys, service):
    token, _ = keys
    service.execute("select service.authenticate(%s)", (token,))
    value = binding(service)
    kind, signature, org, principal, key = value.split(".")
    assert (kind, org, principal) == ("signed", hexed("acme"), hexed("admin")) and len(signature) == 64
    assert bound(service) == ("acme", 2)
    # The same value set again with the statement Citus propagates (SET LOCAL) binds as well.
    service.execute("reset contexts.binding")
    assert bound(service) == (None, 0)
    service.execute(f"set local contexts.binding = '{value}'")
    assert bound(service) == ("acme", 2)
    assert service.execute("select fragment_id from api.search_lexical('acme', 'journal', 10)").fetchall()
    service.rollback()


def test_a_replayed_binding_binds_nobody_in_another_transaction_or_backend(keys, service, db_url, logins):
    token, _ = keys
    service.execute("select service.authenticate(%s)", (token,))
    value = binding(service)
    # Another backend, while the binding's own transaction is still open.
    with psycopg.connect(login_url(db_url, logins["service"])) as other:
        other.execute("select set_config('contexts.binding', %s, true)", (value,))
        assert bound(other) == (None, 0)
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="no principal is bound"):
            other.execute("select * from api.search_lexical('acme', 'journal')")
    service.commit()
    # The same backend, in its next transaction (a pooled connection's next request).
    service.execute("select set_config('contexts.binding', %s, true)", (value,))
    assert bound(service) == (None, 0)
    service.rollback()
    service.execute(f"set local contexts.binding = '{value}'")
    assert bound(service) == (None, 0)
    service.rollback()


def test_a_tampered_or_forged_binding_binds_nobody(keys, conn, service):
    token, narrow = keys
    conn.execute("select service.create_principal('acme', 'reader', 'agent')")
    conn.commit()
    service.execute("select service.authenticate(%s)", (narrow,))
    assert service.execute("select repos from api.whoami()").fetchone()[0] == ["platform"]
    value = binding(service)
    kind, signature, org, principal, key = value.split(".")
    forgeries = [
        ".".join((kind, signature, org, hexed("reader"), key)),  # another principal
        ".".join((kind, signature, hexed("globex"), principal, key)),  # another org
        ".".join((kind, signature, org, principal, "")),  # the key's restriction stripped
        ".".join((kind, "0" * 64, org, principal, key)),  # a made-up signature
        ".".join(("standby", signature, org, principal, key)),  # the old standby form
        value.upper(),
        value + "00",
        "admin",
        "' or true --",
    ]
    for forged in forgeries:
        service.execute("select set_config('contexts.binding', %s, true)", (forged,))
        assert bound(service) == (None, 0), forged
    service.rollback()


def test_the_signature_follows_the_distributed_transaction_id_where_citus_provides_one(keys, conn, db_url, logins):
    """With Citus installed, data._transaction_identity reads get_current_transaction_id(),
    which the coordinator assigns to every worker backend running a shard query of its
    transaction. Citus itself cannot be installed here: a function of the same name and
    output columns (initiator_node_identifier, transaction_number, transaction_stamp) is
    created in this test's database, reading the ids a test sets, so that two backends can
    carry one distributed transaction id, as a coordinator and a worker do."""
    conn.execute(
        """
        create function pg_catalog.get_current_transaction_id(
            out database_id oid, out process_id int, out initiator_node_identifier int4,
            out transaction_number int8, out transaction_stamp timestamptz)
        language sql stable as $$
            select 0::oid, pg_backend_pid(), 1,
                   coalesce(nullif(current_setting('test.transaction_number', true), ''), '0')::int8,
                   '2026-12-04 12:00:00+00'::timestamptz
        $$
        """
    )
    conn.execute("grant execute on function pg_catalog.get_current_transaction_id() to public")
    conn.commit()
    token, _ = keys
    with (
        psycopg.connect(login_url(db_url, logins["service"])) as coordinator,
        psycopg.connect(login_url(db_url, logins["service"])) as worker,
    ):
        coordinator.execute("select set_config('test.transaction_number', '41', true)")
        coordinator.execute("select service.authenticate(%s)", (token,))
        value = binding(coordinator)
        # A worker backend (another pid, another start) of the same distributed transaction: bound.
        worker.execute("select set_config('test.transaction_number', '41', true)")
        worker.execute(f"set local contexts.binding = '{value}'")
        assert bound(worker) == ("acme", 2)
        worker.rollback()
        # Of another distributed transaction (the replay of a recorded setting): nobody.
        worker.execute("select set_config('test.transaction_number', '42', true)")
        worker.execute(f"set local contexts.binding = '{value}'")
        assert bound(worker) == (None, 0)
        worker.rollback()
        coordinator.rollback()
