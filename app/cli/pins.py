"""`contexts pin add | remove | list`: manual pins, as --principal on the database (its
grants apply exactly as over HTTP: pinning needs a write grant on the pin's scope), or
through a running service with --url and --key (CONTEXTS_URL, CONTEXTS_KEY)."""

from __future__ import annotations

import click

from app.cli.common import (
    ID,
    as_principal,
    console,
    context_settings,
    echo,
    print_json,
    remote,
    remote_options,
    required_org,
    validated,
)
from app.wire.bodies import PinCreate, PinOut, PinQuery


@click.group()
def pin() -> None:
    """Pin fragments to a scope: composed first in every retrieval that sees it."""


def _scope_label(p: PinOut) -> str:
    return "/".join(x for x in (p.repo_id, p.persona_id, p.session_id) if x) or "org"


def _line(p: PinOut) -> str:
    superseded = "superseded" + (f" by {', '.join(s['path'] for s in p.superseded_by)}" if p.superseded_by else "")
    flags = ", ".join(
        [
            f
            for f, on in (
                ("negative", p.negative),
                ("expired", p.expired),
                ("inactive", not p.active),
                (superseded, p.superseded),
            )
            if on
        ]
    )
    until = f" until {p.expires_at:%Y-%m-%d %H:%M}" if p.expires_at else ""
    return (
        f"{p.pin_id}\tfragment {p.fragment_id}\t{_scope_label(p)}\t{p.kind}{f' ({flags})' if flags else ''}"
        f"\tby {p.pinned_by}{until}\t{p.reason}"
    )


@pin.command("add")
@click.argument("fragment_id", type=ID)
@click.option("--org", "org_id", required=True)
@click.option("--repo", default=None, help="Pin in this repo (default: org-wide).")
@click.option("--persona", default=None)
@click.option("--session", default=None)
@click.option("--reason", required=True, help="Why it must come first.")
@click.option("--expires-at", default=None, help="ISO 8601 with an offset; the pin is ignored afterwards.")
@click.option("--json", "as_json", is_flag=True)
@remote_options
@click.pass_context
def pin_add(
    ctx: click.Context,
    fragment_id: int,
    org_id: str,
    repo: str | None,
    persona: str | None,
    session: str | None,
    reason: str,
    expires_at: str | None,
    as_json: bool,
    url: str | None,
    key: str | None,
) -> None:
    """Pin FRAGMENT_ID to a scope (POST /pins)."""
    payload = {
        "scope": {"org_id": org_id, "repo_id": repo, "persona_id": persona, "session_id": session},
        "fragment_id": fragment_id,
        "reason": reason,
        "expires_at": expires_at,
    }
    request = validated(payload, PinCreate)
    if url:
        scope = {"org_id": org_id, "repo_id": repo, "persona_id": persona, "session_id": session}
        added = remote(
            url, key, lambda client: client.pin(fragment_id, reason=reason, expires_at=request.expires_at, **scope)
        )
    else:
        from app.operations.pins import add_pin_on

        added = as_principal(context_settings(ctx), org_id, lambda conn: add_pin_on(conn, request))
    if as_json:
        print_json(added)
        return
    echo(_line(added))
    console.print(f"pinned fragment {added.fragment_id} in {_scope_label(added)} (pin {added.pin_id})")


@pin.command("remove")
@click.argument("pin_id", type=ID)
@click.option("--org", "org_id", default=None, help="Org of --principal (database mode).")
@click.option("--json", "as_json", is_flag=True)
@remote_options
@click.pass_context
def pin_remove(
    ctx: click.Context, pin_id: int, org_id: str | None, as_json: bool, url: str | None, key: str | None
) -> None:
    """Remove pin PIN_ID (DELETE /pins/{id})."""
    if url:
        removed = remote(url, key, lambda client: client.unpin(pin_id))
    else:
        from app.operations.pins import remove_pin_on

        removed = as_principal(context_settings(ctx), required_org(org_id), lambda conn: remove_pin_on(conn, pin_id))
    if as_json:
        print_json(removed)
        return
    console.print(f"removed pin {removed.pin_id} (fragment {removed.fragment_id} in {_scope_label(removed)})")


@pin.command("list")
@click.option("--org", "org_id", required=True)
@click.option("--repo", default=None)
@click.option("--persona", default=None)
@click.option("--session", default=None)
@click.option("--all", "include_expired", is_flag=True, help="Expired pins too.")
@click.option("--json", "as_json", is_flag=True)
@remote_options
@click.pass_context
def pin_list(
    ctx: click.Context,
    org_id: str,
    repo: str | None,
    persona: str | None,
    session: str | None,
    include_expired: bool,
    as_json: bool,
    url: str | None,
    key: str | None,
) -> None:
    """The pins a retrieval in this scope sees, in the order they are composed (GET /pins)."""
    payload = {"scope": {"org_id": org_id, "repo_id": repo, "persona_id": persona, "session_id": session}}
    query = validated(payload | {"include_expired": include_expired}, PinQuery)
    if url:
        scope = {"org_id": org_id, "repo_id": repo, "persona_id": persona, "session_id": session}
        pins = remote(url, key, lambda client: client.list_pins(include_expired=include_expired, **scope))
    else:
        from app.operations.pins import list_pins_on

        pins = as_principal(context_settings(ctx), org_id, lambda conn: list_pins_on(conn, query))
    if as_json:
        print_json(pins)
        return
    for p in pins.pins:
        echo(_line(p))
    console.print(f"{len(pins.pins)} pin(s)")


COMMANDS = (pin,)
