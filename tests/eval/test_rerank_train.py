"""Training of the learned reranker: reproducible, calibrated, scored as `full` is."""

from __future__ import annotations

import json

import pytest

from app.eval.rerank_data import QueryRow
from app.eval.rerank_train import (
    FEATURES,
    LINEAR_FEATURES,
    calibrate,
    full_order,
    model_file,
    probability,
    validate,
)
from app.retrieve import learned
from app.retrieve.learned import LearnedReranker, explain
from app.text.stems import TEXT_CHARS
from tests.retrieve.test_features import candidate

SMALL = {
    "objective": "lambdarank",
    "learning_rate": 0.3,
    "num_leaves": 3,
    "min_data_in_leaf": 1,
    "num_threads": 1,
    "deterministic": True,
    "force_row_wise": True,
    "seed": 7,
    "verbosity": -1,
}


def rows(dataset: str, count: int = 12) -> list[QueryRow]:
    """Queries whose relevant fragment is the one holding every query word, wherever
    the fused list put it (here: last)."""
    out = []
    for q in range(count):
        head = [
            candidate(q * 10 + i, f"filler text number {i} about nothing", fused=1.0 - i / 10, lexical=(i + 1, 5.0 - i))
            for i in range(4)
        ]
        head.append(candidate(q * 10 + 9, "rotate the signing keys", fused=0.5, lexical=(5, 1.0)))
        docs = [[f"d{c.fragment_id}"] for c in head]
        out.append(
            QueryRow(
                dataset=dataset,
                query_id=str(q),
                query="rotate signing keys",
                qrels={f"d{q * 10 + 9}": 1},
                head=head,
                head_docs=docs,
                grades=[0, 0, 0, 0, 1],
                tail_docs=[],
            )
        )
    return out


@pytest.mark.parametrize("kind", ["linear", "lambdamart"])
def test_same_data_same_model(tmp_path, kind):
    data = rows("a") + rows("b")
    params = SMALL if kind == "lambdamart" else None
    first, meta = model_file(data, None, "sha", params=params, rounds=10, kind=kind)
    second, _ = model_file(data, None, "sha", params=params, rounds=10, kind=kind)
    assert first == second
    assert meta["training_data"] == {
        "sha256": "sha",
        "sets": {"a": 12, "b": 12},
        "pairs": 120,
        "labels": "qrels grade of the fragment's best document (dev split)",
    }
    assert meta["params"]["seed"] == 7
    if kind == "lambdamart":
        assert meta["params"]["deterministic"] is True and meta["features"] == list(FEATURES)
    else:
        assert meta["model"] == "linear pairwise" and meta["features"] == list(LINEAR_FEATURES)
    path = tmp_path / "model.json"
    path.write_text(first)
    assert json.loads(path.read_text())["metadata"]["version"] == meta["version"]

    # The model learned to put the fragment holding every query word first.
    reranker = LearnedReranker(str(path))
    head = rows("c", 1)[0].head
    scores = reranker.score("rotate signing keys", head)
    assert max(range(5), key=lambda i: scores[i]) == 4
    assert all(0.0 <= s <= 1.0 for s in scores)
    explain(head)  # what the final order's first get (app.retrieve.stages.boost)
    detail = head[4].rerank_detail
    assert detail is not None and set(detail["features"]) == set(meta["features"])
    assert len(detail["contributions"]) == 5


@pytest.mark.parametrize("kind", ["linear", "lambdamart"])
def test_held_out_validation_scores_the_full_order(kind):
    params = SMALL if kind == "lambdamart" else None
    folds = validate(rows("a") + rows("b"), "set", params=params, rounds=10, kind=kind, share=0.0)
    assert [f.held_out for f in folds] == ["a", "b"]
    for f in folds:
        assert f.hybrid == pytest.approx(1 / 2.584962500721156)  # relevant fifth: 1 / log2(6)
        assert f.full == 1.0
    # By default the held-out lists are scored with the shipped fused share, as the
    # service scores them; all of the share to the fused order is the hybrid order.
    shared = validate(rows("a") + rows("b"), "set", params=params, rounds=10, kind=kind)
    explicit = validate(rows("a") + rows("b"), "set", params=params, rounds=10, kind=kind, share=learned.FUSED_SHARE)
    assert [f.full for f in shared] == [f.full for f in explicit]
    fused = validate(rows("a") + rows("b"), "set", params=params, rounds=10, kind=kind, share=1.0)
    assert all(f.full == pytest.approx(f.hybrid) for f in fused)


