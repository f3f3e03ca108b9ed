"""`contexts serve | migrate | ingest PATH... | query TEXT | org | principal | grant | key | sessions`."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import click
import msgspec
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from app.retrieve.models import DEFAULT_BUDGET_TOKENS, DEFAULT_K_DENSE, DEFAULT_K_LEXICAL, DEFAULT_RERANK_TOP
from app.settings import Settings

console = Console(stderr=True, soft_wrap=True)
ROOT = Path(__file__).resolve().parents[1]
DEMO_ORG, DEMO_REPO, DEMO_AGENT = "demo", "contexts", "demo-agent"


def _settings(ctx: click.Context) -> Settings:
    return ctx.obj["settings"]


def _open(settings: Settings, migrate_first: bool = True) -> str:
    from app.db.database import resolve_database_url
    from app.db.migrate import migrate

    dsn = resolve_database_url(settings)
    if migrate_first:
        migrate(dsn)
    return dsn


class CliError(click.ClickException):
    def show(self, file=None) -> None:  # rich, on stderr
        console.print(f"[bold red]error:[/] {self.message}")


@click.group()
@click.option("--db-url", envvar="CONTEXTS_DATABASE_URL", default=None,
              help="PostgreSQL >= 16 with pgvector. Default: the embedded server under CONTEXTS_HOME.")
@click.option("--principal", "principal_id", envvar="CONTEXTS_PRINCIPAL", default=None,
              help="Principal that ingest and query act for. Default: admin (made by `org create`).")
@click.pass_context
def main(ctx: click.Context, db_url: str | None, principal_id: str | None) -> None:
    """Contexts: durable, scoped, cited context for AI agents."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        ctx.obj = {"settings": Settings.from_env(database_url=db_url, principal=principal_id)}
    except ValueError as exc:
        raise CliError(str(exc)) from exc


@main.command()
@click.pass_context
def migrate(ctx: click.Context) -> None:
    """Create or upgrade the schema."""
    _open(_settings(ctx))
    console.print("[green]schema is up to date[/]")


@main.group()
def org() -> None:
    """Manage orgs (tenants)."""


@org.command("create")
@click.argument("org_id")
@click.option("--name", default="", help="Display name.")
@click.option("--session-ttl-hours", type=click.FloatRange(min=0.001), default=None,
              help="Lifetime of new sessions (default 24).")
@click.pass_context
def org_create(ctx: click.Context, org_id: str, name: str, session_ttl_hours: float | None) -> None:
    """Create an org, its partitions, and its administrator principal (see --principal)."""
    settings = _settings(ctx)
    with _admin_connection(settings) as conn:
        _create_org(conn, org_id, settings.principal, name, session_ttl_hours)
    console.print(f"org [bold]{org_id}[/] ready; principal [bold]{settings.principal}[/] may read and write all of it")


def _create_org(conn, org_id: str, admin: str, name: str = "", session_ttl_hours: float | None = None) -> None:
    import datetime

    import psycopg

    from app.access import ensure_admin_principal

    ttl = datetime.timedelta(hours=session_ttl_hours) if session_ttl_hours else None
    try:
        conn.execute("select api.create_org(%s, %s, %s)", (org_id, name, ttl))
        ensure_admin_principal(conn, org_id, admin)
    except psycopg.errors.InvalidParameterValue as exc:
        raise CliError(f"invalid org id {org_id!r}: use lowercase letters, digits, '.', '_' and '-'") from exc


@contextlib.contextmanager
def _admin_connection(settings: Settings):
    """A connection of the migrator (it administers principals, grants and keys); one
    transaction, committed on success. Database errors become CLI errors."""
    import psycopg

    dsn = _open(settings)
    try:
        with psycopg.connect(dsn) as conn:
            yield conn
    except psycopg.Error as exc:
        raise CliError(exc.diag.message_primary or str(exc)) from exc


@main.group()
def principal() -> None:
    """Manage principals: agents, humans and service accounts of an org."""


@principal.command("create")
@click.argument("org_id")
@click.argument("principal_id")
@click.option("--kind", type=click.Choice(["agent", "human", "service"]), default="agent", show_default=True)
@click.option("--name", default="", help="Display name.")
@click.option("--db-role", default=None, help="Login role whose SQL sessions act as this principal (analysts).")
@click.pass_context
def principal_create(ctx: click.Context, org_id: str, principal_id: str, kind: str, name: str,
                     db_role: str | None) -> None:
    with _admin_connection(_settings(ctx)) as conn:
        conn.execute("select api.create_principal(%s, %s, %s, %s, %s)", (org_id, principal_id, kind, name, db_role))
    console.print(f"principal [bold]{principal_id}[/] ready in org {org_id}; give it grants with `contexts grant add`")


