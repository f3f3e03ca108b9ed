"""The regression gate: tolerance, waivers (format and scope), and the command."""

from __future__ import annotations

import json

import psycopg
import pytest
from click.testing import CliRunner

from app.cli import main
from app.eval import beir, gate
from tests.eval.test_golden import write_set

FIGURES = {"ndcg@10": 0.50, "mrr@10": 0.40, "recall@10": 0.60, "recall@100": 0.90}


def baseline(**stages):
    return {"datasets": {"cacm": {"split": "dev", "stages": {s: dict(v) for s, v in stages.items()}}}}


def report(**stages):
    return {"cacm": {"stages": stages}}


def waiver_file(folder, body, name="w.toml"):
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(body)
    return folder


WAIVER = """
change = "weighted fusion (change 42)"
reason = "lexical-only runs lose a little when code tokens are split"

[[waive]]
dataset = "cacm"
stage = "lexical"
metric = "ndcg@10"
accept = 0.47
"""


def test_within_tolerance_passes_and_beyond_fails():
    base = baseline(lexical=FIGURES)
    assert {c.status for c in gate.compare(base, report(lexical=FIGURES | {"ndcg@10": 0.4951}), [])} == {"ok"}
    checks = gate.compare(base, report(lexical=FIGURES | {"ndcg@10": 0.494}), [])
    assert [(c.metric, c.status) for c in checks] == [("ndcg@10", "regressed"), ("recall@100", "ok")]
    assert checks[0].failed and checks[0].delta == pytest.approx(-0.006)
    # Only nDCG@10 and recall@100 are gated: MRR may move freely.
    assert not any(c.failed for c in gate.compare(base, report(lexical=FIGURES | {"mrr@10": 0.1}), []))
    improved = gate.compare(base, report(lexical=FIGURES | {"recall@100": 0.95}), [])
    assert [c.status for c in improved] == ["ok", "improved"]


def test_missing_dataset_or_stage_fails():
    base = baseline(lexical=FIGURES, dense=FIGURES)
    checks = gate.compare(base, report(lexical=FIGURES), [])
    assert [c.status for c in checks if c.stage == "dense"] == ["missing", "missing"]
    assert all(c.status == "missing" for c in gate.compare(base, {}, []))


def test_waiver_covers_only_its_figure_down_to_accept(tmp_path):
    waivers = gate.load_waivers(waiver_file(tmp_path / "waivers", WAIVER))
    assert waivers == [
        gate.Waiver(
            "cacm",
            "lexical",
            "ndcg@10",
            0.47,
            "weighted fusion (change 42)",
            "lexical-only runs lose a little when code tokens are split",
            "w.toml",
        )
    ]
    base = baseline(lexical=FIGURES, dense=FIGURES)
    checks = gate.compare(base, report(lexical=FIGURES | {"ndcg@10": 0.48}, dense=FIGURES | {"ndcg@10": 0.48}), waivers)
    status = {(c.stage, c.metric): c.status for c in checks}
    assert status[("lexical", "ndcg@10")] == "waived"
    assert status[("dense", "ndcg@10")] == "regressed"  # another stage is not covered
    assert "change 42" in next(c.waiver for c in checks if c.status == "waived")
    deeper = gate.compare(base, report(lexical=FIGURES | {"ndcg@10": 0.46}, dense=FIGURES), waivers)
    assert [c.status for c in deeper if c.stage == "lexical"] == ["regressed", "ok"]


@pytest.mark.parametrize(
    "body, message",
    [
        (
            WAIVER.replace('reason = "lexical-only runs lose a little when code tokens are split"', 'reason = "  "'),
            "must say 'reason'",
        ),
        (WAIVER.replace('change = "weighted fusion (change 42)"', ""), "must say 'change'"),
        (WAIVER.replace('metric = "ndcg@10"', 'metric = "mrr@10"'), "only gated metrics"),
        (WAIVER.replace('stage = "lexical"', 'stage = "best"'), "stage must be one of"),
        (WAIVER.replace("accept = 0.47", "accept = 47"), "between 0 and 1"),
        (WAIVER.replace("accept = 0.47", ""), "needs exactly"),
        ("extra = 1\n" + WAIVER, "unknown key"),
        ('change = "x"\nreason = "y"\n', "lists what it waives"),
        ("change = ", "not valid TOML"),
    ],
)
def test_bad_waivers_are_refused(tmp_path, body, message):
    with pytest.raises(gate.GateError, match=message):
        gate.load_waivers(waiver_file(tmp_path / "waivers", body))


def test_bad_baselines_are_refused(tmp_path):
    path = tmp_path / "baseline.json"
    with pytest.raises(gate.GateError, match="eval-baseline"):
        gate.load_baseline(path)
    path.write_text(json.dumps(baseline(lexical={"ndcg@10": 0.5})))
    with pytest.raises(gate.GateError, match="recall@100"):
        gate.load_baseline(path)


