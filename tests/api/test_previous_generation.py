"""The shadow window (R-ING-3, docs/models.md): after a promotion the replaced embedding
generation stays queryable until its window ends. A retrieval asks for it with
`"generation": "previous"` (HTTP, MCP), `contexts models replay --generation previous`
compares it with the active one, and after the window it answers a clear 409 (SQL
refuses it too). Real PostgreSQL, real models: the bundled MiniLM under the folder name
`minilm-next` is the new model; a trace names the generation that served it."""

from __future__ import annotations

import json

import psycopg
import pytest
from click.testing import CliRunner

from app.cli import main
from app.mcp import TOOLS
from tests.api.test_api import ingest, problem
from tests.api.test_contexts import PAYMENTS, principal
from tests.api.test_model_follow import build_shadow, promote
from tests.conftest import serving
from tests.ingest.test_model_generations import next_model  # noqa: F401 (fixture)
from tests.retrieve.corpus import DOCS

OLD = "sentence-transformers/all-MiniLM-L6-v2"
QUERY = {"query": "rotate the journal", "scope": {"org_id": "acme"}}
PREVIOUS = QUERY | {"generation": "previous"}


@pytest.fixture
def client(settings, models, db_url, logins):
    """The API with every generation's queries embedded by torch. These tests compare two
    generations of the same weights, and by default the bundled model's queries come from
    its int8 export while `minilm-next`'s come from torch: about 0.001 of cosine apart,
    enough to swap two near-tied fragments on some CPUs (an AMD EPYC without VNNI did)."""
    with serving(settings, db_url, logins, max_body_bytes=256 * 1024, query_embed_backend="torch") as (api, token):
        api.headers["Authorization"] = f"Bearer {token}"
        yield api


def prose_models(trace: dict) -> set[str]:
    return {c["embedding_model"] for c in trace["candidates"] if c.get("namespace") == "prose"}


def end_window(db_url: str) -> None:
    with psycopg.connect(db_url) as conn:
        conn.execute(
            "update data.embedding_models set window_ends_at = now() - interval '1 minute' where status = 'retired'"
        )


def test_the_previous_generation_answers_during_its_window_and_a_409_after(
    client,
    db_url,
    models,
    next_model,  # noqa: F811
):
    assert ingest(client, DOCS).status_code == 201
    body = problem(client.post("/contexts/retrieve", json=PREVIOUS), 409)  # nothing upgraded yet
    assert "no previous embedding generation" in body["detail"]
    build_shadow(db_url, models, next_model)
    promote(db_url)

    active = client.post("/contexts/retrieve", json=QUERY)  # the service follows the promotion
    assert active.status_code == 200, active.text
    old = client.post("/contexts/retrieve", json=PREVIOUS)
    assert old.status_code == 200, old.text
    # Same weights under two names: the same answer, from each generation's own vectors.
    assert [f["id"] for f in old.json()["fragments"]] == [f["id"] for f in active.json()["fragments"]]
    trace = client.get(f"/traces/{old.json()['trace_id']}").json()
    assert trace["request"]["generation"] == "previous"
    assert trace["pipeline"]["generations"] == {"prose": 1} and trace["pipeline"]["embedding_models"]["prose"] == OLD
    assert prose_models(trace) == {f"{OLD}@1"}
    assert prose_models(client.get(f"/traces/{active.json()['trace_id']}").json()) == {"minilm-next@2"}
    with psycopg.connect(db_url) as conn:  # its query vector is kept under the model that searched
        rows = dict(
            conn.execute(
                "select trace_id::text, query_models from data.retrieval_traces where trace_id = any(%s::uuid[])",
                ([old.json()["trace_id"], active.json()["trace_id"]],),
            ).fetchall()
        )
    assert OLD in rows[old.json()["trace_id"]] and "minilm-next" in rows[active.json()["trace_id"]]
    problem(client.post("/contexts/retrieve", json=QUERY | {"generation": "shadow"}), 400)

    end_window(db_url)
    body = problem(client.post("/contexts/retrieve", json=PREVIOUS), 409)
    assert f"prose generation 1 ({OLD}) ended its shadow window on" in body["detail"]
    assert client.post("/contexts/retrieve", json=QUERY).status_code == 200  # the active one is untouched
    # SQL refuses it as well (a service that resolved it a moment before the window ended, an analyst).
    with psycopg.connect(db_url) as conn:
        conn.execute("""select set_config('contexts.serve_generations', '{"prose": 1}', true)""")
        with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState, match="ended its shadow window"):
            conn.execute("select * from data._serving_models()")
    dropped = CliRunner().invoke(main, ["--db-url", db_url, "models", "drop-retired"])
    assert dropped.exit_code == 0, dropped.output
    body = problem(client.post("/contexts/retrieve", json=PREVIOUS), 409)
    assert "no previous embedding generation answers queries" in body["detail"]
    with psycopg.connect(db_url) as conn:
        conn.execute("""select set_config('contexts.serve_generations', '{"prose": 1}', true)""")
        with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState, match="was dropped"):
            conn.execute("select * from data._serving_models()")
        conn.rollback()
        conn.execute("""select set_config('contexts.serve_generations', '{"prose": 9}', true)""")
        with pytest.raises(psycopg.errors.NoDataFound, match="no generation 9"):
            conn.execute("select * from data._serving_models()")


