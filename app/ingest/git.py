"""What a git work tree holds, asked of git itself (the `git` command, no library):
the commit HEAD names, the files it tracks, what changed between two commits, the
content of a file at a commit, and whether the work tree has uncommitted changes.
Reading git's objects instead of the work tree means a synced version is exactly the
file as committed, and .gitignore is honoured by construction: git tracks no ignored
file unless someone added it on purpose."""

from __future__ import annotations

import itertools
import subprocess
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

GIT_TIMEOUT_SECONDS = 300
"""A git command that runs longer is stopped (a 10,000-file ls-tree takes milliseconds)."""

READ_BATCH = 256
"""Blobs read per `git cat-file --batch`: bounds what one read holds in memory."""

_REGULAR_FILES = ("100644", "100755")
"""Modes of the files a sync reads: symlinks (120000) and submodules (160000) are not files."""


class GitError(RuntimeError):
    """Not a git work tree, no commit yet, or git refused or failed: the message says which."""


@dataclass(frozen=True, slots=True)
class TrackedFile:
    path: str
    blob: str
    """Object name of the content at the commit."""


@dataclass(frozen=True, slots=True)
class Change:
    status: str
    """A (added), M (modified), D (deleted), R (renamed), C (copied), T (type changed)."""
    path: str
    """The path at the new commit (for D: the path that went away)."""
    blob: str | None
    """The new content, a regular file's; None when the path leaves (deleted, or no longer a file)."""
    old_path: str | None = None
    """The path at the old commit of a rename or copy."""


def _git(root: Path, *args: str, stdin: bytes | None = None) -> bytes:
    name = next((a for a in args if not a.startswith("-")), "")
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args],
            input=stdin,
            capture_output=True,
            timeout=GIT_TIMEOUT_SECONDS,
            check=False,
        )
    except FileNotFoundError as exc:
        raise GitError("git is not installed (or not on PATH)") from exc
    except subprocess.TimeoutExpired as exc:
        raise GitError(f"git {name} ran over {GIT_TIMEOUT_SECONDS} s in {root}") from exc
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(f"git {name} failed in {root}: {message[-1] if message else f'exit {done.returncode}'}")
    return done.stdout


def commit_time(seconds: int) -> datetime:
    """A commit's time. Git records years past 9999 (and Python's datetime holds none):
    such a time is clamped to the last (or first) one datetime holds, which ingestion
    then refuses with a message (app/readable.py) instead of the sync failing."""
    try:
        return datetime.fromtimestamp(seconds, tz=UTC)
    except (OverflowError, ValueError, OSError):
        return datetime.max.replace(tzinfo=UTC) if seconds > 0 else datetime.min.replace(tzinfo=UTC)


