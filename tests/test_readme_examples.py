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
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
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


# --- the README, run against a live demo ----------------------------------------------------

NO_INGEST = (
    "import sys, app.cli, app.cli.serve as s; s.ingest_paths = lambda *a, **k: (0, 0, 0, []); sys.exit(app.cli.main())"
)
"""`contexts serve --demo` without ingesting this repository (minutes; its own tests cover
it): the org it would create is made beforehand with `contexts org create demo`."""

SHIM = '#!/bin/sh\nPYTHONPATH={root} exec {python} -m app.cli "$@"\n'
"""`.venv/bin/contexts` of a stand-in checkout: this tree's code (the venv's own script
imports the checkout it was installed from)."""

PAYMENTS = "# Payments\n\nA failed payment is retried three times, with exponential backoff.\n"


@dataclass(frozen=True)
class Demo:
    base: str
    home: Path
    checkout: Path
    log: str
    key: str


def clean_env(**extra: str) -> dict[str, str]:
    """The test's environment without any CONTEXTS_* setting: what a snippet needs, it says."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONTEXTS_")}
    return env | extra


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def bash(script: str, cwd: Path, env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert result.returncode == 0, (script, result.stdout, result.stderr)
    return result


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Demo]:
    """`make run`'s server (`contexts serve --demo`) on an embedded database of its own,
    under a CONTEXTS_HOME of its own, as a newcomer starts it."""
    root = tmp_path_factory.mktemp("readme")
    home, checkout = root / "home", root / "checkout"
    shim = checkout / ".venv" / "bin" / "contexts"
    shim.parent.mkdir(parents=True)
    shim.write_text(SHIM.format(root=shlex.quote(str(ROOT)), python=shlex.quote(sys.executable)))
    shim.chmod(0o755)
    env = clean_env(CONTEXTS_HOME=str(home), PYTHONPATH=str(ROOT))
    bash(".venv/bin/contexts org create demo", checkout, env)
    port, log = free_port(), root / "serve.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-c", NO_INGEST, "serve", "--demo", "--port", str(port)],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 180
        while "curl -s" not in log.read_text():  # the start-up text, written at once when serving
            assert proc.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        settled = time.monotonic() + 10  # the lines after the call come in the same breath
        while "key create" not in log.read_text() and time.monotonic() < settled:
            time.sleep(0.2)
        text = log.read_text()
        key = next(line.split("=", 1)[1] for line in text.splitlines() if line.startswith("export CONTEXTS_KEY="))
        yield Demo(f"http://127.0.0.1:{port}", home, checkout, text, key)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def session_body(task: str = "add a retry to the ingest CLI") -> dict[str, Any]:
    return {"scope": {"org_id": "demo"}, "task": task, "budget_tokens": 500}


@pytest.mark.e2e
def test_the_demo_says_its_key_only_reads_and_how_to_get_a_write_key(demo: Demo):
    """The start-up text says what each example needs, and the command it prints makes a
    key with which a write the demo key is refused (403) succeeds."""
    from app.mcp import TOOLS

    assert "The demo key only reads" in demo.log and "Python client example" in demo.log
    assert [tool.name for tool in TOOLS if tool.writes and tool.name not in demo.log] == []
    (command,) = [line.strip() for line in demo.log.splitlines() if line.strip().endswith("key create demo admin")]
    assert command.startswith(f"CONTEXTS_HOME={demo.home} ")
    write_key = bash(command, demo.checkout, clean_env(PYTHONPATH=str(ROOT))).stdout.split()[-1]
    with httpx.Client(base_url=demo.base, trust_env=False, timeout=120) as http:
        refused = http.post("/sessions", json=session_body(), headers={"Authorization": f"Bearer {demo.key}"})
        assert refused.status_code == 403, refused.text
        opened = http.post("/sessions", json=session_body(), headers={"Authorization": f"Bearer {write_key}"})
        assert opened.status_code in (200, 201), opened.text


def substitute(text: str, demo: Demo, repo: Path, key: str) -> str:
    """The README's placeholders, as a newcomer fills them in."""
    return (
        text.replace("http://127.0.0.1:8000", demo.base)
        .replace("ctx_...", key)
        .replace("/path/to/your/repo", str(repo))
        .replace("/path/to/contexts", str(demo.checkout))
        .replace("/home/you/.local/share/contexts", str(demo.home))
    )


def over_mcp(entry: dict[str, Any]) -> dict[str, Any]:
    """An MCP client session on a configuration's server entry (HTTP or stdio): whoami,
    then open_session, a tool that writes. Returns whoami's answer."""
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from mcp.client.streamable_http import streamable_http_client

    async def use(session: ClientSession) -> dict[str, Any]:
        with anyio.fail_after(300):  # stdio: start-up loads the embedding model
            await session.initialize()
        me = await session.call_tool("whoami", {})
        opened = await session.call_tool("open_session", session_body("write a note"))
        assert not me.isError and not opened.isError, (me.content, opened.content)
        assert me.structuredContent is not None
        return me.structuredContent

    async def main() -> dict[str, Any]:
        if "url" in entry:
            async with (
                httpx.AsyncClient(headers=entry["headers"], timeout=120, trust_env=False) as http,
                streamable_http_client(entry["url"], http_client=http) as (read, write, _),
                ClientSession(read, write) as session,
            ):
                return await use(session)
        # The client starts the server with the configuration's env only: nothing of the test's CONTEXTS_*.
        parameters = StdioServerParameters(command=entry["command"], args=entry["args"], env=clean_env(**entry["env"]))
        async with stdio_client(parameters) as (read, write), ClientSession(read, write) as session:
            return await use(session)

    return anyio.run(main)


