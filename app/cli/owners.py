"""`contexts stale`, `contexts owners reassign | settings`, `contexts webhook set | show |
delete`, `contexts nudges deliver`: owners and staleness nudges (docs/owners.md). All
but `nudges deliver` act as --principal on the database (its grants apply as over HTTP);
`nudges deliver` is the delivery worker, run as the migrator."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import click

from app.cli.common import (
    CliError,
    as_principal,
    console,
    context_settings,
    database_error,
    echo,
    open_database,
    print_json,
    required_org,
    validated,
)
from app.wire.bodies import NudgeList, OwnersReassign, WebhookIn, WebhookOut

if TYPE_CHECKING:
    import psycopg


def print_nudges(found: NudgeList) -> None:
    echo("fragment\tretrievals\tlast edit\towner (source)\tpath")
    for n in found.nudges:
        where = f"{n.path}#{n.anchor}" if n.anchor else n.path
        echo(
            f"{n.fragment_id}\t{n.retrievals}\t{n.last_edited_at:%Y-%m-%d} ({n.days_since_edit} d)"
            f"\t{n.owner} ({n.owner_source})\t{where}"
        )
    console.print(
        f"{len(found.nudges)} stale fragment(s) in {found.org_id}"
        + (f" owned by {found.owner}" if found.owner else "")
        + f": at least {found.min_retrievals} retrievals in {found.window_days} days,"
        f" text older than {found.stale_after_days} days"
    )


@click.command("stale")
@click.option("--org", "org_id", default=None, help="Org of --principal.")
@click.option("--owner", default=None, help="Only this owner's fragments.")
@click.option("--min-retrievals", type=click.IntRange(1, 1_000_000), default=None, help="Default: the org's (5).")
@click.option("--window-days", type=click.IntRange(1, 36_500), default=None, help="Default: the org's (90).")
@click.option("--stale-after-days", type=click.IntRange(1, 36_500), default=None, help="Default: the org's (182).")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def stale(
    ctx: click.Context,
    org_id: str | None,
    owner: str | None,
    min_retrievals: int | None,
    window_days: int | None,
    stale_after_days: int | None,
    as_json: bool,
) -> None:
    """Fragments often retrieved whose text has not been edited for long (those you may read)."""
    from app.operations.owners import stale_on

    found = as_principal(
        context_settings(ctx),
        required_org(org_id),
        lambda conn: stale_on(conn, org_id, owner, min_retrievals, window_days, stale_after_days),
    )
    if as_json:
        print_json(found)
        return
    print_nudges(found)


@click.group()
def owners() -> None:
    """Fragment owners: bulk reassignment, the org's default owner and staleness thresholds."""


@owners.command("reassign")
@click.option("--org", "org_id", required=True)
@click.option("--from", "from_owner", required=True, help="The current owner.")
@click.option("--to", "to_owner", required=True, help="The new owner.")
@click.option("--repo", default=None, help="Only this repo (default: the whole org, needing an org write grant).")
@click.option("--path-prefix", default=None, help="Only documents under this path.")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def owners_reassign(
    ctx: click.Context,
    org_id: str,
    from_owner: str,
    to_owner: str,
    repo: str | None,
    path_prefix: str | None,
    as_json: bool,
) -> None:
    """Move documents and their fragments from one owner to another (no new version; audited)."""
    from app.operations.owners import reassign_on

    payload = {"org_id": org_id, "from_owner": from_owner, "to_owner": to_owner}
    payload |= {k: v for k, v in (("repo_id", repo), ("path_prefix", path_prefix)) if v is not None}
    request = validated(payload, OwnersReassign)
    done = as_principal(context_settings(ctx), org_id, lambda conn: reassign_on(conn, request))
    if as_json:
        print_json(done)
        return
    console.print(
        f"reassigned {done.documents} document(s) and {done.fragments} fragment(s) from {from_owner} to {to_owner}"
        f" (reassignment {done.reassignment_id})"
    )


@owners.command("settings")
@click.option("--org", "org_id", required=True)
@click.option("--default-owner", default=None, help="Owner of what names none and matches no CODEOWNERS ('' clears).")
@click.option("--stale-after-days", type=click.IntRange(1, 36_500), default=None)
@click.option("--window-days", type=click.IntRange(1, 36_500), default=None)
@click.option("--min-retrievals", type=click.IntRange(1, 1_000_000), default=None)
@click.option("--nudge-period-hours", type=click.IntRange(1, 87_600), default=None)
@click.pass_context
def owners_settings(
    ctx: click.Context,
    org_id: str,
    default_owner: str | None,
    stale_after_days: int | None,
    window_days: int | None,
    min_retrievals: int | None,
    nudge_period_hours: int | None,
) -> None:
    """Show the org's owner settings, changing those given (an org write grant)."""
    knobs = (default_owner, stale_after_days, window_days, min_retrievals, nudge_period_hours)

    def run(conn: psycopg.Connection) -> tuple | None:
        if any(k is not None for k in knobs):
            return conn.execute(
                "select * from service.owner_settings_set(%s, %s, %s, %s, %s, %s)", (org_id, *knobs)
            ).fetchone()
        return conn.execute("select * from api.owner_settings(%s)", (org_id,)).fetchone()

    row = as_principal(context_settings(ctx), org_id, run)
    assert row is not None  # both functions return the org's row or raise
    _org_id, owner, after, window, least, period = row
    echo(f"default owner\t{owner or '-'}")
    echo(f"stale after\t{after} days")
    echo(f"window\t{window} days")
    echo(f"min retrievals\t{least}")
    echo(f"nudge period\t{period} hours")


