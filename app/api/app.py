"""create_app(settings): the Litestar application and its start-up/shut-down."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import psycopg
from litestar import Litestar, get
from litestar.datastructures import State
from litestar.di import Provide
from litestar.openapi import OpenAPIConfig
from litestar.openapi.spec import Components, SecurityScheme

from app import __version__
from app.api.auth import bearer_token
from app.api.documents import DocumentsController
from app.api.errors import EXCEPTION_HANDLERS
from app.api.fragments import FragmentsController, TracesController
from app.api.retrieve import RetrieveController
from app.api.state import Services
from app.db.database import resolve_database_url
from app.db.migrate import migrate
from app.db.pool import open_pool
from app.db.service_login import service_database_url
from app.ingest.embed import embedders
from app.ingest.pipeline import IngestPipeline
from app.retrieve.config import PipelineConfig
from app.retrieve.service import Retriever
from app.settings import Settings


@get("/health", sync_to_thread=True, tags=["operations"], summary="Liveness and database reachability")
def health(state: State) -> dict:
    services: Services = state.services
    with services.transaction() as conn:
        conn.execute("select 1").fetchone()
    return {"status": "ok", "database": "ok", "version": __version__}


def build_services(settings: Settings, dsn: str) -> Services:
    models = embedders(settings)
    retriever = Retriever.build(models, PipelineConfig(reranker=settings.reranker), settings.torch_threads)
    for embedder in models.values():
        embedder.load()  # now: the first request should not pay for it
    if retriever.reranker is not None:
        retriever.reranker.load()
    pipeline = IngestPipeline(settings, models)
    with psycopg.connect(dsn) as conn:  # as the migrator: registering a model creates its index
        pipeline.register_models(conn)
    service_url = service_database_url(settings.service_database_url, dsn, settings.service_password)
    pool = open_pool(service_url, settings.pool_max_size)
    return Services(settings=settings, pool=pool, retriever=retriever, pipeline=pipeline)


def create_app(settings: Settings, *, services: Services | None = None, run_migrations: bool = True) -> Litestar:
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
        try:
            yield
        finally:
            if owned:
                app.state.services.pool.close()

    return Litestar(
        route_handlers=[health, RetrieveController, DocumentsController, FragmentsController, TracesController],
        lifespan=[lifespan],
        exception_handlers=EXCEPTION_HANDLERS,
        dependencies={"token": Provide(bearer_token, sync_to_thread=False)},
        request_max_body_size=settings.max_body_bytes,
        openapi_config=OpenAPIConfig(
            title="Contexts", version=__version__,
            description="Durable, scoped, cited context for AI agents. Send `Authorization: Bearer <API key>`.",
            components=Components(security_schemes={
                "apiKey": SecurityScheme(type="http", scheme="bearer", description="A key from `contexts key create`.")}),
            security=[{"apiKey": []}]),
    )
