"""Files to ingest from paths on disk: directories walked, .gitignore respected.

Only regular files are read: a named pipe would block the reader forever, and a socket or
a device is no document. What a walk cannot read (a folder without permission, a pipe)
is listed with its reason (`FileEntry.problem`), so the command says what it skipped
instead of failing with a traceback or leaving it out in silence."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pathspec


def _hidden(name: str) -> bool:
    """Dotfiles and dot-directories (.git, .venv, .gitignore, .env) are skipped in walks;
    name one on the command line to ingest it."""
    return name.startswith(".")


@dataclass(frozen=True, slots=True)
class FileEntry:
    path: Path
    relative: str
    explicit: bool
    """Named on the command line (a refusal is an error) rather than found in a walk."""
    problem: str | None = None
    """Why it cannot be read (then it is refused as it is read, never opened)."""

    def modified(self) -> datetime:
        return datetime.fromtimestamp(self.path.stat().st_mtime, tz=UTC)


def _ignore_spec(directory: Path) -> pathspec.PathSpec | None:
    gitignore = directory / ".gitignore"
    if not gitignore.is_file():
        return None
    # GitIgnoreSpec follows git's own rules (last match wins, re-included files).
    return pathspec.GitIgnoreSpec.from_lines(gitignore.read_text(encoding="utf-8", errors="replace").splitlines())


def _ancestor_specs(root: Path, top: Path) -> list[tuple[Path, pathspec.PathSpec]]:
    """.gitignore files above root, up to top, which also apply inside root."""
    specs = []
    for directory in reversed(root.parents):
        if directory == top or top in directory.parents:
            spec = _ignore_spec(directory)
            if spec is not None:
                specs.append((directory, spec))
    return specs


def _ignored(path: Path, is_dir: bool, specs: list[tuple[Path, pathspec.PathSpec]]) -> bool:
    for base, spec in specs:
        if spec.match_file(path.relative_to(base).as_posix() + ("/" if is_dir else "")):
            return True
    return False


def _ignored_here(root: Path, base: Path, spec: pathspec.PathSpec) -> bool:
    """Whether `spec` (the ignore file of `base`) ignores `root` or a folder between them."""
    relative = root.relative_to(base)
    return any(spec.match_file(Path(*relative.parts[: n + 1]).as_posix() + "/") for n in range(len(relative.parts)))


def _walk(root: Path, top: Path) -> Iterator[tuple[Path, str | None]]:
    """Files under root, each with why it cannot be read (None: it can), and the folders
    that could not be listed, honouring every .gitignore from top on the way down. A directory
    named on the command line is walked even when an ignore file above it ignores it (a
    package under `.venv/`, a `build/` output): as git and ripgrep do when a walk starts
    there, a rule that matches the named directory itself (or a folder between it and
    that ignore file) does not hide what is in it; the rest of that file (`*.log`,
    `__pycache__/`) applies inside, as from the named directory."""
    specs = [
        (root, spec) if _ignored_here(root, base, spec) else (base, spec) for base, spec in _ancestor_specs(root, top)
    ]
    unlisted: list[OSError] = []
    for directory, dirnames, filenames in os.walk(root, onerror=unlisted.append):
        yield from _unlisted(unlisted)
        here = Path(directory)
        specs = [(base, spec) for base, spec in specs if here == base or base in here.parents]
        spec = _ignore_spec(here)
        if spec is not None:
            specs.append((here, spec))

        dirnames[:] = sorted(d for d in dirnames if not _hidden(d) and not _ignored(here / d, True, specs))
        for name in sorted(filenames):
            path = here / name
            if not _hidden(name) and not path.is_symlink() and not _ignored(path, False, specs):
                yield path, not_regular(path)
    yield from _unlisted(unlisted)


def _unlisted(errors: list[OSError]) -> Iterator[tuple[Path, str]]:
    """The folders os.walk could not list, as (folder, reason), once each."""
    while errors:
        error = errors.pop(0)
        yield Path(error.filename), f"folder not read ({error.strerror or error})"


def not_regular(path: Path) -> str | None:
    """Why `path` is not a file to read (None: a regular file, symbolic links followed)."""
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        return f"not read ({exc.strerror or exc})"
    if stat.S_ISREG(mode):
        return None
    kind = "a named pipe" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device"
    return f"{kind}, not a regular file"


def collect(paths: list[Path], base: Path | None = None) -> list[FileEntry]:
    """Resolve command-line paths to files, each named relative to `base` (default: cwd)."""
    base = (base or Path.cwd()).resolve()
    entries: list[FileEntry] = []
    for given in paths:
        try:
            resolved = given.resolve()
        except RuntimeError as exc:  # Python 3.11's resolve() on a loop of links
            raise FileNotFoundError(f"{given}: a loop of symbolic links") from exc
        if not resolved.exists():
            raise FileNotFoundError(f"{given}: no such file or directory")
        anchor = base if resolved == base or base in resolved.parents else resolved.parent
        if resolved.is_dir():
            entries.extend(
                # The named folder itself unreadable: an error, as a named file's would be.
                FileEntry(p, p.relative_to(anchor).as_posix(), p == resolved, problem)
                for p, problem in _walk(resolved, anchor)
            )
        else:
            entries.append(FileEntry(resolved, resolved.relative_to(anchor).as_posix(), True, not_regular(resolved)))
    seen: set[str] = set()
    unique = []
    for entry in entries:
        if entry.relative not in seen:
            seen.add(entry.relative)
            unique.append(entry)
    return unique
