"""Backup and restore with the logins: one file holding the cluster's roles (`pg_dumpall
--roles-only`: analysts' logins, their passwords as SCRAM verifiers, and their group
memberships) and the Contexts database (`pg_dump --format=custom`), made with the
embedded server's own client tools (app/pgtools.py). A restore re-creates the roles the
target lacks, then the database, into a database with no Contexts schema yet (a new
cluster, or a new empty database), and migrates it: a pg_dump of a database carries
no role and no database-level grant, which is why a plain dump restored into a fresh
cluster loses every analyst login."""

from __future__ import annotations

import io
import os
import re
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from app.pgtools import binary

ROLES = "roles.sql"
DATABASE = "contexts.dump"
FORMAT = "contexts-backup 1"
"""The archive's first member, VERSION, holds this line."""

CREATE_ROLE = re.compile(r"^CREATE ROLE (.+);$")
ALTER_ROLE = re.compile(r"^ALTER ROLE (.+?) WITH ")


class BackupError(RuntimeError):
    """A backup or restore that could not be done; the message says why and what to do."""


@dataclass(frozen=True, slots=True)
class BackedUp:
    roles: int
    """Login and group roles kept."""
    size: int
    """Bytes of the backup file."""
    passwords: bool
    """Whether the logins' password verifiers are in it (a non-superuser cannot read them)."""


