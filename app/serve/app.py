"""create_app(settings): the Litestar application and its start-up/shut-down."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import msgspec
from litestar import Litestar, Response, get
from litestar.datastructures import State
from litestar.di import Provide
from litestar.exceptions import ClientException
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import SwaggerRenderPlugin
from litestar.openapi.spec import Components, SecurityScheme
from litestar.static_files import create_static_files_router
from litestar.types import ASGIApp, Receive, Scope, Send

from app import __version__
from app.api.auth import bearer_token
from app.api.contexts import ContextsController, SubscriptionsController
from app.api.documents import DocumentsController
from app.api.errors import EXCEPTION_HANDLERS, problem
from app.api.fragments import FragmentsController, TracesController
from app.api.head import HeadServingLitestar
from app.api.metrics import Metrics, count_response, metrics_handler, metrics_middleware
from app.api.models import models_handler
from app.api.openapi import (
    close_request_objects,
    declare_problem_headers,
    declare_throttle,
    forbid_empty_retrieval,
    problem_response,
    remember_document,
    require_one_of,
    restore_item_bounds,
    restore_item_patterns,
    restore_zero_bounds,
    reuse_document,
)
from app.api.owners import OwnersController
from app.api.pins import PinsController
from app.api.profiles import ProfilesController
from app.api.request_checks import check_request, declare_query_names
from app.api.request_log import request_log_middleware
from app.api.retrieve import RetrieveController
from app.api.rules import RulesController
from app.api.server import allow_every_method
from app.api.sessions import SessionsController
from app.api.sync import SyncController, sync_state_by_query
from app.api.throttle import auth_throttle
from app.api.ui import favicon, ui_router
from app.api.whoami import whoami_handler
from app.db.availability import unavailable_reason
from app.db.database import resolve_database_url
from app.db.migrate import migrate
from app.operations.build import build_services
from app.operations.services import Services
from app.serve.mcp_http import http_lifespan as mcp_http_lifespan
from app.serve.mcp_http import mcp_endpoint
from app.settings import Settings
from app.wire.bodies import (
    ContextCreate,
    ContextVersionCreate,
    DocumentIn,
    IngestRequest,
    NotePromote,
    NoteWrite,
    OwnersReassign,
    PinCreate,
    RankingProfileSet,
    RetrieveRequest,
    RuleCreate,
    SavedQuery,
    ScopeIn,
    SessionOpen,
    SubscriptionCreate,
    WebhookIn,
)

log = logging.getLogger(__name__)

DOCS_PATH = "/schema"
"""The OpenAPI document is at /schema/openapi.json; the interactive docs at /schema and
/schema/swagger."""
DOCS_ASSETS = f"{DOCS_PATH}/assets"


@functools.cache
def docs_assets_dir() -> str:
    """Swagger UI's files (5.x, which reads the OpenAPI 3.1 document Litestar writes;
    4.x said "Unable to render this definition"), from the swagger-ui-py package's static
    folder: the docs page loads nothing from a CDN, so it works on a machine without
    internet access. Found without importing the package (its code serves other
    frameworks); once per process, as the search goes through every import hook."""
    import importlib.util

    spec = importlib.util.find_spec("swagger_ui")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the swagger-ui-py package is missing: `make install` installs it")
    return str(Path(spec.submodule_search_locations[0]) / "static")


def docs_plugin() -> SwaggerRenderPlugin:
    return SwaggerRenderPlugin(
        js_url=f"{DOCS_ASSETS}/swagger-ui-bundle.js",
        css_url=f"{DOCS_ASSETS}/swagger-ui.css",
        standalone_preset_js_url=f"{DOCS_ASSETS}/swagger-ui-standalone-preset.js",
        favicon=f"<link rel='icon' type='image/png' href='{DOCS_ASSETS}/favicon-32x32.png'>",
        path=["/", "/swagger"],
    )


class HealthOut(msgspec.Struct):
    status: str
    database: str
    version: str


@get(
    "/health",
    tags=["operations"],
    summary="Liveness and database reachability",
    security=[{}],
    responses={503: problem_response("The database is unreachable")},
)
async def health(state: State) -> Response[HealthOut]:
    """Answers from the database monitor (pinged a few times a second on its own
    connection), so it needs no worker thread and no pooled connection."""
    services: Services = state.services
    if services.runtime.monitor is not None and not services.runtime.monitor.available:
        return problem(503, "database unavailable")
    return Response(HealthOut("ok", "ok", __version__))


async def nudge_worker(services: Services) -> None:
    """Every nudge_interval_s, queue the nudges owed and deliver them (app/nudges.py),
    on a write thread; a failed run is logged and the next one tries again."""
    from app.nudges import deliver_pending

    settings = services.settings

    def run() -> None:
        report = deliver_pending(
            lambda: services.runtime.transaction(services.runtime.write_pool),
            retry_base_s=settings.nudge_retry_base_s,
            timeout_s=settings.nudge_timeout_s,
            limit=1000,
            allow_private=settings.webhook_allow_private,
        )
        if report.enqueued or report.delivered or report.failed:
            log.info(
                "nudges: %d queued, %d delivered, %d failed in %.2f s",
                report.enqueued,
                report.delivered,
                report.failed,
                report.seconds,
            )

    while True:
        await asyncio.sleep(settings.nudge_interval_s)
        try:
            await services.runtime.write(run)
        except Exception as exc:  # the worker outlives any one run's failure
            if (reason := unavailable_reason(exc)) is not None:  # an outage: one line, no traceback
                log.warning("nudge delivery run skipped: %s", reason)
            else:
                log.exception("nudge delivery run failed")


async def model_worker(services: Services) -> None:
    """Follows promotions (ModelFollowing.follow_models every model_check_s) and drops retired
    generations whose window has ended (at start, then every drop_retired_s). A failed
    run is logged and the next one tries again."""
    settings = services.settings
    loop = asyncio.get_running_loop()
    next_drop = loop.time() if settings.drop_retired_s > 0 else float("inf")
    next_check = loop.time() + settings.model_check_s if settings.model_check_s > 0 else float("inf")
    while next_drop < float("inf") or next_check < float("inf"):
        await asyncio.sleep(max(0.0, min(next_drop, next_check) - loop.time()))
        try:
            if loop.time() >= next_drop:
                next_drop = loop.time() + settings.drop_retired_s
                await services.runtime.write(services.following.drop_retired_models)
            if loop.time() >= next_check:
                next_check = loop.time() + settings.model_check_s
                await services.runtime.read(services.following.follow_models_quietly)
        except Exception as exc:  # the worker outlives any one run's failure
            if (reason := unavailable_reason(exc)) is not None:
                log.warning("model generations check skipped: %s", reason)
            else:
                log.exception("model generations check failed")


def create_app(settings: Settings, *, services: Services | None = None, run_migrations: bool = True) -> Litestar:
    metrics = Metrics()

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        owned = services is None
        if owned:
            dsn = await anyio.to_thread.run_sync(resolve_database_url, settings)
            if run_migrations:
                await anyio.to_thread.run_sync(migrate, dsn)
            app.state.services = await anyio.to_thread.run_sync(build_services, settings, dsn)
        else:
            app.state.services = services
        metrics.attach(app.state.services)
        app.state.services.metrics = metrics
        app.state.services.retriever.stage_observer = metrics.observe_stage
        nudging = (
            asyncio.create_task(nudge_worker(app.state.services)) if owned and settings.nudge_interval_s > 0 else None
        )
        following = asyncio.create_task(model_worker(app.state.services)) if owned else None
        try:
            yield
        finally:
            for task in (nudging, following):
                if task is not None:
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task
            if owned:
                app.state.services.close()

    app = HeadServingLitestar(
        route_handlers=[
            health,
            metrics_handler,
            whoami_handler,
            models_handler,
            RetrieveController,
            DocumentsController,
            SessionsController,
            PinsController,
            RulesController,
            OwnersController,
            ContextsController,
            SubscriptionsController,
            ProfilesController,
            SyncController,
            sync_state_by_query,
            FragmentsController,
            TracesController,
            mcp_endpoint,
            ui_router,
            favicon,
            create_static_files_router(
                path=DOCS_ASSETS, directories=[docs_assets_dir()], include_in_schema=False, name="docs-assets"
            ),
        ],
        # In order: the services, then the MCP session manager that uses them.
        lifespan=[lifespan, mcp_http_lifespan],
        before_request=check_request,
        before_send=[count_response],
        # The throttle runs inside the request log (it reads whether the key authenticated).
        middleware=[request_log_middleware, metrics_middleware, auth_throttle(settings), refuse_encoded_bodies],
        exception_handlers=EXCEPTION_HANDLERS,
        dependencies={"token": Provide(bearer_token, sync_to_thread=False)},
        request_max_body_size=settings.max_body_bytes,
        openapi_config=OpenAPIConfig(
            title="Contexts",
            version=__version__,
            description="Durable, scoped, cited context for AI agents. Send `Authorization: Bearer <API key>`.",
            components=Components(
                security_schemes={
                    "apiKey": SecurityScheme(
                        type="http", scheme="bearer", description="A key from `contexts key create`."
                    )
                }
            ),
            security=[{"apiKey": []}],
            path=DOCS_PATH,
            render_plugins=[docs_plugin()],
        ),
    )
    requests: list[type[msgspec.Struct]] = [
        RetrieveRequest,
        ScopeIn,
        IngestRequest,
        DocumentIn,
        SessionOpen,
        NoteWrite,
        NotePromote,
        PinCreate,
        RankingProfileSet,
        OwnersReassign,
        WebhookIn,
        ContextCreate,
        ContextVersionCreate,
        SavedQuery,
        SubscriptionCreate,
        RuleCreate,
    ]
    app.state.metrics = metrics
    if not reuse_document(app):
        close_request_objects(app, requests)
        restore_zero_bounds(app, requests)
        restore_item_patterns(app, requests)
        restore_item_bounds(app, requests)
        forbid_empty_retrieval(app, RetrieveRequest)
        require_one_of(app, RuleCreate, ("path_globs", "symbol_globs"))
        require_one_of(app, ContextVersionCreate, ("fragment_ids", "doc_ids", "path_globs", "query"))
        declare_throttle(app)
        declare_problem_headers(app)
        remember_document(app)
    allow_every_method(app)
    declare_query_names(app)
    return app


def refuse_encoded_bodies(app: ASGIApp) -> ASGIApp:
    """A body sent with a content coding (`Content-Encoding: gzip`, ...) is refused with
    415 and `Accept-Encoding: identity` (RFC 9110, 15.5.16) before it is read: no door
    decodes one, and reading it as JSON answered a misleading 400. MCP included."""

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            for name, value in scope["headers"]:
                if name == b"content-encoding":
                    coding = value.decode("latin-1").strip()
                    if coding.lower() not in ("", "identity"):
                        raise ClientException(
                            status_code=415,
                            detail=f"Content-Encoding {coding} is not accepted: send the body uncompressed",
                            headers={"Accept-Encoding": "identity"},
                        )
        await app(scope, receive, send)

    return middleware
