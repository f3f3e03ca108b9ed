"""The SQL door: `contexts db serve` opens an embedded server of its own (under a fresh
CONTEXTS_HOME, as a user would run it) over TCP, with TLS. Every login proves its
password with SCRAM-SHA-256, nothing is trusted over TCP, no client gets in without TLS,
and an analyst made by `contexts analyst create` connects with the URL it printed and
reads exactly what its grants allow."""

from __future__ import annotations

import hashlib
import os
import queue
import shutil
import signal
import socket
import ssl
import struct
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict

from tests.conftest import private_folder

pytestmark = pytest.mark.db  # starts PostgreSQL servers of its own: not the unit tier

ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 180
"""initdb, start and migrate on two shared cores."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class Door:
    home: Path
    port: int
    env: dict[str, str]
    announced: str
    said: list[str]
    """What `contexts db serve` printed on stderr (its lines so far)."""

    def cli(self, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        """`contexts ...` as a user runs it: a process of its own, joining the server."""
        return subprocess.run(
            [sys.executable, "-m", "app.cli", *args],
            cwd=ROOT,
            env={**self.env, **(env or {})},
            capture_output=True,
            text=True,
            timeout=120,
        )

    def superuser(self) -> psycopg.Connection:
        """The migrator, over the server's Unix socket (the one trusted entry)."""
        return psycopg.connect(f"postgresql://postgres@/contexts?host={self.home / 'pgdata'}&port={self.port}")

    def tcp(self, user: str, password: str | None = None) -> psycopg.Connection:
        return psycopg.connect(
            host="127.0.0.1", port=self.port, dbname="contexts", user=user, password=password, connect_timeout=10
        )


def _read_lines(stream, lines: queue.Queue) -> None:
    for line in stream:
        lines.put(line)
    lines.put(None)


@pytest.fixture(scope="module")
def door():
    home = private_folder("contexts-test-door-")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CONTEXTS_", "PG"))}
    env.update(CONTEXTS_HOME=str(home), CONTEXTS_DB_PORT=str(port))
    server = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "db", "serve"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue = queue.Queue()
    said: list[str] = []
    threading.Thread(target=_read_lines, args=(server.stdout, lines), daemon=True).start()
    threading.Thread(target=lambda: said.extend(server.stderr or ()), daemon=True).start()
    try:
        try:
            announced = lines.get(timeout=START_TIMEOUT_S)
        except queue.Empty:
            announced = None
        if not announced:
            server.kill()
            pytest.fail(f"contexts db serve did not start:\n{''.join(said)}")
        yield Door(home, port, env, announced.strip(), said)
    finally:
        # SIGTERM, not SIGINT: a process started where SIGINT is ignored (a pytest-xdist
        # worker, a background job of a script) inherits that, and would wait out the 60 s.
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(60)
        except subprocess.TimeoutExpired:
            server.kill()
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture(scope="module")
def tenants(door: Door):
    """acme: an org-wide document, one in repo platform, one in repo secret; globex: one
    in its own repo platform. Written as each org's administrator."""
    from app.access import ensure_admin_principal

    documents = {
        "acme": [(None, "policy.md"), ("platform", "platform/journal.md"), ("secret", "secret/keys.md")],
        "globex": [("platform", "globex/journal.md")],
    }
    with door.superuser() as conn:
        for org, docs in documents.items():
            conn.execute("select service.create_org(%s)", (org,))
            ensure_admin_principal(conn, org, "admin")
            conn.execute("select service.bind_principal(%s, 'admin')", (org,))
            for repo, path in docs:
                text = f"# {path}\n\nThe journal of {org}.\n"
                conn.execute(
                    "select service.begin_document(%s, %s, null, null, %s, 'runbook', %s, %s)",
                    (org, repo, path, text, hashlib.sha256(text.encode()).hexdigest()),
                )
            conn.commit()
    return documents


def create_analyst(door: Door, org: str, name: str, *grants: str) -> tuple[str, str]:
    """`contexts analyst create`: (the URL it printed, the password it printed)."""
    done = door.cli("analyst", "create", org, name, *(a for g in grants for a in ("--grant", g)))
    assert done.returncode == 0, done.stderr
    url = done.stdout.strip().splitlines()[-1]
    password = conninfo_to_dict(url)["password"]
    assert f"shown this once (store it now): {password}" in done.stderr
    return url, str(password)