def _tool(name: str, dsn: str, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    """Run one client tool on `dsn`; its password travels in PGPASSWORD, never on the command line."""
    params = {k: str(v) for k, v in conninfo_to_dict(dsn).items() if v is not None}
    env = dict(os.environ)
    if "password" in params:
        env["PGPASSWORD"] = params.pop("password")
    return subprocess.run(
        [str(binary(name)), "--dbname", make_conninfo(**params), *args], input=stdin, env=env, capture_output=True
    )


def _failure(what: str, done: subprocess.CompletedProcess[bytes]) -> BackupError:
    lines = [line for line in done.stderr.decode(errors="replace").splitlines() if line.strip()]
    return BackupError(f"{what} failed: {lines[-1] if lines else f'exit status {done.returncode}'}")


def backup(dsn: str, path: Path) -> BackedUp:
    """Write the roles and the database at `dsn` to `path` (replaced only once complete)."""
    passwords = True
    roles = _tool("pg_dumpall", dsn, "--roles-only")
    if roles.returncode != 0 and b"permission denied" in roles.stderr:
        passwords = False  # a managed server's migrator: the roles, without their passwords
        roles = _tool("pg_dumpall", dsn, "--roles-only", "--no-role-passwords")
    if roles.returncode != 0:
        raise _failure("pg_dumpall --roles-only", roles)
    with tempfile.TemporaryDirectory(prefix="contexts-backup-") as scratch:
        dump = Path(scratch) / DATABASE
        done = _tool("pg_dump", dsn, "--format=custom", "--file", str(dump))
        if done.returncode != 0:
            raise _failure("pg_dump", done)
        partial = path.with_name(f".{path.name}.partial")
        with tarfile.open(partial, "w") as archive:
            _add(archive, "VERSION", (FORMAT + "\n").encode())
            _add(archive, ROLES, roles.stdout)
            archive.add(dump, DATABASE)
        os.replace(partial, path)
    count = sum(1 for line in roles.stdout.decode().splitlines() if CREATE_ROLE.match(line))
    return BackedUp(count, path.stat().st_size, passwords)


def _add(archive: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    archive.addfile(info, io.BytesIO(data))


@dataclass(frozen=True, slots=True)
class Restored:
    created: tuple[str, ...]
    """Roles the target lacked, created now."""
    kept: int
    """Roles the target had already (left as they are)."""


def restore(dsn: str, path: Path) -> Restored:
    """Restore the backup at `path` into the database at `dsn`, which must hold no
    Contexts schema yet. Roles the target cluster has already are left as they are;
    the others are created with their attributes, passwords and memberships."""
    with _open_backup(path) as archive, tempfile.TemporaryDirectory(prefix="contexts-restore-") as scratch:
        roles = _read(archive, ROLES)
        archive.extract(DATABASE, scratch, filter="data")
        with psycopg.connect(dsn, autocommit=True) as conn:
            if conn.execute("select to_regnamespace('data') is not null").fetchone() == (True,):
                raise BackupError(
                    "the target database holds a Contexts schema already: restore into a new, empty database "
                    "(a new CONTEXTS_HOME, or a database made with createdb)"
                )
            existing = {r[0] for r in conn.execute("select quote_ident(rolname) from pg_roles")}
            me = conn.execute("select quote_ident(current_user)").fetchone()
        script, created = _roles_script(roles, existing, me[0] if me else "")
        done = _tool(
            "psql",
            dsn,
            "--no-psqlrc",
            "--quiet",
            "--single-transaction",
            "-v",
            "ON_ERROR_STOP=1",
            stdin=script.encode(),
        )
        if done.returncode != 0:
            raise _failure("re-creating the roles", done)
        done = _tool("pg_restore", dsn, "--exit-on-error", "--single-transaction", str(Path(scratch) / DATABASE))
        if done.returncode != 0:
            raise _failure("pg_restore", done)
    return Restored(tuple(created), len(existing & set(_created_roles(roles))))


def check_backup(path: Path) -> None:
    """Refuse what is not a `contexts backup` archive before anything else is done (a
    restore would otherwise make the embedded database first): `_open_backup`'s checks,
    and pg_restore reading the dump's table of contents (it needs no server), so a file
    with the right signature and nothing sound after it is refused too. `restore` itself
    makes only the quick checks: its pg_restore says what is wrong with a dump."""
    with _open_backup(path) as archive:
        if not _lists(archive):
            raise BackupError(f"{_not_one(path)}: its {DATABASE} is not a pg_dump archive")


def _not_one(path: Path) -> str:
    return f"{path} is not a Contexts backup (made by `contexts backup FILE`)"


def _open_backup(path: Path) -> tarfile.TarFile:
    """The backup archive at `path`, checked for its members and format; one line of
    error otherwise (tarfile lists each compression it tried, one line each)."""
    not_one = _not_one(path)
    try:
        archive = tarfile.open(path)
    except OSError as exc:
        raise BackupError(f"{not_one}: {exc.strerror or exc}") from exc
    except tarfile.TarError as exc:
        raise BackupError(f"{not_one}: not a tar archive") from exc
    try:
        names = set(archive.getnames())
        if not {"VERSION", ROLES, DATABASE} <= names:
            raise BackupError(f"{not_one}: it lacks {', '.join(sorted({'VERSION', ROLES, DATABASE} - names))}")
        if _read(archive, "VERSION").strip() != FORMAT:
            raise BackupError(f"{not_one}: format {_read(archive, 'VERSION').strip()[:40]!r}, not {FORMAT!r}")
        dump = archive.extractfile(DATABASE)
        if dump is None or dump.read(5) != b"PGDMP":  # pg_dump --format=custom's signature
            raise BackupError(f"{not_one}: its {DATABASE} is not a pg_dump archive")
    except (BackupError, tarfile.TarError, OSError, UnicodeDecodeError) as exc:
        archive.close()
        if isinstance(exc, BackupError):
            raise
        raise BackupError(f"{not_one}: a damaged archive ({exc})") from exc
    return archive


def _lists(archive: tarfile.TarFile) -> bool:
    """Whether pg_restore reads the dump's table of contents. Streamed: pg_restore stops
    after the table of contents, at the start."""
    member = archive.extractfile(DATABASE)
    if member is None:
        return False
    lister = subprocess.Popen(
        [str(binary("pg_restore")), "--list"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    assert lister.stdin is not None
    try:
        with lister.stdin:  # closed (flushed) on the way out, whether it read all or left
            while block := member.read(1 << 20):
                lister.stdin.write(block)
    except BrokenPipeError:
        pass  # it read what it needed and left
    return lister.wait() == 0


def _read(archive: tarfile.TarFile, name: str) -> str:
    member = archive.extractfile(name)
    if member is None:
        raise BackupError(f"{name} in the backup is not a file")
    return member.read().decode()


def _created_roles(roles: str) -> list[str]:
    return [m.group(1) for line in roles.splitlines() if (m := CREATE_ROLE.match(line))]


def _roles_script(roles: str, existing: set[str], me: str) -> tuple[str, list[str]]:
    """pg_dumpall's roles, less what would fail or change the target: a CREATE ROLE or
    ALTER ROLE of a role it has already (its own superuser among them). Memberships are
    granted again (a grant held already is a notice, not an error)."""
    kept: list[str] = []
    created: list[str] = []
    skip = existing | {me}
    for line in roles.splitlines():
        create = CREATE_ROLE.match(line)
        alter = ALTER_ROLE.match(line)
        name = create.group(1) if create else alter.group(1) if alter else None
        if name is not None and name in skip:
            continue
        if create:
            created.append(create.group(1))
        kept.append(line)
    return "\n".join(kept) + "\n", created
