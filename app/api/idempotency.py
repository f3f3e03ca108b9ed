"""Idempotency-Key on writes (POST /documents, POST /sessions/{id}/notes): a client that
timed out, or lost its connection, sends the same request with the same key again and
is answered what the first request did, and nothing is written twice (the key's
response is stored in the write's own transaction: sql/functions/37_idempotency.sql).
The same key with another request is a 422; keys are kept per org and principal for 24
hours (docs/writes.md). The rule is app.operations.idempotency; here, its HTTP header
as a parameter and in the OpenAPI document."""

from __future__ import annotations

from typing import Annotated

from litestar.datastructures import ResponseHeader
from litestar.params import HeaderParameter

from app.operations.idempotency import HEADER, KEY_PATTERN, REPLAYED_HEADER

REPLAYED_RESPONSE_HEADER = ResponseHeader(
    name=REPLAYED_HEADER,
    documentation_only=True,
    required=False,
    description="`true`: the response of an earlier request with the same Idempotency-Key (nothing was written now).",
)


IdempotencyKey = Annotated[
    str | None,
    HeaderParameter(
        name=HEADER,
        pattern=KEY_PATTERN,
        min_length=1,
        max_length=255,
        required=False,
        description=(
            "Any unique string of 1 to 255 visible ASCII characters (a UUID): a retry with the same key and "
            "request is answered the first response (with `Idempotent-Replayed: true`) and writes nothing; "
            "the same key with another request is a 422. Kept 24 hours per principal."
        ),
    ),
]
