"""What the controllers share: pool, retrieval lane, ingestion lane, settings."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import psycopg
from psycopg_pool import ConnectionPool

from app.access import authenticate
from app.ingest.pipeline import IngestPipeline
from app.retrieve.service import Retriever
from app.settings import Settings


@dataclass(slots=True)
class Services:
    settings: Settings
    pool: ConnectionPool
    retriever: Retriever
    pipeline: IngestPipeline

    @contextmanager
    def transaction(self) -> Iterator[psycopg.Connection]:
        """One request, one transaction: commit on success, roll back on any error."""
        with self.pool.connection() as conn:
            yield conn

    @contextmanager
    def acting_for(self, token: str) -> Iterator[psycopg.Connection]:
        """A transaction bound to the principal of an API key (401 when it is not valid)."""
        with self.transaction() as conn:
            authenticate(conn, token)
            yield conn
