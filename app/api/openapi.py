"""What the OpenAPI document promises beyond what Litestar infers: every error status
an endpoint answers (as problem+json) with the headers it carries, closed request
objects, bounds of zero, a public /health. tests/api/test_openapi_conformance.py holds
the served document to what the endpoints do."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import msgspec
from litestar import Litestar
from litestar._openapi.plugin import OpenAPIPlugin
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import OpenAPI, OpenAPIHeader, OpenAPIType, Reference, Schema

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
    429: "Too many failed authentications from this client or for this key id; retry after Retry-After",
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
    hint: str | None = None
    """What to do instead, where the refusal says it."""


def problem_response(description: str) -> ResponseSpec:
    return ResponseSpec(
        data_container=Problem, description=description, media_type=PROBLEM_JSON, generate_examples=False
    )


def problems(*statuses: int) -> dict[int, ResponseSpec]:
    return {status: problem_response(DESCRIPTIONS[status]) for status in statuses}


READ_ERRORS = (400, 401, 404, 503)
BODY_ERRORS = (400, 401, 403, 408, 413, 415, 503)


PROBLEM_HEADERS = {
    401: {
        "WWW-Authenticate": OpenAPIHeader(
            schema=Schema(type=OpenAPIType.STRING), required=True, description='`Bearer realm="contexts"`'
        )
    },
    503: {
        "Retry-After": OpenAPIHeader(
            schema=Schema(type=OpenAPIType.STRING, pattern="^[0-9]+$"),
            required=True,
            description="Seconds to wait before retrying",
        )
    },
}
PROBLEM_HEADERS[429] = PROBLEM_HEADERS[503]
"""Headers errors.problem() sets on every response of these statuses (429: the throttle's,
app/api/throttle.py)."""

BOUNDS = {"gt": "exclusive_minimum", "ge": "minimum", "lt": "exclusive_maximum", "le": "maximum"}


def _components(app: Litestar, structs: list[type[msgspec.Struct]]) -> dict[type[msgspec.Struct], Schema]:
    components = app.openapi_schema.components
    schemas = components.schemas if components is not None and components.schemas else {}
    by_name = {struct.__name__: struct for struct in structs}
    found = {}
    for key, schema in schemas.items():
        struct = by_name.get(key) or by_name.get(key.split("_")[-1])
        if struct is not None and isinstance(schema, Schema):
            found[struct] = schema
    return found


def close_request_objects(app: Litestar, structs: list[type[msgspec.Struct]]) -> None:
    """Request structs refuse unknown fields; say so in the schema (Litestar does not)."""
    for schema in _components(app, structs).values():
        schema.additional_properties = False


def _field_types(
    app: Litestar, structs: list[type[msgspec.Struct]]
) -> Iterator[tuple[Schema, tuple[msgspec.inspect.Type, ...]]]:
    """Each documented property of the structs, with the types its field admits (the
    members of a union, or the one type): what Litestar's schema lost is read from them."""
    for struct, schema in _components(app, structs).items():
        info = msgspec.inspect.type_info(struct)
        assert isinstance(info, msgspec.inspect.StructType)
        for field in info.fields:
            prop = (schema.properties or {}).get(field.encode_name)
            if isinstance(prop, Schema):
                types = field.type.types if isinstance(field.type, msgspec.inspect.UnionType) else (field.type,)
                yield prop, types


def restore_zero_bounds(app: Litestar, structs: list[type[msgspec.Struct]]) -> None:
    """Litestar drops a bound that is zero (`gt=0`) on an optional number: put it back,
    so the document says `freshness_halflife_days` must be above 0, as the struct does."""
    for prop, types in _field_types(app, structs):
        for t in types:
            if isinstance(t, (msgspec.inspect.IntType, msgspec.inspect.FloatType)):
                for bound, key in BOUNDS.items():
                    value = getattr(t, bound)
                    if value is not None and getattr(prop, key) is None:
                        setattr(prop, key, value)


def restore_item_patterns(app: Litestar, structs: list[type[msgspec.Struct]]) -> None:
    """Litestar drops the pattern of a list's items (`kinds: list[Kind] | None`): put it
    back, so the document refuses what the struct refuses."""
    for prop, types in _field_types(app, structs):
        for t in types:
            if not isinstance(t, msgspec.inspect.ListType) or not isinstance(t.item_type, msgspec.inspect.StrType):
                continue
            pattern = t.item_type.pattern
            for variant in (prop, *(prop.one_of or ())):
                if isinstance(variant, Schema) and isinstance(variant.items, Schema) and pattern:
                    variant.items.pattern = pattern


