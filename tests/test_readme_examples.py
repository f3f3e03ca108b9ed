"""Every concrete `contexts ...` example in the README's shell blocks parses: a newcomer
who pastes one meets the command, not a usage error (a global option such as
`--principal` placed after the subcommand is refused by click, for one)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from app.cli import main

README = Path(__file__).resolve().parents[1] / "README.md"
PLACEHOLDER = re.compile(r"\[|\||\.\.\.|\b[A-Z][A-Z_]{2,}\b")
"""Synopsis lines (`ORG`, `[--repo R]`, `a|b`) are not examples."""


def examples() -> list[str]:
    text = README.read_text()
    lines: list[str] = []
    for block in re.findall(r"```(?:bash|sh|shell)\n(.*?)```", text, re.S):
        for line in block.replace("\\\n", " ").splitlines():
            line = re.sub(r"\s+#.*$", "", line.strip())
            for prefix in (".venv/bin/contexts ", "contexts "):
                if line.startswith(prefix) and not PLACEHOLDER.search(line):
                    lines.append(line.removeprefix(prefix))
    return lines


def test_the_readme_has_examples():
    assert len(examples()) >= 5


@pytest.mark.parametrize("example", examples())
def test_a_readme_example_parses(example):
    """`--help` after the words of the example: click parses every option of every level
    (an unknown one is a usage error, exit 2) and stops before running anything."""
    result = CliRunner().invoke(main, [*shlex.split(example), "--help"])
    assert result.exit_code == 0, (example, result.output)
