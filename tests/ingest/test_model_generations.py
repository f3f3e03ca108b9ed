"""Embedding model upgrades with a shadow window (docs/adr/0021), against real
PostgreSQL and real models: the bundled MiniLM under a second name stands for the new
model (no other model is installed), so its vectors equal the old ones."""

from __future__ import annotations

import json
from dataclasses import replace

import msgspec
import psycopg
import pytest
from click.testing import CliRunner

from app.cli import main
from app.generations.upgrade import backlog_size, generations, replay_shadow, upgrade
from app.retrieve.service import Retriever
from app.text.embed import resolve_model_path
from app.wire.retrieve import RetrieveRequest
from tests.eval.test_gate import WAIVER, waiver_file
from tests.eval.test_golden import write_set
from tests.retrieve.corpus import DOCS

ACTIVE = "sentence-transformers/all-MiniLM-L6-v2@1"
MORE_DOCS = {
    f"notes/note-{i}.md": f"# Note {i}\n\nDeploy step {i}: drain node {i}, then upgrade the kernel to {i}.\n"
    for i in range(8)
}


@pytest.fixture(scope="session")
def next_model(tmp_path_factory):
    """The bundled MiniLM under another folder name: a 'new' model, recorded as minilm-next."""
    folder = tmp_path_factory.mktemp("models") / "minilm-next"
    folder.symlink_to(resolve_model_path("all-MiniLM-L6-v2"), target_is_directory=True)
    return str(folder)


@pytest.fixture
def next_embedder(models, next_model):
    return replace(models["prose"], name=next_model)


class Interrupted(Exception):
    pass


def shadow_vectors(conn, model_id):
    count = conn.execute("select count(*) from data.embeddings where model_id = %s", (model_id,)).fetchone()[0]
    conn.commit()  # no lock left for the CLI's DDL to wait on
    return count


def retrieve(conn, retriever, org, query="rotate the journal"):
    from app.access import act_as

    act_as(conn, org, "admin")
    response = retriever.retrieve(conn, msgspec.convert({"query": query, "scope": {"org_id": org}}, RetrieveRequest))
    conn.commit()
    return response


def test_upgrade_resumes_serves_the_active_generation_and_ingestion_writes_both(
    conn, ingest, models, retriever, next_embedder
):
    ingest("acme", DOCS | MORE_DOCS)
    prose = conn.execute("select count(*) from data.fragments where namespace = 'prose' and active").fetchone()[0]
    assert prose >= 10

    def stop_after_first_batch(done, total):
        if done >= 3:
            raise Interrupted

    with pytest.raises(Interrupted):
        upgrade(conn, "prose", next_embedder, batch=3, progress=stop_after_first_batch)
    shadow = next(g for g in generations(conn) if g["status"] == "shadow")
    assert (shadow["name"], shadow["generation"]) == ("minilm-next", 2)
    assert shadow_vectors(conn, shadow["model_id"]) == 3  # the committed batch survived
    assert conn.execute(
        "select 1 from pg_indexes where indexname = %s", (f"embeddings_hnsw_model_{shadow['model_id']}",)
    ).fetchone()

    resumed = upgrade(conn, "prose", next_embedder, batch=3, rate=1000)
    assert resumed.model_id == shadow["model_id"] and resumed.embedded == prose - 3
    assert backlog_size(conn, shadow["model_id"]) == 0

    # Queries keep the active generation during the window: the trace names it.
    response = retrieve(conn, retriever, "acme")
    entries = conn.execute(
        "select candidates from data.retrieval_traces where trace_id = %s", (response.trace_id,)
    ).fetchone()[0]
    prose_labels = {e["embedding_model"] for e in entries if e["namespace"] == "prose"}
    assert prose_labels == {ACTIVE}

    # A retriever told to search the shadow generation (replay, the promotion gate) does,
    # for the rest of its transaction only.
    request = msgspec.convert({"query": "rotate the journal", "scope": {"org_id": "acme"}}, RetrieveRequest)
    from app.access import act_as

    act_as(conn, "acme", "admin")
    best_active = retriever.rank(conn, request).ranked[0].fragment_id
    conn.rollback()
    shadow_retriever = Retriever({**models, "prose": next_embedder}, None, generations={"prose": 2})
    act_as(conn, "acme", "admin")
    ranked = shadow_retriever.rank(conn, request)
    assert {c.embedding_model for c in ranked.candidates if c.namespace == "prose"} == {"minilm-next@2"}
    assert ranked.ranked[0].fragment_id == best_active  # same weights: same best fragment
    conn.rollback()

    # Ingestion during the window writes a vector for both generations.
    ingest("acme", {"runbooks/backups.md": "# Backups\n\nSnapshots run nightly and are kept thirty days.\n"})
    rows = conn.execute(
        "select f.fragment_id, count(e.model_id) from data.fragments f "
        "join data.documents d on d.doc_id = f.doc_id and d.path = 'runbooks/backups.md' "
        "join data.embeddings e on e.fragment_id = f.fragment_id group by f.fragment_id"
    ).fetchall()
    assert rows and all(n == 2 for _id, n in rows)
    assert backlog_size(conn, shadow["model_id"]) == 0


