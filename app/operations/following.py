"""Model following (docs/adr/0021): the retriever and the ingestion pipeline embed with
the models the database serves. A promotion (or rollback) is followed by swapping both in
one step; a request for the previous generation gets that generation's retriever while
its window lasts; retired generations whose window ended are dropped."""

from __future__ import annotations

import logging
import threading

import psycopg

from app.generations.serving import (
    ModelNotLoadable,
    NoPreviousGeneration,
    follow,
    load_models,
    previous_generations,
    previous_models,
    serving_models,
)
from app.ingest.pipeline import IngestPipeline
from app.operations.runtime import Runtime
from app.retrieve.query_vectors import QueryVectors
from app.retrieve.service import Retriever
from app.text.embed import model_label

log = logging.getLogger(__name__)


class ModelFollowing:
    def __init__(
        self, runtime: Runtime, retriever: Retriever, pipeline: IngestPipeline, admin_dsn: str | None = None
    ) -> None:
        self.runtime = runtime
        self.retriever = retriever
        self.pipeline = pipeline
        self.admin_dsn = admin_dsn
        """The migrator's connection string: dropping retired generations is the schema
        owner's work (the service's own login may not)."""
        self._following = threading.Lock()
        self._previous: tuple[tuple, Retriever] | None = None
        """The retriever of the previous generations (previous_retriever), and what it was
        built for: the active retriever and the generations it searches."""

    async def query_vectors(self, query: str, retriever: Retriever | None = None) -> QueryVectors:
        """The query's vectors, computed with those of the other requests waiting; a
        query embedded a moment ago is answered on the event loop, without a thread hop."""
        retriever = retriever or self.retriever
        recent = retriever.query_embedder.recent(query)
        if recent is not None:
            return recent
        return await self.runtime.embed(retriever.query_embeddings, query)

    def follow_models(self) -> bool:
        """Embed with the models the database serves: when a namespace was promoted (or
        rolled back) since, load its model and swap retriever and pipeline in one step.
        Requests in flight finish with the objects they took; the new retriever has its
        own query-vector cache, so no vector of the old model is reused. True when it
        swapped; ModelNotLoadable when the promoted model cannot be loaded here."""
        with self.runtime.transaction() as conn:
            serving = serving_models(conn)
        with self._following:
            followed = follow(self.pipeline.embedders, serving)
            if followed is None:
                return False
            retriever = Retriever(followed, self.retriever.reranker, self.retriever.config)
            retriever.stage_observer = self.retriever.stage_observer
            retriever.usage_folder = self.retriever.usage_folder
            before = {ns: model_label(e.name) for ns, e in self.pipeline.embedders.items()}
            self.retriever, self.pipeline = retriever, IngestPipeline(self.runtime.settings, followed)
        for namespace, embedder in followed.items():
            if model_label(embedder.name) != before[namespace]:
                log.warning(
                    "namespace %s: now embedding with %s (generation %d, loaded from %s), was %s",
                    namespace,
                    serving[namespace].name,
                    serving[namespace].generation,
                    embedder.name,
                    before[namespace],
                )
        return True

    def previous_retriever(self) -> Retriever:
        """The retriever of a request asking for the previous generation: per namespace,
        the generation its last promotion replaced while its window lasts (the others keep
        their active one), its model loaded from its source once and kept until that
        changes, with the active retriever's reranker and configuration. SQL checks the
        window again at query time. NoPreviousGeneration when none is left, or its model
        cannot be loaded here."""
        with self.runtime.transaction() as conn:
            kept = previous_models(conn)
        try:
            previous = previous_generations(kept)
        except NoPreviousGeneration:
            self._previous = None  # its model's memory goes with the window
            raise
        with self._following:
            current = self.retriever
            key = (current, tuple(sorted((ns, m.name, m.generation) for ns, m in previous.items())))
            if self._previous is not None and self._previous[0] == key:
                return self._previous[1]
            try:
                embedders = load_models(self.pipeline.embedders, previous)
            except ModelNotLoadable as exc:
                raise NoPreviousGeneration(f"the previous generation cannot be searched here: {exc}") from exc
            searched = {ns: m.generation for ns, m in previous.items()}
            retriever = Retriever(embedders, current.reranker, current.config, generations=searched)
            retriever.stage_observer = current.stage_observer
            retriever.usage_folder = current.usage_folder
            self._previous = (key, retriever)
        for namespace, model in previous.items():
            log.info("namespace %s: previous generation %s loaded from %s", namespace, model.label, model.source)
        return retriever

    def follow_models_quietly(self) -> bool:
        """follow_models, a model that cannot be loaded logged (requests keep their 409)."""
        try:
            return self.follow_models()
        except ModelNotLoadable as exc:
            log.error("cannot follow the promoted model: %s", exc)
            return False

    def drop_retired_models(self) -> list[dict]:
        """service.drop_retired_models as the migrator: the vectors and index of every retired
        generation whose window has ended (never the active one), each drop logged; the
        row keeps `dropped_at`."""
        if self.admin_dsn is None:
            return []
        with psycopg.connect(self.admin_dsn) as conn:
            dropped = conn.execute(
                "select model_id, namespace, name, generation, vectors from service.drop_retired_models()"
            ).fetchall()
        rows = [dict(zip(("model_id", "namespace", "name", "generation", "vectors"), row)) for row in dropped]
        for row in rows:
            log.warning(
                "dropped retired generation %s@%d of %s (its window ended): %d vectors and its index",
                row["name"],
                row["generation"],
                row["namespace"],
                row["vectors"],
            )
        return rows
