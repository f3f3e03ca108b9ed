"""The README, run. Every shell, HTTP (JSON configuration) and Python block of README.md
runs here, in order, against a live `contexts serve --demo` that the test starts on an
embedded database of its own, exactly as a newcomer pastes them (placeholders replaced:
see `substitute`); `make run` / `make test` are checked with `make -n`. The pages that
hold generated text (the CLI's `--help`, the MCP tools) are checked against the code, and
every `contexts ...` example in the README and docs/ parses."""

from __future__ import annotations

import json
import os
import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from app.cli import main

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
UPDATE = os.environ.get("CONTEXTS_UPDATE_GOLDENS") == "1"


def blocks(path: Path) -> list[tuple[str, str]]:
    """(language, text) of each fenced block of a Markdown file."""
    return [(lang, text) for lang, text in BLOCK.findall(path.read_text())]


# --- every `contexts ...` example parses ------------------------------------------------

PLACEHOLDER = re.compile(r"\[|\||\.\.\.|\b[A-Z][A-Z_]{2,}\b")
"""Synopsis lines (`ORG`, `[--repo R]`, `a|b`) are not examples."""
EXAMPLE_PAGES = [README, *(DOCS / name for name in ("cli.md", "http.md", "sql.md", "evaluation.md", "mcp.md"))]


def examples() -> list[str]:
    lines: list[str] = []
    for page in EXAMPLE_PAGES:
        for lang, block in blocks(page):
            if lang not in ("bash", "sh", "shell"):
                continue
            for line in block.replace("\\\n", " ").splitlines():
                line = re.sub(r"\s+#.*$", "", line.strip())
                for prefix in ("/path/to/contexts/.venv/bin/contexts ", ".venv/bin/contexts ", "contexts "):
                    if line.startswith(prefix) and not PLACEHOLDER.search(line):
                        lines.append(line.removeprefix(prefix))
                        break
    return lines


def test_the_readme_and_docs_have_examples():
    assert len(examples()) >= 5


@pytest.mark.parametrize("example", examples())
def test_a_readme_example_parses(example):
    """`--help` after the words of the example: click parses every option of every level
    (an unknown one is a usage error, exit 2) and stops before running anything; a global
    option such as `--principal` placed after the subcommand is refused, for one."""
    result = CliRunner().invoke(main, [*shlex.split(example), "--help"])
    assert result.exit_code == 0, (example, result.output)


# --- the README's shape and the docs index --------------------------------------------------

LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def local_links(page: Path) -> list[Path]:
    return [(page.parent / target).resolve() for target in LINK.findall(page.read_text()) if "://" not in target]


def test_the_readme_is_a_first_hour_not_a_design_document():
    text = README.read_text()
    lines = text.splitlines()
    assert len(lines) <= 230, len(lines)
    assert [n for n, line in enumerate(lines, 1) if len(line) > 200] == []
    assert re.findall(r"\bR-[A-Z]+-\d+\b", text) == []  # no specification ids in the prose
    assert lines[0] == "# Contexts" and "make run" in "".join(lines[:12]) and "make test" in "".join(lines[:12])
    for heading in ("Get a write key", "Connect an agent", "Ingest your own repository", "Timings", "Troubleshooting"):
        assert heading in text, heading
    linked = set(local_links(README))
    assert [p for p in linked if not p.exists()] == []
    adrs = sorted((DOCS / "adr").glob("[0-9][0-9][0-9][0-9]-*.md"))
    assert adrs and [adr.name for adr in adrs if adr.resolve() not in linked] == []
    assert {lang for lang, _ in blocks(README)} <= {"bash", "json", "python"}


def test_the_docs_index_links_every_page_and_every_link_resolves():
    index = DOCS / "README.md"
    linked = set(local_links(index))
    pages = sorted(DOCS.glob("*.md"))
    assert [p.name for p in pages if p != index and p.resolve() not in linked] == []
    assert (DOCS / "adr" / "README.md").resolve() in linked
    for page in [index, *(DOCS / name for name in OWN_PAGES)]:
        assert [str(p) for p in local_links(page) if not p.exists()] == [], page


OWN_PAGES = (
    "http.md",
    "cli.md",
    "configuration.md",
    "evaluation.md",
    "benchmarks.md",
    "mcp.md",
    "design.md",
    "sql.md",
    "development.md",
)
"""The pages the README's reference sections moved to."""


# --- generated sections: the CLI's help, the MCP tools ---------------------------------------


