"""Services: what the operations run on, in three parts built together once per process
(app.operations.build): the runtime (settings, pools, worker threads, the database
monitor, an org's turn to write: `services.runtime`), authentication (transactions as a
key's principal: `services.auth`) and model following (the retriever and the pipeline,
following the generations the database serves: `services.following`)."""

from __future__ import annotations

import logging
from typing import Protocol

from psycopg_pool import ConnectionPool

from app.authority import DebouncedRefresh, refresh
from app.db.availability import DatabaseMonitor
from app.db.replica import ReadReplica
from app.ingest.pipeline import IngestPipeline
from app.operations.authentication import Authentication
from app.operations.following import ModelFollowing
from app.operations.runtime import Runtime, WriteBusy
from app.retrieve.service import Retriever
from app.retrieve.usage_fold import UsageFolder
from app.settings import Settings

__all__ = ["IngestionMetrics", "Services", "WriteBusy"]

log = logging.getLogger(__name__)


class IngestionMetrics(Protocol):
    """Where ingestion counts go (the HTTP door's Prometheus metrics, app.api.metrics)."""

    def ingested(self, org_id: str, documents: int, fragments: int, seconds: float) -> None: ...


class Services:
    def __init__(
        self,
        settings: Settings,
        pool: ConnectionPool,
        retriever: Retriever,
        pipeline: IngestPipeline,
        write_pool: ConnectionPool | None = None,
        monitor: DatabaseMonitor | None = None,
        replica: ReadReplica | None = None,
        admin_dsn: str | None = None,
        usage_folder: UsageFolder | None = None,
    ) -> None:
        self.runtime = Runtime(settings, pool, write_pool, monitor, replica)
        self.auth = Authentication(self.runtime)
        self.following = ModelFollowing(self.runtime, retriever, pipeline, admin_dsn)
        self.metrics: IngestionMetrics | None = None
        """Set by the app (app.api.metrics): ingestion counts go there."""
        self.authority = DebouncedRefresh(self.refresh_authority, settings.authority_refresh_s)
        """Poked after each ingestion or deletion: citation authority is refreshed off the
        request path, once a burst of writes is over."""
        self.usage_folder = usage_folder
        """Folds the usage roll-ups after the retrieval that made a fold due has answered
        (app.retrieve.usage_fold); closed with the services."""

    @property
    def settings(self) -> Settings:
        return self.runtime.settings

    @property
    def retriever(self) -> Retriever:
        """The retriever of the generations served now (it changes when one is promoted)."""
        return self.following.retriever

    @property
    def pipeline(self) -> IngestPipeline:
        """The ingestion pipeline of the generations served now."""
        return self.following.pipeline

    def refresh_authority(self) -> None:
        with self.runtime.transaction(self.runtime.write_pool) as conn:
            done = refresh(conn)
        log.info("citation authority refreshed in %.0f ms (%d fragments)", done.duration_ms, done.scored)

    def close(self) -> None:
        self.authority.close()
        if self.usage_folder is not None:
            self.usage_folder.close()
        self.runtime.close()
