"""`contexts migrate | org | principal | grant | key | sessions`: the operator's commands,
run as the migrator (it administers orgs, principals, grants and keys)."""

from __future__ import annotations

import contextlib
import datetime
import math
from collections.abc import Iterator

import click
import psycopg

from app.cli.common import CliError, console, context_settings, database_error, open_database, result_console
from app.db.sql import scalar
from app.readable import as_aware, time_problem
from app.scope import id_problem, id_rule
from app.settings import Settings


@click.command()
@click.pass_context
def migrate(ctx: click.Context) -> None:
    """Create or upgrade the schema; re-apply every function, view, policy and grant
    (which also undoes privileges changed by hand)."""
    from app.db.database import resolve_database_url
    from app.db.migrate import migrate as migrate_schema

    done = migrate_schema(resolve_database_url(context_settings(ctx)), force=True)
    console.print(f"[green]{done.describe()}[/]")


MAX_SESSION_TTL_HOURS = 24 * 3653.0
"""Ten years."""


def finite(value: float | None, option: str) -> float | None:
    """click's FloatRange lets NaN through (every comparison with it is false)."""
    if value is not None and not math.isfinite(value):
        raise click.BadParameter(f"{value} is not a number of hours", param_hint=option)
    return value


@click.group()
def org() -> None:
    """Manage orgs (tenants)."""


@org.command("create")
@click.argument("org_id")
@click.option("--name", default="", help="Display name.")
@click.option(
    "--session-ttl-hours",
    # At most ten years: a session's expiry must stay a time every reader decodes (a
    # TTL of 1e9 hours was taken, and every later session write of the org refused).
    type=click.FloatRange(min=0.001, max=MAX_SESSION_TTL_HOURS),
    callback=lambda _ctx, _param, value: finite(value, "--session-ttl-hours"),
    default=None,
    help=f"Lifetime of new sessions, in hours (default 24, at most {MAX_SESSION_TTL_HOURS:g}).",
)
@click.pass_context
def org_create(ctx: click.Context, org_id: str, name: str, session_ttl_hours: float | None) -> None:
    """Create an org, its partitions, and its administrator principal (see --principal)."""
    settings = context_settings(ctx)
    with admin_connection(settings) as conn:
        create_org(conn, org_id, settings.principal, name, session_ttl_hours)
    console.print(
        f"org [bold]{org_id}[/] ready; principal [bold]{settings.principal}[/] may read, write and audit all of it"
    )


def create_org(
    conn: psycopg.Connection, org_id: str, admin: str, name: str = "", session_ttl_hours: float | None = None
) -> None:
    """The org and its administrator principal `admin` (also what `ingest` does for a
    missing org)."""
    import psycopg

    from app.access import ensure_admin_principal

    ttl = datetime.timedelta(hours=session_ttl_hours) if session_ttl_hours else None
    try:
        conn.execute("select service.create_org(%s, %s, %s)", (org_id, name, ttl))
        ensure_admin_principal(conn, org_id, admin)
    except psycopg.errors.InvalidParameterValue as exc:
        raise CliError(id_rule("org_id", org_id)) from exc


def org_exists(conn: psycopg.Connection, org_id: str) -> bool:
    """Whether `org_id` is an org this connection may see (all of them, as the migrator)."""
    return conn.execute("select 1 from data.orgs where org_id = %s", (org_id,)).fetchone() is not None


def require_org(conn: psycopg.Connection, org_id: str) -> None:
    """A listing of an org that does not exist is an error, not an empty table (exit 0
    hid a misspelt org)."""
    if not org_exists(conn, org_id):
        raise CliError(f"unknown org: {org_id}")


@contextlib.contextmanager
def admin_connection(settings: Settings, details: bool = False) -> Iterator[psycopg.Connection]:
    """A connection of the migrator (it administers principals, grants and keys); one
    transaction, committed on success. Database errors become CLI errors (with the
    server's hint, and its detail when `details`)."""
    import psycopg

    dsn = open_database(settings)
    try:
        with psycopg.connect(dsn) as conn:
            yield conn
    except psycopg.Error as exc:
        raise database_error(exc, detail=details) from exc


@click.group()
def principal() -> None:
    """Manage principals: agents, humans and service accounts of an org."""


