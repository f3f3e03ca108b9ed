"""`contexts policy check`: what protects each table, read from the catalog (service.policy_report,
sql/functions/14_policy_report.sql); fails when a table with tenant data lacks forced
row-level security, or when the policies in the database differ from sql/policies
(app/db/policy_drift.py)."""

from __future__ import annotations

import json

import click

from app.cli.admin import admin_connection
from app.cli.common import CliError, console, context_settings, echo

COMMANDS_SHOWN = ("select", "insert", "update", "delete")


@click.group()
def policy() -> None:
    """Row-level security policies and who may do what."""


@policy.command("check")
@click.option("--verbose", is_flag=True, help="Also print each policy's USING and WITH CHECK expressions.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
@click.pass_context
def policy_check(ctx: click.Context, verbose: bool, as_json: bool) -> None:
    """Print every table of schema data: tenant data or not, row-level security enabled
    and forced, its policies, and which roles may select, insert, update or delete it.
    Exit non-zero when a table with tenant data (or one of its partitions) lacks forced
    row-level security, or on drift: a policy in the database that sql/policies does not
    make (made by hand, or removed from the files), or one the files make that the
    database lacks or holds with another definition."""
    import psycopg

    from app.db.policy_drift import LOCK_TIMEOUT, policy_drift

    with admin_connection(context_settings(ctx)) as conn:
        cursor = conn.execute("select * from service.policy_report()")
        columns = [c.name for c in cursor.description or ()]
        tables = [dict(zip(columns, row)) for row in cursor.fetchall()]
        bypass = [r[0] for r in conn.execute("select role_name from service.policy_bypass()")]
        try:
            drift = policy_drift(conn)
        except psycopg.errors.LockNotAvailable as exc:
            raise CliError(
                f"cannot compare the policies with sql/policies: a table stayed locked for {LOCK_TIMEOUT}; try again"
            ) from exc
    failures = [t["table_name"] for t in tables if t["tenant"] and not (t["rls_enabled"] and t["rls_forced"])] + [
        p for t in tables if t["tenant"] for p in t["unprotected_partitions"]
    ]

    if as_json:
        echo(
            json.dumps(
                {
                    "tables": tables,
                    "bypass_rls": bypass,
                    "unprotected": failures,
                    "drift": [d.as_json() for d in drift],
                }
            )
        )
    else:
        for t in tables:
            echo(_describe(t, verbose))
        echo(f"roles that bypass row-level security everywhere: {', '.join(bypass) or 'none'}")
        for d in drift:
            echo(f"drift: {d.describe()}")
    problems = []
    if failures:
        problems.append(
            f"{len(failures)} table(s) with tenant data lack forced row-level security: {', '.join(failures)} "
            "(alter table ... enable row level security; alter table ... force row level security)"
        )
    if drift:
        problems.append(
            f"{len(drift)} polic{'y differs' if len(drift) == 1 else 'ies differ'} from sql/policies: "
            + "; ".join(d.describe() for d in drift)
        )
    if problems:
        raise CliError("\n".join(problems))
    console.print(
        f"[green]every table with tenant data has forced row-level security[/] ({len(tables)} tables), "
        "and the policies are those of sql/policies"
    )


def _describe(t: dict, verbose: bool) -> str:
    state = "enabled" if t["rls_enabled"] else "DISABLED"
    forced = "forced" if t["rls_forced"] else "NOT FORCED"
    kind = "tenant data" if t["tenant"] else "shared (no tenant data)"
    lines = [f"data.{t['table_name']}: {kind}; row-level security {state}, {forced}"]
    if t["partitions"]:
        bad = t["unprotected_partitions"]
        lines.append(
            f"  partitions: {t['partitions']}"
            + (f", NOT FORCED: {', '.join(bad)}" if bad else ", each forced with its own policy")
        )
    for p in t["policies"]:
        roles = ", ".join(p["roles"])
        kind_of = "" if p["permissive"] else " restrictive"
        lines.append(f"  policy {p['name']}:{kind_of} {p['command']} to {roles}")
        if verbose:
            lines += [f"    {label}: {p[key]}" for label, key in (("using", "using"), ("check", "check")) if p[key]]
    if not t["policies"]:
        lines.append("  policy: none" + (" (every row hidden)" if t["rls_enabled"] else ""))
    for command in COMMANDS_SHOWN:
        lines.append(f"  {command}: {', '.join(t['may_' + command]) or 'nobody'}")
    return "\n".join(lines)


COMMANDS = (policy,)