def test_a_service_still_embedding_with_a_replaced_model_is_refused(conn, ingest, retriever, next_embedder):
    ingest("acme", DOCS)
    model_id = upgrade(conn, "prose", next_embedder).model_id
    conn.execute("select * from service.promote_model('prose', 2)")
    conn.commit()
    assert conn.execute("select status from data.embedding_models where model_id = %s", (model_id,)).fetchone() == (
        "active",
    )
    with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState, match="served by minilm-next"):
        retrieve(conn, retriever, "acme")
    conn.rollback()
    # Registering the old model at start-up says how to go on.
    with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState, match="indexed with minilm-next"):
        conn.execute("select service.register_embedding_model('prose', 'sentence-transformers/all-MiniLM-L6-v2', 384)")


def test_promotion_needs_every_fragment_embedded(conn, ingest, next_embedder):
    ingest("acme", DOCS)
    model_id = conn.execute(
        "select service.begin_model_upgrade('prose', 'minilm-next', %s, 384, 14)", (next_embedder.name,)
    ).fetchone()[0]
    conn.commit()
    with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState, match="have no vector of generation 2"):
        conn.execute("select * from service.promote_model('prose', 2)")
    conn.rollback()
    # A second model while one is being built is refused; the same one resumes.
    with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState, match="already being upgraded"):
        conn.execute("select service.begin_model_upgrade('prose', 'other-model', 'other-model', 384, 14)")
    conn.rollback()
    assert conn.execute(
        "select service.begin_model_upgrade('prose', 'minilm-next', %s, 384, 14)", (next_embedder.name,)
    ).fetchone() == (model_id,)


def test_replay_records_overlap_per_org_visible_to_that_org_only(conn, ingest, models, retriever, next_embedder):
    ingest("acme", DOCS)
    ingest(
        "globex",
        {"runbooks/storage.md": DOCS["runbooks/storage.md"], "docs/payroll.md": "# Payroll\n\nRuns monthly.\n"},
    )
    retrieve(conn, retriever, "acme")
    retrieve(conn, retriever, "acme", "certificates renew")
    retrieve(conn, retriever, "globex", "payroll schedule")
    upgrade(conn, "prose", next_embedder)

    def factory(embedders, generations):
        return Retriever(embedders, None, generations=generations)

    # Both sides embed queries with torch: the bundled model's query lane otherwise runs
    # its int8 ONNX export, which the renamed copy does not, and int8 may reorder a top 3.
    same_runtime = {namespace: replace(e, query_backend="torch") for namespace, e in models.items()}
    summary = replay_shadow(conn, "prose", factory, same_runtime)
    assert summary.replayed == 3 and summary.errors == 0
    assert summary.mean_overlap == pytest.approx(1.0)  # same weights and runtime under a new name
    rows = conn.execute("select org_id, overlap, shared_top, top from data.model_replays order by org_id").fetchall()
    assert [r[0] for r in rows] == ["acme", "acme", "globex"] and all(r[3] == 3 for r in rows)
    # No query text is stored with a replay.
    columns = {
        r[0]
        for r in conn.execute("select column_name from information_schema.columns where table_name = 'model_replays'")
    }
    assert "query" not in columns and "request" not in columns

    from app.access import act_as

    for org, expected in (("acme", 2), ("globex", 1)):
        act_as(conn, org, "admin")
        assert conn.execute("select count(*) from data.model_replays").fetchone()[0] == expected
        assert {r[0] for r in conn.execute("select org_id from data.model_replays")} == {org}
        shadow = next(
            g
            for g in conn.execute("select status, replays, vectors, fragments from api.model_generations()")
            if g[0] == "shadow"
        )
        assert shadow[1] == expected and shadow[2] == shadow[3]
        conn.rollback()
    # A principal without an org grant sees no generations, and no replay.
    conn.execute("select service.create_principal('acme', 'intern', 'human', 'reads one repo')")
    conn.execute("select service.grant_scope('acme', 'intern', 'repo', 'web', false)")
    conn.commit()
    act_as(conn, "acme", "intern")
    assert conn.execute("select count(*) from data.model_replays").fetchone()[0] == 0
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute("select * from api.model_generations()")
    conn.rollback()


