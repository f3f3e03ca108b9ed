"""compose.yaml cannot run here (no Docker engine); check what can be checked."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).parents[1]


def test_compose_file_wires_api_to_a_pgvector_database():
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())
    db, api = compose["services"]["db"], compose["services"]["api"]
    assert "pgvector" in db["image"]
    # The database image carries the lexical engine's extension, built from ext/ (a server
    # without it stops `contexts migrate` with one line, migration 0027).
    assert db["build"] == {"context": ".", "dockerfile": "docker/postgres/Dockerfile"}
    postgres = (ROOT / "docker" / "postgres" / "Dockerfile").read_text()
    assert "FROM pgvector/pgvector:pg17" in postgres and "COPY ext/contexts_bm25" in postgres
    assert "pg_config install" in postgres
    assert api["depends_on"]["db"]["condition"] == "service_healthy"
    url = api["environment"]["CONTEXTS_DATABASE_URL"]
    user, password, name = (
        db["environment"]["POSTGRES_USER"],
        db["environment"]["POSTGRES_PASSWORD"],
        db["environment"]["POSTGRES_DB"],
    )
    assert url == f"postgresql://{user}:{password}@db:5432/{name}"
    assert api["command"][:2] == ["contexts", "serve"]
    dockerfile = (ROOT / "Dockerfile").read_text()
    for folder in ("app", "sql", "alembic"):
        assert f"COPY {folder} ./{folder}" in dockerfile
    assert "torch==2.13.0" in dockerfile


def test_citus_profile_runs_the_service_against_a_coordinator_and_two_workers():
    """docs/scale.md: `docker compose --profile citus up` (Citus cannot run here)."""
    services = yaml.safe_load((ROOT / "compose.yaml").read_text())["services"]
    assert "profiles" not in services["db"] and "profiles" not in services["api"]  # plain `up` is unchanged
    citus = {name for name, service in services.items() if "citus" in service.get("profiles", [])}
    assert citus == {"citus-coordinator", "citus-worker-1", "citus-worker-2", "citus-init", "api-citus"}
    nodes = [services[n] for n in ("citus-coordinator", "citus-worker-1", "citus-worker-2")]
    assert all(n["build"] == {"context": ".", "dockerfile": "docker/citus/Dockerfile"} for n in nodes)
    assert len({n["image"] for n in nodes}) == 1
    dockerfile = (ROOT / "docker" / "citus" / "Dockerfile").read_text()
    assert dockerfile.startswith("#") and "FROM citusdata/citus:" in dockerfile
    assert "COPY ext/contexts_bm25" in dockerfile
    assert "postgresql-17-pgvector" in dockerfile
    registered = (ROOT / "docker" / "citus" / "register-workers.sql").read_text()
    for worker in ("citus-worker-1", "citus-worker-2"):
        assert f"citus_add_node('{worker}', 5432)" in registered
    api = services["api-citus"]
    assert api["depends_on"]["citus-init"]["condition"] == "service_completed_successfully"
    env = services["citus-coordinator"]["environment"]
    assert api["environment"]["CONTEXTS_DATABASE_URL"] == (
        f"postgresql://{env['POSTGRES_USER']}:{env['POSTGRES_PASSWORD']}@citus-coordinator:5432/{env['POSTGRES_DB']}"
    )
    assert api["command"][:2] == ["contexts", "serve"]
