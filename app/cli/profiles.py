"""`contexts profile set | show | list | delete`: ranking profiles, the blend's weights
and freshness half-lives of an org or a persona (docs/adr/0014), as --principal on the
database (setting one needs a write grant on the org or the persona, as over HTTP), or
through a running service with --url and --key (CONTEXTS_URL, CONTEXTS_KEY)."""

from __future__ import annotations

import click
import msgspec

from app.cli.common import (
    CliError,
    as_principal,
    console,
    context_settings,
    echo,
    print_json,
    remote,
    remote_options,
    validated,
)
from app.wire.bodies import BLEND_WEIGHTS, RankingProfileOut, RankingProfileSet


@click.group()
def profile() -> None:
    """Ranking profiles: how relevance, freshness, authority, pins and persona blend."""


def _weights(values: dict) -> str:
    return " ".join(f"{name[2:]}={values[name]:g}" for name in BLEND_WEIGHTS if values.get(name) is not None)


def _lines(p: RankingProfileOut) -> list[str]:
    who = p.persona_id or "org default"
    stored = msgspec.structs.asdict(p)
    effective = msgspec.structs.asdict(p.effective)
    when = f"set by {p.updated_by} at {p.updated_at:%Y-%m-%d %H:%M}" if p.updated_by else "nothing stored"
    lines = [f"{p.org_id}\t{who}\t{when}"]
    if p.updated_by:
        lines.append(f"  stored:    {_weights(stored) or '(weights inherited)'}  half-lives {p.halflife_days or '{}'}")
    lines.append(
        f"  in effect: {_weights(effective)}  half-lives {p.effective.halflife_days}  (from {p.effective.source})"
    )
    if p.effective.description:
        lines.append(f"  {p.effective.description}")
    return lines


def _halflives(values: tuple[str, ...]) -> dict[str, float]:
    out = {}
    for value in values:
        kind, sep, days = value.partition("=")
        if not sep:
            raise CliError(f"--halflife {value!r}: expected KIND=DAYS, e.g. policy=365 or default=90")
        try:
            out[kind] = float(days)
        except ValueError as exc:
            raise CliError(f"--halflife {value!r}: {days!r} is not a number of days") from exc
    return out


@profile.command("set")
@click.option("--org", "org_id", required=True)
@click.option("--persona", default=None, help="The persona's profile (default: the org default).")
@click.option("--w-rerank", type=float, default=None, help="Weight of relevance (built-in 0.8).")
@click.option("--w-freshness", type=float, default=None, help="Weight of freshness (built-in 0.1).")
@click.option("--w-authority", type=float, default=None, help="Weight of citation authority (built-in 0.05).")
@click.option("--w-pinned", type=float, default=None, help="Weight of being pinned (built-in 0.05).")
@click.option("--w-persona", type=float, default=None, help="Weight of closeness to the persona (built-in 0).")
@click.option("--halflife", multiple=True, metavar="KIND=DAYS", help="Freshness half-life of a kind; repeatable.")
@click.option(
    "--description",
    default=None,
    help="What this persona cares about; a persona's is embedded and counts in its persona term.",
)
@click.option("--json", "as_json", is_flag=True)
@remote_options
@click.pass_context
def profile_set(
    ctx: click.Context,
    org_id: str,
    persona: str | None,
    w_rerank: float | None,
    w_freshness: float | None,
    w_authority: float | None,
    w_pinned: float | None,
    w_persona: float | None,
    halflife: tuple[str, ...],
    description: str | None,
    as_json: bool,
    url: str | None,
    key: str | None,
) -> None:
    """Replace the ranking profile of an org or persona (PUT /profiles). Anything not
    given inherits (persona -> org default -> built-in)."""
    fields = {
        "persona_id": persona,
        "w_rerank": w_rerank,
        "w_freshness": w_freshness,
        "w_authority": w_authority,
        "w_pinned": w_pinned,
        "w_persona": w_persona,
        "halflife_days": _halflives(halflife),
        "description": description,
    }
    request = validated({"org_id": org_id, **fields}, RankingProfileSet)
    if url:
        stored = remote(url, key, lambda client: client.set_profile(**msgspec.structs.asdict(request)))
    else:
        from app.operations.profiles import description_vectors, has_description, set_profile_on

        settings = context_settings(ctx)
        vectors = None
        pipeline = None
        if has_description(request):
            from app.ingest.pipeline import IngestPipeline
            from app.text.embed import embedders

            pipeline = IngestPipeline(settings, embedders(settings))
            vectors = description_vectors(pipeline.embedders, request)
        stored = as_principal(settings, org_id, lambda conn: set_profile_on(conn, request, vectors, pipeline))
    if as_json:
        print_json(stored)
        return
    for line in _lines(stored):
        echo(line)
    console.print(f"ranking profile set for {persona or 'the org default'}")


@profile.command("show")
@click.option("--org", "org_id", required=True)
@click.option("--persona", default=None)
@click.option("--json", "as_json", is_flag=True)
@remote_options
@click.pass_context
def profile_show(
    ctx: click.Context, org_id: str, persona: str | None, as_json: bool, url: str | None, key: str | None
) -> None:
    """The profile stored for the org default or a persona, and the one its retrievals use."""
    if url:
        shown = remote(url, key, lambda client: client.profile(org_id=org_id, persona_id=persona))
    else:
        from app.operations.profiles import get_profile_on

        shown = as_principal(context_settings(ctx), org_id, lambda conn: get_profile_on(conn, org_id, persona))
    if as_json:
        print_json(shown)
        return
    for line in _lines(shown):
        echo(line)


@profile.command("list")
@click.option("--org", "org_id", required=True)
@click.option("--json", "as_json", is_flag=True)
@remote_options
@click.pass_context
def profile_list(ctx: click.Context, org_id: str, as_json: bool, url: str | None, key: str | None) -> None:
    """The stored profiles you may read, the org default first."""
    if url:
        listed = remote(url, key, lambda client: client.list_profiles(org_id=org_id))
    else:
        from app.operations.profiles import list_profiles_on

        listed = as_principal(context_settings(ctx), org_id, lambda conn: list_profiles_on(conn, org_id))
    if as_json:
        print_json(listed)
        return
    for p in listed.profiles:
        for line in _lines(p):
            echo(line)
    console.print(f"{len(listed.profiles)} profile(s)")


@profile.command("delete")
@click.option("--org", "org_id", required=True)
@click.option("--persona", default=None)
@click.option("--json", "as_json", is_flag=True)
@remote_options
@click.pass_context
def profile_delete(
    ctx: click.Context, org_id: str, persona: str | None, as_json: bool, url: str | None, key: str | None
) -> None:
    """Remove a stored profile: the org default or persona inherits again."""
    if url:
        removed = remote(url, key, lambda client: client.delete_profile(org_id=org_id, persona_id=persona))
    else:
        from app.operations.profiles import delete_profile_on

        removed = as_principal(context_settings(ctx), org_id, lambda conn: delete_profile_on(conn, org_id, persona))
    if as_json:
        print_json(removed)
        return
    console.print(f"removed the ranking profile of {persona or 'the org default'} in {org_id}")


COMMANDS = (profile,)
