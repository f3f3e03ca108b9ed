"""compose.yaml cannot run here (no Docker engine); check what can be checked."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).parents[1]


def test_compose_file_wires_api_to_a_pgvector_database():
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())
    db, api = compose["services"]["db"], compose["services"]["api"]
    assert "pgvector" in db["image"]
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
