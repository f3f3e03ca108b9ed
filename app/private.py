"""Files only their owner may read (mode 0600) under CONTEXTS_HOME: the demo key, the
password of the service's login on the embedded server."""

from __future__ import annotations

import os
import secrets
from pathlib import Path


def write_private(path: Path, text: str) -> None:
    """Replace `path` with `text`, readable by its owner only."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(text)
    os.chmod(partial, 0o600)  # also when it was left behind with a wider mode
    os.replace(partial, path)


def stored_secret(path: Path) -> str:
    """The random secret kept in `path`, made (and kept) on first use."""
    try:
        secret = path.read_text().strip()
    except OSError:
        secret = ""
    if not secret:
        secret = secrets.token_urlsafe(32)
        write_private(path, secret + "\n")
    return secret
