"""GET /models: embedding model generations and their coverage, for principals with
an org grant (docs/adr/0021)."""

from __future__ import annotations

import psycopg

from app.access import create_api_key
from tests.api.test_api import ingest, problem
from tests.retrieve.corpus import DOCS


def test_generations_with_coverage_for_org_wide_principals_only(client, db_url):
    assert ingest(client, DOCS).status_code == 201
    with psycopg.connect(db_url) as conn:
        conn.execute("select service.begin_model_upgrade('prose', 'minilm-next', 'minilm-next', 384, 14)")
        conn.execute("select service.ensure_scope('acme', 'web', null)")
        conn.execute("select service.create_principal('acme', 'web-agent', 'agent', '')")
        conn.execute("select service.grant_scope('acme', 'web-agent', 'repo', 'web', false)")
        web_key = create_api_key(conn, "acme", "web-agent").token

    listed = client.get("/models")
    assert listed.status_code == 200, listed.text
    by_generation = {(g["namespace"], g["generation"]): g for g in listed.json()["generations"]}
    active, shadow = by_generation[("prose", 1)], by_generation[("prose", 2)]
    assert (active["status"], shadow["status"], shadow["name"]) == ("active", "shadow", "minilm-next")
    assert active["vectors"] == active["fragments"] > 0 and shadow["vectors"] == 0  # nothing re-embedded yet
    assert shadow["window_ends_at"] is not None and shadow["replays"] == 0 and shadow["mean_overlap"] is None

    problem(client.get("/models", headers={"Authorization": f"Bearer {web_key}"}), 403)
    problem(client.get("/models", headers={"Authorization": "Bearer ctx_nope"}), 401)
