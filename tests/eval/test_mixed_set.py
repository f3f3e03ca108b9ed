"""The mixed-repository set builder (app/eval/mixed_set.py) on a small repository made
here, and the set it built from click (eval/datasets/mixed-click): held-out sentences,
fragment-level labels at the lines of the final text, determinism, and its errors."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from app.eval import beir, mixed_set

pytestmark = pytest.mark.unit

CLI_PY = '''"""The shop's command line."""

import click


def ship_order(order, carrier=None):
    """Send a paid order to the carrier that delivers it the soonest.

    The carrier is asked for a pickup slot first.
    """
    return carrier


def _helper():
    """Private helpers are never asked about in any of these sets."""


def total(items):
    """Returns the total."""
    return sum(items)


class Invoice:
    """Print an invoice as a plain text document for the customer, e.g. by mail."""

    def render(self):
        """Lay out every line of the invoice with its tax and discount columns."""
        return ""

    def copy(self):
        """Duplicate the invoice when a customer asks for another one."""


class Receipt:
    def copy(self):
        """Duplicate the invoice when a customer asks for another one."""
'''

GUIDE_RST = """Shipping guide
==============

.. currentmodule:: shop

Orders leave the warehouse once they are paid and packed by the team.
Use :func:`ship_order` to hand one over; see ``Invoice.render`` too.

Invoices
--------

- a list does not open with a sentence

Printing
--------

.. versionadded:: 2.0

Every invoice can be printed by the :class:`Invoice` class for the post.
"""

TEST_PY = '''def test_ship():
    """Shipping a paid order reaches the carrier in time for pickup."""
