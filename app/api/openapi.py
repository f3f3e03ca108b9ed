"""What the OpenAPI document promises beyond what Litestar infers: every error status
an endpoint answers (as problem+json), closed request objects, a public /health."""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Litestar
from litestar.openapi.datastructures import ResponseSpec

PROBLEM_JSON = "application/problem+json"

DESCRIPTIONS = {
    400: "Malformed or out-of-range input",
    401: "Missing, unknown or revoked API key",
    403: "A scope outside the key's grants",
    404: "Unknown (or not readable by this key)",
    408: "The request body was not received in time",
    409: "Conflicts with a concurrent or existing write",
    413: "Request body over the configured limit",
    415: "Only application/json is accepted",
    422: "A document was refused (binary, empty, too large, invalid path)",
    503: "The database is unreachable; retry after the Retry-After delay",
}


class Problem(msgspec.Struct, omit_defaults=True):
    """RFC 9457 problem details."""

    type: str
    title: str
    status: int
    detail: str
    instance: str | None = None
    sqlstate: str | None = None
    errors: list[dict[str, Any]] | None = None


def problem_response(description: str) -> ResponseSpec:
    return ResponseSpec(data_container=Problem, description=description, media_type=PROBLEM_JSON,
                        generate_examples=False)


def problems(*statuses: int) -> dict[int, ResponseSpec]:
    return {status: problem_response(DESCRIPTIONS[status]) for status in statuses}


READ_ERRORS = (400, 401, 404, 503)
BODY_ERRORS = (400, 401, 403, 408, 413, 415, 503)


def close_request_objects(app: Litestar, structs: list[type[msgspec.Struct]]) -> None:
    """Request structs refuse unknown fields; say so in the schema (Litestar does not)."""
    components = app.openapi_schema.components
    schemas = components.schemas if components is not None and components.schemas else {}
    names = {struct.__name__ for struct in structs}
    for key, schema in schemas.items():
        if key.split("_")[-1] in names or key in names:
            schema.additional_properties = False  # type: ignore[union-attr]