class WorkTree:
    """A git work tree, named by its top-level directory."""

    def __init__(self, path: Path) -> None:
        given = path.expanduser()
        if not given.exists():
            raise GitError(f"{path}: no such directory")
        if not given.is_dir():
            raise GitError(f"{path}: not a directory (sync takes the top of a git work tree)")
        try:
            top = _git(given, "rev-parse", "--show-toplevel").decode().strip()
        except GitError as exc:
            raise GitError(f"{path}: not a git work tree") from exc
        self.root = Path(top).resolve()
        if self.root != given.resolve():
            raise GitError(f"{path} is inside the git work tree {self.root}: sync takes the top of a work tree")

    def head(self) -> str:
        """The commit HEAD names (GitError when the repository has none yet)."""
        try:
            return _git(self.root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}").decode().strip()
        except GitError as exc:
            raise GitError(f"{self.root}: no commit yet (commit something first)") from exc

    def ref(self) -> str | None:
        """The branch HEAD is on; None on a detached HEAD."""
        try:
            return _git(self.root, "symbolic-ref", "--quiet", "--short", "HEAD").decode().strip() or None
        except GitError:
            return None

    def has_commit(self, name: str) -> bool:
        """Whether the repository still holds this commit (a force-push and a garbage
        collection can remove the one a repo was last synced to)."""
        try:
            _git(self.root, "cat-file", "-e", f"{name}^{{commit}}")
        except GitError:
            return False
        return True

    def tracked(self, commit: str) -> list[TrackedFile]:
        """The regular files of the commit's tree, in git's path order."""
        out = _git(self.root, "ls-tree", "-r", "-z", "--full-tree", commit)
        files = []
        for record in out.split(b"\0"):
            if not record:
                continue
            meta, _tab, path = record.partition(b"\t")
            mode, kind, blob = meta.decode().split()
            if kind == "blob" and mode in _REGULAR_FILES:
                files.append(TrackedFile(path.decode("utf-8", "surrogateescape"), blob))
        return files

    def changes(self, old: str, new: str) -> list[Change]:
        """What changed from the tree of `old` to the tree of `new`, renames detected
        (git's default similarity, 50%); submodules and symlinks count as absent."""
        out = _git(self.root, "diff-tree", "-r", "-z", "-M", "--no-commit-id", "--raw", old, new)
        fields = out.split(b"\0")
        changes: list[Change] = []
        i = 0
        while i < len(fields) and fields[i]:
            meta = fields[i].decode().lstrip(":").split()
            _old_mode, new_mode, _old_blob, new_blob, status = meta
            letter = status[0]
            if letter in ("R", "C"):
                old_path, path = (fields[i + 1], fields[i + 2])
                i += 3
            else:
                old_path, path = None, fields[i + 1]
                i += 2
            is_file = new_mode in _REGULAR_FILES
            changes.append(
                Change(
                    letter if letter != "T" or is_file else "D",
                    path.decode("utf-8", "surrogateescape"),
                    new_blob if letter != "D" and is_file else None,
                    old_path.decode("utf-8", "surrogateescape") if old_path is not None else None,
                )
            )
        return changes

    def read(self, blobs: Iterable[str], batch: int = READ_BATCH) -> Iterator[tuple[str, bytes]]:
        """The content of each blob, in order, `batch` blobs per `git cat-file --batch`
        (lazily: a caller that stops early reads no more)."""
        pending = iter(blobs)
        while names := list(itertools.islice(pending, batch)):
            out = _git(self.root, "cat-file", "--batch", stdin="".join(f"{b}\n" for b in names).encode())
            at = 0
            for name in names:
                end = out.index(b"\n", at)
                header = out[at:end].decode().split()
                if len(header) != 3:
                    raise GitError(f"git cat-file: {' '.join(header)}")
                size = int(header[2])
                yield name, out[end + 1 : end + 1 + size]
                at = end + 1 + size + 1

    def committed_at(self, commit: str) -> datetime:
        return commit_time(int(_git(self.root, "show", "-s", "--format=%ct", commit).strip()))

    def last_changed(self, commit: str, paths: Iterable[str], since: str | None = None) -> dict[str, datetime]:
        """When each path last changed in the history of `commit` (its newest commit that
        touched it), read in one pass of `git log` that stops once every path is found;
        with `since`, only commits after that one are walked. A path git prints quoted
        (tab, newline, quote), or not found, is left out: callers fall back."""
        wanted = set(paths)
        found: dict[str, datetime] = {}
        if not wanted:
            return found
        command = ["git", "-C", str(self.root), "-c", "core.quotePath=off", "log", "--format=%x01%ct",
                   "--name-only", "--no-renames", commit, *([f"^{since}"] if since else []), "--"]  # fmt: skip
        with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL) as log:
            assert log.stdout is not None
            when: datetime | None = None
            for raw in log.stdout:
                line = raw.rstrip(b"\n").decode("utf-8", "surrogateescape")
                if line.startswith("\x01"):
                    when = commit_time(int(line[1:]))
                elif line and when is not None and line in wanted and line not in found:
                    found[line] = when
                    if len(found) == len(wanted):
                        break
            log.kill()
        return found

    def added_at(self, commit: str, paths: Iterable[str]) -> dict[str, datetime]:
        """When each path was added in the history of `commit` (the newest commit that
        added it: a file deleted and added again starts over; a rename adds its new path),
        read in one pass of `git log --diff-filter=A` that stops once every path is found.
        A path not found (or printed quoted) is left out."""
        wanted = set(paths)
        found: dict[str, datetime] = {}
        if not wanted:
            return found
        command = ["git", "-C", str(self.root), "-c", "core.quotePath=off", "log", "--format=%x01%ct",
                   "--name-only", "--no-renames", "--diff-filter=A", commit, "--"]  # fmt: skip
        with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL) as log:
            assert log.stdout is not None
            when: datetime | None = None
            for raw in log.stdout:
                line = raw.rstrip(b"\n").decode("utf-8", "surrogateescape")
                if line.startswith("\x01"):
                    try:
                        when = datetime.fromtimestamp(int(line[1:]), tz=UTC)
                    except (ValueError, OverflowError, OSError):  # past what Python dates hold
                        when = None  # unknown; the commit's date is refused where it is read
                elif line and when is not None and line in wanted and line not in found:
                    found[line] = when
                    if len(found) == len(wanted):
                        break
            log.kill()
        return found

    def uncommitted(self) -> int:
        """Paths whose work-tree state differs from HEAD: modified, staged, deleted, and
        untracked files that no .gitignore excludes (git status, which uses the index's
        stat cache: it does not read unchanged files; an untracked directory counts once)."""
        # --no-optional-locks: a sync run from a hook never takes the index lock that the
        # user's next git command would then find held.
        out = _git(self.root, "--no-optional-locks", "status", "--porcelain=v1", "-z", "--untracked-files=normal")
        count = 0
        fields = out.split(b"\0")
        i = 0
        while i < len(fields) and fields[i]:
            status = fields[i][:2]
            i += 2 if status[:1] in (b"R", b"C") else 1  # a rename names its source next
            count += 1
        return count