'''


def make_repo(root: Path) -> Path:
    for path, text in {
        "src/shop/cli.py": CLI_PY,
        "docs/guide.rst": GUIDE_RST,
        "tests/test_ship.py": TEST_PY,
        "CHANGES.rst": "Version 1\n---------\n\nThe first release of the shop came out in the spring.\n",
        ".github/notes.md": "# Notes\n\nHidden folders are never read by the builder.\n",
    }.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return root


def read_set(out: Path) -> tuple[dict[str, str], dict[str, str], dict[str, dict[str, int]]]:
    corpus = {r["_id"]: r["text"] for r in map(json.loads, (out / "corpus.jsonl").read_text().splitlines())}
    queries = {r["_id"]: r["text"] for r in map(json.loads, (out / "queries.jsonl").read_text().splitlines())}
    qrels: dict[str, dict[str, int]] = {}
    for line in (out / "qrels" / "dev.tsv").read_text().splitlines()[1:]:
        q, d, g = line.split("\t")
        qrels.setdefault(q, {})[d] = int(g)
    return corpus, queries, qrels


def line_of(text: str, label: str) -> str:
    return text.split("\n")[int(label.rsplit("#L", 1)[1]) - 1]


def test_questions_are_held_out_sentences_and_labels_name_the_answering_fragment(tmp_path):
    repo = make_repo(tmp_path / "repo")
    assert mixed_set.main([str(repo), str(tmp_path / "set"), "--licence", "MIT"]) == 0
    corpus, queries, qrels = read_set(tmp_path / "set")

    assert queries == {
        "code:src/shop/cli.py:Invoice": "Print an invoice as a plain text document for the customer, e.g. by mail.",
        "code:src/shop/cli.py:Invoice.render": "Lay out every line of the invoice with its tax and discount columns.",
        "code:src/shop/cli.py:ship_order": "Send a paid order to the carrier that delivers it the soonest.",
        "doc:docs/guide.rst:Shipping guide #1": "Orders leave the warehouse once they are paid and packed by the team.",
        "doc:docs/guide.rst:Shipping guide > Printing #1": "Every invoice can be printed by the class for the post.",
    }  # not: private, "Returns X", a sentence two symbols share, tests, changelogs, hidden folders, lists
    cli, guide = corpus["src/shop/cli.py"], corpus["docs/guide.rst"]
    for question in queries.values():
        assert question.split(",")[0].rstrip(".") not in cli + guide  # held out of the corpus
    assert "    The carrier is asked for a pickup slot first." in cli  # the rest stays
    assert "Use :func:`ship_order` to hand one over" in guide
    assert "tests/test_ship.py" in corpus and "CHANGES.rst" in corpus  # the corpus is every file

    ship = qrels["code:src/shop/cli.py:ship_order"]
    (answer,) = [d for d, g in ship.items() if g == 2]
    assert line_of(cli, answer) == "def ship_order(order, carrier=None):"
    (see_also,) = [d for d, g in ship.items() if g == 1]  # the doc section that names it
    assert see_also.startswith("docs/guide.rst#L") and ":func:`ship_order`" in line_of(guide, see_also)
    render = qrels["code:src/shop/cli.py:Invoice.render"]
    assert any(g == 1 and "``Invoice.render``" in line_of(guide, d) for d, g in render.items())

    printing = qrels["doc:docs/guide.rst:Shipping guide > Printing #1"]
    assert {line_of(corpus[d.split("#")[0]], d): g for d, g in printing.items()} == {
        "Printing": 2,  # the section's heading
        "class Invoice:": 1,  # the symbol it names
    }
    readme = (tmp_path / "set" / "README.md").read_text()
    assert "| queries (split `dev`) | 5: 3 answered by code, 2 by a doc section |" in readme
    assert "Licence of the corpus text: MIT." in readme

    dataset = beir.load(tmp_path / "set")
    assert dataset.fragment_level and dataset.unknown_labels == 0 and len(dataset.queries) == 5


def test_the_same_input_gives_the_same_bytes_and_a_cap_keeps_a_stable_subset(tmp_path):
    repo = make_repo(tmp_path / "repo")
    for out in ("a", "b"):
        assert mixed_set.main([str(repo), str(tmp_path / out), "--name", "shop"]) == 0
    for name in ("corpus.jsonl", "queries.jsonl", "qrels/dev.tsv", "README.md"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert mixed_set.main([str(repo), str(tmp_path / "capped"), "--max-queries", "2"]) == 0
    _, capped, _ = read_set(tmp_path / "capped")
    _, full, _ = read_set(tmp_path / "a")
    assert len(capped) == 2 and set(capped) <= set(full)


def test_bad_input_is_an_error_not_an_empty_set(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    with pytest.raises(SystemExit) as exc:
        mixed_set.main([str(tmp_path / "empty"), str(tmp_path / "out")])
    assert exc.value.code == 2 and "no file to read" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        mixed_set.main([str(tmp_path / "missing"), str(tmp_path / "out")])
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "notes.md").write_text("# Notes\n\n- only a list\n")
    with pytest.raises(SystemExit) as exc:
        mixed_set.main([str(tmp_path / "plain"), str(tmp_path / "out")])
    assert "no usable question" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


COMMITTED = beir.BUNDLED / "mixed-click"
CLICK_SOURCE = "pallets/click at the base commit of commits-click (its corpus.jsonl in the shared datasets)"
CLICK = Path(os.environ.get("CONTEXTS_DATASETS", Path(__file__).resolve().parents[3] / "shared" / "datasets"))


GSUTIL = Path("/usr/lib/google-cloud-sdk/platform/gsutil/third_party")
VENDORED = {
    "mixed-requests": (
        "requests",
        "psf/requests as vendored in the Google Cloud SDK's gsutil (third_party/requests, version 2.32.3)",
        "Apache-2.0",
    ),
    "mixed-urllib3": (
        "urllib3",
        "urllib3/urllib3 as vendored in the Google Cloud SDK's gsutil (third_party/urllib3)",
        "MIT",
    ),
    "mixed-pyparsing": (
        "pyparsing",
        "pyparsing/pyparsing as vendored in the Google Cloud SDK's gsutil (third_party/pyparsing, version 3.1.4)",
        "MIT",
    ),
    "mixed-google-auth": (
        "google-auth-library-python",
        "googleapis/google-auth-library-python as vendored in the Google Cloud SDK's gsutil"
        " (third_party/google-auth-library-python, version 2.24.0)",
        "Apache-2.0",
    ),
}
"""The reranker's other fragment-labelled training sets (ADR 0015, seventh and eighth
amendments), built from repositories with code and docs that the Google Cloud SDK vendors."""


@pytest.mark.parametrize("name", ["mixed-click", *VENDORED])
def test_the_committed_set_is_found_by_name_and_every_label_is_a_line_of_its_file(tmp_path, name):
    assert beir.locate(tmp_path, name) == beir.BUNDLED / name
    dataset = beir.load(beir.BUNDLED / name)
    assert dataset.fragment_level and dataset.unknown_labels == 0 and 200 <= len(dataset.queries) <= 300
    lines = {doc.id: doc.text.split("\n") for doc in dataset.corpus()}
    for qrels in dataset.qrels.values():
        assert sorted(qrels.values())[-1] == 2
        for label in qrels:
            fragment = beir.fragment_label(label)
            assert fragment is not None and lines[fragment[0]][fragment[1] - 1].strip(), label


@pytest.mark.skipif(not (CLICK / "commits-click" / "corpus.jsonl").is_file(), reason="the shared click corpus")
def test_the_committed_set_is_rebuilt_byte_for_byte_from_the_click_corpus(tmp_path):
    args = ["--name", "mixed-click", "--source", CLICK_SOURCE, "--licence", "BSD-3-Clause"]
    assert mixed_set.main([str(CLICK / "commits-click"), str(tmp_path / "out"), *args]) == 0
    for name in ("corpus.jsonl", "queries.jsonl", "qrels/dev.tsv", "README.md"):
        assert (tmp_path / "out" / name).read_bytes() == (COMMITTED / name).read_bytes(), name


@pytest.mark.parametrize("name", sorted(VENDORED))
def test_the_vendored_sets_are_rebuilt_byte_for_byte(tmp_path, name):
    folder, source, licence = VENDORED[name]
    if not (GSUTIL / folder).is_dir():
        pytest.skip(f"the Google Cloud SDK's vendored {folder}")
    args = ["--name", name, "--max-queries", "300", "--source", source, "--licence", licence]
    assert mixed_set.main([str(GSUTIL / folder), str(tmp_path / "out"), *args]) == 0
    for part in ("corpus.jsonl", "queries.jsonl", "qrels/dev.tsv", "README.md"):
        assert (tmp_path / "out" / part).read_bytes() == (beir.BUNDLED / name / part).read_bytes(), part


@pytest.mark.parametrize(
    ("sentence", "question"),
    [
        ("Adds a result callback to the :class:`Command`.", "Adds a result callback to the."),
        (
            "They are either :class:`Option`\\s or :class:`Argument`\\s in a command.",
            "They are either or in a command.",
        ),
        (
            "Calls ``ctx.invoke()`` with make_pass_decorator and NoArgsIsHelp for each nested command.",
            "Calls with and for each nested command.",
        ),
        ("Returns the name of the thing.", None),  # only what is returned
        (
            "Returns a value that callers can compare with the default value.",
            "Returns a value that callers can compare with the default value.",
        ),
        ("Open a file.", None),  # under five words
    ],
)
def test_a_question_keeps_the_words_and_drops_names(sentence, question):
    assert mixed_set.clean_question(sentence) == question