@pytest.mark.parametrize("share", [0.0, 0.5, 0.85])
def test_full_order_is_the_services_order_with_the_fused_share(share):
    """The simulation's base score is app.retrieve.rerank.order's: (1 - share) x the
    reranker's score + share x fused / best fused of the head."""
    from app.retrieve import rerank

    row = rows("a", 1)[0]
    scores = [0.1, 0.3, 0.2, 0.05, 0.9]

    class Fixed:
        name, version, fused_share = "fixed", None, share

        def load(self) -> None: ...

        def score(self, query, candidates):
            return [scores[row.head.index(c)] for c in candidates]

    served = rerank.order(row.query, list(row.head), len(row.head), Fixed())
    assert full_order(row, scores, share) == [row.head.index(c) for c in served]


def test_calibration_is_monotone_and_bounded():
    import numpy as np

    raw = np.array([-2.0, -1.0, 0.0, 1.0, 2.0, 3.0] * 10)
    labels = np.array([0, 0, 0, 1, 1, 1] * 10)
    labels[0] = 1  # not separable: the fit stays finite
    a, b = calibrate(raw, labels)
    assert a > 0
    ps = [probability(r, (a, b)) for r in (-5.0, 0.0, 0.5, 5.0)]
    assert ps == sorted(ps) and 0.0 <= ps[0] and ps[-1] <= 1.0


@pytest.mark.parametrize("spread", [0.5, 2.0, 4.0, 8.0])
@pytest.mark.parametrize("rate", [0.01, 0.1])
def test_calibration_finds_the_logistic_fit_however_widely_the_raw_scores_spread(spread, rate):
    """Raw scores spread over more than a few units (a held-out fold's model) made the
    undamped Newton steps overshoot: a and b in the millions, every probability 0 or 1,
    and the held-out list left in the fused order or shuffled by ties (ADR 0015, eighth
    amendment). Drawn from a known logistic model, the fit finds it, and its gradient is 0."""
    import numpy as np

    rng = np.random.default_rng(0)
    raw = rng.normal(0.0, spread, 20_000)
    labels = (rng.random(raw.size) < 1.0 / (1.0 + np.exp(-(0.8 * raw + np.log(rate))))).astype(int)
    a, b = calibrate(raw, labels)
    assert a == pytest.approx(0.8, abs=0.1) and b == pytest.approx(np.log(rate), abs=0.35)
    p = 1.0 / (1.0 + np.exp(-(a * raw + b)))
    assert abs(np.sum(p - labels)) < 1e-3 and abs(np.sum((p - labels) * raw)) < 1e-2


def test_full_order_blends_authority_as_the_service_does():
    row = rows("a", 1)[0]
    row.head[1].authority = 1.0
    # Equal reranker scores: authority (weight 0.1 of the built-in profile) decides.
    assert full_order(row, [0.5] * 5)[0] == 1
    assert full_order(row, [0.1, 0.1, 0.1, 0.1, 0.9])[0] == 4


def write_cache(path, dataset: str, data: list[QueryRow]) -> None:
    """A file as `contexts rerank collect` writes it."""
    import gzip

    from app.eval.rerank_data import _candidate_json

    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.write(json.dumps({"dataset": dataset, "corpus": "x", "pipeline": {}, "top": 50}) + "\n")
        for r in data:
            row = {
                "query_id": r.query_id,
                "query": r.query,
                "qrels": r.qrels,
                "head": [_candidate_json(c) for c in r.head],
                "head_docs": r.head_docs,
                "grades": r.grades,
                "tail_docs": r.tail_docs,
            }
            fh.write(json.dumps(row) + "\n")


@pytest.mark.parametrize("kind", ["linear", "lambdamart"])
def test_train_command_writes_a_model_with_its_provenance(tmp_path, monkeypatch, kind):
    from click.testing import CliRunner

    from app.cli import main
    from app.eval import rerank_train

    monkeypatch.setattr(rerank_train, "PARAMS", SMALL)
    monkeypatch.setattr(rerank_train, "ROUNDS", 5)
    cache = tmp_path / "cache"
    cache.mkdir()
    for name in ("a", "b"):
        write_cache(cache / f"{name}.jsonl.gz", name, rows(name))
    out = tmp_path / "model.json"
    args = ["rerank", "train", "--cache", str(cache), "--dataset", "a", "--dataset", "b", "--out", str(out)]
    args += ["--kind", kind, "--fused-share", "0"]  # the model alone
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    metadata = json.loads(out.read_text())["metadata"]
    assert metadata["model"] == {"linear": "linear pairwise", "lambdamart": "lightgbm lambdarank"}[kind]
    assert metadata["training_data"]["sets"] == {"a": 12, "b": 12}
    assert len(metadata["training_data"]["sha256"]) == 64
    assert metadata["validation"]["leave_one_set_out"]["sets"]["a"]["full"] == 1.0
    assert json.loads(result.output.strip().splitlines()[-1])["version"] == metadata["version"]