def test_the_door_listens_on_tcp_and_announces_itself(door):
    assert door.announced == f"postgresql://127.0.0.1:{door.port}/contexts?sslmode=require"
    with socket.create_connection(("127.0.0.1", door.port), timeout=5):
        pass


def test_an_analyst_connects_with_the_printed_url_and_reads_exactly_its_grants(door, tenants):
    url, password = create_analyst(door, "acme", "alice", "repo:platform")
    assert url == f"postgresql://alice:{password}@127.0.0.1:{door.port}/contexts?sslmode=require"
    assert len(password) >= 32
    with psycopg.connect(url) as alice:
        # Over TCP, authenticated by SCRAM, as herself.
        assert alice.execute("select system_user, current_user").fetchone() == ("scram-sha-256:alice", "alice")
        assert alice.execute("select org_id, principal_id, org_wide, repos from api.whoami()").fetchone() == (
            "acme",
            "alice",
            False,
            ["platform"],
        )
        paths = {r[0] for r in alice.execute("select path from data.documents")}
        assert paths == {"policy.md", "platform/journal.md"}
        assert alice.execute("select array_agg(org_id) from data.orgs").fetchone() == (["acme"],)
        assert alice.execute("select array_agg(principal_id) from data.principals").fetchone() == (["alice"],)
        assert alice.execute("select count(*) from api.retrieval_traces").fetchone() == (0,)
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            alice.execute("select * from data.retrieval_traces")
        alice.rollback()
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            alice.execute("select * from api.search_lexical('globex', 'journal', 10)")
        alice.rollback()
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            alice.execute("select service.bind_principal('globex', 'admin')")
        alice.rollback()
        with pytest.raises(psycopg.errors.InsufficientPrivilege):  # nor bind a key's principal, nor try keys
            alice.execute("select service.authenticate('ctx_000000000000_guess')")
    # The login holds exactly an analyst's rights: LOGIN, one group, nothing else.
    with door.superuser() as conn:
        role = conn.execute(
            """select rolsuper, rolcreaterole, rolcreatedb, rolreplication, rolbypassrls, rolcanlogin,
                      array(select g.rolname::text from pg_auth_members m join pg_roles g on g.oid = m.roleid
                            where m.member = r.oid)
               from pg_roles r where rolname = 'alice'"""
        ).fetchone()
        assert role == (False, False, False, False, False, True, ["contexts_analyst"])
        stored = conn.execute("select rolpassword from pg_authid where rolname = 'alice'").fetchone()[0]
        assert stored.startswith("SCRAM-SHA-256$") and password not in stored


def test_a_wrong_password_is_refused(door, tenants):
    create_analyst(door, "acme", "amy", "org")
    for password in ("wrong", "", None):
        with pytest.raises(psycopg.OperationalError, match="password authentication failed|no password supplied"):
            door.tcp("amy", password)


def test_nobody_is_trusted_over_tcp(door, tenants):
    with door.superuser() as conn:
        rules = conn.execute("select type, database, user_name, auth_method from pg_hba_file_rules").fetchall()
        assert conn.execute("show password_encryption").fetchone() == ("scram-sha-256",)
        assert conn.execute("show unix_socket_permissions").fetchone() == ("0700",)
        roles = [r[0] for r in conn.execute("select rolname from pg_roles where rolname !~ '^pg_' order by 1")]
    trusted = [r for r in rules if r[3] not in ("scram-sha-256", "reject")]
    assert trusted == [("local", ["all"], ["postgres"], "trust")]
    assert any(r[0] == "host" for r in rules)
    assert "contexts_analyst" in roles and "postgres" in roles
    for role in roles:  # the group roles, every analyst: none gets in without its password
        refused = "only over the server's Unix socket" if role == "postgres" else "password authentication failed"
        with pytest.raises(psycopg.OperationalError, match=f"{refused}|no password supplied"):
            door.tcp(role)
        with pytest.raises(psycopg.OperationalError, match=refused):
            door.tcp(role, "postgres")


