"""Writers of an org take turns, within a bound, and may retry safely (issue 29, section
3): a write that waits past CONTEXTS_WRITE_LOCK_WAIT_S is a 503 with Retry-After that
stored nothing; documents are embedded before the org's write lock, so a large write
does not hold every other write of its org behind its model; an Idempotency-Key makes a
retry answer what the first request did, writing once."""

from __future__ import annotations

import threading
import time

import psycopg
import pytest

from tests.conftest import serving

ORG_LOCK = "select pg_advisory_xact_lock(hashtextextended('contexts.ingest:acme', 0))"
"""The database's write lock of org acme (service.begin_document, service.delete_document)."""


def document(path: str, text: str) -> dict:
    return {"scope": {"org_id": "acme"}, "documents": [{"path": path, "content": f"# {path}\n\n{text}"}]}


def versions(db_url: str) -> list[tuple[str, int]]:
    with psycopg.connect(db_url) as conn:
        return conn.execute(
            "select d.path, v.version from data.documents d join data.document_versions v using (doc_id) order by 1, 2"
        ).fetchall()


def within(seconds: float, request):
    """`request()` in a thread; None when no answer came within `seconds` (an unbounded wait)."""
    answer: list = []
    thread = threading.Thread(target=lambda: answer.append(request()), daemon=True)
    thread.start()
    thread.join(seconds)
    return answer[0] if answer else None


def post_within(client, seconds: float, path: str, body: dict):
    return within(seconds, lambda: client.post(path, json=body))


@pytest.fixture
def bounded(settings, models, db_url, logins):
    """The API with a 1-second bound on waiting for the org's turn."""
    with serving(settings, db_url, logins, write_lock_wait_s=1.0) as (client, token):
        client.headers["Authorization"] = f"Bearer {token}"
        yield client


def test_a_write_that_waits_past_the_bound_gets_503_and_stores_nothing(bounded, db_url):
    """Another process (a CLI ingest, a second service) holds the org's write lock."""
    with psycopg.connect(db_url) as holder:
        holder.execute(ORG_LOCK)
        started = time.monotonic()
        response = post_within(bounded, 30, "/documents", document("tiny.md", "A tiny write."))
        waited = time.monotonic() - started
        assert response is not None, "the write waited for the lock without bound"
        assert response.status_code == 503, response.text
        assert response.headers["retry-after"] == "1"
        assert response.headers["content-type"].startswith("application/problem+json")
        assert "write lock" in response.json()["detail"] and "nothing was stored" in response.json()["detail"]
        assert waited < 10  # the bound (1 s) and the write's own work, not the holder's time
        # Bulk owner reassignment takes the org's write lock too: the same bound.
        reassign = post_within(bounded, 30, "/owners/reassign", {"org_id": "acme", "from_owner": "A", "to_owner": "B"})
        assert reassign is not None and reassign.status_code == 503, reassign and reassign.text
    assert versions(db_url) == []
    assert bounded.post("/documents", json=document("tiny.md", "A tiny write.")).status_code == 201
    assert versions(db_url) == [("tiny.md", 1)]
    with psycopg.connect(db_url) as holder:
        holder.execute(ORG_LOCK)
        removal = within(30, lambda: bounded.delete("/documents/1"))
        assert removal is not None and removal.status_code == 503, "a deletion takes the same bounded turn"
    assert versions(db_url) == [("tiny.md", 1)]
    assert bounded.get("/documents/1").status_code == 200


def test_a_write_waiting_behind_another_of_this_service_gets_503(bounded, db_url):
    """The service's own writers take turns on an in-process lock first: bounded too."""
    lock = bounded.app.state.services.runtime.org_lock("acme")
    bounded.blocking_portal.call(lock.acquire)
    try:
        response = post_within(bounded, 30, "/documents", document("tiny.md", "A tiny write."))
    finally:
        bounded.blocking_portal.call(release, lock)
    assert response is not None, "the write waited for the service's lock without bound"
    assert response.status_code == 503 and response.headers["retry-after"] == "1", response.text
    assert versions(db_url) == []
    assert bounded.post("/documents", json=document("tiny.md", "A tiny write.")).status_code == 201