@click.group()
def webhook() -> None:
    """The org's nudge webhook: stale fragments are POSTed there, signed, at least once."""


def _webhook_line(hook: WebhookOut) -> str:
    return (
        f"{hook.org_id}\t{hook.url}\tsecret {'set' if hook.has_secret else 'none'}"
        f"\t{'enabled' if hook.enabled else 'disabled'}\tby {hook.updated_by} {hook.updated_at:%Y-%m-%d %H:%M}"
    )


@webhook.command("set")
@click.argument("url")
@click.option("--org", "org_id", required=True)
@click.option(
    "--secret",
    default=None,
    envvar="CONTEXTS_WEBHOOK_SECRET",
    help="HMAC key, 16+ characters (env CONTEXTS_WEBHOOK_SECRET).",
)
@click.option("--disabled", is_flag=True, help="Keep it, but deliver nothing for now.")
@click.pass_context
def webhook_set(ctx: click.Context, url: str, org_id: str, secret: str | None, disabled: bool) -> None:
    """Set the org's nudge webhook URL (http or https, no credentials in it)."""
    from app.operations.errors import Invalid
    from app.operations.owners import webhook_set_on

    payload = {"url": url, "enabled": not disabled} | ({"secret": secret} if secret is not None else {})
    request = validated(payload, WebhookIn)
    settings = context_settings(ctx)
    try:
        line = _webhook_line(
            as_principal(settings, org_id, lambda c: webhook_set_on(c, org_id, request, settings.webhook_allow_private))
        )
    except Invalid as exc:
        raise CliError(exc.detail) from exc
    echo(line)


@webhook.command("show")
@click.option("--org", "org_id", required=True)
@click.pass_context
def webhook_show(ctx: click.Context, org_id: str) -> None:
    """The org's webhook (never its secret)."""
    from app.operations.owners import webhook_get_on

    echo(_webhook_line(as_principal(context_settings(ctx), org_id, lambda c: webhook_get_on(c, org_id))))


@webhook.command("delete")
@click.option("--org", "org_id", required=True)
@click.pass_context
def webhook_delete(ctx: click.Context, org_id: str) -> None:
    """Remove the org's webhook (nudges owed stay queued)."""
    from app.operations.owners import webhook_get_on

    removed = as_principal(context_settings(ctx), org_id, lambda c: webhook_get_on(c, org_id, remove=True))
    console.print(f"removed the webhook of {removed.org_id} ({removed.url})")


@click.group()
def nudges() -> None:
    """Staleness nudges: queue and deliver them to each org's webhook."""


@nudges.command("deliver")
@click.option("--org", "org_id", default=None, help="Only this org (default: every org with a webhook).")
@click.option(
    "--retry-base-s", type=click.FloatRange(0, 86_400), default=None, help="Default: CONTEXTS_NUDGE_RETRY_BASE_S."
)
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def nudges_deliver(ctx: click.Context, org_id: str | None, retry_base_s: float | None, as_json: bool) -> None:
    """Queue the nudges owed now and deliver those due (what the service does every
    CONTEXTS_NUDGE_INTERVAL_S); exits non-zero when a delivery failed (it is retried later)."""
    import contextlib
    import json

    import psycopg  # noqa: F811 (the run-time import; the one above is for annotations)

    from app.cli.admin import require_org
    from app.nudges import deliver_pending

    settings = context_settings(ctx)
    dsn = open_database(settings)

    try:
        with psycopg.connect(dsn, autocommit=True) as conn:
            if org_id is not None:
                require_org(conn, org_id)

            @contextlib.contextmanager
            def transaction() -> Iterator[psycopg.Connection]:
                with conn.transaction():  # commits on success, rolls back on error
                    yield conn

            report = deliver_pending(
                transaction,
                org_id=org_id,
                retry_base_s=settings.nudge_retry_base_s if retry_base_s is None else retry_base_s,
                timeout_s=settings.nudge_timeout_s,
                allow_private=settings.webhook_allow_private,
            )
    except psycopg.Error as exc:
        raise database_error(exc) from exc
    summary = {
        "enqueued": report.enqueued,
        "delivered": report.delivered,
        "failed": report.failed,
        "seconds": round(report.seconds, 3),
        "errors": report.errors,
    }
    if as_json:
        echo(json.dumps(summary))
    else:
        for error in report.errors:
            console.print(f"[yellow]{error}[/]")
        console.print(
            f"{report.enqueued} nudge(s) queued, {report.delivered} delivered, {report.failed} failed"
            f" in {report.seconds:.2f} s"
        )
    if report.failed:
        raise CliError(f"{report.failed} delivery attempt(s) failed; they are retried later")


COMMANDS = (stale, owners, webhook, nudges)
