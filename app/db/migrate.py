"""migrate(): alembic to head, then re-apply functions, views, policies and grants."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from pathlib import Path

from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, text
from sqlalchemy.engine import Connection

from alembic import command

ROOT = Path(__file__).resolve().parents[2]
SQL_DIR = ROOT / "sql"
ALEMBIC_DIR = ROOT / "alembic"
# Re-applied on every migrate, in this order; each file is idempotent (create or replace).
REAPPLIED = ("functions", "views", "policies", "grants")


def sqlalchemy_url(dsn: str) -> str:
    """psycopg 3 dialect URL for a libpq-style postgresql:// DSN."""
    for prefix in ("postgresql+psycopg://", "postgresql://", "postgres://"):
        if dsn.startswith(prefix):
            return "postgresql+psycopg://" + dsn[len(prefix) :]
    raise ValueError(f"not a PostgreSQL URL: {dsn.split('@')[-1]!r}")


def run_sql_file(conn: Connection, relative: str) -> None:
    """Execute one SQL file (no psql meta-commands) on a SQLAlchemy connection."""
    _execute_script(conn, (SQL_DIR / relative).read_text(encoding="utf-8"))


def _execute_script(conn: Connection, sql: str) -> None:
    # Straight to psycopg without parameters: `%` in SQL text (format(), comments)
    # must not be read as a placeholder, and a file may hold many statements.
    conn.connection.dbapi_connection.execute(sql)  # type: ignore[union-attr]


def reapplied_files() -> list[Path]:
    files: list[Path] = []
    for folder in REAPPLIED:
        files.extend(sorted((SQL_DIR / folder).glob("*.sql")))
    return files


def migration_checksums() -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted((SQL_DIR / "migrations").glob("*.sql"))}


def reapplied_digest() -> str:
    """One digest of the re-applied files, names and contents, in the order they run."""
    digest = hashlib.sha256()
    for path in reapplied_files():
        digest.update(path.relative_to(SQL_DIR).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


@dataclass(frozen=True, slots=True)
class Migrated:
    """What one migrate did, for the people who ran it."""

    before: str | None
    """The schema's revision before (None: an empty database)."""
    after: str | None
    applied: tuple[str, ...]
    """The migrations applied now, oldest first (revision ids, as in alembic/versions)."""
    reapplied: bool
    """Whether functions, views, policies and grants were re-applied."""
    rewrite_due: int = 0
    """Live documents marked for re-chunking at their next write (data.documents.rewrite_due),
    counted when this migrate applied migrations: their owners should ingest or sync them again."""

    def describe(self) -> str:
        if self.applied:
            done = f"applied {len(self.applied)} migration(s) ({', '.join(self.applied)}): schema at {self.after}"
            if self.before is None:
                done += " (created)"
        else:
            done = f"no migration to apply: schema already at {self.after}"
        done += "; functions, views, policies and grants re-applied" if self.reapplied else ""
        if self.rewrite_due:
            done += (
                f"; {self.rewrite_due} document(s) to re-chunk under the new near-duplicate features: the next "
                "`contexts ingest` or `contexts sync` of their files does it (docs/adr/0003)"
            )
        return done


def migrate(dsn: str, revision: str = "head", reapply: bool = True, force: bool = False) -> Migrated:
    """Bring the database at `dsn` to the current schema, in one transaction. Functions,
    views, policies and grants are re-applied when their files changed since the last
    migrate, or with `force` (`contexts migrate`, which also puts back any privilege
    changed by hand): re-creating policies locks tenant tables, and a process that
    does it while others read can deadlock with them. (A `revision` short of head,
    without re-applying functions, is for upgrade tests.)"""
    engine = create_engine(sqlalchemy_url(dsn), poolclass=None)
    try:
        with engine.begin() as conn:
            # One migrate at a time per database (CLI, service start-up and tests may race).
            conn.execute(text("select pg_advisory_xact_lock(hashtext('contexts.migrate'))"))
            cfg = Config()
            cfg.set_main_option("script_location", str(ALEMBIC_DIR))
            cfg.attributes["connection"] = conn
            before = MigrationContext.configure(conn).get_current_revision()
            command.upgrade(cfg, revision)
            after = MigrationContext.configure(conn).get_current_revision()
            done = Migrated(before, after, _revisions_between(cfg, before, after), False)
            if done.applied and done.before is not None:
                done = replace(done, rewrite_due=_rewrite_due(conn))
            if not reapply:
                return done
            digest = reapplied_digest()
            applied = conn.execute(text("select digest from public.contexts_reapplied")).scalar()
            if applied != digest or force:
                for path in reapplied_files():
                    _execute_script(conn, path.read_text(encoding="utf-8"))
                conn.execute(
                    text(
                        "insert into public.contexts_reapplied (digest) values (:digest) on conflict (singleton) "
                        "do update set digest = excluded.digest, applied_at = now()"
                    ),
                    {"digest": digest},
                )
                done = replace(done, reapplied=True)
            _run_due_tasks(conn)
            return done
    finally:
        engine.dispose()


DUE_TASKS = {
    # Migration 0045: the supersession rule of ADR 0016's amendment of 2026-12-06. Every
    # document in a supersession claim, per org; _refresh_validity adds the other ends.
    "refresh_validity": """
        select data._refresh_validity(l.org_id, array_agg(distinct l.doc_id order by l.doc_id))
        from data.fragment_links l
        where l.link_type in ('supersedes', 'superseded_by')
        group by l.org_id
    """,
}
"""What each task of public.contexts_due runs, as the migrator, in the migrate's
transaction, once the functions it calls are the current ones."""


def _run_due_tasks(conn: Connection) -> None:
    """Run and forget the tasks migrations left (none before migration 0045 made the table)."""
    if conn.execute(text("select to_regclass('public.contexts_due')")).scalar() is None:
        return
    for (task,) in conn.execute(text("select task from public.contexts_due order by due_since, task")).fetchall():
        if task not in DUE_TASKS:
            raise RuntimeError(f"migration left a task this code does not know: {task} (upgrade Contexts)")
        conn.execute(text(DUE_TASKS[task]))
        conn.execute(text("delete from public.contexts_due where task = :task"), {"task": task})


def _rewrite_due(conn: Connection) -> int:
    """Live documents marked for re-chunking (0 before migration 0044 made the column)."""
    has_column = conn.execute(
        text(
            "select exists (select 1 from pg_attribute where attrelid = 'data.documents'::regclass"
            " and attname = 'rewrite_due' and not attisdropped)"
        )
    ).scalar()
    if not has_column:
        return 0
    return int(conn.execute(text("select count(*) from data.documents where rewrite_due")).scalar() or 0)


def _revisions_between(cfg: Config, before: str | None, after: str | None) -> tuple[str, ...]:
    """The revisions from `before` (excluded) up to `after`, oldest first."""
    if after is None or before == after:
        return ()
    script = ScriptDirectory.from_config(cfg)
    walked = [r.revision for r in script.iterate_revisions(after, before or "base")]
    return tuple(reversed([r for r in walked if r != before]))