async def release(lock) -> None:
    lock.release()


class SlowEmbedder:
    """The prose model, taking `seconds` more for any text holding SLOW (a large document)."""

    def __init__(self, real, seconds: float) -> None:
        self.real = real
        self.seconds = seconds
        self.embedding = threading.Event()

    def __getattr__(self, name):
        return getattr(self.real, name)

    def embed(self, texts):
        if any("SLOW" in t for t in texts):
            self.embedding.set()
            time.sleep(self.seconds)
        return self.real.embed(texts)


def test_the_org_lock_is_not_held_while_a_write_embeds(bounded, db_url):
    services = bounded.app.state.services
    slow = SlowEmbedder(services.pipeline.embedders["prose"], seconds=4.0)
    services.pipeline.embedders["prose"] = slow
    outcome: dict = {}

    def large_write() -> None:
        outcome["large"] = bounded.post("/documents", json=document("large.md", "SLOW to embed, like 8 MiB."))

    thread = threading.Thread(target=large_write)
    thread.start()
    try:
        assert slow.embedding.wait(60), "the large write never embedded"
        with psycopg.connect(db_url, autocommit=True) as watcher:
            # Free: taken and released at once (autocommit) by another session.
            assert watcher.execute(ORG_LOCK.replace("pg_advisory_xact_lock", "pg_try_advisory_xact_lock")).fetchone()[0]
        started = time.monotonic()
        tiny = bounded.post("/documents", json=document("tiny.md", "A tiny write meanwhile."))
        assert tiny.status_code == 201, tiny.text
        assert time.monotonic() - started < 3.0  # not behind the large write's 4-second model
        assert "large" not in outcome
    finally:
        thread.join(60)
    assert outcome["large"].status_code == 201, outcome["large"].text
    assert versions(db_url) == [("large.md", 1), ("tiny.md", 1)]


def test_a_retry_with_the_same_key_answers_the_first_response_and_writes_once(client, db_url):
    key = {"Idempotency-Key": "3f8a4c1e-retry-1"}
    first = client.post("/documents", json=document("a.md", "First text."), headers=key)
    assert first.status_code == 201 and "idempotent-replayed" not in first.headers
    # Meanwhile another request changes the document (version 2).
    assert client.post("/documents", json=document("a.md", "Second text.")).status_code == 201
    retry = client.post("/documents", json=document("a.md", "First text."), headers=key)
    assert retry.status_code == 201 and retry.headers["idempotent-replayed"] == "true"
    assert retry.json() == first.json()
    assert versions(db_url) == [("a.md", 1), ("a.md", 2)]  # not a third version with the first text
    # Keys are the principal's: the same key from another request is a mistake.
    other = client.post("/documents", json=document("b.md", "Another text."), headers=key)
    assert other.status_code == 422 and "Idempotency-Key" in other.json()["detail"], other.text
    assert versions(db_url) == [("a.md", 1), ("a.md", 2)]
    # The same request, reordered or reformatted, is the same request.
    body = '{"documents": [{"content": "# a.md\\n\\nFirst text.", "path": "a.md"}],   "scope": {"org_id": "acme"}}'
    again = client.post("/documents", content=body, headers=key | {"content-type": "application/json"})
    assert again.status_code == 201 and again.json() == first.json(), again.text


