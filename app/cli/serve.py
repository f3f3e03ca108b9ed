"""`contexts serve [--demo]`: the HTTP API on the embedded default (or --db-url), and the
demo that `make run` starts: this repository ingested, a read-only key printed."""

from __future__ import annotations

import contextlib
import json
import shlex
import signal
import sys
from pathlib import Path

import click

from app.cli.common import CliError, console, context_settings, open_database
from app.cli.documents import ingest_paths
from app.private import write_private

ROOT = Path(__file__).resolve().parents[2]
DEMO_ORG, DEMO_REPO, DEMO_AGENT = "demo", "contexts", "demo-agent"


@click.command()
@click.option("--host", default=None, help="Default: CONTEXTS_HOST or 127.0.0.1.")
@click.option(
    "--port", default=None, type=click.IntRange(0, 65535), help="Default: CONTEXTS_PORT or 8000 (0: any free port)."
)
@click.option(
    "--forwarded-allow-ips",
    default=None,
    help="Reverse proxies whose X-Forwarded-For/-Proto are believed: addresses or networks, "
    "comma-separated, * for any, '' for none. Default: CONTEXTS_FORWARDED_ALLOW_IPS or 127.0.0.1,::1 "
    "(docs/http-tls.md).",
)
@click.option(
    "--demo",
    is_flag=True,
    help="Ingest this repository's README, docs and app/ as org 'demo' first, "
    "and print the demo agent's key (kept under CONTEXTS_HOME).",
)
@click.pass_context
def serve(ctx: click.Context, host: str | None, port: int | None, forwarded_allow_ips: str | None, demo: bool) -> None:
    """Serve the HTTP API (OpenAPI at /schema)."""
    from app.api.server import base_url, bind, build_server, why_unavailable
    from app.serve.app import create_app

    options = (("host", host), ("port", port), ("forwarded_allow_ips", forwarded_allow_ips))
    settings = context_settings(ctx).with_(**{k: v for k, v in options if v is not None})
    try:
        settings.validate()
    except ValueError as exc:
        raise CliError(str(exc)) from exc
    # The port first: when it is taken, nothing else (ingest, demo key) may happen.
    try:
        sock = bind(settings.host, settings.port)
    except OSError as exc:
        raise CliError(why_unavailable(settings.host, settings.port, exc)) from exc
    with contextlib.closing(sock):
        settings = settings.with_(port=sock.getsockname()[1])
        dsn = open_database(settings)
        demo_key = None
        if demo:
            from app.cli.demo import demo_paths, demo_vectors

            console.print("ingesting the demo corpus (this repository) into org [bold]demo[/] ...")
            vectors = demo_vectors()
            changed, fragments, created, _ = ingest_paths(
                settings,
                dsn,
                demo_paths(),
                DEMO_ORG,
                DEMO_REPO,
                None,
                None,
                None,
                None,
                True,
                base=ROOT,
                vectors=vectors,
            )
            # Vectors are asked for before the write knows which new chunks it will store
            # as copies of another (the same text twice in this ingest, or a near copy):
            # those had a vector and made no fragment.
            copies = vectors.hits + vectors.misses - created
            console.print(
                f"demo: {changed} document(s) changed, {created} new fragment(s); vectors: {vectors.hits} read from "
                f"{vectors.path.relative_to(ROOT)}, {vectors.misses} embedded now"
                + (
                    f" ({copies} of these {vectors.hits + vectors.misses} vectors were for chunks stored as"
                    " copies of another fragment)"
                    if copies > 0
                    else ""
                )
                + (f" ({'; '.join(vectors.problems)})" if vectors.problems else "")
            )
            if changed:  # as `contexts ingest` does: the demo's first retrievals see authority
                from app.cli.rank import rank_refresh

                ctx.invoke(rank_refresh)
            demo_key = _demo_key(dsn, settings.home)
        app = create_app(settings.with_(database_url=dsn), run_migrations=False)
        url = base_url(settings.host, settings.port)

        def announce() -> None:  # once the application has started and the socket listens
            console.print(f"\nContexts is serving on [bold]{url}[/] (OpenAPI: {url}/schema)")
            if demo_key is None:
                return
            body = json.dumps(
                {
                    "query": "how are near-duplicate fragments collapsed?",
                    "scope": {"org_id": DEMO_ORG},
                    "budget_tokens": 1500,
                }
            )
            console.print(
                f"Demo API key (principal {DEMO_AGENT}, read on org {DEMO_ORG}; "
                f"the same on every start, kept in {settings.home / DEMO_KEY_FILE}):\n"
            )
            click.echo(f"export CONTEXTS_KEY={demo_key}\n", err=True)
            console.print("Try:\n")
            click.echo(
                f'curl -s {url}/contexts/retrieve -H "Authorization: Bearer $CONTEXTS_KEY" '
                f"-H 'content-type: application/json' -d '{body}'\n",
                err=True,
            )
            click.echo(demo_key_needs(url, settings.home, external=settings.database_url is not None), err=True)

        # uvicorn re-raises SIGTERM/SIGINT after a graceful shutdown; turning them into a
        # normal exit lets the embedded PostgreSQL server be stopped cleanly (atexit).
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        server = build_server(app, settings, on_started=announce)
        server.run(sockets=[sock])
    if not server.started:
        raise CliError("the server did not start (see the log above)")