def restore_item_bounds(app: Litestar, structs: list[type[msgspec.Struct]]) -> None:
    """Litestar drops the bounds of a list's numeric items (`fragment_ids: list[JsonId]`,
    ids from 1): put them back, so the document refuses an id of 0 as the struct does."""
    for prop, types in _field_types(app, structs):
        for t in types:
            if not isinstance(t, msgspec.inspect.ListType):
                continue
            item = t.item_type
            if not isinstance(item, (msgspec.inspect.IntType, msgspec.inspect.FloatType)):
                continue
            for variant in (prop, *(prop.one_of or ())):
                if isinstance(variant, Schema) and isinstance(variant.items, Schema):
                    for bound, key in BOUNDS.items():
                        value = getattr(item, bound)
                        if value is not None and getattr(variant.items, key) is None:
                            setattr(variant.items, key, value)


def forbid_empty_retrieval(app: Litestar, request: type[msgspec.Struct]) -> None:
    """RetrieveRequest refuses k_lexical and k_dense both 0 (nothing would be retrieved)."""
    for schema in _components(app, [request]).values():
        schema.schema_not = Schema(
            required=["k_lexical", "k_dense"],
            properties={"k_lexical": Schema(const=0), "k_dense": Schema(const=0)},
            description="k_lexical and k_dense are not both 0",
        )


def require_one_of(app: Litestar, request: type[msgspec.Struct], names: tuple[str, ...]) -> None:
    """The struct refuses a body in which every one of `names` is empty (a list) or null
    (anything else): say that at least one is not (`anyOf`), so that the document does not
    allow what is refused (a rule without globs, a Context version from nothing)."""
    info = msgspec.inspect.type_info(request)
    assert isinstance(info, msgspec.inspect.StructType)
    fields = {field.encode_name: field.type for field in info.fields}
    branches = []
    for name in names:
        kind = fields[name]
        types = kind.types if isinstance(kind, msgspec.inspect.UnionType) else (kind,)
        if any(isinstance(t, msgspec.inspect.ListType) for t in types):
            branches.append(Schema(required=[name], properties={name: Schema(min_items=1)}))
        else:
            branches.append(
                Schema(required=[name], properties={name: Schema(schema_not=Schema(type=OpenAPIType.NULL))})
            )
    for schema in _components(app, [request]).values():
        schema.any_of = branches
        schema.description = ((schema.description or "") + f" At least one of {', '.join(names)} is given.").strip()


def declare_problem_headers(app: Litestar) -> None:
    """Litestar's ResponseSpec has no headers: add those problem() sends to each response."""
    for path_item in (app.openapi_schema.paths or {}).values():
        for method in ("get", "put", "post", "delete", "options", "head", "patch", "trace"):
            operation = getattr(path_item, method, None)
            if operation is None:
                continue
            for status, response in (operation.responses or {}).items():
                headers = PROBLEM_HEADERS.get(int(status))
                if headers and not isinstance(response, Reference):
                    response.headers = {**(response.headers or {}), **headers}


def declare_throttle(app: Litestar) -> None:
    """Every operation that may answer 401 may also answer 429: failed authentications
    are throttled (app/api/throttle.py). Call before declare_problem_headers."""
    for path_item in (app.openapi_schema.paths or {}).values():
        for method in ("get", "put", "post", "delete", "options", "head", "patch", "trace"):
            operation = getattr(path_item, method, None)
            responses = operation.responses if operation is not None else None
            unauthorized = (responses or {}).get("401")
            if responses is None or unauthorized is None or isinstance(unauthorized, Reference):
                continue
            throttled = copy.deepcopy(unauthorized)
            throttled.description = DESCRIPTIONS[429]
            throttled.headers = None
            responses["429"] = throttled


_DOCUMENT: list[OpenAPI] = []
"""The finished document of the first application this process built (remember_document)."""


def remember_document(app: Litestar) -> None:
    """Keep `app`'s finished document for every later application of this process.

    Building it (Litestar's schema generation, then the corrections above) is about 60% of
    create_app, which the test suite calls once per test that serves the API (hundreds).
    The document depends only on the code: the routes, their structs and the constant
    OpenAPI configuration, never the settings (tests/api/test_openapi_conformance.py
    checks that applications built with other settings document the same)."""
    _DOCUMENT[:] = [app.openapi_schema]


def reuse_document(app: Litestar) -> bool:
    """Give `app` the remembered document, if there is one; False: build it."""
    if not _DOCUMENT:
        return False
    # Litestar (2.x) has no public setter: its plugin builds the document on first use
    # and keeps it in `_openapi`, a slot (a renamed one raises here instead of silently
    # building an uncorrected document).
    app.plugins.get(OpenAPIPlugin)._openapi = _DOCUMENT[0]
    return True