def test_asking_for_the_previous_generation_reads_nothing_more(client, db_url, models, next_model):  # noqa: F811
    assert ingest(client, DOCS, repo_id="web").status_code == 201
    assert ingest(client, PAYMENTS, repo_id="payments").status_code == 201
    build_shadow(db_url, models, next_model)
    promote(db_url)
    reader = principal(db_url, "acme", "web-reader", [("repo", "web", False)])
    in_web = {"query": "stripe webhook signature refunds", "scope": {"org_id": "acme", "repo_id": "web"}}
    answers = {}
    for generation in ("active", "previous"):
        response = client.post("/contexts/retrieve", json=in_web | {"generation": generation}, headers=reader)
        assert response.status_code == 200, response.text
        answers[generation] = {f["source"].split("#")[0] for f in response.json()["fragments"]}
    assert answers["previous"] == answers["active"] and answers["active"] <= set(DOCS)
    org_wide = client.post("/contexts/retrieve", json=PREVIOUS | {"query": in_web["query"]}, headers=reader)
    assert org_wide.status_code == 200, org_wide.text
    assert {f["source"].split("#")[0] for f in org_wide.json()["fragments"]} <= set(DOCS)  # never payments
    # Analyst SQL with the setting: the previous generation's vectors under row-level security.
    with psycopg.connect(db_url) as conn:
        conn.execute("select service.bind_principal('acme', 'web-reader')")
        conn.execute("set local role contexts_service")
        conn.execute("""select set_config('contexts.serve_generations', '{"prose": 1}', true)""")
        (vector,) = conn.execute(
            "select embedding::text::jsonb from data.embeddings e join data.embedding_models m using (model_id) "
            "where m.generation = 1 and m.namespace = 'prose' limit 1"
        ).fetchone()
        seen = conn.execute(
            "select distinct c.path from api.retrieve_candidates('acme', 'refunds', %s::jsonb, 'web') c",
            (json.dumps({"prose": vector}),),
        ).fetchall()
    assert {p for (p,) in seen} <= set(DOCS)


def test_the_request_field_is_in_openapi_and_the_mcp_tool(client):
    schema = client.get("/schema/openapi.json").json()
    field = schema["components"]["schemas"]["RetrieveRequest"]["properties"]["generation"]
    assert set(json.dumps(field).split('"')) >= {"active", "previous"}
    tool = next(t for t in TOOLS if t.name == "retrieve").definition()
    assert tool.inputSchema["properties"]["generation"]["enum"] == ["active", "previous"]