def test_a_gate_run_plans_measures_and_judges_without_the_command(tmp_path):
    sets = tmp_path / "sets"
    for name in ("cacm", "geo"):
        write_set(sets / name)
    path = tmp_path / "baseline.json"
    with pytest.raises(gate.GateError, match="no dataset to run"):
        gate.plan(path, tmp_path / "waivers", tmp_path / "none", update_baseline=True)
    first = gate.plan(path, tmp_path / "waivers", sets, update_baseline=True)  # no baseline yet: every set
    assert list(first.datasets) == ["cacm", "geo"] and first.baseline is None
    assert (first.depth, first.rerank_top) == (200, 50)

    def run_set(figures):
        return lambda directory, split: {
            "split": split or "test",
            "queries": 3,
            "depth": 200,
            "rerank_top": 50,
            "pipeline_version": {},
            "stages": {"lexical": dict(figures)},
        }

    measured = gate.measure(first, run_set(FIGURES))
    assert measured.rows() == [("cacm", "lexical", FIGURES), ("geo", "lexical", FIGURES)]
    gate.write_baseline(first, measured, path)

    with pytest.raises(beir.DatasetError, match="no such dataset"):
        gate.plan(path, tmp_path / "waivers", sets, only=("trec",))
    only_geo = gate.plan(path, tmp_path / "waivers", sets, only=("geo",))
    assert list(only_geo.datasets) == ["geo"] and only_geo.split("geo") == "test"
    verdict = gate.judge(only_geo, gate.measure(only_geo, run_set(FIGURES | {"ndcg@10": 0.4})))
    assert {c.dataset for c in verdict.checks} == {"geo"}  # cacm was not run, so it is not missing
    assert not verdict.passed and verdict.failure().startswith("gate failed: 1 figure(s)")
    assert json.loads(gate.write_verdict(verdict, tmp_path / "out").read_text())["passed"] is False
    assert verdict.checks[0].cells() == ("geo", "lexical", "ndcg@10", "0.5000", "0.4000", "-0.1000")


def test_gate_command_update_then_pass_then_fail(db_url, tmp_path, monkeypatch):
    sets = tmp_path / "sets"
    write_set(sets / "geo")
    monkeypatch.setenv("CONTEXTS_DATASETS", str(sets))
    path, waivers, out = tmp_path / "baseline.json", tmp_path / "waivers", tmp_path / "out"

    def gate_cmd(*extra):
        return CliRunner().invoke(
            main,
            [
                "--db-url",
                db_url,
                "eval",
                "gate",
                "--baseline",
                str(path),
                "--waivers",
                str(waivers),
                "--out",
                str(out),
                *extra,
            ],
        )

    created = gate_cmd("--update-baseline", "--dataset", "geo")
    assert created.exit_code == 0, created.output
    written = json.loads(path.read_text())
    assert set(written["datasets"]["geo"]["stages"]) == {"lexical", "dense", "hybrid", "full"}
    assert written["depth"] == 200

    passed = gate_cmd("--json")
    assert passed.exit_code == 0, passed.output
    assert json.loads(passed.stdout.strip().splitlines()[-1])["passed"] is True

    # A baseline above what the pipeline achieves stands for a regression.
    written["datasets"]["geo"]["stages"]["dense"]["ndcg@10"] = 1.01
    path.write_text(json.dumps(written))
    failed = gate_cmd()
    assert failed.exit_code != 0 and "gate failed" in failed.output and "geo/dense/ndcg@10" in failed.output
    waiver_file(
        waivers,
        WAIVER.replace('"cacm"', '"geo"').replace('"lexical"', '"dense"').replace("accept = 0.47", "accept = 0.0"),
    )
    assert gate_cmd().exit_code == 0
    # Each gate run is stored with its outcome and, per gated figure, baseline and status.
    with psycopg.connect(db_url) as conn:
        runs = conn.execute("select run_id, command, outcome from api.eval_runs order by run_id").fetchall()
        assert [r[1:] for r in runs] == [
            ("gate", "baseline"),
            ("gate", "passed"),
            ("gate", "failed"),
            ("gate", "passed"),
        ]
        regressed = conn.execute(
            "select stage, metric, baseline, status, waiver is not null from api.eval_figures "
            "where run_id = %s and status <> 'ok'",
            (runs[2][0],),
        ).fetchall()
        assert regressed == [("dense", "ndcg@10", 1.01, "regressed", False)]
        waived = conn.execute(
            "select status, waiver from api.eval_figures where run_id = %s and status = 'waived'", (runs[3][0],)
        ).fetchall()
        assert len(waived) == 1 and waived[0][1]
        assert (
            conn.execute(
                "select count(*) from api.eval_figures where run_id = %s and status is null", (runs[0][0],)
            ).fetchone()[0]
            == 4 * 4 * 3
        )  # stages x metrics x (all queries, two scopes); nothing gated
    assert json.loads(passed.stdout.strip().splitlines()[-1])["eval_run_id"] == runs[1][0]


def test_fusion_margin_compares_hybrid_with_the_better_single_side():
    reports = {
        "a": {"stages": {"lexical": {"ndcg@10": 0.4}, "dense": {"ndcg@10": 0.5}, "hybrid": {"ndcg@10": 0.55}}},
        "b": {"stages": {"lexical": {"ndcg@10": 0.4}, "dense": {"ndcg@10": 0.5}, "hybrid": {"ndcg@10": 0.45}}},
        "c": {"stages": {"lexical": {"ndcg@10": 0.4}}},
    }
    assert gate.fusion_margins(reports) == {"a": 0.05, "b": -0.05, "c": None}