@main.group()
def grant() -> None:
    """Manage what principals may read and write (org, repo, persona, session, audit)."""


def _scope_choice(org_wide: bool, repo: str | None, persona: str | None, session: str | None,
                  audit: bool) -> tuple[str, str | None]:
    chosen = [(k, v) for k, v in (("org", org_wide), ("repo", repo), ("persona", persona), ("session", session),
                                  ("audit", audit)) if v]
    if len(chosen) != 1:
        raise CliError("name exactly one of --org-wide, --repo, --persona, --session, --audit")
    kind, value = chosen[0]
    return kind, value if isinstance(value, str) else None


def _grant_target(command):
    """ORG PRINCIPAL and exactly one scope option (shared by grant add and revoke)."""
    for decorator in reversed((
        click.argument("org_id"), click.argument("principal_id"),
        click.option("--org-wide", is_flag=True, help="Every repo and persona of the org."),
        click.option("--repo", default=None), click.option("--persona", default=None),
        click.option("--session", default=None),
        click.option("--audit", is_flag=True, help="Read the org's retrieval traces."),
    )):
        command = decorator(command)
    return command


@grant.command("add")
@_grant_target
@click.option("--write", is_flag=True, help="Also write (ingest) into that scope.")
@click.pass_context
def grant_add(ctx: click.Context, org_id: str, principal_id: str, org_wide: bool, repo: str | None,
              persona: str | None, session: str | None, audit: bool, write: bool) -> None:
    kind, scope_id = _scope_choice(org_wide, repo, persona, session, audit)
    with _admin_connection(_settings(ctx)) as conn:
        conn.execute("select api.grant_scope(%s, %s, %s, %s, %s)", (org_id, principal_id, kind, scope_id, write))
    console.print(f"granted {'read/write' if write else 'read'} on {kind} {scope_id or org_id} to {principal_id}")


@grant.command("revoke")
@_grant_target
@click.pass_context
def grant_revoke(ctx: click.Context, org_id: str, principal_id: str, org_wide: bool, repo: str | None,
                 persona: str | None, session: str | None, audit: bool) -> None:
    kind, scope_id = _scope_choice(org_wide, repo, persona, session, audit)
    with _admin_connection(_settings(ctx)) as conn:
        found = conn.execute("select api.revoke_scope(%s, %s, %s, %s)", (org_id, principal_id, kind, scope_id)).fetchone()[0]
    if not found:
        raise CliError(f"{principal_id} holds no {kind} grant {scope_id or org_id}")
    console.print(f"revoked {kind} {scope_id or org_id} from {principal_id}")


@grant.command("list")
@click.argument("org_id")
@click.pass_context
def grant_list(ctx: click.Context, org_id: str) -> None:
    from rich.table import Table

    with _admin_connection(_settings(ctx)) as conn:
        rows = conn.execute("select * from api.list_grants(%s)", (org_id,)).fetchall()
    table = Table("principal", "kind", "scope", "id", "write", "granted")
    for principal_id, kind, scope_kind, scope_id, can_write, created in rows:
        table.add_row(principal_id, kind, scope_kind or "-", scope_id or "-",
                      "yes" if can_write else "", f"{created:%Y-%m-%d %H:%M}" if created else "")
    Console().print(table)


@main.group()
def key() -> None:
    """Manage API keys (bearer tokens for the HTTP API)."""


@key.command("create")
@click.argument("org_id")
@click.argument("principal_id")
@click.option("--label", default="", help="What the key is for.")
@click.pass_context
def key_create(ctx: click.Context, org_id: str, principal_id: str, label: str) -> None:
    """Print a new key for PRINCIPAL_ID on stdout (shown once; only its hash is stored)."""
    from app.access import create_api_key

    with _admin_connection(_settings(ctx)) as conn:
        new = create_api_key(conn, org_id, principal_id, label)
    console.print(f"key [bold]{new.key_id}[/] for {principal_id}; store it now, it is not shown again:")
    click.echo(new.token)