@principal.command("create")
@click.argument("org_id")
@click.argument("principal_id")
@click.option("--kind", type=click.Choice(["agent", "human", "service"]), default="agent", show_default=True)
@click.option("--name", default="", help="Display name.")
@click.option(
    "--db-role",
    default=None,
    help="Login whose SQL sessions act as this principal (analysts); created, with a password "
    "printed once, when it does not exist.",
)
@click.pass_context
def principal_create(
    ctx: click.Context, org_id: str, principal_id: str, kind: str, name: str, db_role: str | None
) -> None:
    """Create PRINCIPAL_ID in ORG_ID, with no grant yet (`grant add` gives it some);
    `--db-role` maps a database login to it (analysts: `contexts analyst create`)."""
    from app.cli.analysts import print_login
    from app.db.logins import create_login, login_exists

    problem = id_problem("principal_id", principal_id)
    if problem is not None:
        raise CliError(problem)
    settings = context_settings(ctx)
    password = None
    with admin_connection(settings, details=True) as conn:
        if db_role is not None and not login_exists(conn, db_role):
            password = create_login(conn, db_role)
        conn.execute("select service.create_principal(%s, %s, %s, %s, %s)", (org_id, principal_id, kind, name, db_role))
    console.print(f"principal [bold]{principal_id}[/] ready in org {org_id}; give it grants with `contexts grant add`")
    if password is not None and db_role is not None:
        print_login(settings, db_role, password, f"login {db_role} created (in contexts_analyst)")


@click.group()
def grant() -> None:
    """Manage what principals may read and write (org, repo, persona, session, audit)."""


def _scope_choice(
    org_wide: bool, repo: str | None, persona: str | None, session: str | None, audit: bool
) -> tuple[str, str | None]:
    chosen = [
        (k, v)
        for k, v in (("org", org_wide), ("repo", repo), ("persona", persona), ("session", session), ("audit", audit))
        if v
    ]
    if len(chosen) != 1:
        raise CliError("name exactly one of --org-wide, --repo, --persona, --session, --audit")
    kind, value = chosen[0]
    return kind, value if isinstance(value, str) else None


def _grant_target(command):
    """ORG PRINCIPAL and exactly one scope option (shared by grant add and revoke)."""
    for decorator in reversed(
        (
            click.argument("org_id"),
            click.argument("principal_id"),
            click.option("--org-wide", is_flag=True, help="Every repo and persona of the org."),
            click.option("--repo", default=None),
            click.option("--persona", default=None),
            click.option("--session", default=None),
            click.option("--audit", is_flag=True, help="Read the org's retrieval traces."),
        )
    ):
        command = decorator(command)
    return command


SCOPE_TABLES = {"repo": ("data.repos", "repo_id"), "persona": ("data.personas", "persona_id")}
"""Where the repos and personas a grant may name are listed (sessions open on first use)."""


def require_known_scope(conn: psycopg.Connection, org_id: str, kind: str, scope_id: str) -> None:
    """A grant on a repo or persona the org does not have is almost always a typo: say
    so, with the ones it has, instead of creating it (`--new` does, on purpose). An org
    that does not exist is said first."""
    conn.execute("select data._require_org(%s)", (org_id,))
    table, column = SCOPE_TABLES[kind]
    known = [
        r[0]
        for r in conn.execute(f"select {column} from {table} where org_id = %s order by {column}", (org_id,))  # noqa: S608 (fixed names)
    ]
    if scope_id not in known:
        listed = ", ".join(known[:20]) + (", ..." if len(known) > 20 else "") if known else "none yet"
        raise CliError(
            f"unknown {kind} {scope_id} in org {org_id} (it has: {listed}); pass --new to create it"
            " (a repo is also created by its first ingest)"
        )


@grant.command("add")
@_grant_target
@click.option("--write", is_flag=True, help="Also write (ingest) into that scope.")
@click.option("--new", "create", is_flag=True, help="Create the repo or persona if the org does not have it yet.")
@click.pass_context
def grant_add(
    ctx: click.Context,
    org_id: str,
    principal_id: str,
    org_wide: bool,
    repo: str | None,
    persona: str | None,
    session: str | None,
    audit: bool,
    write: bool,
    create: bool,
) -> None:
    """Let PRINCIPAL_ID read (with --write, also write) one scope of ORG_ID: the whole org,
    a repo, a persona, a session, or its traces (--audit)."""
    kind, scope_id = _scope_choice(org_wide, repo, persona, session, audit)
    with admin_connection(context_settings(ctx)) as conn:
        if kind in SCOPE_TABLES and scope_id is not None and not create:
            require_known_scope(conn, org_id, kind, scope_id)
        conn.execute("select service.grant_scope(%s, %s, %s, %s, %s)", (org_id, principal_id, kind, scope_id, write))
    console.print(f"granted {'read/write' if write else 'read'} on {kind} {scope_id or org_id} to {principal_id}")