def test_concurrent_requests_with_one_key_write_once(client, db_url):
    key = {"Idempotency-Key": "concurrent-key"}
    services = client.app.state.services
    slow = SlowEmbedder(services.pipeline.embedders["prose"], seconds=1.5)
    services.pipeline.embedders["prose"] = slow
    responses: list = []

    def post() -> None:
        responses.append(client.post("/documents", json=document("c.md", "SLOW text, sent twice."), headers=key))

    threads = [threading.Thread(target=post) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert [r.status_code for r in responses] == [201, 201], [r.text for r in responses]
    assert responses[0].json() == responses[1].json()
    assert sorted(r.headers.get("idempotent-replayed", "") for r in responses) == ["", "true"]
    assert versions(db_url) == [("c.md", 1)]


def test_session_notes_take_an_idempotency_key(client, db_url):
    session = client.post("/sessions", json={"scope": {"org_id": "acme"}, "task": "take notes"}).json()["session_id"]
    key = {"Idempotency-Key": "note-1"}
    first = client.post(f"/sessions/{session}/notes", json={"text": "A note.", "path": "n.md"}, headers=key)
    assert first.status_code == 201, first.text
    client.post(f"/sessions/{session}/notes", json={"text": "Edited.", "path": "n.md"})
    retry = client.post(f"/sessions/{session}/notes", json={"text": "A note.", "path": "n.md"}, headers=key)
    assert retry.status_code == 201 and retry.headers["idempotent-replayed"] == "true"
    assert retry.json() == first.json() and retry.json()["version"] == 1
    assert versions(db_url) == [("n.md", 1), ("n.md", 2)]
    other = client.post(f"/sessions/{session}/notes", json={"text": "Another.", "path": "m.md"}, headers=key)
    assert other.status_code == 422, other.text


def test_a_replay_is_answered_only_to_a_key_that_may_make_the_write(client, db_url):
    """Keys are kept per principal; another API key of that principal, read-only or bound
    to other repos, gets the 403 the write itself would get, not the stored response."""
    from app.access import create_api_key

    with psycopg.connect(db_url) as conn:
        conn.execute("select service.ensure_scope('acme', 'elsewhere', null, null)")
        read_only = create_api_key(conn, "acme", "admin", read_only=True).token
        other_repo = create_api_key(conn, "acme", "admin", repos=["elsewhere"]).token
    key = {"Idempotency-Key": "admin-only"}
    body = document("r.md", "Written by the full key.")
    assert client.post("/documents", json=body, headers=key).status_code == 201
    for token in (read_only, other_repo):
        replay = client.post("/documents", json=body, headers=key | {"Authorization": f"Bearer {token}"})
        assert replay.status_code == 403 and "idempotent-replayed" not in replay.headers, replay.text
        # Nor does another request under the key tell such a key that the key was used.
        other = client.post(
            "/documents", json=document("s.md", "x"), headers=key | {"Authorization": f"Bearer {token}"}
        )
        assert other.status_code == 403, other.text
    assert versions(db_url) == [("r.md", 1)]


@pytest.mark.parametrize("key", ["", "x" * 256, "has space"])
def test_a_malformed_key_is_a_400(client, db_url, key):
    response = client.post("/documents", json=document("k.md", "Keyed."), headers={"Idempotency-Key": key})
    assert response.status_code == 400, response.text
    assert versions(db_url) == []


def test_a_write_that_waits_past_the_bound_for_the_model_gets_503_and_stores_nothing(bounded, db_url):
    """Chunking and embedding take turns too (one write per prepare thread): more writes
    than the model can embed waited in a queue without end (95 writers on 2 cores, 18 s at
    the median); the excess is now a 503 with Retry-After once the bound has passed."""
    services = bounded.app.state.services
    slow = SlowEmbedder(services.pipeline.embedders["prose"], seconds=4.0)
    services.pipeline.embedders["prose"] = slow
    outcomes: list = []
    large = [
        threading.Thread(
            target=lambda n=n: outcomes.append(bounded.post("/documents", json=document(f"large{n}.md", "SLOW text.")))
        )
        for n in range(services.settings.write_workers)
    ]
    for thread in large:
        thread.start()
    try:
        assert slow.embedding.wait(60), "no large write embedded"
        time.sleep(0.3)  # every prepare thread holds a large write now
        started = time.monotonic()
        tiny = post_within(bounded, 30, "/documents", document("tiny.md", "A tiny write meanwhile."))
        assert tiny is not None and tiny.status_code == 503, tiny and tiny.text
        assert time.monotonic() - started < 3.5  # the bound (1 s), not the large writes' model time
        assert tiny.headers["retry-after"] == "1" and "embedding model busy" in tiny.json()["detail"]
        assert "nothing was stored" in tiny.json()["detail"]
    finally:
        for thread in large:
            thread.join(60)
    assert [o.status_code for o in outcomes] == [201] * len(large)
    assert ("tiny.md", 1) not in versions(db_url)
    assert bounded.post("/documents", json=document("tiny.md", "A tiny write meanwhile.")).status_code == 201
