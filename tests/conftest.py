"""Real PostgreSQL (embedded 18 + pgvector) for every test: the schema is migrated once
into a template database, and each test gets a fresh clone of it."""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import psycopg.sql
import pytest
from pytest_postgresql.janitor import DatabaseJanitor

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from app.db.embedded import EmbeddedPostgres  # noqa: E402
from app.db.migrate import migrate  # noqa: E402
from app.settings import Settings  # noqa: E402

TEMPLATE = "contexts_template"
ADMIN = "admin"
"""Principal the `ingest` fixture writes as (org read/write, like `contexts org create` makes)."""
_counter = itertools.count()


JANITOR_CONNECT_SECONDS = 5
"""How long creating or dropping a test database retries a refused connection."""


MEMORY_FOLDER = Path("/dev/shm")
"""A tmpfs on Linux. Servers of tests keep their data there when it has room: nothing in
them has to outlive the run, and a disk, even with fsync off, made cloning the template
take 0.15 to 0.35 s a test on this machine's disk against 0.015 s in memory (every test
that takes a database clones one), and every write of a test waited on it too."""
MEMORY_FOLDER_ROOM = 4 * 1024**3
STALE_AFTER_S = 3600


def private_folder(prefix: str) -> Path:
    """A new folder for a test's server outside pytest's base temp (a second pytest of
    the same OS user re-applies mode 0700 to that base temp, which would lock the
    server's own OS user out of its data directory: PANIC on pg_control), in memory when
    MEMORY_FOLDER has room (CONTEXTS_TEST_ON_DISK=1: on disk, as before)."""
    where = None
    if os.environ.get("CONTEXTS_TEST_ON_DISK") != "1" and os.access(MEMORY_FOLDER, os.W_OK):
        free = shutil.disk_usage(MEMORY_FOLDER).free
        if free >= MEMORY_FOLDER_ROOM:
            _sweep(MEMORY_FOLDER)
            where = str(MEMORY_FOLDER)
    return Path(tempfile.mkdtemp(prefix=prefix, dir=where))


def _sweep(folder: Path) -> None:
    """Folders an interrupted run left in memory: an hour old, with no server running."""
    from app.db.embedded import ServerUnavailable, running_postmaster

    now = time.time()
    for left in folder.glob("contexts-test-*"):
        try:
            if now - left.stat().st_mtime < STALE_AFTER_S:
                continue
            if any(running_postmaster(data.parent) for data in left.rglob("postmaster.pid")):
                continue
        except (OSError, ServerUnavailable):
            continue
        shutil.rmtree(left, ignore_errors=True)


@contextlib.contextmanager
def private_server() -> Iterator[EmbeddedPostgres]:
    """A server in a private folder (private_folder), removed afterwards."""
    root = private_folder("contexts-test-pg-")
    server = EmbeddedPostgres(root / "pgdata", cleanup_mode="delete")
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_server():
    with private_server() as server:
        # What Contexts' own servers load from contexts.conf (app/db/embedded.py's GUARD):
        # the lexical engine's library in every session, for its COPY guard.
        with psycopg.connect(server.url(), autocommit=True) as conn:
            conn.execute("alter system set session_preload_libraries = 'contexts_bm25'")
            # A throwaway cluster: nothing in it has to outlive a crash of the machine, so
            # no write waits for the disk (each test's database is created, written and
            # dropped; with _Janitor's FILE_COPY, about 0.4 s less per test on 2 busy cores).
            # A killed server still recovers: its writes are in the OS's cache. Commits stay
            # synchronous: the services' read-your-writes on replicas waits for a commit's
            # WAL to be flushed (tests/scale/test_read_replica.py).
            for name in ("fsync", "full_page_writes"):
                conn.execute(f"alter system set {name} = off")
            # Its WAL is in memory too (private_folder): checkpoints at a quarter of the
            # default bound it, and cost little there.
            conn.execute("alter system set max_wal_size = '256MB'")
            conn.execute("select pg_reload_conf()")
        yield server


def require_running(server: EmbeddedPostgres) -> None:
    """A dead or broken server ends the run now, with its log, instead of every later
    test waiting on connection retries."""
    problem = None if server.is_running() else "its postmaster is gone"
    if problem is None:
        try:
            with psycopg.connect(server.url(), connect_timeout=3, autocommit=True) as probe:
                probe.execute("select 1")
        except psycopg.OperationalError as exc:
            problem = f"it refuses connections ({str(exc).strip()})"
    if problem is not None:
        pytest.exit(
            f"the test PostgreSQL server is unusable: {problem}; last lines of its log:\n{server.log_tail()}",
            returncode=3,
        )