def test_models_replay_compares_the_previous_generation_within_its_window(
    client,
    db_url,
    models,
    tmp_path,
    next_model,  # noqa: F811
):
    assert ingest(client, DOCS).status_code == 201
    assert client.post("/contexts/retrieve", json=QUERY).status_code == 200
    build_shadow(db_url, models, next_model)
    promote(db_url)
    assert client.post("/contexts/retrieve", json=PREVIOUS).status_code == 200

    def cli(*args, **env):
        return CliRunner().invoke(main, ["--db-url", db_url, *args], env=env or None)

    refused = cli("models", "replay", "prose", "--generation", "shadow")
    assert refused.exit_code != 0 and "no shadow generation" in refused.output
    # No shadow left: the previous generation (its queries embedded as the service's are).
    compared = cli("models", "replay", "prose", "--json", CONTEXTS_QUERY_EMBED_BACKEND="torch")
    assert compared.exit_code == 0, compared.output
    body = json.loads(compared.stdout.strip().splitlines()[-1])
    assert (body["compared"], body["generation"], body["replayed"], body["errors"]) == ("previous", 1, 2, 0)
    assert body["mean_overlap"] == pytest.approx(1.0)
    listed = json.loads(cli("models", "status", "--json").stdout)
    assert {g["generation"]: g["replays"] for g in listed if g["namespace"] == "prose"} == {1: 2, 2: 0}

    # `contexts eval replay` compares pipelines on the active generation: it skips the
    # request that asked for the previous one and says where generations are compared.
    candidate = tmp_path / "candidate.json"
    candidate.write_text('{"k_lexical": 1}')
    replayed = cli(
        "eval", "replay", "--org", "acme", "--candidate", str(candidate), "--json", CONTEXTS_PROSE_MODEL=next_model
    )
    assert replayed.exit_code == 0, replayed.output
    report = json.loads(replayed.stdout.strip().splitlines()[-1])
    assert (report["queries"], report["errors"], report["kinds"]) == (
        1,
        0,
        {"retrieval": {"replayed": 1, "skipped": 1}},
    )
    assert "--generation previous" in report["skipped_traces"][0]["reason"]

    end_window(db_url)
    after = cli("models", "replay", "prose", "--generation", "previous")
    assert after.exit_code != 0 and "ended its shadow window" in after.output


def test_promotion_and_rollback_say_what_follows_by_itself_and_what_to_configure(
    client,
    db_url,
    models,
    next_model,  # noqa: F811
):
    """Services follow a promotion without a restart (tests/api/test_model_follow.py);
    CLI commands embed with their configured model and are refused until it names the
    promoted one (tests/ingest/test_model_generations.py). The message says just that."""
    assert ingest(client, DOCS).status_code == 201
    build_shadow(db_url, models, next_model)
    promote(db_url)
    rolled = CliRunner().invoke(
        main, ["--db-url", db_url, "models", "rollback", "prose"], env={"CONTEXTS_MODEL_CHECK_S": "5"}
    )
    assert rolled.exit_code == 0, rolled.output
    said = " ".join(rolled.output.split())
    assert "restart services" not in said and "Nothing to restart" in said
    assert f"prose now serves {OLD} (generation 1); generation 2 stays queryable until" in said
    assert '"generation": "previous"' in said and "contexts models rollback prose" in said
    assert f"`contexts serve` loads {OLD} from {OLD} within CONTEXTS_MODEL_CHECK_S (5 s)" in said
    assert "CONTEXTS_PROSE_MODEL" in said and f"it is already set to it here ({OLD})" in said
    assert json.loads(rolled.stdout.strip().splitlines()[-1]) == {"namespace": "prose", "active": 1, "retired": 2}

    again = CliRunner().invoke(main, ["--db-url", db_url, "models", "rollback", "prose"])
    assert again.exit_code == 0, again.output
    said = " ".join(again.output.split())
    assert f"`contexts serve` loads minilm-next from {next_model}" in said
    assert (
        f"CONTEXTS_PROSE_MODEL instead, and are refused until it names the promoted model: it is {OLD} here: "
        f"set it to {next_model}" in said
    )
