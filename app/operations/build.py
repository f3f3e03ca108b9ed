"""build_services(settings, dsn): the services every door runs on, built once per
process: the embedding models the database serves, the retriever and its reranker
loaded, the ingestion pipeline, the read and write pools as the service's login, the
read replica if any, the database monitor, and the folder of the usage roll-ups. The
HTTP service (app.serve.app) and MCP over stdio (`contexts mcp`) both start with it."""

from __future__ import annotations

import logging
from dataclasses import replace

import psycopg

from app.db.availability import DatabaseMonitor
from app.db.database import embedded_server_at, service_password
from app.db.pool import open_pool
from app.db.replica import ReadReplica
from app.db.service_login import check_service_login, service_database_url
from app.generations.serving import follow, serving_models
from app.ingest.pipeline import IngestPipeline
from app.operations.services import Services
from app.retrieve.config import PipelineConfig
from app.retrieve.service import Retriever
from app.retrieve.usage_fold import UsageFolder
from app.settings import Settings
from app.text.embed import embedders

log = logging.getLogger(__name__)


def build_services(settings: Settings, dsn: str) -> Services:
    settings = replace(settings, torch_threads=settings.service_torch_threads)
    models = embedders(settings)
    with psycopg.connect(dsn) as conn:  # a namespace with a model is served by its active generation
        followed = follow(models, serving_models(conn))
    if followed is not None:
        for namespace, embedder in followed.items():
            if embedder.name != models[namespace].name:
                log.warning(
                    "namespace %s: embedding with %s, the database's active generation (the configured %s "
                    "applies to a fresh database only)",
                    namespace,
                    embedder.name,
                    models[namespace].name,
                )
        models = followed
    retriever = Retriever.build(models, PipelineConfig(reranker=settings.reranker), settings.torch_threads)
    for embedder in (*models.values(), *retriever.embedders.values()):
        embedder.load()  # now: the first request should not pay for it
    if retriever.reranker is not None:
        retriever.reranker.load()
    pipeline = IngestPipeline(settings, models)
    with psycopg.connect(dsn) as conn:  # as the migrator: registering a model creates its index
        pipeline.register_models(conn)
    service_url = service_database_url(settings.service_database_url, dsn, service_password(settings, dsn))
    pool = open_pool(
        service_url, settings.pool_max_size, name="contexts-read", statement_timeout_s=settings.read_statement_timeout_s
    )
    write_pool = open_pool(service_url, settings.write_workers, name="contexts-write")
    # Usage roll-ups are folded on a connection of their own, never a request's (nor a
    # write thread's: those never wait for a connection).
    fold_pool = open_pool(service_url, 1, name="contexts-usage-fold")
    retriever.usage_folder = UsageFolder(fold_pool.connection, on_close=fold_pool.close)

    def drop_stale_connections() -> None:
        pool.check()
        write_pool.check()
        fold_pool.check()

    replica = None
    if settings.read_database_url:
        # The same checks as the primary's login: row-level security must apply there too.
        check_service_login(settings.read_database_url)
        replica_pool = open_pool(
            settings.read_database_url,
            settings.pool_max_size,
            name="contexts-replica",
            statement_timeout_s=settings.read_statement_timeout_s,
        )
        replica = ReadReplica(replica_pool, settings.read_replica_max_lag_s)
    embedded = embedded_server_at(dsn)
    monitor = DatabaseMonitor(
        service_url, on_recovery=drop_stale_connections, revive=embedded.revive if embedded else None
    ).start()
    return Services(
        settings,
        pool,
        retriever,
        pipeline,
        write_pool=write_pool,
        monitor=monitor,
        replica=replica,
        admin_dsn=dsn,
        usage_folder=retriever.usage_folder,
    )