def test_standardized_features_are_per_list_z_scores():
    import numpy as np

    from app.retrieve.features import standardized

    x = np.array([[1.0, 5.0, 0.2], [3.0, 5.0, 0.4], [5.0, 5.0, 0.9]])
    z = standardized(x)
    assert z[:, 0] == pytest.approx([-1.224744871, 0.0, 1.224744871])
    assert list(z[:, 1]) == [0.0, 0.0, 0.0]  # a constant column says nothing within the list
    assert z.mean(axis=0) == pytest.approx([0.0, 0.0, 0.0], abs=1e-12)
    assert list(standardized(np.array([[2.0, 3.0]]))[0]) == [0.0, 0.0]  # a list of one


def test_linear_scores_are_weights_over_list_z_scores_and_contributions_add_up(tmp_path):
    import numpy as np

    text, metadata = model_file(rows("a") + rows("b"), None, "sha", kind="linear")
    path = tmp_path / "linear.json"
    path.write_text(text)
    reranker = LearnedReranker(str(path))
    assert reranker.info()["kind"] == "linear-pairwise"
    weights = json.loads(json.loads(text)["model"])["weights"]
    head = rows("c", 1)[0].head
    reranker.score("rotate signing keys", head)
    explain(head)
    x = np.asarray(reranker.rows("rotate signing keys", head))
    # By hand: each column over this list, (x - mean) / population std (0 if constant).
    for i, c in enumerate(head):
        detail = c.rerank_detail
        assert detail is not None
        raw = 0.0
        for j, name in enumerate(metadata["features"]):
            column = x[:, j]
            spread = float(np.sqrt(((column - column.mean()) ** 2).mean()))
            z = (x[i, j] - column.mean()) / spread if spread > 1e-12 else 0.0
            raw += z * weights[name]
            if name in detail["contributions"]:
                assert detail["contributions"][name] == pytest.approx(z * weights[name], abs=1e-4)
        assert detail["raw"] == pytest.approx(raw)


def test_an_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="unknown model kind"):
        validate(rows("a") + rows("b"), "set", kind="svm")
    with pytest.raises(ValueError, match="unknown model kind"):
        model_file(rows("a"), None, "sha", columns=("fused_rr",), kind="linear ")


GOOD = {
    "model": "linear pairwise",
    "features": ["fused_rr", "coverage"],
    "text_chars": TEXT_CHARS,
    "version": "x",
    "calibration": {"a": 1, "b": 0},
}
WEIGHTS = '{"weights": {"fused_rr": 1.0, "coverage": 0.5}}'


def without(key: str) -> dict:
    return {k: v for k, v in GOOD.items() if k != key}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[1, 2]", "no metadata object"),
        (json.dumps({"metadata": GOOD | {"features": 5}, "model": WEIGHTS}), "no feature list"),
        (json.dumps({"metadata": GOOD | {"features": ["nope"]}, "model": WEIGHTS}), "does not compute: nope"),
        (json.dumps({"metadata": without("calibration"), "model": WEIGHTS}), "calibration"),
        (json.dumps({"metadata": without("text_chars"), "model": WEIGHTS}), "unrecorded characters"),
        (json.dumps({"metadata": GOOD | {"text_chars": 1200}, "model": WEIGHTS}), "first 1200 characters"),
        (json.dumps({"metadata": GOOD | {"calibration": {"a": "NaN", "b": 0}}, "model": WEIGHTS}), "not finite"),
        (json.dumps({"metadata": without("version"), "model": WEIGHTS}), "no version"),
        (json.dumps({"metadata": GOOD, "model": "not json"}), "no weights object"),
        (json.dumps({"metadata": GOOD, "model": '{"weights": {"fused_rr": 1.0}}'}), "exactly the listed"),
        (json.dumps({"metadata": GOOD, "model": '{"weights": {"fused_rr": 1, "coverage": 1, "x": 2}}'}), "exactly"),
        (json.dumps({"metadata": GOOD, "model": '{"weights": {"fused_rr": NaN, "coverage": 1}}'}), "not finite"),
        (json.dumps({"metadata": GOOD, "model": '{"weights": {"fused_rr": "a", "coverage": 1}}'}), "not a number"),
        (json.dumps({"metadata": GOOD | {"model": "svm"}, "model": "{}"}), "unknown model kind"),
        (json.dumps({"metadata": GOOD | {"model": "lightgbm lambdarank"}, "model": "garbage"}), "not a LightGBM"),
    ],
)
def test_a_broken_model_file_is_refused_with_a_reason(tmp_path, text, message):
    from app.retrieve import learned

    path = tmp_path / f"broken-{abs(hash(text))}.json"
    path.write_text(text)
    with pytest.raises(learned.ModelError, match=message):
        learned.load(path)


