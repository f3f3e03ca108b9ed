"""Replays of every kind of recorded trace: a database holding one trace of each door
that records one (retrievals, lexical-only ones, retrievals restricted to or boosted by
Contexts, retrievals touching files, session packs, Context reads ranked by a query and
in bundle order, a saved-query version, a trace no retrieval this version knows), and
both replay commands, which replay or skip each one and count them by kind, never
failing on a trace."""

from __future__ import annotations

import json

import psycopg
from click.testing import CliRunner

from app.cli import main
from tests.api.test_api import ingest
from tests.ingest.test_model_generations import next_model  # noqa: F401 (fixture)
from tests.retrieve.corpus import DOCS

QUERY = {"query": "rotate the journal", "scope": {"org_id": "acme"}}


def record_every_kind(client, db_url) -> None:
    """One trace of each kind in acme, all by its administrator."""
    assert ingest(client, DOCS).status_code == 201

    def ok(response, status=200):
        assert response.status_code == status, response.text
        return response.json()

    ok(client.post("/contexts/retrieve", json=QUERY))  # retrieval
    ok(client.post("/contexts/retrieve", json=QUERY | {"query": "renew certificates", "k_dense": 0}))  # lexical only
    ctx = ok(client.post("/contexts", json={"scope": {"org_id": "acme"}, "name": "ops"}), 201)
    ok(client.post(f"/contexts/{ctx['ref']}/versions", json={"path_globs": ["runbooks/*.md"]}), 201)
    ref = f"{ctx['ref']}@1"
    # A saved-query version retrieves once, in the Context's scope (a retrieval).
    ok(client.post(f"/contexts/{ctx['ref']}/versions", json={"query": {"query": "secrets policy vault"}}), 201)
    ok(client.post("/contexts/retrieve", json=QUERY | {"contexts": [ref]}))  # restrict
    ok(client.post("/contexts/retrieve", json=QUERY | {"contexts": [ref], "context_mode": "boost"}))
    rule = {"org_id": "acme", "name": "storage code", "context": ref, "path_globs": ["storage/**"]}
    ok(client.post("/rules", json=rule), 201)
    ok(client.post("/contexts/retrieve", json=QUERY | {"touching": ["storage/volume.py"]}))
    ok(client.get(f"/contexts/{ref}", params={"query": "certificates renewal"}))  # ranked by a query
    ok(client.get(f"/contexts/{ctx['ref']}@latest"))  # bundle order
    ok(client.post("/sessions", json={"scope": {"org_id": "acme"}, "task": "storage volume is full"}))
    expired = ok(client.post("/sessions", json={"scope": {"org_id": "acme"}, "task": "tls renewal failed"}))
    with psycopg.connect(db_url) as conn:
        conn.execute(
            "update data.sessions set expires_at = now() - interval '1 minute' where session_id = %s",
            (expired["session_id"],),
        )
        # A trace some other door (or an older version) recorded: no retrieval request.
        conn.execute("select service.bind_principal('acme', 'admin')")
        conn.execute("select service.record_trace('acme', 'digest', '{\"digest\": \"weekly\"}', '{}', '[]')")


EVERY_KIND = {
    "retrieval": {"replayed": 3, "skipped": 0},  # plain, lexical only, the saved query
    "contexts_restrict": {"replayed": 1, "skipped": 0},
    "contexts_boost": {"replayed": 1, "skipped": 0},
    "touching": {"replayed": 1, "skipped": 0},
    "session_pack": {"replayed": 1, "skipped": 1},  # the expired session's pack
    "context_read_ranked": {"replayed": 1, "skipped": 0},
    "context_read_bundle": {"replayed": 0, "skipped": 1},
    "unrecognized": {"replayed": 0, "skipped": 1},
}


def test_eval_replay_replays_or_skips_every_kind_of_trace(client, db_url, tmp_path):
    record_every_kind(client, db_url)
    candidate = tmp_path / "candidate.json"
    candidate.write_text('{"k_lexical": 1}')
    args = ["--db-url", db_url, "eval", "replay", "--org", "acme", "--candidate", str(candidate)]
    result = CliRunner().invoke(main, [*args, "--json"])
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout.strip().splitlines()[-1])
    assert body["kinds"] == EVERY_KIND
    assert body["queries"] == 8 and body["skipped"] == 3 and body["errors"] == 0
    assert {r["kind"] for r in body["results"]} == {k for k, n in EVERY_KIND.items() if n["replayed"]}
    reasons = {s["kind"]: s["reason"] for s in body["skipped_traces"]}
    assert "bundle order ranks nothing" in reasons["context_read_bundle"]
    assert "not a retrieval" in reasons["unrecognized"]
    assert "can no longer make this request" in reasons["session_pack"] and "live session" in reasons["session_pack"]
    assert "by kind: retrieval 3 replayed; contexts_restrict 1 replayed" in result.output
    assert "skipped 1 context_read_bundle: a Context read in bundle order ranks nothing" in result.output
    with psycopg.connect(db_url) as conn:  # stored: the replayed queries only
        (stored,) = conn.execute(
            "select count(*) from data.eval_replays where run_id = %s", (body["eval_run_id"],)
        ).fetchone()
    assert stored == 8

    text = CliRunner().invoke(main, args)  # the report for people says the same
    assert text.exit_code == 0, text.output
    assert "replayed 8 queries" in text.stdout and "3 trace(s) skipped" in text.stdout
    assert "session_pack 1 replayed, 1 skipped" in text.stdout


def test_models_replay_replays_or_skips_every_kind_of_trace(client, db_url, next_model):  # noqa: F811
    record_every_kind(client, db_url)
    upgraded = CliRunner().invoke(main, ["--db-url", db_url, "models", "upgrade", "prose", next_model, "--quiet"])
    assert upgraded.exit_code == 0, upgraded.output
    result = CliRunner().invoke(main, ["--db-url", db_url, "models", "replay", "prose", "--json"])
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout.strip().splitlines()[-1])
    expected = EVERY_KIND | {"retrieval": {"replayed": 2, "skipped": 1}}  # lexical only: no generation involved
    assert body["kinds"] == expected and body["compared"] == "shadow"
    assert (body["replayed"], body["skipped"], body["errors"]) == (7, 4, 0)
    assert any("lexical only" in s["reason"] for s in body["skipped_traces"] if s["kind"] == "retrieval")
    assert "by kind: retrieval 2 replayed, 1 skipped" in result.output
    with psycopg.connect(db_url) as conn:
        (recorded,) = conn.execute("select count(*) from data.model_replays where error is null").fetchone()
    assert recorded == 7