@grant.command("revoke")
@_grant_target
@click.pass_context
def grant_revoke(
    ctx: click.Context,
    org_id: str,
    principal_id: str,
    org_wide: bool,
    repo: str | None,
    persona: str | None,
    session: str | None,
    audit: bool,
) -> None:
    """Take back PRINCIPAL_ID's grant on one scope of ORG_ID (the same options as `grant add`)."""
    kind, scope_id = _scope_choice(org_wide, repo, persona, session, audit)
    with admin_connection(context_settings(ctx)) as conn:
        found = scalar(conn, "select service.revoke_scope(%s, %s, %s, %s)", (org_id, principal_id, kind, scope_id))
    if not found:
        raise CliError(f"{principal_id} holds no {kind} grant {scope_id or org_id}")
    console.print(f"revoked {kind} {scope_id or org_id} from {principal_id}")


@grant.command("list")
@click.argument("org_id")
@click.pass_context
def grant_list(ctx: click.Context, org_id: str) -> None:
    """Every grant of ORG_ID: principal, scope, read or read/write."""
    from rich.table import Table

    with admin_connection(context_settings(ctx)) as conn:
        require_org(conn, org_id)
        rows = conn.execute("select * from service.list_grants(%s)", (org_id,)).fetchall()
    table = Table("principal", "kind", "scope", "id", "write", "granted")
    for principal_id, kind, scope_kind, scope_id, can_write, created in rows:
        table.add_row(
            principal_id,
            kind,
            scope_kind or "-",
            scope_id or "-",
            "yes" if can_write else "",
            f"{created:%Y-%m-%d %H:%M}" if created else "",
        )
    result_console().print(table)


@click.group()
def key() -> None:
    """Manage API keys (bearer tokens for the HTTP API)."""


EXPIRY_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_expiry(raw: str, now: datetime.datetime | None = None) -> datetime.datetime:
    """When a key given `--expires RAW` stops working: a duration from now (30d, 12h,
    90m, 2w) or a point in time (2026-12-31, at 00:00 UTC that day, or ISO 8601 such as
    2026-12-31T18:00:00+02:00, UTC when it names no offset); it must lie ahead."""
    import re

    now = now or datetime.datetime.now(datetime.UTC)
    text = raw.strip()
    duration = re.fullmatch(r"(\d+)\s*([mhdw])", text.lower())
    if duration is not None:
        amount, unit = int(duration.group(1)), duration.group(2)
        if amount == 0:
            raise CliError(f"--expires {raw}: a key must last longer than that")
        try:
            when = now + datetime.timedelta(**{EXPIRY_UNITS[unit]: amount})
        except OverflowError:  # past year 9999: refused below, as readers cannot decode it
            when = datetime.datetime.max.replace(tzinfo=datetime.UTC)
    else:
        when = _expiry_time(raw, text)
        if when <= now:
            raise CliError(f"--expires {raw}: that is past; a key's expiry must lie ahead")
    problem = time_problem(when, "the expiry")
    if problem is not None:
        raise CliError(f"--expires {raw}: {problem}")
    return when


def _expiry_time(raw: str, text: str) -> datetime.datetime:
    """`--expires` as a date (00:00 UTC that day) or an ISO 8601 time (UTC without an offset)."""
    import re

    try:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
            when = datetime.datetime.combine(datetime.date.fromisoformat(text), datetime.time(), datetime.UTC)
        else:
            when = as_aware(datetime.datetime.fromisoformat(text))
    except ValueError:
        raise CliError(
            f"--expires {raw}: give a duration (30d, 12h, 90m, 2w) or a date (2026-12-31, or ISO 8601 with a time)"
        ) from None
    return when