def test_a_good_linear_file_loads(tmp_path):
    from app.retrieve import learned

    path = tmp_path / "good.json"
    path.write_text(learned.dump(WEIGHTS, GOOD))
    model = learned.load(path)
    assert list(model.booster.weights) == [1.0, 0.5] and model.kind == learned.LINEAR


def test_a_variant_of_the_columns_is_trained_and_validated_by_command(tmp_path):
    """`--column +NAME/-NAME` trains (and validates) the default columns with one added or
    dropped, so each variant the ADR measures is one command; a name the features do not
    compute, or dropping a column the model does not read, is refused with the reason."""
    from click.testing import CliRunner

    from app.cli import main

    cache = tmp_path / "cache"
    cache.mkdir()
    for name in ("a", "b"):
        write_cache(cache / f"{name}.jsonl.gz", name, rows(name))
    out = tmp_path / "model.json"
    base = ["rerank", "train", "--cache", str(cache), "--dataset", "a", "--dataset", "b", "--out", str(out)]
    args = [*base, "--column", "+lead_coverage", "--column", "-kind_turn", "--no-validate"]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    columns = json.loads(out.read_text())["metadata"]["features"]
    assert columns == [c for c in LINEAR_FEATURES if c != "kind_turn"] + ["lead_coverage"]
    assert LearnedReranker(str(out)).model.columns == columns

    validate = ["rerank", "validate", "--cache", str(cache), "--dataset", "a", "--dataset", "b", "--json"]
    result = CliRunner().invoke(main, [*validate, "--column", "+lead_coverage"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert json.loads(result.output.strip().splitlines()[-1])["leave_one_set_out"]["sets"]["a"]["full"] == 1.0

    for change, message in (
        ("+no_such_feature", "expected +NAME or -NAME"),
        ("lead_coverage", "expected +NAME or -NAME"),
        ("-lead_coverage", "not a column of the linear model"),
    ):
        result = CliRunner().invoke(main, [*base, "--column", change])
        assert result.exit_code != 0 and message in result.output, (change, result.output)


def test_validation_skips_a_protocol_with_one_group_and_refuses_one_set(tmp_path):
    """The three conversations are one family: leaving one family out has nothing to
    train on, so it is skipped with a line (it was a ZeroDivisionError); one set alone
    cannot be validated at all, which is one CLI line, while training on it still works."""
    from click.testing import CliRunner

    from app.cli import main

    cache = tmp_path / "cache"
    cache.mkdir()
    for name in ("locomo-conv-26", "locomo-conv-30"):
        write_cache(cache / f"{name}.jsonl.gz", name, rows(name))
    base = ["rerank", "validate", "--cache", str(cache), "--dataset", "locomo-conv-26"]
    result = CliRunner().invoke(main, [*base, "--dataset", "locomo-conv-30", "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "leave one family out: skipped (the sets are all of one family: locomo)" in result.output
    report = json.loads(result.output.strip().splitlines()[-1])
    assert list(report) == ["leave_one_set_out"] and set(report["leave_one_set_out"]["sets"]) == {
        "locomo-conv-26",
        "locomo-conv-30",
    }

    result = CliRunner().invoke(main, base)
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert result.output.strip() == "error: validation leaves one set out in turn: name two sets or more (--dataset)"
    out = tmp_path / "one.json"
    train = ["rerank", "train", "--cache", str(cache), "--dataset", "locomo-conv-26", "--out", str(out)]
    result = CliRunner().invoke(main, train, catch_exceptions=False)
    assert result.exit_code == 0 and "held-out figures: none" in result.output and out.is_file()
    with pytest.raises(ValueError, match="two sets or more"):
        validate(rows("only"), "set")


def test_the_misses_command_says_which_evidence_could_tell_the_answer_from_the_fused_first(tmp_path):
    """Each query's answer holds every query word but trails the fused first on BM25: the
    diagnosis counts one miss per query, the answer below the first on the BM25 ratio and
    above it on coverage, in every miss."""
    from click.testing import CliRunner

    from app.cli import main

    cache = tmp_path / "cache"
    cache.mkdir()
    write_cache(cache / "a.jsonl.gz", "a", rows("a"))
    args = ["rerank", "misses", "--cache", str(cache), "--dataset", "a", "--json"]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    found = json.loads(result.output.strip().splitlines()[-1])["a"]
    assert found["misses"] == 12
    assert found["above_below"]["lexical_ratio"] == [0.0, 1.0]
    assert found["above_below"]["coverage_idf"] == [1.0, 0.0]