class _Janitor(DatabaseJanitor):
    """Clones by copying the template's files (STRATEGY FILE_COPY): with fsync off its two
    checkpoints cost nothing, and it writes no WAL for the copy, as the default does."""

    def _build_create_database_sql(self):
        query = super()._build_create_database_sql()
        return query + psycopg.sql.SQL(" STRATEGY FILE_COPY") if self.template_dbname else query


def _janitor(server: EmbeddedPostgres, dbname: str, **kwargs) -> DatabaseJanitor:
    require_running(server)
    return _Janitor(
        user="postgres",
        host=server.socket_dir,
        port=5432,
        dbname=dbname,
        password=None,
        connection_timeout=JANITOR_CONNECT_SECONDS,
        **kwargs,
    )


def _dsn(server: EmbeddedPostgres, dbname: str) -> str:
    return server.url(dbname)


@pytest.fixture(scope="session")
def template_db(pg_server: EmbeddedPostgres):
    janitor = _janitor(pg_server, TEMPLATE, as_template=True)
    janitor.drop()
    with janitor:
        migrate(_dsn(pg_server, TEMPLATE))
        yield TEMPLATE


SERVICE_LOGIN = "contexts_api_test"
ANALYST_LOGINS = ("analyst_alice", "analyst_bob")


@pytest.fixture(scope="session")
def logins(pg_server: EmbeddedPostgres, template_db: str) -> dict[str, str]:
    """Login roles as deployed: the service and two analysts. None owns a table or is a
    superuser, so row-level security applies to them (roles are cluster-wide)."""
    with psycopg.connect(_dsn(pg_server, "postgres"), autocommit=True) as admin:
        for name, group in ((SERVICE_LOGIN, "contexts_service"), *((a, "contexts_analyst") for a in ANALYST_LOGINS)):
            if admin.execute("select 1 from pg_roles where rolname = %s", (name,)).fetchone() is None:
                admin.execute(f"create role {name} login in role {group}")
    return {"service": SERVICE_LOGIN, "analysts": ANALYST_LOGINS}


def login_url(db_url: str, role: str) -> str:
    from psycopg.conninfo import make_conninfo

    return make_conninfo(db_url, user=role)


@pytest.fixture
def db_url(pg_server: EmbeddedPostgres, template_db: str):
    """A fresh database cloned from the migrated template."""
    name = f"contexts_test_{os.getpid()}_{next(_counter)}"
    with _janitor(pg_server, name, template_dbname=template_db):
        yield _dsn(pg_server, name)


@pytest.fixture
def conn(db_url: str):
    with psycopg.connect(db_url) as connection:
        yield connection


@pytest.fixture(scope="session")
def settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """Writes of one org wait their turn up to two minutes here, not the default ten
    seconds: tests that send parallel writes check what they store, and a slow CI host
    stretched eight one-second turns past ten seconds (a 503 by design). The bound
    itself is tested with its own short setting (tests/api/test_write_turns.py)."""
    return Settings(home=tmp_path_factory.mktemp("home"), write_lock_wait_s=120.0)


@pytest.fixture(scope="session")
def models(settings: Settings):
    from app.text.embed import embedders
    from tests.embedding_memo import remembering

    loaded = {namespace: remembering(embedder) for namespace, embedder in embedders(settings).items()}
    for embedder in loaded.values():
        embedder.load()
    return loaded


@pytest.fixture(scope="session")
def pipeline(settings: Settings, models):
    from app.ingest.pipeline import IngestPipeline

    return IngestPipeline(settings, models)


@pytest.fixture(scope="session")
def retriever(models):
    from app.retrieve.service import Retriever

    return Retriever(models, None)


@pytest.fixture
def ingest(conn, pipeline):
    """ingest(org, {path: text}, repo=...) through the real lane; returns the results."""
    from app.access import ensure_admin_principal
    from app.ingest.normalize import SourceDocument
    from app.scope import Scope

    def run(
        org: str,
        files: dict[str, str | bytes],
        repo: str | None = None,
        persona: str | None = None,
        session: str | None = None,
        **doc_fields,
    ):
        conn.execute("select service.create_org(%s)", (org,))
        pipeline.register_models(conn)
        ensure_admin_principal(conn, org, ADMIN)
        conn.execute("select service.bind_principal(%s, %s)", (org, ADMIN))
        prepared = [pipeline.prepare(SourceDocument(path=p, content=c, **doc_fields)) for p, c in files.items()]
        results = pipeline.write(conn, Scope(org, repo, persona, session), prepared)
        conn.commit()
        return results

    return run


