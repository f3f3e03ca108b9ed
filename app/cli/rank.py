"""`contexts rank refresh`: recompute citation authority (docs/adr/0013) now, as the
migrator. The service refreshes it by itself a few seconds after ingestion; this is for
batch loads, scheduled jobs and measurements."""

from __future__ import annotations

import json

import click

from app.cli.admin import admin_connection
from app.cli.common import console, context_settings, echo


@click.group()
def rank() -> None:
    """Ranking signals computed from the whole corpus (citation authority)."""


@rank.command("refresh")
@click.option("--json", "as_json", is_flag=True, help="Print the refresh as one JSON object on stdout.")
@click.pass_context
def rank_refresh(ctx: click.Context, as_json: bool) -> None:
    """Refresh citation PageRank (data.fragment_authority) concurrently: readers keep
    the previous scores until it is done."""
    from app.authority import refresh

    with (
        admin_connection(context_settings(ctx)) as conn,
        console.status("computing citation PageRank...", spinner="dots"),
    ):
        done = refresh(conn)
    console.print(
        f"citation authority refreshed in {done.duration_ms:.0f} ms: {done.scored} fragment(s) scored "
        f"({done.refreshed_at:%Y-%m-%d %H:%M:%S %Z})"
    )
    if as_json:
        echo(
            json.dumps(
                {
                    "refreshed_at": done.refreshed_at.isoformat(),
                    "duration_ms": round(done.duration_ms, 1),
                    "scored": done.scored,
                }
            )
        )


COMMANDS = (rank,)
