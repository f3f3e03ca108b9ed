"""Regression replays: recorded queries (traces or JSONL) against two configurations."""

from __future__ import annotations

import json

import msgspec
import pytest
from click.testing import CliRunner

from app.cli import main
from app.eval import replay
from app.retrieve.config import ConfigError, PipelineConfig
from app.retrieve.service import Retriever
from app.wire.retrieve import RetrieveRequest

DOCS = {
    "runbooks/pool.md": (
        "# Connection pool\n\nDrain idle connections from the pool every minute; never kill busy ones.\n"
    ),
    "runbooks/cache.md": "# Cache\n\nThe cache evicts least recently used entries when memory runs low.\n",
    "runbooks/deploy.md": "# Deploys\n\nDeploys roll out one zone at a time and pause on error budgets.\n",
    "runbooks/backup.md": "# Backups\n\nNightly backups are verified by restoring into a scratch cluster.\n",
}


def test_jaccard_and_tokens():
    assert replay.tokens("Drain the pool, drain!") == {"drain", "the", "pool"}
    assert replay.jaccard({"a", "b"}, {"b", "c"}) == pytest.approx(1 / 3)
    assert replay.jaccard(set(), set()) == 1.0
    assert replay.jaccard({"a"}, set()) == 0.0


def test_config_files_are_validated(tmp_path):
    good = tmp_path / "c.toml"
    good.write_text("k_dense = 0\nrrf_k = 30\n")
    assert PipelineConfig.load(good) == PipelineConfig(k_dense=0, rrf_k=30)
    assert PipelineConfig().reranker == "learned"  # the default full stage (docs/adr/0015)
    # A knob the file leaves out keeps the current value (CONTEXTS_RERANKER), not the default.
    current = PipelineConfig(reranker="none")
    assert PipelineConfig.load(good, current) == PipelineConfig(k_dense=0, rrf_k=30, reranker="none")
    named = tmp_path / "named.toml"
    named.write_text('reranker = "learned"\n')
    assert PipelineConfig.load(named, current).reranker == "learned"
    bad = tmp_path / "bad.json"
    bad.write_text('{"k_dense": -1}')
    with pytest.raises(ConfigError, match="k_dense"):
        PipelineConfig.load(bad)
    unknown = tmp_path / "unknown.json"
    unknown.write_text('{"fusion_magic": 1}')
    with pytest.raises(ConfigError, match="unknown knob"):
        PipelineConfig.load(unknown)


def test_replay_flags_changed_top3_only(conn, ingest, as_principal, models, retriever):
    ingest("acme", DOCS)
    for q in ("drain idle connections", "nightly backups restore", "cache eviction"):
        as_principal("acme")
        retriever.retrieve(conn, msgspec.convert({"query": q, "scope": {"org_id": "acme"}}, RetrieveRequest))
        conn.commit()  # one transaction each: distinct created_at
    selection = replay.from_traces(conn, "acme", 10)
    recorded, nothing_skipped = selection.recorded, selection.skipped
    assert nothing_skipped == [] and {r.kind for r in recorded} == {"retrieval"}
    assert [r.request.query for r in recorded] == [
        "cache eviction",
        "nightly backups restore",
        "drain idle connections",
    ]
    assert {r.principal for r in recorded} == {"admin"}
    current = (PipelineConfig(), Retriever(models, None, PipelineConfig()))

    same = replay.replay(conn, recorded, current, current)
    assert same.flagged == [] and all(r["overlap"] == 1.0 and r["same_order"] for r in same.results)

    # One lexical result instead of three fused ones: most of the top-3 text disappears.
    narrow = PipelineConfig(k_lexical=1, k_dense=0)
    report = replay.replay(conn, recorded, current, (narrow, Retriever(models, None, narrow)))
    for r in report.results:
        assert len(r["current"]) == 3 and len(r["candidate"]) == 1
        assert r["current"][0]["source"] == r["candidate"][0]["source"]  # the best hit is still there
        assert r["flagged"] == (r["overlap"] < 0.5)
    assert len(report.flagged) == 3
    text = replay.render_text(report)
    assert "3 flagged" in text and "k_lexical: None -> 1" in text
    # A permissive threshold flags nothing.
    assert (
        replay.replay(conn, recorded, current, (narrow, Retriever(models, None, narrow)), threshold=0.0).flagged == []
    )
    assert conn.execute("select count(*) from data.retrieval_traces").fetchone()[0] == 3  # replays leave none


def test_jsonl_input_errors(tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_text('{"query": "x"}\n')
    with pytest.raises(replay.ReplayError, match="no scope"):
        replay.from_jsonl(path, "admin")
    assert replay.from_jsonl(path, "admin", "acme")[0].request.scope.org_id == "acme"
    path.write_text('{"query": "x", "scope": {"org_id": "acme"}}\nnot json\n')
    with pytest.raises(replay.ReplayError, match="q.jsonl:2"):
        replay.from_jsonl(path, "admin")
    path.write_text('{"query": "", "scope": {"org_id": "acme"}}\n')
    with pytest.raises(replay.ReplayError, match="q.jsonl:1"):
        replay.from_jsonl(path, "admin")


def test_cli_replay_from_jsonl(db_url, conn, ingest, tmp_path):
    ingest("acme", DOCS)
    queries = tmp_path / "q.jsonl"
    queries.write_text("".join(json.dumps({"query": q}) + "\n" for q in ("drain idle connections", "deploy zones")))
    candidate = tmp_path / "candidate.json"
    candidate.write_text('{"k_lexical": 1, "k_dense": 0}')
    out = tmp_path / "report.json"
    args = [
        "--db-url",
        db_url,
        "eval",
        "replay",
        "--candidate",
        str(candidate),
        "--queries",
        str(queries),
        "--org",
        "acme",
        "--json",
        "--out",
        str(out),
    ]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout.strip().splitlines()[-1])
    assert body["queries"] == 2 and body["flagged"] == 2 and json.loads(out.read_text()) == body
    # Stored per query, for the principal it was replayed for (admin, the default).
    conn.execute("select service.bind_principal('acme', 'admin')")
    conn.execute("set local role contexts_analyst")
    stored = conn.execute(
        "select query, flagged, jsonb_array_length(current), jsonb_array_length(candidate), redacted "
        "from api.eval_replay_diffs where run_id = %s order by ordinal",
        (body["eval_run_id"],),
    ).fetchall()
    assert stored == [("drain idle connections", True, 3, 1, []), ("deploy zones", True, 3, 1, [])]
    conn.rollback()
    failing = CliRunner().invoke(main, [*args, "--fail-on-flag"])
    assert failing.exit_code == 1

    # A request for the previous embedding generation is skipped, with where generations are compared.
    queries.write_text(json.dumps({"query": "deploy zones", "generation": "previous"}) + "\n")
    previous = CliRunner().invoke(
        main,
        [
            "--db-url",
            db_url,
            "eval",
            "replay",
            "--candidate",
            str(candidate),
            "--queries",
            str(queries),
            "--org",
            "acme",
        ],
    )
    assert previous.exit_code == 1 and "no query to replay (1 skipped: retrieval 1 skipped)" in previous.output

    no_traces = CliRunner().invoke(main, ["--db-url", db_url, "eval", "replay", "--candidate", str(candidate)])
    assert no_traces.exit_code != 0 and "no recorded retrieval" in no_traces.output
    bad = tmp_path / "bad.toml"
    bad.write_text("k_dense = [")
    broken = CliRunner().invoke(main, ["--db-url", db_url, "eval", "replay", "--candidate", str(bad)])
    assert broken.exit_code != 0 and "not valid TOML" in broken.output
