"""Concurrent retrievals share query-embedding calls, and each gets its own vector."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from app.retrieve.query_vectors import QueryEmbedder

QUERIES = [f"how is the {topic} configured" for topic in ("journal", "retry", "cache", "index", "proxy", "quota")]


@pytest.fixture
def held_query_model(models):
    """The query lane's model, its next encode() held until `release` is set."""
    model = models["prose"].for_queries().model
    entered, release = threading.Event(), threading.Event()
    original = model.encode
    calls: list[int] = []

    def encode(texts, *args, **kwargs):
        calls.append(len(texts))
        if len(calls) == 1:
            entered.set()
            release.wait(60)
        return original(texts, *args, **kwargs)

    model.encode = encode
    yield entered, release, calls
    release.set()
    del model.encode


def wait_until(condition, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def run_concurrently(embedder: QueryEmbedder, queries: list[str], entered: threading.Event) -> dict[str, dict]:
    results: dict[str, dict] = {}
    errors: list[BaseException] = []

    def ask(query: str) -> None:
        try:
            results[query] = embedder.vectors(query)
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    first = threading.Thread(target=ask, args=(queries[0],))
    first.start()
    assert entered.wait(30), "the first query never reached the model"
    others = [threading.Thread(target=ask, args=(q,)) for q in queries[1:]]
    for thread in others:
        thread.start()
    return {"results": results, "errors": errors, "threads": [first, *others]}


def test_queries_waiting_behind_a_call_are_embedded_in_one_call(models, held_query_model):
    entered, release, calls = held_query_model
    embedder = QueryEmbedder(models)
    run = run_concurrently(embedder, QUERIES, entered)
    wait_until(lambda: len(embedder._waiting) == len(QUERIES) - 1)  # every other query queued
    release.set()
    for thread in run["threads"]:
        thread.join(60)
    assert not run["errors"]
    # Prose and code share one model: one call for the first query, one for the five others.
    assert calls == [1, len(QUERIES) - 1]
    assert embedder.batches == 2
    alone = QueryEmbedder(models)
    for query in QUERIES:
        vectors = run["results"][query]
        assert set(vectors) == {"prose", "code"}
        solo = alone.vectors(query)["prose"]
        assert np.dot(vectors["prose"], solo) > 0.998, query  # bf16: batch padding moves the last digits


def test_a_repeated_query_is_not_embedded_again(models):
    embedder = QueryEmbedder(models, cache_size=2)
    first = embedder.vectors("rotate the journal")
    assert embedder.vectors("rotate the journal") is first
    assert embedder.batches == 1
    embedder.vectors("a second query")
    embedder.vectors("a third query")  # evicts the oldest
    embedder.vectors("rotate the journal")
    assert embedder.batches == 4


def test_a_failed_call_fails_its_waiters_and_the_next_call_works(models, held_query_model):
    entered, release, calls = held_query_model
    model = models["prose"].for_queries().model
    held = model.encode

    def failing(texts, *args, **kwargs):
        held(texts, *args, **kwargs)
        raise RuntimeError("model failure")

    model.encode = failing
    embedder = QueryEmbedder(models)
    run = run_concurrently(embedder, QUERIES[:3], entered)
    wait_until(lambda: len(embedder._waiting) == 2)
    release.set()
    for thread in run["threads"]:
        thread.join(60)
    assert len(run["errors"]) == 3 and all("model failure" in str(e) for e in run["errors"])
    model.encode = held
    assert set(embedder.vectors(QUERIES[0])) == {"prose", "code"}
    assert not embedder._running and not embedder._waiting and not embedder._in_flight


def test_recent_vectors_are_answered_without_waiting_for_a_model_call(models, held_query_model):
    """What the event loop asks before it hops to a thread: a query embedded a moment ago
    is answered at once even while another query holds the model; an unknown one is not."""
    entered, release, calls = held_query_model
    embedder = QueryEmbedder(models, cache_size=4)
    release.set()  # the fixture holds the first call: let this one pass
    known = embedder.vectors("rotate the journal")
    release.clear()
    calls.clear()  # the next call is the first again: held
    entered.clear()
    run = run_concurrently(embedder, ["a query the model is busy with"], entered)
    started = time.monotonic()
    assert embedder.recent("rotate the journal") is known
    assert embedder.recent("never asked") is None
    assert time.monotonic() - started < 5
    assert not run["results"], "the held call is still running"
    release.set()
    for thread in run["threads"]:
        thread.join(60)
    assert embedder.recent("a query the model is busy with") is run["results"]["a query the model is busy with"]
