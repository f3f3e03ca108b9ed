"""Files to ingest from paths on disk: directories walked, .gitignore respected."""

from __future__ import annotations

import os
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


def _walk(root: Path, top: Path) -> Iterator[Path]:
    """Files under root, honouring every .gitignore from top on the way down. A directory
    named on the command line is walked even when an ignore file above it ignores it (a
    package under `.venv/`, a `build/` output): as git and ripgrep do when a walk starts
    there, a rule that matches the named directory itself (or a folder between it and
    that ignore file) does not hide what is in it; the rest of that file (`*.log`,
    `__pycache__/`) applies inside, as from the named directory."""
    specs = [
        (root, spec) if _ignored_here(root, base, spec) else (base, spec) for base, spec in _ancestor_specs(root, top)
    ]
    for directory, dirnames, filenames in os.walk(root):
        here = Path(directory)
        specs = [(base, spec) for base, spec in specs if here == base or base in here.parents]
        spec = _ignore_spec(here)
        if spec is not None:
            specs.append((here, spec))

        dirnames[:] = sorted(d for d in dirnames if not _hidden(d) and not _ignored(here / d, True, specs))
        for name in sorted(filenames):
            path = here / name
            if not _hidden(name) and not path.is_symlink() and not _ignored(path, False, specs):
                yield path


def collect(paths: list[Path], base: Path | None = None) -> list[FileEntry]:
    """Resolve command-line paths to files, each named relative to `base` (default: cwd)."""
    base = (base or Path.cwd()).resolve()
    entries: list[FileEntry] = []
    for given in paths:
        resolved = given.resolve()
        if not resolved.exists():
            raise FileNotFoundError(f"{given}: no such file or directory")
        anchor = base if resolved == base or base in resolved.parents else resolved.parent
        if resolved.is_dir():
            entries.extend(FileEntry(p, p.relative_to(anchor).as_posix(), False) for p in _walk(resolved, anchor))
        else:
            entries.append(FileEntry(resolved, resolved.relative_to(anchor).as_posix(), True))
    seen: set[str] = set()
    unique = []
    for entry in entries:
        if entry.relative not in seen:
            seen.add(entry.relative)
            unique.append(entry)
    return unique
