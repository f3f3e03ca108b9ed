"""`contexts sync`: a git work tree synced incrementally into a repo, against real
PostgreSQL and real git: the first sync ingests what git tracks (nothing ignored), an
unchanged HEAD does nothing, modifications, renames and deletions touch only their
documents and record the commit, a rewritten history falls back to a full comparison,
and bad input fails with a message."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import unicodedata
from pathlib import Path

import psycopg
import pytest
from click.testing import CliRunner

from app.cli import main

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def run(db_url: str, *args: str):
    return CliRunner().invoke(main, ["--db-url", db_url, *args], catch_exceptions=False)


def git(repo: Path, *args: str, when: str | None = None) -> str:
    env = {
        "GIT_AUTHOR_NAME": "Ada",
        "GIT_AUTHOR_EMAIL": "ada@example.com",
        "GIT_COMMITTER_NAME": "Ada",
        "GIT_COMMITTER_EMAIL": "ada@example.com",
        "HOME": str(repo.parent),
        "PATH": "/usr/bin:/bin:/usr/local/bin",
    }
    if when:
        env |= {"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, env=env, check=True)
    return done.stdout.strip()


def commit(repo: Path, message: str, when: str | None = None) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message, when=when)
    return git(repo, "rev-parse", "HEAD")


def write(repo: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)


@pytest.fixture
def work_tree(tmp_path: Path) -> Path:
    repo = tmp_path / "platform"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(
        repo,
        {
            ".gitignore": "build/\n*.log\n",
            "README.md": "# Platform\n\nThe platform service drains idle connections every minute.\n",
            "docs/runbook.md": "# Runbook\n\n## Restart\n\nRestart the pool with `make restart` after a deploy.\n",
            "src/pool.py": 'def drain_pool(pool):\n    """Close idle connections."""\n    for c in pool.idle:\n'
            "        c.close()\n",
            "docs/café notes.md": "# Café\n\nThe espresso runbook lives in a path with an accent and a space.\n",
            "build/out.md": "# Generated\n\nshould never be ingested\n",
            "debug.log": "ignored log line\n",
        },
    )
    commit(repo, "initial", when="2026-01-05T10:00:00Z")
    return repo


def documents(db_url: str) -> dict[str, tuple[int, int, str | None, bool]]:
    """path -> (doc_id, current version, its git commit, deleted)."""
    with psycopg.connect(db_url) as conn:
        rows = conn.execute("""
            select d.path, d.doc_id, d.current_version, v.metadata ->> 'git_commit', d.deleted_at is not null
            from data.documents d join data.document_versions v on v.doc_id = d.doc_id and v.version = d.current_version
            where d.org_id = 'acme' and d.repo_id = 'platform'""").fetchall()
    return {r[0]: tuple(r[1:]) for r in rows}


def live_fragments(db_url: str, path: str) -> list[int]:
    with psycopg.connect(db_url) as conn:
        rows = conn.execute(
            """select s.fragment_id from data.fragment_sources s join data.documents d using (doc_id)
               where d.path = %s and d.deleted_at is null and s.retired_at is null order by s.ordinal""",
            (path,),
        ).fetchall()
    return [r[0] for r in rows]


def state(db_url: str) -> tuple | None:
    with psycopg.connect(db_url) as conn:
        return conn.execute(
            "select commit_sha, ref, synced_by, written, deleted, full_scan from data.git_syncs "
            "where org_id = 'acme' and repo_id = 'platform'"
        ).fetchone()


def sync(db_url: str, repo: Path, *extra: str):
    return run(db_url, "sync", str(repo), "--org", "acme", "--repo", "platform", "--no-refresh-authority", *extra)


@pytest.fixture
def org(db_url: str) -> str:
    assert run(db_url, "org", "create", "acme").exit_code == 0
    return db_url


def test_first_sync_ingests_tracked_files_only_then_an_unchanged_head_does_nothing(org, work_tree):
    head = git(work_tree, "rev-parse", "HEAD")
    first = sync(org, work_tree, "--create-repo")
    assert first.exit_code == 0, first.output
    docs = documents(org)
    assert sorted(docs) == [".gitignore", "README.md", "docs/café notes.md", "docs/runbook.md", "src/pool.py"]
    assert {d[2] for d in docs.values()} == {head}
    assert state(org) == (head, "main", "admin", 5, 0, True)

    again = sync(org, work_tree, "--json")
    assert again.exit_code == 0, again.output
    assert f"up to date at {head}" in again.output
    summary = json.loads(next(line for line in again.output.splitlines() if line.startswith("{")))
    assert (summary["up_to_date"], summary["to_commit"], summary["written"]) == (True, head, 0)
    assert documents(org) == docs

    (work_tree / "README.md").write_text("# Platform\n\nUncommitted edit.\n")
    (work_tree / "new.md").write_text("# New\n\nNot committed yet.\n")
    dirty = sync(org, work_tree)
    assert "up to date" in dirty.output and "2 uncommitted change(s)" in dirty.output
    assert documents(org) == docs


def test_a_sync_takes_over_the_files_ingest_stored_with_the_same_text(org, work_tree):
    """`contexts ingest` then `contexts sync` (the README's two ways, in that order): the
    first sync writes every tracked file, the same text included, so each version records
    its commit and git's deletion of the file later deletes the document. Nothing is
    embedded again."""
    ingested = run(org, "ingest", str(work_tree / "README.md"), str(work_tree / "src"), "--org", "acme",
                   "--repo", "platform", "--no-refresh-authority")  # fmt: skip
    assert ingested.exit_code == 0, ingested.output
    before = documents(org)
    fragments = live_fragments(org, "src/pool.py")
    first = sync(org, work_tree, "--create-repo")
    assert first.exit_code == 0, first.output
    head = git(work_tree, "rev-parse", "HEAD")
    after = documents(org)
    for path in ("README.md", "src/pool.py"):
        assert after[path][:3] == (before[path][0], 2, head)
    assert live_fragments(org, "src/pool.py") == fragments
    assert "up to date" in sync(org, work_tree).output
    # `contexts ingest` of the synced tree again changes nothing: the documents stay the sync's.
    again = run(org, "ingest", str(work_tree / "README.md"), str(work_tree / "src"), "--org", "acme",
                "--repo", "platform", "--no-refresh-authority")  # fmt: skip
    assert again.exit_code == 0 and "0 document(s) changed" in again.output, again.output
    assert documents(org)["src/pool.py"][:3] == (before["src/pool.py"][0], 2, head)

    (work_tree / "src" / "pool.py").unlink()
    commit(work_tree, "no pool")
    assert sync(org, work_tree).exit_code == 0
    assert documents(org)["src/pool.py"][3] is True


def test_modification_rename_and_deletion(org, work_tree):
    assert sync(org, work_tree, "--create-repo").exit_code == 0
    before = documents(org)

    write(work_tree, {"README.md": "# Platform\n\nThe platform service drains idle connections every hour.\n"})
    changed = commit(work_tree, "hourly", when="2026-06-01T09:00:00Z")
    result = sync(org, work_tree)
    assert result.exit_code == 0, result.output
    assert "1 file(s) read, 1 document(s) changed" in result.output
    after = documents(org)
    assert after["README.md"][:3] == (before["README.md"][0], 2, changed)
    for path in ("docs/runbook.md", "docs/café notes.md", "src/pool.py", ".gitignore"):
        assert after[path] == before[path]  # untouched: same version, the commit it was written at
    with psycopg.connect(org) as conn:
        times = dict(
            conn.execute(
                """select d.path, to_char(v.source_ts at time zone 'UTC', 'YYYY-MM-DD HH24:MI')
                   from data.documents d join data.document_versions v
                     on v.doc_id = d.doc_id and v.version = d.current_version"""
            ).fetchall()
        )
    # A version's source time (what freshness reads) is its file's last commit.
    assert times["README.md"] == "2026-06-01 09:00" and times["docs/runbook.md"] == "2026-01-05 10:00"
    assert times["docs/café notes.md"] == "2026-01-05 10:00"

    runbook_fragments = live_fragments(org, "docs/runbook.md")
    git(work_tree, "mv", "docs/runbook.md", "docs/operations.md")
    git(work_tree, "rm", "-q", "src/pool.py")
    moved = commit(work_tree, "rename and delete")
    result = sync(org, work_tree)
    assert result.exit_code == 0, result.output
    after = documents(org)
    assert after["docs/runbook.md"][3] is True  # the old path's document is deleted
    assert after["src/pool.py"][3] is True
    assert after["docs/operations.md"][1:] == (1, moved, False)
    assert state(org)[:1] == (moved,) and state(org)[3:5] == (1, 2)
    with psycopg.connect(org) as conn:
        renamed_from, live = conn.execute(
            """select v.metadata ->> 'git_renamed_from',
                      (select count(*) from data.fragments f join data.fragment_sources s using (fragment_id)
                        where s.doc_id = d.doc_id and s.retired_at is null and f.active)
               from data.documents d join data.document_versions v on v.doc_id = d.doc_id
               where d.path = 'docs/operations.md'"""
        ).fetchone()
        retired = conn.execute(
            """select count(*) from data.fragments f join data.fragment_sources s using (fragment_id)
               join data.documents d on d.doc_id = s.doc_id
               where d.path = 'src/pool.py' and f.active"""
        ).fetchone()[0]
    assert renamed_from == "docs/runbook.md" and live >= 1
    # Delete plus add, the new path first: its chunks matched the old fragments, so the
    # fragment ids (pins, citations) and their embeddings carry over to the new path.
    assert live_fragments(org, "docs/operations.md") == runbook_fragments
    assert retired == 0  # the deleted file's fragments left retrieval

    assert f"up to date at {moved}" in sync(org, work_tree).output


def test_a_file_that_can_no_longer_be_indexed_takes_its_document_with_it(org, work_tree):
    assert sync(org, work_tree, "--create-repo").exit_code == 0
    (work_tree / "README.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    commit(work_tree, "readme becomes an image")
    result = sync(org, work_tree)
    assert result.exit_code == 0, result.output
    assert "skipped:" in result.output and "binary" in result.output
    assert documents(org)["README.md"][3] is True
    assert live_fragments(org, "README.md") == []


def test_a_decomposed_unicode_path_is_found_again_when_deleted(org, work_tree):
    decomposed = unicodedata.normalize("NFD", "docs/déjà vu.md")
    write(work_tree, {decomposed: "# Déjà vu\n\nA file some file systems name in decomposed form.\n"})
    commit(work_tree, "decomposed name")
    assert sync(org, work_tree, "--create-repo").exit_code == 0
    stored = unicodedata.normalize("NFC", decomposed)
    assert documents(org)[stored][3] is False  # stored under its NFC path
    git(work_tree, "rm", "-q", decomposed)
    commit(work_tree, "gone")
    assert sync(org, work_tree).exit_code == 0
    assert documents(org)[stored][3] is True


def test_a_file_whose_name_is_not_utf8_is_skipped_and_the_rest_synced(org, work_tree):
    """A name git keeps in bytes that are not UTF-8 was a traceback after the other
    files were written, and the sync was never recorded."""
    (work_tree / "docs").joinpath(os.fsdecode(b"bad\xff\xfename.md")).write_text("# Bad\n\nA name in latin-1.\n")
    commit(work_tree, "a latin-1 name")
    result = sync(org, work_tree, "--create-repo")
    assert result.exit_code == 0, result.output
    assert "skipped:" in result.output and "surrogate" in result.output
    assert "docs/runbook.md" in documents(org)
    assert state(org) is not None  # the sync was recorded
    assert "up to date" in sync(org, work_tree).output


def test_rewritten_history_falls_back_to_a_full_comparison(org, work_tree):
    assert sync(org, work_tree, "--create-repo").exit_code == 0
    before = documents(org)
    # A new history in the same place: the synced commit no longer exists.
    shutil.rmtree(work_tree / ".git")
    (work_tree / "src" / "pool.py").unlink()
    write(work_tree, {"docs/new.md": "# New\n\nA page that only the new history has.\n"})
    git(work_tree, "init", "-q", "-b", "main")
    head = commit(work_tree, "rewritten")

    result = sync(org, work_tree)
    assert result.exit_code == 0, result.output
    assert "no longer in this repository" in result.output
    after = documents(org)
    assert after["src/pool.py"][3] is True
    assert after["docs/new.md"][1:] == (1, head, False)
    assert after["README.md"][:3] == before["README.md"][:3]  # same content: no new version
    assert state(org)[0] == head and state(org)[5] is True


@pytest.mark.parametrize("when", ["@253402300799 +0000", "@300000000000 +0000"])
def test_a_commit_dated_past_what_readers_decode_is_refused_not_stored(org, tmp_path, when):
    """Git records a commit of 9999-12-31T23:59:59Z, or of year 11476: no document takes
    such a time (a reader east of UTC, or every reader, could not decode it); the sync
    says why and finishes."""
    repo = tmp_path / "future"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, {"README.md": "# Now\n\nA document of today.\n"})
    commit(repo, "now", when="2026-01-05T10:00:00Z")
    write(repo, {"docs/far.md": "# Far\n\nA document from the far future.\n"})
    commit(repo, "far", when=when)
    result = sync(org, repo, "--create-repo")
    assert result.exit_code == 0, result.output
    assert "outside the times every reader can decode" in result.output
    assert sorted(documents(org)) == ["README.md"]


def test_dry_run_changes_nothing(org, work_tree):
    result = sync(org, work_tree, "--create-repo", "--dry-run")
    assert result.exit_code == 0, result.output
    assert "write\tsrc/pool.py" in result.output and "dry run: 5 file(s) to write" in result.output
    assert documents(org) == {} and state(org) is None


def test_bad_input_fails_with_a_message(org, work_tree, tmp_path):
    missing = sync(org, tmp_path / "nope")
    assert missing.exit_code != 0 and "no such directory" in missing.output
    plain = tmp_path / "plain"
    plain.mkdir()
    not_git = sync(org, plain)
    assert not_git.exit_code != 0 and "not a git work tree" in not_git.output
    inside = sync(org, work_tree / "docs")
    assert inside.exit_code != 0 and "inside the git work tree" in inside.output
    unknown_repo = sync(org, work_tree)
    assert unknown_repo.exit_code != 0 and "unknown repo platform" in unknown_repo.output
    unknown_org = run(org, "sync", str(work_tree), "--org", "nobody", "--repo", "platform")
    assert unknown_org.exit_code != 0 and "nobody" in unknown_org.output
    assert run(org, "principal", "create", "acme", "reader").exit_code == 0
    assert run(org, "grant", "add", "acme", "reader", "--org-wide").exit_code == 0
    read_only = run(org, "--principal", "reader", "sync", str(work_tree), "--org", "acme", "--repo", "platform",
                    "--create-repo")  # fmt: skip
    assert read_only.exit_code != 0 and "may not write" in read_only.output
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q")
    no_commit = sync(org, empty, "--create-repo")
    assert no_commit.exit_code != 0 and "no commit yet" in no_commit.output


def test_a_document_marked_for_re_chunking_is_read_again_though_head_did_not_move(org, work_tree):
    """Migration 0044 marks documents whose chunks must be matched again (rewrite_due).
    Their files did not change, so the changes since the last sync never name them: a
    sync reads them again, at an unchanged HEAD too, keeps their commit dates, and the
    next sync is up to date."""
    assert sync(org, work_tree, "--create-repo").exit_code == 0
    head = git(work_tree, "rev-parse", "HEAD")
    before = documents(org)
    with psycopg.connect(org) as conn:
        conn.execute("update data.documents set rewrite_due = true where path = 'docs/runbook.md'")

    done = sync(org, work_tree, "--json")
    assert done.exit_code == 0, done.output
    summary = json.loads(next(line for line in done.output.splitlines() if line.startswith("{")))
    assert (summary["up_to_date"], summary["written"], summary["changed"]) == (False, 1, 1)
    after = documents(org)
    assert after["docs/runbook.md"][1] == before["docs/runbook.md"][1] + 1
    assert {path: doc for path, doc in after.items() if path != "docs/runbook.md"} == {
        path: doc for path, doc in before.items() if path != "docs/runbook.md"
    }
    with psycopg.connect(org) as conn:
        due, source_ts = conn.execute(
            "select d.rewrite_due, v.source_ts from data.documents d join data.document_versions v"
            " on v.doc_id = d.doc_id and v.version = d.current_version where d.path = 'docs/runbook.md'"
        ).fetchone()
    assert due is False and source_ts.isoformat() == "2026-01-05T10:00:00+00:00"
    assert f"up to date at {head}" in sync(org, work_tree).output