@pytest.mark.e2e
def test_every_block_of_the_readme_runs(demo: Demo, tmp_path: Path):
    """Each block in order, placeholders filled in; a key made by one block is the key
    (`ctx_...`) of the blocks after it, as for a newcomer following the page."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "payments.md").write_text(PAYMENTS)
    # "with the same CONTEXTS_HOME as make run (if you set one)": the test did set one
    env = clean_env(CONTEXTS_HOME=str(demo.home), PYTHONPATH=str(ROOT))
    keys = [demo.key]
    ran = []
    for lang, text in blocks(README):
        code = substitute(text, demo, repo, keys[-1])
        if lang == "bash" and re.search(r"^make run\b", text, re.M) and re.search(r"^make test\b", text, re.M):
            dry = subprocess.run(["make", "-n", "run", "test"], cwd=ROOT, capture_output=True, text=True, timeout=120)
            assert dry.returncode == 0 and "contexts serve --demo" in dry.stdout and "pytest" in dry.stdout, dry
        elif lang == "bash":
            out = bash(code, demo.checkout, env).stdout
            if "/contexts/retrieve" in text:
                assert json.loads(out)["trace_id"], out
            elif "key create" in text:
                keys.append(out.split()[-1])
                assert keys[-1].startswith("ctx_") and keys[-1] != demo.key, out
            elif " ingest " in text:
                assert "payments.md#payments" in out and "retried three times" in out, out
            else:
                pytest.fail(f"a README block this test does not check: {text}")
        elif lang == "python":
            run_env = env | {"CONTEXTS_KEY": keys[-1]}
            command = [sys.executable, "-c", code]
            result = subprocess.run(command, cwd=demo.checkout, env=run_env, capture_output=True, text=True)
            assert result.returncode == 0, (code, result.stdout, result.stderr)
        elif lang == "json":
            (entry,) = servers(json.loads(code))
            me = over_mcp(entry)
            assert (me["org_id"], me["principal_id"]) == ("demo", "admin"), me
        else:
            pytest.fail(f"a README block in {lang!r}, which this test does not run")
        ran.append(text)
    assert len(ran) == len(blocks(README)) >= 6


def test_every_inline_command_of_the_readme_runs(demo: Demo, tmp_path: Path):
    """The commands the README names inline (`contexts ...` in a sentence) run as written
    against the demo's database; a new one fails this test until it is run here too."""
    env = clean_env(CONTEXTS_HOME=str(demo.home), PYTHONPATH=str(ROOT), COLUMNS="250")  # tables unfolded
    repo = tmp_path / "backend"
    repo.mkdir()
    (repo / "payments.md").write_text(PAYMENTS)
    git = "git -c user.name=t -c user.email=t@example.com"
    bash(f"git init -q . && {git} add -A && {git} commit -qm first", repo, env)

    def run(command: str, cwd: Path = demo.checkout) -> str:
        return bash(f".venv/bin/{command}" if cwd == demo.checkout else command, cwd, env).stdout

    shim = demo.checkout / ".venv" / "bin" / "contexts"
    inline = set(re.findall(r"`(contexts [^`]*)`", README.read_text()))
    checked: set[str] = set()
    key = ""
    run("contexts org create acme")  # the README's org for a first sync (exit 0 asserted by bash)
    run(f"contexts ingest {repo} --org acme --repo backend")  # the README's step 4, before these sentences
    for command in sorted(inline):
        if command in ("contexts mcp", "contexts ingest --org", "contexts org create acme"):
            pass  # the MCP configurations and the ingest block run in test_every_block_of_the_readme_runs
        elif command == "contexts sync . --org acme --repo backend --create-repo":
            synced = bash(f"{shim} {command.removeprefix('contexts ')}", repo, env)
            said = " ".join((synced.stdout + synced.stderr).split())
            assert "acme/backend" in said and "->" in said, said  # from nothing synced to HEAD
        elif command == "contexts ingest --url URL --key KEY":  # through the demo's service, as its admin
            admin = run("contexts key create demo admin").split()[-1]
            sent = bash(f"{shim} ingest payments.md --org demo --url {demo.base} --key {admin}", repo, env)
            assert "1 document(s) changed" in sent.stdout + sent.stderr, sent.stdout + sent.stderr
        elif command == "contexts key create acme admin":
            made = run(command)
            key = made.split()[-1]
            assert key.startswith("ctx_"), made
        elif command == "contexts key list demo":
            assert demo.key.split("_")[1] in run(command)
        elif command == "contexts key revoke KEY_ID":
            continue  # below, once a key of its own exists
        elif command == "contexts psql":
            assert run(f"{command} -c 'select 1 as one'").split()[:3] == ["one", "-----", "1"]
        elif command == "contexts analyst create demo alice --grant org":
            out = run(command)
            assert out.startswith("postgresql://alice:") and "sslmode=require" in out, out
        else:
            pytest.fail(f"an inline README command this test does not run: {command}")
        checked.add(command)
    assert "contexts key create acme admin" in checked
    run(f"contexts key revoke {key.split('_')[1]}")
    listed = run("contexts key list acme")
    assert key.split("_")[1] in listed and "revoked" in listed
    assert checked >= {c for c in inline if "KEY_ID" not in c}
