"""The light client installs on its own: a fresh virtual environment, `pip install` of a
copy of clients/python (the linked package copied as files, as a published sdist holds
it), and the README's quickstart run there against the real service. Neither torch nor
psycopg (nor the server) gets installed. pip uses its configured index (PyPI in CI)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.mcp.test_mcp import ROOT, served, tenants  # noqa: F401  (fixtures)

CLIENT = ROOT / "clients" / "python"


@pytest.fixture
def base_url(served: str) -> str:  # noqa: F811
    return served.removesuffix("/mcp")


def quickstart() -> str:
    """The README's quickstart: the first python block under '## Quickstart'."""
    readme = (CLIENT / "README.md").read_text()
    section = readme.split("## Quickstart", 1)[1]
    found = re.search(r"```python\n(.*?)```", section, re.S)
    assert found, "no python block under ## Quickstart"
    return found.group(1)


def test_the_quickstart_is_five_lines():
    assert len(quickstart().strip().splitlines()) == 5


def test_the_light_client_installs_alone_and_runs_its_quickstart(base_url, tenants, tmp_path: Path):  # noqa: F811
    started = time.perf_counter()
    source = tmp_path / "contexts-client"
    shutil.copytree(CLIENT, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    assert not (source / "src" / "contexts_client").is_symlink()
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = str(venv / "bin" / "python")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CONTEXTS_", "VIRTUAL_ENV", "PYTHON"))}
    install = subprocess.run(
        [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(source)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert install.returncode == 0, install.stdout + install.stderr

    code = quickstart().replace("http://127.0.0.1:8000", base_url).replace("ctx_...", tenants.acme_reader)
    run = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "runbooks/storage.md#" in run.stdout, run.stdout

    check = (
        "import importlib.util as u, sys, contexts_client; "
        "print([m for m in ('torch', 'psycopg', 'sentence_transformers', 'litestar', 'app') if u.find_spec(m)]); "
        "print(contexts_client.__file__)"
    )
    alone = subprocess.run([python, "-c", check], capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path)
    assert alone.returncode == 0, alone.stderr
    heavy, where = alone.stdout.splitlines()
    assert heavy == "[]" and where.startswith(str(venv)), alone.stdout
    print(f"fresh venv, install and quickstart: {time.perf_counter() - started:.1f} s")