@key.command("create")
@click.argument("org_id")
@click.argument("principal_id")
@click.option("--label", default="", help="What the key is for.")
@click.option(
    "--expires",
    "expires",
    default=None,
    metavar="DURATION|DATE",
    help="When the key stops working: 30d, 12h, 90m, 2w from now, or a date (2026-12-31, 00:00 UTC) or "
    "ISO 8601 time. Default: never (until revoked).",
)
@click.option("--read-only", is_flag=True, help="The key writes nothing, whatever its principal may write.")
@click.option(
    "--repo",
    "repos",
    multiple=True,
    help="Restrict the key to this repo (repeat for more): it reads and writes only there (and the org-wide "
    "knowledge every principal reads), within its principal's grants.",
)
@click.pass_context
def key_create(
    ctx: click.Context,
    org_id: str,
    principal_id: str,
    label: str,
    expires: str | None,
    read_only: bool,
    repos: tuple[str, ...],
) -> None:
    """Print a new key for PRINCIPAL_ID on stdout (shown once; only its hash is stored).
    It acts as its principal, narrowed by --read-only and --repo, until --expires."""
    from app.access import create_api_key

    expires_at = parse_expiry(expires) if expires is not None else None
    with admin_connection(context_settings(ctx)) as conn:
        new = create_api_key(
            conn, org_id, principal_id, label, expires_at=expires_at, read_only=read_only, repos=repos or None
        )
    limits = key_limits(expires_at, read_only, list(repos) or None)
    console.print(f"key [bold]{new.key_id}[/] for {principal_id} ({limits}); store it now, it is not shown again:")
    click.echo(new.token)


def key_limits(expires_at: datetime.datetime | None, read_only: bool, repos: list[str] | None) -> str:
    """A key's limits in words, as `key create` and `key list` say them."""
    parts = ["read-only" if read_only else "read/write"]
    parts.append(f"repos {', '.join(sorted(set(repos)))}" if repos else "all its principal's grants")
    parts.append(f"expires {expires_at:%Y-%m-%d %H:%M} UTC" if expires_at else "no expiry")
    return "; ".join(parts)


@key.command("list")
@click.argument("org_id")
@click.pass_context
def key_list(ctx: click.Context, org_id: str) -> None:
    """Keys of ORG_ID: what each may do (read-only, repos), when it expires, its state."""
    from rich.table import Column, Table

    with admin_connection(context_settings(ctx)) as conn:
        require_org(conn, org_id)
        rows = conn.execute(
            "select key_id, principal_id, label, created_at, last_used_at, revoked_at, expires_at, read_only, "
            "repos, now() from service.list_api_keys(%s)",
            (org_id,),
        ).fetchall()
        # What the key may do is its principal's grants narrowed by the key: a key of a
        # principal that holds no write grant writes nothing either (the demo's key).
        writers = {
            r[0]
            for r in conn.execute(
                "select distinct principal_id from data.grants where org_id = %s and can_write", (org_id,)
            )
        }
    # The key id (what `key revoke` takes) is never wrapped; the other columns narrow instead.
    headers = ("principal", "label", "created", "last used", "expires", "limits", "state")
    table = Table(Column("key", no_wrap=True), *headers)
    stamp = lambda t: f"{t.astimezone(datetime.UTC):%Y-%m-%d %H:%M}" if t else ""  # noqa: E731
    for key_id, principal_id, label, created, used, revoked, expires_at, read_only, repos, now in rows:
        state = f"revoked {stamp(revoked)}" if revoked else "expired" if expires_at and expires_at <= now else "live"
        access = "read-only" if read_only else "read/write" if principal_id in writers else "read (its principal's)"
        limits = access + (f"; repos {', '.join(repos)}" if repos else "")
        expires = stamp(expires_at) or "never"
        table.add_row(key_id, principal_id, label, stamp(created), stamp(used), expires, limits, state)
    result_console().print(table)


@key.command("revoke")
@click.argument("key_id")
@click.pass_context
def key_revoke(ctx: click.Context, key_id: str) -> None:
    """Revoke key KEY_ID (its id as `key list` shows it): every later request with it is a 401."""
    with admin_connection(context_settings(ctx)) as conn:
        found = scalar(conn, "select service.revoke_api_key(%s)", (key_id,))
    if not found:
        raise CliError(f"no live key {key_id}")
    console.print(f"key {key_id} revoked")


@click.group()
def sessions() -> None:
    """Session scopes: ephemeral, visible only inside the session, expiring."""


@sessions.command("purge")
@click.pass_context
def sessions_purge(ctx: click.Context) -> None:
    """Delete expired sessions with everything written in them."""
    with admin_connection(context_settings(ctx)) as conn:
        rows = conn.execute("select * from service.purge_expired_sessions()").fetchall()
    for org_id, session_id, documents, fragments in rows:
        console.print(f"purged {org_id}/{session_id}: {documents} document(s), {fragments} fragment(s)")
    console.print(f"{len(rows)} expired session(s) purged")


COMMANDS = (migrate, org, principal, grant, key, sessions)