@pytest.fixture
def as_principal(conn):
    """as_principal(org, principal=admin): act for a principal in the open transaction,
    as the service role (row-level security applies), like an HTTP request does."""
    from app.access import act_as

    def run(org: str, principal: str = ADMIN):
        act_as(conn, org, principal)

    return run


FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def client(settings, models, db_url, logins):
    """The API as deployed: its pool logs in as a member of contexts_service (not an
    owner, not a superuser); requests carry the key of acme's administrator."""
    with serving(settings, db_url, logins, max_body_bytes=256 * 1024) as (test_client, token):
        test_client.headers["Authorization"] = f"Bearer {token}"
        yield test_client


@contextlib.contextmanager
def serving(settings, db_url: str, logins: dict, **overrides) -> Iterator[tuple[Any, str]]:
    """A TestClient of the API with `overrides` applied to the settings, and the token of
    acme's administrator (org and principal made here)."""
    from litestar.testing import TestClient

    from app.access import create_api_key, ensure_admin_principal
    from app.serve.app import build_services, create_app

    local = settings.with_(database_url=db_url, service_database_url=login_url(db_url, logins["service"]), **overrides)
    services = build_services(local, db_url)
    with psycopg.connect(db_url) as conn:
        conn.execute("select service.create_org('acme')")
        ensure_admin_principal(conn, "acme", "admin")
        key = create_api_key(conn, "acme", "admin")
    try:
        with TestClient(app=create_app(local, services=services)) as test_client:
            yield test_client, key.token
    finally:
        services.close()


# -- tiers ------------------------------------------------------------------------------

MODEL_FIXTURES = {"models", "pipeline", "retriever", "client"}
"""Fixtures that load the real embedding model (or a whole service built on it)."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Each test's tier, from the fixtures it uses (its whole closure): `e2e` loads the
    real model or builds the service, `db` takes a database, `unit` neither. `make
    test-fast` runs the unit tier (`-m unit`); a test that starts a server or the model
    by itself instead of through these fixtures names its tier with a marker."""
    heaviest: dict[Path, int] = {}  # module -> its heaviest test's place in TIERS
    for item in items:
        if not any(item.get_closest_marker(tier) for tier in TIERS):
            used = set(getattr(item, "fixturenames", ()))
            if used & MODEL_FIXTURES:
                item.add_marker(pytest.mark.e2e)
            elif "pg_server" in used:
                item.add_marker(pytest.mark.db)
            else:
                item.add_marker(pytest.mark.unit)
        weight = next(i for i, tier in enumerate(TIERS) if item.get_closest_marker(tier))
        heaviest[item.path] = min(heaviest.get(item.path, weight), weight)
    items.sort(key=lambda item: _start_order(item.path, heaviest))


TIERS = ("e2e", "db", "unit")
"""Heaviest first."""
ROOT = Path(__file__).parents[1]
"""The repository: LONGEST_FIRST names modules from here."""

LONGEST_FIRST = (
    "tests/api/test_openapi_conformance.py",
    "tests/test_readme_examples.py",
    "tests/security/test_no_leaks.py",
    "tests/serve/test_serve.py",
    "tests/mcp/test_mcp.py",
    "tests/bench/test_load.py",
    "tests/bench/test_bench.py",
    "tests/ingest/test_e5_small_q4.py",
    "tests/api/test_hardening.py",
    "tests/security/test_door.py",
    "tests/test_harness.py",
    "tests/client/test_client.py",
)
"""The modules with the suite's longest tests (20 to 100 s each, the whole suite timed on 2
workers), started first: collected last (the top-level modules are), their tests could
only start when the other worker had little left to take. Only the order depends on this
list (tests/test_suite_order.py checks that each one exists); the other modules follow,
by their heaviest test's tier (TIERS). A module keeps its tests together."""


def _start_order(module: Path, heaviest: dict[Path, int]) -> tuple[int, int]:
    """LONGEST_FIRST in its order, then the other modules by their heaviest test's tier;
    a stable sort keeps the collection order within each."""
    name = module.relative_to(ROOT).as_posix()
    if name in LONGEST_FIRST:
        return LONGEST_FIRST.index(name), 0
    return len(LONGEST_FIRST), heaviest[module]