@key.command("list")
@click.argument("org_id")
@click.pass_context
def key_list(ctx: click.Context, org_id: str) -> None:
    from rich.table import Table

    with _admin_connection(_settings(ctx)) as conn:
        rows = conn.execute("select * from api.list_api_keys(%s)", (org_id,)).fetchall()
    table = Table("key", "principal", "label", "created", "last used", "revoked")
    stamp = lambda t: f"{t:%Y-%m-%d %H:%M}" if t else ""  # noqa: E731
    for key_id, principal_id, label, created, used, revoked in rows:
        table.add_row(key_id, principal_id, label, stamp(created), stamp(used), stamp(revoked))
    Console().print(table)


@key.command("revoke")
@click.argument("key_id")
@click.pass_context
def key_revoke(ctx: click.Context, key_id: str) -> None:
    with _admin_connection(_settings(ctx)) as conn:
        found = conn.execute("select api.revoke_api_key(%s)", (key_id,)).fetchone()[0]
    if not found:
        raise CliError(f"no live key {key_id}")
    console.print(f"key {key_id} revoked")


@main.group()
def sessions() -> None:
    """Session scopes: ephemeral, visible only inside the session, expiring."""


@sessions.command("purge")
@click.pass_context
def sessions_purge(ctx: click.Context) -> None:
    """Delete expired sessions with everything written in them."""
    with _admin_connection(_settings(ctx)) as conn:
        rows = conn.execute("select * from api.purge_expired_sessions()").fetchall()
    for org_id, session_id, documents, fragments in rows:
        console.print(f"purged {org_id}/{session_id}: {documents} document(s), {fragments} fragment(s)")
    console.print(f"{len(rows)} expired session(s) purged")