def test_analysts_reach_no_other_database_and_make_no_temporary_table(door, tenants):
    """An analyst's login opens Contexts' database only: `\\c postgres` or `template1` is
    refused (pg_hba.conf rejects it, and CONNECT is no longer PUBLIC's there), and it may
    not create temporary tables in Contexts' database either (TEMP is no longer PUBLIC's)."""
    _, password = create_analyst(door, "acme", "tess", "org")
    for database in ("postgres", "template1", "template0"):
        with pytest.raises(psycopg.OperationalError, match="rejects connection|not currently accepting"):
            psycopg.connect(
                host="127.0.0.1", port=door.port, dbname=database, user="tess", password=password, connect_timeout=10
            )
        with pytest.raises(psycopg.OperationalError, match="rejects connection|not currently accepting"):
            socket_url = f"postgresql://tess@/{database}?host={door.home / 'pgdata'}&port={door.port}"
            psycopg.connect(socket_url, password=password)
    with door.tcp("tess", password) as tess:
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            tess.execute("create temporary table scratch (x int)")
    with door.superuser() as conn:
        rows = conn.execute(
            """select d.datname, has_database_privilege('tess', d.datname, 'connect'),
                      has_database_privilege('tess', d.datname, 'temporary')
               from pg_database d where d.datname in ('contexts', 'postgres', 'template1') order by 1"""
        ).fetchall()
        assert rows == [("contexts", True, False), ("postgres", False, False), ("template1", False, False)]


def test_analysts_need_their_password_on_the_socket_too(door, tenants):
    _, password = create_analyst(door, "acme", "ann", "org")
    socket_url = f"postgresql://ann@/contexts?host={door.home / 'pgdata'}&port={door.port}"
    with pytest.raises(psycopg.OperationalError, match="no password supplied|password authentication failed"):
        psycopg.connect(socket_url)
    with psycopg.connect(socket_url, password=password) as ann:
        assert ann.execute("select principal_id from api.whoami()").fetchone() == ("ann",)


def test_contexts_psql_as_an_analyst_asks_for_her_password(door, tenants):
    _, password = create_analyst(door, "acme", "pia", "org")
    args = ("psql", "--as", "pia", "-X", "-At", "-c", "select current_user, org_id from api.whoami()")
    done = door.cli(*args, env={"PGPASSWORD": password})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "pia|acme"
    refused = door.cli(*args, env={"PGPASSWORD": "not-hers"})
    assert refused.returncode != 0 and "password authentication failed" in refused.stderr
    dba = door.cli("psql", "-X", "-At", "-c", "select current_user, count(*) from data.orgs")
    assert dba.returncode == 0, dba.stderr
    assert dba.stdout.strip() == "postgres|2"


def test_rotating_a_password_and_revoking_a_login(door, tenants):
    old_url, _ = create_analyst(door, "acme", "rob", "repo:platform", "audit")
    rotated = door.cli("analyst", "password", "acme", "rob")
    assert rotated.returncode == 0, rotated.stderr
    new_url = rotated.stdout.strip().splitlines()[-1]
    assert new_url != old_url
    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        psycopg.connect(old_url)
    with psycopg.connect(new_url, autocommit=True) as rob:
        assert rob.execute("select principal_id from api.whoami()").fetchone() == ("rob",)
        listed = door.cli("analyst", "list", "acme")
        assert listed.returncode == 0 and "rob" in listed.stdout

        revoked = door.cli("analyst", "revoke", "acme", "rob")
        assert revoked.returncode == 0, revoked.stderr
        assert "may no longer connect" in revoked.stderr
        with pytest.raises(psycopg.OperationalError):  # its open session was ended
            rob.execute("select 1")
    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        psycopg.connect(new_url)
    with door.superuser() as conn:
        # The history stays: the principal (disabled), its grants, the role (NOLOGIN).
        assert conn.execute(
            "select disabled_at is not null from data.principals where org_id = 'acme' and principal_id = 'rob'"
        ).fetchone() == (True,)
        assert conn.execute(
            "select count(*) from data.grants where org_id = 'acme' and principal_id = 'rob'"
        ).fetchone() == (2,)
        assert conn.execute("select rolcanlogin from pg_roles where rolname = 'rob'").fetchone() == (False,)
    again = door.cli("analyst", "password", "acme", "rob")
    assert again.returncode != 0 and "revoked" in again.stderr and "Traceback" not in again.stderr


