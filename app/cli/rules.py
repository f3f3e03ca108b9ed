"""`contexts rules add | list | remove`: workflow rules (docs/adr/0022), as --principal
on the database (its grants apply exactly as over HTTP: adding or removing a rule needs
a write grant on its scope)."""

from __future__ import annotations

import click

from app.cli.common import ID, as_principal, console, context_settings, echo, print_json, required_org, validated
from app.wire.bodies import RuleCreate, RuleOut


@click.group()
def rules() -> None:
    """Workflow rules: a step touching matching files pulls in a Context."""


def _line(r: RuleOut) -> str:
    flags = ", ".join(f for f, on in (("disabled", not r.enabled), ("expired", r.expired)) if on)
    globs = " ".join([*r.path_globs, *(f"#{g}" for g in r.symbol_globs)])
    until = f" until {r.expires_at:%Y-%m-%d %H:%M}" if r.expires_at else ""
    return (
        f"{r.rule_id}\t{r.repo_id or 'org'}\t{r.name}{f' ({flags})' if flags else ''}\t{globs}\t-> {r.context_ref}"
        f"\tby {r.created_by}{until}"
    )


@rules.command("add")
@click.argument("name")
@click.option("--org", "org_id", required=True)
@click.option("--repo", default=None, help="Only retrievals in this repo (default: the whole org).")
@click.option("--context", "context_ref", required=True, help="ctx_<id>@<version> or ctx_<id>@latest.")
@click.option("--path", "path_globs", multiple=True, help="A path glob (**, *, ?); repeatable.")
@click.option("--symbol", "symbol_globs", multiple=True, help="A symbol glob (path#Symbol entries); repeatable.")
@click.option("--expires-at", default=None, help="ISO 8601 with an offset; the rule matches nothing afterwards.")
@click.option("--disabled", is_flag=True, help="Store it switched off.")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def rules_add(
    ctx: click.Context,
    name: str,
    org_id: str,
    repo: str | None,
    context_ref: str,
    path_globs: tuple[str, ...],
    symbol_globs: tuple[str, ...],
    expires_at: str | None,
    disabled: bool,
    as_json: bool,
) -> None:
    """Add rule NAME: touching a matching path or symbol brings --context (POST /rules)."""
    payload = {
        "org_id": org_id,
        "repo_id": repo,
        "name": name,
        "context": context_ref,
        "path_globs": list(path_globs),
        "symbol_globs": list(symbol_globs),
        "expires_at": expires_at,
        "enabled": not disabled,
    }
    request = validated(payload, RuleCreate)
    from app.operations.rules import create_rule_on

    added = as_principal(context_settings(ctx), org_id, lambda conn: create_rule_on(conn, request))
    if as_json:
        print_json(added)
        return
    echo(_line(added))
    console.print(f"added rule {added.rule_id}")


@rules.command("list")
@click.option("--org", "org_id", required=True)
@click.option("--repo", default=None, help="The repo's rules too.")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def rules_list(ctx: click.Context, org_id: str, repo: str | None, as_json: bool) -> None:
    """The rules a retrieval in this scope consults (GET /rules)."""
    from app.operations.rules import list_rules_on

    listed = as_principal(context_settings(ctx), org_id, lambda conn: list_rules_on(conn, org_id, repo))
    if as_json:
        print_json(listed)
        return
    for r in listed.rules:
        echo(_line(r))
    console.print(f"{len(listed.rules)} rule(s)")


@rules.command("remove")
@click.argument("rule_id", type=ID)
@click.option("--org", "org_id", default=None, help="Org of --principal.")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def rules_remove(ctx: click.Context, rule_id: int, org_id: str | None, as_json: bool) -> None:
    """Delete rule RULE_ID (DELETE /rules/{id})."""
    from app.operations.rules import delete_rule_on

    removed = as_principal(context_settings(ctx), required_org(org_id), lambda conn: delete_rule_on(conn, rule_id))
    if as_json:
        print_json(removed)
        return
    console.print(f"removed rule {removed.rule_id} ({removed.name})")


COMMANDS = (rules,)
