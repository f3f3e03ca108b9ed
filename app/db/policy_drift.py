"""Policy drift: the row-level security policies of schema data against those the files
under sql/policies make. A policy in the database that the files do not make (made by
hand, or removed from the files: a migrate re-creates the files' policies but drops no
other) is reported, as is one the files make that the database lacks or holds with
another definition. The files' set is read by applying them in a transaction that is
always rolled back; a partition's only expected policy is the `direct_access_denied`
that service.create_org gives it (reached through its parent only)."""

from __future__ import annotations

import re
from dataclasses import dataclass

import psycopg
from psycopg import sql

from app.db.migrate import SQL_DIR

PARTITION_POLICY = ("direct_access_denied", "ALL", "false", None)
"""(name, command, using, with check) of the one policy of every partition of a tenant table."""

LOCK_TIMEOUT = "10s"

MIGRATION_POLICY = re.compile(r"^\s*create policy (\w+) on data\.(\w+)", re.IGNORECASE | re.MULTILINE)
"""A policy a migration makes once, by name (as 0026 does for data.idempotent_writes): kept
as it is by the comparison, and expected to exist."""

POLICIES = """
select p.tablename::text, p.policyname::text, c.relispartition, p.permissive, p.roles::text[], p.cmd, p.qual,
       p.with_check
from pg_policies p
join pg_namespace n on n.nspname = p.schemaname
join pg_class c on c.relnamespace = n.oid and c.relname = p.tablename
where p.schemaname = 'data'
"""


@dataclass(frozen=True, slots=True)
class Drift:
    table: str
    policy: str
    kind: str
    """"unknown" (in the database only), "missing" (in the files only) or "changed"."""

    def describe(self) -> str:
        on = f"policy {self.policy} on data.{self.table}"
        if self.kind == "unknown":
            return (
                f"{on} is in the database but not in sql/policies (made by hand, or removed from the files): "
                f"drop it (drop policy {self.policy} on data.{self.table}) or add it to sql/policies"
            )
        if self.kind == "missing":
            return f"{on} is in sql/policies but not in the database: run contexts migrate"
        if self.policy == PARTITION_POLICY[0]:
            return (
                f"{on} differs from the one service.create_org gives every partition: using (false), for all commands"
            )
        return f"{on} differs from its definition in sql/policies: run contexts migrate"

    def as_json(self) -> dict[str, str]:
        return {"table": self.table, "policy": self.policy, "kind": self.kind}


Policies = dict[tuple[str, str], tuple]


def _read(conn: psycopg.Connection) -> tuple[Policies, Policies]:
    """(policies of tables, policies of partitions), keyed by (table, name)."""
    tables: Policies = {}
    partitions: Policies = {}
    for table, name, partition, permissive, roles, command, using, check in conn.execute(POLICIES).fetchall():
        into = partitions if partition else tables
        into[(table, name)] = (permissive, tuple(sorted(roles or ())), command, using, check)
    return tables, partitions


def migration_policies() -> set[tuple[str, str]]:
    """(table, name) of the policies that sql/migrations create by name."""
    return {
        (table, name)
        for path in sorted((SQL_DIR / "migrations").glob("*.sql"))
        for name, table in MIGRATION_POLICY.findall(path.read_text(encoding="utf-8"))
    }


def policy_drift(conn: psycopg.Connection) -> list[Drift]:
    """The differences, as the migrator (it owns the tables). Takes each tenant table's
    lock for a moment (policies are dropped and re-made in the rolled-back transaction);
    psycopg.errors.LockNotAvailable when a table stays busy for LOCK_TIMEOUT."""
    actual, partitions = _read(conn)
    made_once = migration_policies()
    with conn.transaction(force_rollback=True):
        conn.execute(f"set local lock_timeout = '{LOCK_TIMEOUT}'")
        for table, name in actual.keys() - made_once:
            conn.execute(sql.SQL("drop policy {} on data.{}").format(sql.Identifier(name), sql.Identifier(table)))
        for path in sorted((SQL_DIR / "policies").glob("*.sql")):
            conn.execute(path.read_text(encoding="utf-8"))  # a script: no parameters, so many statements
        expected, _ = _read(conn)
    drift = [Drift(t, n, "unknown") for t, n in sorted(actual.keys() - expected.keys())]
    drift += [Drift(t, n, "missing") for t, n in sorted((expected.keys() | made_once) - actual.keys())]
    drift += [
        Drift(t, n, "changed") for t, n in sorted(actual.keys() & expected.keys()) if actual[t, n] != expected[t, n]
    ]
    for (table, name), (_, _, command, using, check) in sorted(partitions.items()):
        if (name, command, using, check) != PARTITION_POLICY:
            drift.append(Drift(table, name, "unknown" if name != PARTITION_POLICY[0] else "changed"))
    return drift
