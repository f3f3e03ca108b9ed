"""Query vectors for concurrent retrievals, embedded together.

One short query costs a whole forward pass of the model; sixteen cost little more
(measured with MiniLM on 2 cores, bf16: per-query time falls about tenfold from one to
sixteen queries per call). So a retrieval that needs a vector while none is being
computed embeds every query then waiting, its own included, in one call; retrievals
arriving meanwhile wait for the next call. Nobody waits on a timer: alone, a query is
embedded at once, as before.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from app.text.embed import Embedder

QueryVectors = dict[str, list[float]]
"""One vector per namespace (namespaces sharing a model share the vector)."""


@dataclass(slots=True)
class _Pending:
    done: bool = False
    vectors: QueryVectors = field(default_factory=dict)
    error: BaseException | None = None


class QueryEmbedder:
    """Embeds queries for the query lane of each namespace's model, in batches of
    the queries waiting, and keeps the `cache_size` most recent (agents repeat queries)."""

    def __init__(self, embedders: dict[str, Embedder], cache_size: int = 1024, max_batch: int = 32) -> None:
        self.embedders = {namespace: e.for_queries() for namespace, e in embedders.items()}
        self.cache_size = cache_size
        self.max_batch = max_batch
        self._recent: OrderedDict[str, QueryVectors] = OrderedDict()
        self._waiting: dict[str, _Pending] = {}
        self._in_flight: dict[str, _Pending] = {}
        self._running = False
        self._changed = threading.Condition()
        self.batches = 0
        """Embedding calls made (a test and the bench read it)."""

    def recent(self, query: str) -> QueryVectors | None:
        """The query's vectors if they are among the recent ones (never waits on a model
        call: the lock is only ever held for bookkeeping)."""
        with self._changed:
            return self._cached(query)

    def _cached(self, query: str) -> QueryVectors | None:
        """`recent`, the lock held."""
        cached = self._recent.get(query)
        if cached is not None:
            self._recent.move_to_end(query)
        return cached

    def vectors(self, query: str) -> QueryVectors:
        with self._changed:
            cached = self._cached(query)
            if cached is not None:
                return cached
            pending = self._waiting.get(query) or self._in_flight.get(query)
            if pending is None:
                pending = self._waiting[query] = _Pending()
            while not pending.done and self._running:
                self._changed.wait()
            if pending.done:
                return self._result(pending)
            # No batch running and ours not done: embed what waits, ours included.
            self._running = True
            batch = [query] + [q for q in self._waiting if q != query][: self.max_batch - 1]
            owned = {q: self._waiting.pop(q) for q in batch}
            self._in_flight.update(owned)
        computed: dict[str, QueryVectors] = {}
        failure: BaseException | None = None
        try:
            computed = self._embed(batch)
        except BaseException as error:  # every waiter of this batch gets the error
            failure = error
        with self._changed:
            for q, slot in owned.items():
                del self._in_flight[q]
                slot.done, slot.error = True, failure
                if failure is None:
                    slot.vectors = computed[q]
                    self._recent[q] = computed[q]
            while len(self._recent) > self.cache_size:
                self._recent.popitem(last=False)
            self._running = False
            self.batches += 1
            self._changed.notify_all()
        return self._result(owned[query])

    @staticmethod
    def _result(pending: _Pending) -> QueryVectors:
        if pending.error is not None:
            raise pending.error
        return pending.vectors

    def _embed(self, queries: list[str]) -> dict[str, QueryVectors]:
        by_model: dict[tuple[str, str], list[list[float]]] = {}
        out: dict[str, QueryVectors] = {q: {} for q in queries}
        for namespace, embedder in self.embedders.items():
            key = (embedder.name, embedder.runtime)
            if key not in by_model:
                by_model[key] = embedder.embed(queries)
            for q, vector in zip(queries, by_model[key]):
                out[q][namespace] = vector
        return out
