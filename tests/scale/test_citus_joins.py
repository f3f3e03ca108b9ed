"""Every join of two tenant tables names org_id equality (docs/scale.md, "Every join must
name org_id"): Citus plans a join of colocated distributed tables on one node only when
it equates their distribution columns, else it refuses it or makes it a multi-shard
join. Citus cannot be installed here, and the functions' plans cannot be read without
calling each one, so this reads the SQL the database holds (function bodies, view
definitions, policy expressions) and checks each join condition that equates a tenant
table's column with another relation's."""

from __future__ import annotations

import re
from pathlib import Path

DISTRIBUTE = Path(__file__).parents[2] / "docker" / "citus" / "distribute.sql"
STOP = re.compile(
    r"\b(?:join|where|group\s+by|order\s+by|limit|union|window|having|returning|on\s+conflict|for\s+update"
    r"|cross|left|right|inner|full|lateral|select|from|set|values|except|intersect)\b"
)
NOT_ALIAS = {
    *("on", "using", "where", "join", "left", "right", "cross", "inner", "full", "group", "order", "limit"),
    *("natural", "for", "union", "returning", "set", "window", "having", "tablesample"),
}
RELATION = re.compile(r"\b(join|from|update|into|using)\s+(?:only\s+)?data\.(\w+)(?:\s+(?:as\s+)?(\w+))?")


def tenant_tables() -> set[str]:
    return set(re.findall(r"create_distributed_table\('data\.(\w+)', 'org_id'", DISTRIBUTE.read_text()))


def plain(sql: str) -> str:
    """Lower case, without comments or string literals (a dollar-quoted body inside a
    body, as in dynamic SQL, stays: it is SQL too)."""
    sql = re.sub(r"--[^\n]*", " ", sql)
    sql = re.sub(r"'(?:[^']|'')*'", "''", sql)
    return sql.lower()


def condition(sql: str, start: int) -> str:
    """The text from `start` to the next keyword at the same depth, `;` or an unmatched `)`."""
    depth = 0
    i = start
    while i < len(sql):
        c = sql[i]
        if c == "(":
            depth += 1
        elif c == ")":
            if depth == 0:
                break
            depth -= 1
        elif c == ";" and depth == 0:
            break
        elif depth == 0 and not (sql[i - 1].isalnum() or sql[i - 1] in "_.") and sql[start:i].strip():
            if STOP.match(sql, i):
                break
        i += 1
    return sql[start:i]


def aliases(sql: str, tenants: set[str]) -> dict[str, str]:
    """Each name a tenant table goes by in this text (its alias, else its own name)."""
    named = {}
    for m in RELATION.finditer(sql):
        if m.group(2) in tenants:
            alias = m.group(3) if m.group(3) and m.group(3) not in NOT_ALIAS else m.group(2)
            named[alias] = m.group(2)
    return named


def joins_without_org(sql: str, tenants: set[str]) -> list[str]:
    """The conditions right after a tenant table (its join's ON or USING, its WHERE)
    that equate one of its columns with a column of another tenant table (by the names
    this text gives them) without equating their org_id."""
    sql = plain(sql)
    tenant_alias = aliases(sql, tenants)
    found = []
    for m in RELATION.finditer(sql):
        table, alias = m.group(2), m.group(3)
        if table not in tenants:
            continue
        end = m.end()
        if alias is None or alias in NOT_ALIAS:
            alias, end = table, m.end(2)
        k = re.match(r"\s*(on|using|where)\b", sql[end:])
        if not k:
            continue
        cond = condition(sql, end + k.end())
        if k.group(1) == "using":
            # A join's USING (columns); DELETE ... USING names its join in its WHERE.
            if m.group(1) == "join" and "org_id" not in cond:
                found.append(f"{table} {alias} using {' '.join(cond.split())}")
            continue
        others = "|".join(re.escape(a) for a in tenant_alias if a != alias)
        if not others:
            continue
        column, other = rf"\b{alias}\.\w+", rf"\b(?:{others})\.\w+"
        if not re.search(rf"{column}\s*=\s*{other}|{other}\s*=\s*{column}", cond):
            continue
        if not re.search(rf"\b{alias}\.org_id\s*=|=\s*{alias}\.org_id\b|\(\s*{alias}\.org_id\s*,", cond):
            found.append(f"{table} {alias} {k.group(1)} {' '.join(cond.split())[:200]}")
    return found


def test_every_join_of_tenant_tables_names_org_id(conn):
    tenants = tenant_tables()
    sources = conn.execute(
        "select 'function ' || p.oid::regprocedure::text, p.prosrc from pg_proc p "
        "where p.pronamespace in ('data'::regnamespace, 'api'::regnamespace, 'service'::regnamespace) "
        "and p.prolang <> 13 "
        "union all select 'view ' || v.schemaname || '.' || v.viewname, v.definition from pg_views v "
        "where v.schemaname in ('api', 'data') "
        "union all select 'policy ' || p.tablename || '.' || p.policyname, "
        "concat_ws(' ', p.qual, p.with_check) from pg_policies p where p.schemaname = 'data' order by 1"
    ).fetchall()
    assert len(sources) > 100
    missing = [f"{name}: {join}" for name, sql in sources for join in joins_without_org(sql, tenants)]
    assert not missing, "\n".join(missing)


def test_the_check_finds_a_join_by_doc_id_alone():
    tenants = {"documents", "document_versions", "fragment_sources"}
    bad = [
        "select 1 from data.documents d join data.document_versions v on v.doc_id = d.doc_id and v.version = 1",
        "select 1 from data.documents d where exists (select 1 from data.fragment_sources s where s.doc_id = d.doc_id)",
        "select 1 from data.documents d join data.document_versions v using (doc_id)",
    ]
    good = [
        "select 1 from data.documents d join data.document_versions v on v.org_id = d.org_id and v.doc_id = d.doc_id",
        "select 1 from data.documents d join data.document_versions v using (org_id, doc_id)",
        # A reference table:
        "select 1 from data.documents d join data.repos r on r.repo_id = d.repo_id",
        "select 1 from data.documents d where d.doc_id = p_doc_id\n"
        "-- join data.fragment_sources s on s.doc_id = d.doc_id\n",
    ]
    assert all(joins_without_org(sql, tenants) for sql in bad)
    assert [joins_without_org(sql, tenants) for sql in good] == [[], [], [], []]
