"""Idempotency-Key on writes (POST /documents, POST /sessions/{id}/notes): a client that
timed out, or lost its connection, sends the same request with the same key again and
is answered what the first request did, and nothing is written twice (the key's
response is stored in the write's own transaction: sql/functions/37_idempotency.sql).
The same key with another request is a 422; keys are kept per org and principal for 24
hours (docs/writes.md). The header itself is the HTTP door's (app.api.idempotency)."""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import msgspec
import psycopg

from app.operations.errors import Unprocessable
from app.operations.services import Services
from app.wire.bodies import IngestResponse

T = TypeVar("T")


HEADER = "Idempotency-Key"


REPLAYED_HEADER = "Idempotent-Replayed"
"""Set to `true` on a response answered from an earlier request with the same key."""


KEY_PATTERN = r"^[!-~]{1,255}$"


class KeyTaken(Exception):
    """A concurrent request with the same key committed first: this one's write is
    rolled back, and it answers with the stored response."""


@dataclass(frozen=True, slots=True)
class IdempotentWrite:
    key: str
    request_hash: str
    respond: Callable[[IngestResponse], Any]
    """The door's response (a msgspec struct) made of the ingestion's, as stored."""
    target: tuple[str | None, str | None, str | None, str | None]
    """Where the write goes: org (None: the key's own), repo, persona, session. Keys are
    kept per principal, so a replay is answered only to an API key that may make this
    write itself (another key of the principal may be read-only, or bound to other repos)."""


def request_hash(door: str, request: object) -> str:
    """The digest a retry must match: the door (method, route, path parameters) and the
    decoded request, encoded with sorted keys (so whitespace or key order do not matter)."""
    encoded = msgspec.json.encode(request, order="sorted")
    return hashlib.sha256(door.encode("utf-8") + b"\0" + encoded).hexdigest()


def stored_response(conn: psycopg.Connection, write: IdempotentWrite) -> Any | None:
    """The response stored under the key (None: none within 24 hours); 422 when the key
    came with another request; first of all the write's own 401 / 403 for this API key."""
    conn.execute(
        "select service.authorize_write(coalesce(%s, (data.current_principal()).org_id), %s, %s, %s)", write.target
    )
    row = conn.execute("select request_hash, response from service.idempotent_response(%s)", (write.key,)).fetchone()
    if row is None:
        return None
    if row[0] != write.request_hash:
        raise Unprocessable(
            f"{HEADER} {write.key!r} was used with another request in the last 24 hours: "
            "a retry must repeat the request exactly; a new request needs a new key"
        )
    return row[1]


def remember(conn: psycopg.Connection, write: IdempotentWrite, response: IngestResponse) -> None:
    """Store the door's response under the key, in the write's transaction (KeyTaken
    when a request with the key committed meanwhile: roll this write back)."""
    body = msgspec.json.encode(write.respond(response)).decode("utf-8")
    row = conn.execute(
        "select service.idempotent_record(%s, %s, 201, %s::jsonb)", (write.key, write.request_hash, body)
    ).fetchone()
    if row is None or not row[0]:
        raise KeyTaken(write.key)


async def once(
    services: Services,
    token: str,
    write: IdempotentWrite | None,
    kind: type[T],
    run: Callable[[], Awaitable[T]],
) -> tuple[T, bool]:
    """Run the write once per key: (its response, False), or (the response stored under
    the key, True) when a request with the key was answered before."""
    if write is None:
        return await run(), False

    def lookup() -> Any | None:
        with services.auth.acting_for(token) as conn:
            stored = stored_response(conn, write)
            conn.rollback()  # authorize_write may open a session: the write does that, not the look-up
            return stored

    stored = await services.runtime.read(lookup)
    if stored is None:
        try:
            return await run(), False
        except KeyTaken:
            stored = await services.runtime.read(lookup)
            if stored is None:  # it committed moments ago; it is there now or never was
                raise
    return msgspec.convert(stored, kind), True