def cli_help() -> str:
    """`contexts --help` and each command (group)'s `--help`, as a newcomer sees them."""

    def helped(*words: str) -> str:
        result = CliRunner().invoke(main, [*words, "--help"], prog_name="contexts", terminal_width=100)
        assert result.exit_code == 0, (words, result.output)
        return result.output.rstrip()

    parts = [f"### `contexts`\n\n```text\n{helped()}\n```"]
    for name in sorted(main.commands):  # type: ignore[attr-defined]
        parts.append(f"### `contexts {name}`\n\n```text\n{helped(name)}\n```")
    return "\n\n".join(parts)


def mcp_tools() -> str:
    """The tools the MCP server registers, with their arguments, as a Markdown table."""
    from app.mcp import TOOLS

    rows = ["| tool | access | arguments | what it does |", "|---|---|---|---|"]
    for tool in TOOLS:
        schema = tool.definition().inputSchema
        required = set(schema.get("required", []))
        arguments = ", ".join(
            f"**`{name}`**" if name in required else f"`{name}`" for name in schema.get("properties", {})
        )
        access = "write, destructive" if tool.destructive else "write" if tool.writes else "read"
        what = " ".join(tool.description.split()).replace("|", "\\|")
        rows.append(f"| `{tool.name}` | {access} | {arguments or 'none'} | {what} |")
    return "\n".join(rows)


GENERATED = {"cli-help": (DOCS / "cli.md", cli_help), "mcp-tools": (DOCS / "mcp.md", mcp_tools)}


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_a_generated_section_is_current(name):
    """CONTEXTS_UPDATE_GOLDENS=1 rewrites the section (review and commit its diff)."""
    page, generate = GENERATED[name]
    text = page.read_text()
    section = re.compile(rf"(<!-- generated: {name} [^\n]*-->\n)(.*?)(<!-- end generated -->)", re.S)
    match = section.search(text)
    assert match, f"{page.name} has no generated section {name}"
    expected = generate() + "\n"
    if UPDATE and match.group(2) != expected:
        page.write_text(text[: match.start(2)] + expected + text[match.end(2) :])
        match = section.search(page.read_text())
        assert match
    assert match.group(2) == expected, f"{page.name}: run CONTEXTS_UPDATE_GOLDENS=1 on this test"


def test_the_mcp_page_lists_every_registered_tool():
    from app.mcp import TOOLS

    text = (DOCS / "mcp.md").read_text()
    assert [tool.name for tool in TOOLS if f"| `{tool.name}` |" not in text] == []


# --- the MCP page's configurations -------------------------------------------------------------

NAMES_THE_DATABASE = ("CONTEXTS_HOME", "CONTEXTS_DATABASE_URL")


def servers(config: dict) -> list[dict]:
    """The server entries of a client configuration (`mcpServers`, or VS Code's `servers`)."""
    return list((config.get("mcpServers") or config.get("servers") or {}).values())


def test_every_mcp_configuration_names_its_database_or_its_url():
    """A stdio server without CONTEXTS_HOME or CONTEXTS_DATABASE_URL opens a new, empty
    database and then calls the key invalid: every stdio snippet names one."""
    configs = [json.loads(text) for page in (README, DOCS / "mcp.md") for lang, text in blocks(page) if lang == "json"]
    entries = [entry for config in configs for entry in servers(config)]
    stdio = [entry for entry in entries if "command" in entry]
    http = [entry for entry in entries if "url" in entry]
    assert len(stdio) >= 5 and len(http) >= 3 and len(stdio) + len(http) == len(entries)
    for entry in stdio:
        assert entry["args"] == ["mcp"] and entry["command"].endswith("/.venv/bin/contexts"), entry
        assert "CONTEXTS_KEY" in entry["env"] and set(NAMES_THE_DATABASE) & set(entry["env"]), entry
    for entry in http:
        assert entry["url"].endswith("/mcp") and entry["headers"]["Authorization"].startswith("Bearer "), entry
    page = (DOCS / "mcp.md").read_text()
    for client in ("Claude Code", "Cursor", "VS Code", "Claude Desktop", "MCP Inspector"):
        assert f"## {client}" in page or client in page, client
    for lang, text in blocks(DOCS / "mcp.md"):
        if lang == "bash" and ("stdio" in text or "inspector" in text):
            assert "CONTEXTS_HOME=" in text, text
    assert "24 s" in page


def test_the_mcp_page_states_the_sdk_pin_of_pyproject():
    pin = re.search(r'"(mcp[<>=!~][^"]*)"', (ROOT / "pyproject.toml").read_text())
    assert pin and f"`{pin.group(1)}`" in (DOCS / "mcp.md").read_text()
