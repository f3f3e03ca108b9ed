"""Graded agent tasks: plumbing against a local test double of the model endpoint
(tests/eval/llm_double.py); no figure here says anything about a real model."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from app.cli import main
from app.eval import agent

DOCS = {
    "runbooks/pool.md": "# Connection pool\n\nIdle connections are drained every 60 seconds.\n",
    "runbooks/backup.md": "# Backups\n\nBackups are verified nightly by a restore into a scratch cluster.\n",
}
TASKS = [
    {
        "id": "pool",
        "question": "How often are idle connections drained?",
        "expected_answer": "every 60 seconds",
        "scope": {"org_id": "acme"},
    },
    {
        "id": "backup",
        "question": "How are backups verified?",
        "expected_answer": "by a weekly tape audit",
        "scope": "acme",
    },
]


def write_tasks(path, tasks=TASKS):
    path.write_text("".join(json.dumps(t) + "\n" for t in tasks))
    return path


def test_without_an_endpoint_the_command_refuses(db_url, tmp_path, monkeypatch):
    for name in ("CONTEXTS_AGENT_URL", "CONTEXTS_AGENT_MODEL", "CONTEXTS_AGENT_KEY"):
        monkeypatch.delenv(name, raising=False)
    result = CliRunner().invoke(main, ["--db-url", db_url, "eval", "agent", str(write_tasks(tmp_path / "t.jsonl"))])
    assert result.exit_code != 0
    assert "no agent endpoint configured" in result.output
    assert "accuracy" not in result.output


def test_task_file_errors(tmp_path):
    with pytest.raises(agent.TaskError, match="t.jsonl:1.*expected_answer"):
        agent.load_tasks(write_tasks(tmp_path / "t.jsonl", [{"question": "q", "scope": "acme"}]))
    with pytest.raises(agent.TaskError, match="must name an org"):
        agent.load_tasks(write_tasks(tmp_path / "t.jsonl", [{"question": "q", "expected_answer": "a"}]))
    assert agent.load_tasks(write_tasks(tmp_path / "t.jsonl", [{"question": "q", "expected_answer": "a"}]), "acme")[
        0
    ].scope == {"org_id": "acme"}


def test_judgement_parsing():
    assert agent.parse_judgement('Sure! ```json\n{"correct": false, "claims": []}\n```') == {
        "correct": False,
        "claims": [],
    }
    assert agent.parse_judgement("I think it is right.") is None
    assert agent.parse_judgement('{"score": 1}') is None  # no verdict


def test_agent_run_grades_answers_and_counts_unsupported_claims(db_url, conn, ingest, tmp_path):
    from tests.eval.llm_double import LLMDouble

    ingest("acme", DOCS)
    tasks = write_tasks(tmp_path / "tasks.jsonl")
    with LLMDouble() as double:
        result = CliRunner().invoke(
            main,
            [
                "--db-url",
                db_url,
                "eval",
                "agent",
                str(tasks),
                "--agent-url",
                double.url,
                "--agent-model",
                "m-agent",
                "--agent-key",
                "sk-test",
                "--judge-model",
                "m-judge",
                "--out",
                str(tmp_path / "out"),
                "--json",
            ],
            catch_exceptions=False,
        )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    # Task "pool" answers from its fragment; "backup" expects what no fragment says.
    assert summary["tasks"] == 2 and summary["graded"] == 2 and summary["accuracy"] == 0.5
    # Each answer: one cited sentence from the fragment, one uncited invention.
    assert summary["claims"] == 4 and summary["hallucination_rate"] == 0.5
    assert summary["judge"] == {"url": double.url, "model": "m-judge"} and "sk-test" not in result.output
    assert len(summary["spot_check"]) == 2

    bodies = [r["body"] for r in double.requests]
    assert [b["model"] for b in bodies] == ["m-agent", "m-judge", "m-agent", "m-judge"]
    assert all(r["path"] == "/v1/chat/completions" and r["auth"] == "Bearer sk-test" for r in double.requests)
    assert all(b["temperature"] == 0 and b["seed"] == 7 for b in bodies)
    assert "Idle connections are drained every 60 seconds." in bodies[0]["messages"][1]["content"]

    records = [json.loads(line) for line in (tmp_path / "out" / "agent-tasks.jsonl").read_text().splitlines()]
    assert records[0]["cited"] == [1] and records[0]["correct"] is True
    assert records[0]["fragments"][0]["source"].startswith("runbooks/pool.md")
    traced = conn.execute("select count(*) from data.retrieval_traces where org_id = 'acme'").fetchone()[0]
    assert traced == 2  # agent retrievals are real retrievals, traced like any other


def test_ungraded_and_failing_endpoints_are_errors(db_url, ingest, tmp_path):
    from tests.eval.llm_double import LLMDouble

    ingest("acme", DOCS)
    tasks = write_tasks(tmp_path / "tasks.jsonl")
    args = ["--db-url", db_url, "eval", "agent", str(tasks), "--agent-model", "m", "--out", str(tmp_path / "o")]
    with LLMDouble(judge_reply="Looks fine to me.") as double:
        result = CliRunner().invoke(main, [*args, "--agent-url", double.url])
    assert result.exit_code != 0 and "graded no answer" in result.output
    with LLMDouble(status=401) as double:
        result = CliRunner().invoke(main, [*args, "--agent-url", double.url])
    assert result.exit_code != 0 and "HTTP 401" in result.output