def test_promote_is_gated_waived_rolled_back_and_dropped_after_the_window(
    db_url, tmp_path, monkeypatch, next_model, ingest, conn
):
    ingest("acme", DOCS)
    sets = tmp_path / "sets"
    write_set(sets / "geo")
    monkeypatch.setenv("CONTEXTS_DATASETS", str(sets))
    baseline, waivers, out = tmp_path / "baseline.json", tmp_path / "waivers", tmp_path / "out"
    waivers.mkdir()

    def cli(*args):
        return CliRunner().invoke(main, ["--db-url", db_url, *args])

    gate_options = ("--baseline", str(baseline), "--waivers", str(waivers), "--out", str(out))
    made = cli("eval", "gate", "--update-baseline", "--dataset", "geo", *gate_options)
    assert made.exit_code == 0, made.output

    upgraded = cli("models", "upgrade", "prose", next_model, "--batch", "4", "--rate", "500", "--quiet", "--json")
    assert upgraded.exit_code == 0, upgraded.output
    run = json.loads(upgraded.stdout.strip().splitlines()[-1])
    assert run["generation"] == 2 and run["embedded"] > 0

    # A baseline above what the new generation achieves: the gate fails, nothing switches.
    written = json.loads(baseline.read_text())
    written["datasets"]["geo"]["stages"]["dense"]["ndcg@10"] = 1.01
    baseline.write_text(json.dumps(written))
    refused = cli("models", "promote", "prose", *gate_options)
    assert refused.exit_code != 0 and "geo/dense/ndcg@10" in refused.output and "shadow window" in refused.output
    status = {
        g["generation"]: g["status"]
        for g in json.loads(cli("models", "status", "--json").stdout)
        if g["namespace"] == "prose"
    }
    assert status == {1: "active", 2: "shadow"}

    waiver = (
        waiver_file(
            tmp_path / "extra",
            WAIVER.replace('"cacm"', '"geo"').replace('"lexical"', '"dense"').replace("accept = 0.47", "accept = 0.0"),
        )
        / "w.toml"
    )
    promoted = cli("models", "promote", "prose", "--waiver", str(waiver), *gate_options)
    assert promoted.exit_code == 0, promoted.output
    assert json.loads(promoted.stdout.strip().splitlines()[-1]) == {"namespace": "prose", "active": 2, "retired": 1}

    # Within the window: the old generation is kept, and promoting it back is cheap.
    assert cli("models", "drop-retired").exit_code == 0
    assert shadow_vectors(conn, 1) > 0
    rolled = cli("models", "rollback", "prose")
    assert rolled.exit_code == 0, rolled.output
    status = {
        g["generation"]: g for g in json.loads(cli("models", "status", "--json").stdout) if g["namespace"] == "prose"
    }
    assert (status[1]["status"], status[2]["status"]) == ("active", "retired")

    # After the window: drop-retired removes generation 2's vectors and index; the row stays.
    conn.execute(
        "update data.embedding_models set window_ends_at = now() - interval '1 second' "
        "where generation = 2 and namespace = 'prose'"
    )
    conn.commit()
    dropped = cli("models", "drop-retired", "--json")
    assert dropped.exit_code == 0, dropped.output
    assert [d["generation"] for d in json.loads(dropped.stdout.strip().splitlines()[-1])] == [2]
    model_id = conn.execute(
        "select model_id from data.embedding_models where namespace = 'prose' and generation = 2"
    ).fetchone()[0]
    assert shadow_vectors(conn, model_id) == 0
    assert (
        conn.execute("select 1 from pg_indexes where indexname = %s", (f"embeddings_hnsw_model_{model_id}",)).fetchone()
        is None
    )
    assert conn.execute(
        "select dropped_at is not null from data.embedding_models where model_id = %s", (model_id,)
    ).fetchone() == (True,)
