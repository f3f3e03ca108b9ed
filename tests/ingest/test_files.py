"""Which files a command-line path names (app/ingest/files.py): walks honour .gitignore,
and a directory named explicitly is walked even where an ignore file above it hides it."""

from __future__ import annotations

from pathlib import Path

from app.ingest.files import collect


def tree(root: Path) -> Path:
    files = {
        ".gitignore": ".venv\nbuild/\n*.log\n",
        "README.md": "# Repo\n",
        "build/out.md": "# Generated\n",
        ".venv/lib/site-packages/httpx/_api.py": "def get(): ...\n",
        ".venv/lib/site-packages/httpx/_models.py": "class Request: ...\n",
        ".venv/lib/site-packages/httpx/debug.log": "noise\n",
        ".venv/lib/site-packages/httpx/__pycache__/_api.cpython-311.pyc": "x",
        ".venv/lib/site-packages/httpx/.gitignore": "__pycache__/\n",
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def names(entries) -> list[str]:
    return sorted(e.relative for e in entries)


def test_a_walk_of_the_repo_skips_what_its_gitignore_ignores(tmp_path):
    root = tree(tmp_path)
    assert names(collect([root], base=root)) == ["README.md"]


def test_a_directory_named_explicitly_is_walked_though_an_ignore_file_above_hides_it(tmp_path):
    """`contexts ingest .venv/lib/site-packages/httpx` from the repo's root: the package's
    files, without what the ignore files still ignore inside it (*.log, __pycache__/)."""
    root = tree(tmp_path)
    package = root / ".venv" / "lib" / "site-packages" / "httpx"
    assert names(collect([package], base=root)) == [
        ".venv/lib/site-packages/httpx/_api.py",
        ".venv/lib/site-packages/httpx/_models.py",
    ]
    assert names(collect([root / "build"], base=root)) == ["build/out.md"]


def test_what_cannot_be_read_is_listed_with_its_reason(tmp_path):
    """A folder without read permission was left out in silence, and an unreadable file
    was a traceback. Run without the capabilities that let root read anything."""
    import subprocess
    import sys

    root = tmp_path / "tree"
    (root / "locked").mkdir(parents=True)
    (root / "locked" / "inside.md").write_text("# In\n")
    (root / "top.md").write_text("# Top\n")
    (root / "locked").chmod(0)
    probe = (
        "import sys; from pathlib import Path; from app.ingest.files import collect\n"
        "for e in collect([Path(sys.argv[1])], base=Path(sys.argv[1])): print(e.relative, e.explicit, e.problem)"
    )
    try:
        out = subprocess.run(
            [*without_root_reads(), sys.executable, "-c", probe, str(root)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.splitlines()
    finally:
        (root / "locked").chmod(0o755)
    assert out == ["top.md False None", "locked False folder not read (Permission denied)"]


def without_root_reads() -> list[str]:
    """A command prefix under which permissions bind: as root, without the capabilities
    that bypass them (util-linux's setpriv); as anyone else, nothing."""
    import os

    return ["setpriv", "--bounding-set", "-dac_override,-dac_read_search"] if os.geteuid() == 0 else []