def test_principal_create_makes_the_missing_login(door, tenants):
    done = door.cli("principal", "create", "acme", "carol", "--kind", "human", "--db-role", "carol")
    assert done.returncode == 0, done.stderr
    url = done.stdout.strip().splitlines()[-1]
    assert url.startswith("postgresql://carol:") and url.endswith(f"@127.0.0.1:{door.port}/contexts?sslmode=require")
    assert door.cli("grant", "add", "acme", "carol", "--repo", "secret").returncode == 0
    with psycopg.connect(url) as carol:
        assert {r[0] for r in carol.execute("select path from data.documents")} == {"policy.md", "secret/keys.md"}
    # Mapping an existing login leaves its password alone and prints none.
    again = door.cli("principal", "create", "acme", "carol", "--db-role", "carol")
    assert again.returncode == 0 and again.stdout == ""
    with psycopg.connect(url):
        pass


def test_a_second_door_on_a_busy_port_is_refused(door):
    other = tempfile.mkdtemp(prefix="contexts-door-2-")
    try:
        done = door.cli("db", "serve", "--port", str(door.port), env={"CONTEXTS_HOME": other})
        assert done.returncode != 0
        assert f"port {door.port} on 127.0.0.1 is in use by another program" in done.stderr
        assert "Traceback" not in done.stderr
        assert not (Path(other) / "pgdata").exists()  # refused before starting anything
    finally:
        shutil.rmtree(other, ignore_errors=True)


def test_db_serve_leaves_an_external_database_to_its_dba(db_url):
    from click.testing import CliRunner

    from app.cli import main

    done = CliRunner().invoke(main, ["--db-url", db_url, "db", "serve"])
    assert done.exit_code != 0
    assert "opens the embedded server" in done.stderr and "Traceback" not in done.output


# TLS: the door speaks it itself (app/cli/db_relay.py), with a certificate made on first
# start under CONTEXTS_HOME/tls, and refuses clients that do not ask for it.

SSL_REQUEST = struct.pack("!II", 8, 80877103)