def _git_identity() -> str | None:
    try:
        out = subprocess.run(["git", "config", "user.name"], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def ingest_paths(settings: Settings, dsn: str, paths: list[Path], org_id: str, repo: str | None,
                 persona: str | None, session: str | None, kind: str | None, owner: str | None,
                 create_org: bool, base: Path | None = None, quiet: bool = False) -> tuple[int, int, int, list[str]]:
    """Ingest files as settings.principal; returns (documents changed, fragments, new
    fragments, refusals)."""
    import psycopg

    from app.access import act_as

    from app.ingest.embed import embedders
    from app.ingest.files import collect
    from app.ingest.normalize import RejectedDocument, SourceDocument
    from app.ingest.pipeline import IngestPipeline
    from app.scope import Scope

    try:
        entries = collect(paths, base)
    except FileNotFoundError as exc:
        raise CliError(str(exc)) from exc
    pipeline = IngestPipeline(settings, embedders(settings))
    scope = Scope(org_id, repo, persona, session)
    author = owner or _git_identity() or os.environ.get("USER")
    refused: list[str] = []
    changed = fragments = created = 0
    group_size = 64
    with psycopg.connect(dsn) as conn, Progress(
        TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(),
        TimeElapsedColumn(), console=console, disable=quiet,
    ) as progress:
        if create_org and conn.execute("select 1 from data.orgs where org_id = %s", (org_id,)).fetchone() is None:
            _create_org(conn, org_id, settings.principal)
        pipeline.register_models(conn)  # as the migrator, before acting for the principal
        conn.commit()
        task = progress.add_task("ingesting", total=len(entries))
        for start in range(0, len(entries), group_size):
            prepared = []
            for entry in entries[start:start + group_size]:
                try:
                    prepared.append(pipeline.prepare(SourceDocument(
                        path=entry.relative, content=entry.path.read_bytes(), kind=kind,
                        author=author, owner=owner or author, timestamp=entry.modified())))
                except RejectedDocument as exc:
                    refused.append(str(exc))
                    if entry.explicit:
                        conn.rollback()
                        raise CliError(str(exc)) from exc
                    progress.advance(task)
            try:
                act_as(conn, org_id, settings.principal)
                for result in pipeline.write(conn, scope, prepared,
                                             on_document=lambda _r: progress.advance(task)):
                    changed += result.changed
                    fragments += result.fragments
                    created += result.created
                conn.commit()
            except psycopg.Error as exc:
                conn.rollback()
                raise CliError(exc.diag.message_primary or str(exc)) from exc
    return changed, fragments, created, refused


@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--org", "org_id", required=True, help="Org (tenant) to ingest into.")
@click.option("--repo", default=None, help="Repository scope of these files.")
@click.option("--persona", default=None, help="Persona scope.")
@click.option("--session", default=None, help="Session scope.")
@click.option("--kind", default=None, help="Document kind (code, adr, runbook, policy, ...). Default: inferred.")
@click.option("--owner", default=None, help="Owner of the fragments. Default: git user.name or $USER.")
@click.option("--create-org/--no-create-org", default=True, show_default=True, help="Create the org if missing.")
@click.pass_context
def ingest(ctx: click.Context, paths: tuple[Path, ...], org_id: str, repo: str | None, persona: str | None,
           session: str | None, kind: str | None, owner: str | None, create_org: bool) -> None:
    """Ingest files or directories (directories respect .gitignore)."""
    settings = _settings(ctx)
    dsn = _open(settings)
    changed, fragments, created, refused = ingest_paths(
        settings, dsn, list(paths), org_id, repo, persona, session, kind, owner, create_org)
    for message in refused:
        console.print(f"[yellow]skipped:[/] {message}")
    console.print(f"{changed} document(s) changed, {fragments} fragment(s) written, "
                  f"{created} new, {fragments - created} collapsed into existing fragments")


@main.command()
@click.argument("text")
@click.option("--org", "org_id", required=True)
@click.option("--repo", default=None)
@click.option("--persona", default=None)
@click.option("--session", default=None)
@click.option("--budget", "budget_tokens", default=DEFAULT_BUDGET_TOKENS, show_default=True, type=int)
@click.option("--k-lexical", default=DEFAULT_K_LEXICAL, show_default=True, type=int)
@click.option("--k-dense", default=DEFAULT_K_DENSE, show_default=True, type=int)
@click.option("--rerank-top", default=DEFAULT_RERANK_TOP, show_default=True, type=int)
@click.option("--min-score", default=0.0, show_default=True, type=float)
@click.option("--json", "as_json", is_flag=True, help="Print the response as JSON.")
@click.pass_context
def query(ctx: click.Context, text: str, org_id: str, repo: str | None, persona: str | None, session: str | None,
          budget_tokens: int, k_lexical: int, k_dense: int, rerank_top: int, min_score: float, as_json: bool) -> None:
    """Retrieve fragments for TEXT, exactly as POST /contexts/retrieve does, as the
    principal named by --principal (its grants apply)."""
    import psycopg

    from app.access import act_as
    from app.ingest.embed import embedders
    from app.retrieve.config import PipelineConfig
    from app.retrieve.models import RetrieveRequest
    from app.retrieve.service import Retriever

    settings = _settings(ctx)
    payload = {"query": text, "scope": {"org_id": org_id, "repo_id": repo, "persona_id": persona,
                                        "session_id": session},
               "budget_tokens": budget_tokens, "k_lexical": k_lexical, "k_dense": k_dense,
               "rerank_top": rerank_top, "min_score": min_score}
    try:
        request = msgspec.convert(payload, RetrieveRequest)
    except msgspec.ValidationError as exc:
        raise CliError(str(exc)) from exc
    dsn = _open(settings)
    retriever = Retriever.build(embedders(settings), PipelineConfig(reranker=settings.reranker),
                                settings.torch_threads)
    try:
        with psycopg.connect(dsn) as conn:
            act_as(conn, org_id, settings.principal)
            response = retriever.retrieve(conn, request)
    except psycopg.Error as exc:
        raise CliError(exc.diag.message_primary or str(exc)) from exc
    if as_json:
        click.echo(msgspec.json.encode(response).decode())
        return
    out = Console(soft_wrap=True, highlight=False)
    for f in response.fragments:
        out.print(f"[bold cyan]{f.source}[/]  score={f.score:.3f}  tokens={f.tokens}  id={f.id}")
        click.echo(f.text)
        click.echo()
    console.print(f"{len(response.fragments)} fragment(s), {response.tokens_used}/{response.budget_tokens} tokens, "
                  f"trace {response.trace_id}")


@main.command()
@click.option("--host", default=None, help="Default: CONTEXTS_HOST or 127.0.0.1.")
@click.option("--port", default=None, type=int, help="Default: CONTEXTS_PORT or 8000 (0: any free port).")
@click.option("--demo", is_flag=True, help="Ingest this repository's README, docs and app/ as org 'demo' first, "
                                           "and print the demo agent's key (kept under CONTEXTS_HOME).")
@click.pass_context
def serve(ctx: click.Context, host: str | None, port: int | None, demo: bool) -> None:
    """Serve the HTTP API (OpenAPI at /schema)."""
    from app.api.app import create_app
    from app.api.server import base_url, bind, build_server, why_unavailable

    settings = _settings(ctx).with_(**{k: v for k, v in (("host", host), ("port", port)) if v is not None})
    # The port first: when it is taken, nothing else (ingest, demo key) may happen.
    try:
        sock = bind(settings.host, settings.port)
    except OSError as exc:
        raise CliError(why_unavailable(settings.host, settings.port, exc)) from exc
    with contextlib.closing(sock):
        settings = settings.with_(port=sock.getsockname()[1])
        dsn = _open(settings)
        demo_key = None
        if demo:
            paths = [p for p in (ROOT / "README.md", ROOT / "docs", ROOT / "app") if p.exists()]
            console.print("ingesting the demo corpus (this repository) into org [bold]demo[/] ...")
            changed, fragments, created, _ = ingest_paths(settings, dsn, paths, DEMO_ORG, DEMO_REPO, None, None,
                                                          None, None, True, base=ROOT)
            console.print(f"demo: {changed} document(s) changed, {created} new fragment(s)")
            demo_key = _demo_key(dsn, settings.home)
        app = create_app(settings.with_(database_url=dsn), run_migrations=False)
        url = base_url(settings.host, settings.port)

        def announce() -> None:  # once the application has started and the socket listens
            console.print(f"\nContexts is serving on [bold]{url}[/] (OpenAPI: {url}/schema)")
            if demo_key is None:
                return
            body = json.dumps({"query": "how are near-duplicate fragments collapsed?",
                               "scope": {"org_id": DEMO_ORG}, "budget_tokens": 1500})
            console.print(f"Demo API key (principal {DEMO_AGENT}, read on org {DEMO_ORG}; "
                          f"the same on every start, kept in {settings.home / DEMO_KEY_FILE}):\n")
            click.echo(f"export CONTEXTS_KEY={demo_key}\n", err=True)
            console.print("Try:\n")
            click.echo(f"curl -s {url}/contexts/retrieve -H \"Authorization: Bearer $CONTEXTS_KEY\" "
                       f"-H 'content-type: application/json' -d '{body}'\n", err=True)

        # uvicorn re-raises SIGTERM/SIGINT after a graceful shutdown; turning them into a
        # normal exit lets the embedded PostgreSQL server be stopped cleanly (atexit).
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        server = build_server(app, settings, on_started=announce)
        server.run(sockets=[sock])
    if not server.started:
        raise CliError("the server did not start (see the log above)")


DEMO_KEY_FILE = "demo-key"
"""Under CONTEXTS_HOME: the demo agent's token, so that `make run` prints the same key
on every start."""


def _demo_key(dsn: str, home: Path) -> str:
    """The demo agent's read-only key: the one stored under `home` while the database
    knows it as live; otherwise a new one (stored, mode 0600), and older demo keys are
    revoked."""
    import psycopg

    from app.access import create_api_key

    stored = home / DEMO_KEY_FILE
    try:
        token: str | None = stored.read_text().strip()
    except OSError:
        token = None
    with psycopg.connect(dsn) as conn:
        conn.execute("select api.create_principal(%s, %s, 'agent', 'demo agent')", (DEMO_ORG, DEMO_AGENT))
        conn.execute("select api.grant_scope(%s, %s, 'org', null, false)", (DEMO_ORG, DEMO_AGENT))
        live = [key_id for (key_id,) in conn.execute(
            "select key_id from api.list_api_keys(%s) where principal_id = %s and revoked_at is null",
            (DEMO_ORG, DEMO_AGENT))]
        parts = token.split("_", 2) if token else []
        if len(parts) == 3 and parts[1] in live:
            return token  # type: ignore[return-value]
        for key_id in live:
            conn.execute("select api.revoke_api_key(%s)", (key_id,))
        token = create_api_key(conn, DEMO_ORG, DEMO_AGENT, "make run demo").token
        _write_private(stored, token + "\n")  # before the commit: a failed write changes nothing
    return token


def _write_private(path: Path, text: str) -> None:
    """Replace `path` with `text`, readable by its owner only."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(text)
    os.chmod(partial, 0o600)  # also when it was left behind with a wider mode
    os.replace(partial, path)


def _register_subcommands() -> None:
    from app.eval.cli import eval_group

    main.add_command(eval_group)


if __name__ == "__main__":
    # `python -m app.cli`: this copy runs as __main__, while app.eval.cli imports (and
    # registers its commands on) the module app.cli; run that one.
    from app.cli import main as package_main

    sys.exit(package_main())
else:
    _register_subcommands()