def demo_key_needs(url: str, home: Path, *, external: bool) -> str:
    """What the demo key may do, what needs a write key, and the command that makes one:
    the demo key only reads, so the README's Python example and MCP's writing tools would
    otherwise answer 403 with nothing said about why."""
    from app.mcp import TOOLS

    writes = ", ".join(tool.name for tool in TOOLS if tool.writes)
    reads = ", ".join(tool.name for tool in TOOLS if not tool.writes)
    where = (
        "with the same CONTEXTS_DATABASE_URL (or --db-url) as this server"
        if external
        else f"with the same CONTEXTS_HOME as this server, {home}"
    )
    prefix = "" if external else f"CONTEXTS_HOME={shlex.quote(str(home))} "
    return (
        "The demo key only reads. With it: POST /contexts/retrieve (the call above), "
        f"GET /documents, /fragments/{{id}}, /traces/{{id}}, the trace page at {url}/ui, "
        f"and the MCP tools {reads}.\n"
        "A write key is needed for POST /documents, POST /sessions and session notes, pins, "
        f"profiles, the README's Python client example and the MCP tools {writes} "
        "(with the demo key they answer 403).\n"
        f"Make one for principal {DEMO_ADMIN} (read, write and audit on org {DEMO_ORG}) in another terminal, "
        f"from the repository, {where}:\n\n"
        f"    {prefix}.venv/bin/contexts key create {DEMO_ORG} {DEMO_ADMIN}\n"
    )


DEMO_ADMIN = "admin"
"""The principal every org gets (read, write and audit on the whole org)."""

DEMO_KEY_FILE = "demo-key"
"""Under CONTEXTS_HOME: the demo agent's token, so that `make run` prints the same key
on every start."""


def _demo_key(dsn: str, home: Path) -> str:
    """The demo agent's read-only key: the one stored under `home` while the database
    knows it as live; otherwise a new one (stored, mode 0600), and older demo keys are
    revoked."""
    import psycopg

    from app.access import create_api_key, key_id_of

    stored = home / DEMO_KEY_FILE
    try:
        token: str | None = stored.read_text().strip()
    except OSError:
        token = None
    with psycopg.connect(dsn) as conn:
        conn.execute("select service.create_principal(%s, %s, 'agent', 'demo agent')", (DEMO_ORG, DEMO_AGENT))
        conn.execute("select service.grant_scope(%s, %s, 'org', null, false)", (DEMO_ORG, DEMO_AGENT))
        live = [
            key_id
            for (key_id,) in conn.execute(
                "select key_id from service.list_api_keys(%s) where principal_id = %s and revoked_at is null",
                (DEMO_ORG, DEMO_AGENT),
            )
        ]
        if token and key_id_of(token) in live:
            return token
        for key_id in live:
            conn.execute("select service.revoke_api_key(%s)", (key_id,))
        token = create_api_key(conn, DEMO_ORG, DEMO_AGENT, "make run demo").token
        write_private(stored, token + "\n")  # before the commit: a failed write changes nothing
    return token


COMMANDS = (serve,)