def tls_handshake(port: int, context: ssl.SSLContext) -> str | None:
    """SSLRequest, then a TLS handshake with `context`: the protocol agreed on."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        raw.sendall(SSL_REQUEST)
        assert raw.recv(1) == b"S"
        with context.wrap_socket(raw) as wrapped:
            return wrapped.version()


def test_an_analyst_connects_over_tls_and_verifies_the_printed_certificate(door, tenants, tmp_path):
    url, _ = create_analyst(door, "acme", "tina", "org")
    cert = door.home / "tls" / "server.crt"
    printed = "".join(door.said)
    assert f"sslmode=verify-ca sslrootcert={cert}" in printed
    digest = hashlib.sha256(ssl.PEM_cert_to_DER_cert(cert.read_text())).hexdigest().upper()
    assert ":".join(digest[i : i + 2] for i in range(0, 64, 2)) in printed
    assert oct((door.home / "tls" / "server.key").stat().st_mode & 0o777) == "0o600"

    with psycopg.connect(url) as tina:  # sslmode=require, as printed
        assert tina.pgconn.ssl_in_use
        assert tina.execute("select current_user").fetchone() == ("tina",)
    for mode, host in (("verify-ca", "127.0.0.1"), ("verify-full", "localhost"), ("verify-full", "127.0.0.1")):
        with psycopg.connect(url, sslmode=mode, sslrootcert=str(cert), host=host) as tina:
            assert tina.pgconn.ssl_in_use
    from app.cli.db_relay import self_signed_certificate

    other = self_signed_certificate(tmp_path, "127.0.0.1")  # another door's certificate
    with pytest.raises(psycopg.OperationalError, match="certificate verify failed"):
        psycopg.connect(url, sslmode="verify-ca", sslrootcert=str(other.cert))


def test_the_door_speaks_tls_1_2_or_later_only(door):
    cert = door.home / "tls" / "server.crt"
    client = ssl.create_default_context(cafile=cert)
    client.check_hostname = False
    assert tls_handshake(door.port, client) in ("TLSv1.2", "TLSv1.3")
    old = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    old.load_verify_locations(cert)
    old.check_hostname = False
    old.set_ciphers("DEFAULT:@SECLEVEL=0")  # let this client offer TLS 1.1 at all
    old.minimum_version = ssl.TLSVersion.TLSv1
    old.maximum_version = ssl.TLSVersion.TLSv1_1
    with pytest.raises(ssl.SSLError):
        tls_handshake(door.port, old)


def test_a_client_without_tls_is_told_to_use_it(door, tenants):
    url, _ = create_analyst(door, "acme", "pat", "org")
    for extra in ({"sslmode": "disable"}, {"sslmode": "disable", "gssencmode": "prefer"}):
        with pytest.raises(
            psycopg.OperationalError, match="accepts TLS connections only: connect with sslmode=require"
        ):
            psycopg.connect(url, **extra)
    # A startup packet straight away, as a client that never heard of TLS sends it.
    with socket.create_connection(("127.0.0.1", door.port), timeout=10) as raw:
        params = b"user\0pat\0database\0contexts\0\0"
        raw.sendall(struct.pack("!II", 8 + len(params), 196608) + params)
        answer = raw.recv(4096)
    assert answer.startswith(b"E") and b"FATAL" in answer and b"TLS connections only" in answer


def test_the_superuser_and_replication_are_refused_over_tls_too(door):
    for extra in ({"user": "postgres"}, {"user": "postgres", "password": "postgres"}):
        with pytest.raises(psycopg.OperationalError, match="only over the server's Unix socket, never over TCP"):
            psycopg.connect(host="127.0.0.1", port=door.port, dbname="contexts", sslmode="require", **extra)
    with pytest.raises(psycopg.OperationalError, match="replication connections are not relayed"):
        psycopg.connect(
            host="127.0.0.1", port=door.port, dbname="contexts", user="tina", sslmode="require", replication="database"
        )
    # The service's own login reaches the server over its Unix socket only.
    with pytest.raises(psycopg.OperationalError, match="the service's own login"):
        psycopg.connect(host="127.0.0.1", port=door.port, dbname="contexts", user="contexts_api", sslmode="require")


def test_an_analyst_takes_no_advisory_lock_and_makes_no_large_object(door, tenants):
    """Every org's writes wait on an advisory lock whose key anyone can compute: an
    analyst holding it would stop another org's writes. Nor may it fill the disk with
    large objects. Both are the migrator's (and its functions') alone."""
    url, _ = create_analyst(door, "acme", "lockie", "org")
    with psycopg.connect(url, autocommit=True) as analyst:
        for statement in (
            "select pg_advisory_lock(hashtextextended('contexts.ingest:globex', 0))",
            "select pg_try_advisory_lock(hashtext('contexts.usage_fold'))",
            "select pg_advisory_xact_lock(1)",
            "select pg_try_advisory_xact_lock_shared(1, 2)",
            "select lo_create(0)",
            "select lo_from_bytea(0, 'x'::bytea)",
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                analyst.execute(statement)


def test_a_query_is_cancelled_over_tls(door, tenants):
    url, _ = create_analyst(door, "acme", "cid", "org")
    with psycopg.connect(url) as cid:
        threading.Timer(1, cid.cancel_safe).start()
        with pytest.raises(psycopg.errors.QueryCanceled):
            cid.execute("select pg_sleep(30)")


def test_the_self_signed_certificate_is_made_once_and_kept(tmp_path):
    from app.cli.db_relay import self_signed_certificate, server_context

    made = self_signed_certificate(tmp_path, "10.1.2.3")
    assert oct((tmp_path / "tls").stat().st_mode & 0o777) == "0o700"
    assert oct(made.key.stat().st_mode & 0o777) == "0o600"
    again = self_signed_certificate(tmp_path, "10.1.2.3")
    assert again.fingerprint == made.fingerprint and again.cert.read_bytes() == made.cert.read_bytes()
    context = server_context(made)
    assert context.minimum_version == ssl.TLSVersion.TLSv1_2
