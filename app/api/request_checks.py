"""Checks every request passes before its handler reads it (Litestar's `before_request`):
what the request line and headers say must be what the handler will understand, or the
client is told at once, with a problem, instead of being answered as if it had asked
something else.

- A body is read only as JSON in UTF-8 (RFC 8259 8.1): another media type is a 415, and
  so is a `charset` other than UTF-8 (a `charset=latin-1` body was read as UTF-8). A
  POST to an action that reads no body may send none, with no Content-Type; a body it
  would ignore (anything but `{}` or `null`) is a 400.
- A query string or path whose percent-encoding is not UTF-8 (`owner=%FF`) is a 400: it
  was decoded with U+FFFD in place of the bytes, and matched nothing or the wrong thing.
- A query parameter the endpoint does not declare (`/documents?ownr=x`) is a 400 that
  names it and the ones that exist: it was ignored, and the answer looked like one to
  the question the client meant.
"""

from __future__ import annotations

import json
import re
from urllib.parse import unquote_to_bytes

import msgspec
from litestar import Litestar, Request, Response
from litestar.exceptions import ValidationException
from litestar.routes import HTTPRoute

from app.api.errors import path_of, problem
from app.operations.auth import token_from_header
from app.operations.errors import Unauthorized
from app.readable import repeated_key

UTF8_CHARSETS = frozenset({"utf-8", "utf8", "us-ascii", "ascii"})
"""The charsets a JSON body may declare (US-ASCII is a subset of UTF-8)."""
QUERY_NAMES = "contexts.query_names"
"""The key in a documented handler's `opt`: the query parameters it declares."""
QUERY_LISTS = "contexts.query_lists"
"""The key in its `opt` for those of them that take several values (`?kind=a&kind=b`)."""


def declare_query_names(app: Litestar) -> None:
    """Record, on each documented handler, the query parameters it reads (Litestar
    resolves them, aliases and dependencies included, into the route's kwargs model).
    Pages, assets and the docs are left out: a cache-busting `?v=` must not break them."""
    path = app.openapi_config.path if app.openapi_config is not None else None
    docs = path.rstrip("/") if path else None
    for route in app.routes:
        if not isinstance(route, HTTPRoute) or (docs and (route.path == docs or route.path.startswith(docs + "/"))):
            continue
        for handler, kwargs_model in route.route_handler_map.values():
            if handler.include_in_schema is False:
                continue
            handler.opt[QUERY_NAMES] = frozenset(
                parameter.field_alias for parameter in kwargs_model.expected_query_params
            )
            handler.opt[QUERY_LISTS] = frozenset(
                parameter.field_alias for parameter in kwargs_model.expected_query_params if parameter.is_sequence
            )


async def check_request(request: Request) -> Response | None:
    found = (
        host_problem(request)
        or docs_page_problem(request)
        or repeated_header_problem(request)
        or encoding_problem(request)
        or unknown_query_problem(request)
        or body_type_problem(request)
        or await unread_body_problem(request)
    )
    if found is None:
        await strict_body_check(request)
    return found


SINGLE_HEADERS = (b"authorization", b"idempotency-key", b"content-type")
"""Headers a request states once: with two, which one counts is a guess (two keys of
different orgs were served as the first)."""


def repeated_header_problem(request: Request) -> Response | None:
    names = [name.lower() for name, _ in request.scope["headers"]]
    for name in SINGLE_HEADERS:
        if names.count(name) > 1:
            return problem(400, f"the {name.decode()} header is sent {names.count(name)} times: send it once", request)
    return None


AT = re.compile(r"^(?P<message>.*?)(?: - at `\$\.?(?P<key>[^`]*)`)?$", re.DOTALL)


async def strict_body_check(request: Request) -> None:
    """A JSON body whose values are of another JSON type than their fields' is refused:
    Litestar converts the whole of a handler's arguments leniently (query strings need it),
    so `"5"` for an integer, `"true"` or 1 for a boolean and a number for a time were served
    as something the client did not send. Decoded once more, strictly, against the handler's
    body type; raised as Litestar's own ValidationException, so the problem reads as its
    (`errors` with `message`, `key`, `source`). Left alone: a request without a usable key
    (the key dependency's 401 comes first, as it does before Litestar's own body check) and
    malformed JSON (Litestar's 400 says where)."""
    if request.method not in ("POST", "PUT", "PATCH") or not _reads_body(request):
        return
    try:
        token_from_header(request.headers.get("authorization"))
    except Unauthorized:
        return
    body = await request.body()
    if not body.strip():
        return
    wanted = request.route_handler.parsed_fn_signature.parameters["data"].annotation
    try:
        msgspec.json.decode(body, type=wanted, strict=True)
    except msgspec.ValidationError as exc:
        found = AT.match(str(exc))
        error = {
            "message": found.group("message") if found else str(exc),
            "key": (found.group("key") if found else None) or "data",
            "source": "body",
        }
        raise ValidationException(f"Validation failed for {request.method} {path_of(request)}", extra=[error]) from None
    except (msgspec.DecodeError, RecursionError):
        return  # malformed JSON: Litestar's own 400 says where
    repeated = repeated_key(body)
    if repeated is not None:
        error = {"message": f"the key {repeated!r} is given twice in one object: give it once", "key": repeated}
        raise ValidationException(
            f"Validation failed for {request.method} {path_of(request)}", extra=[error | {"source": "body"}]
        )


async def unread_body_problem(request: Request) -> Response | None:
    """An action that reads no body (POST .../accept, every DELETE) refuses one it would
    ignore: a client sending fields there believes they count (`DELETE /profiles?org_id=`
    with {"persona_id": ...} deleted the org's profile, not the persona's). An empty JSON
    object or null is what some clients send for "nothing", and is taken as nothing."""
    if request.method not in ("POST", "PUT", "PATCH", "DELETE") or _reads_body(request):
        return None
    body = (await request.body()).strip()
    try:
        if not body or json.loads(body) in ({}, None):
            return None
    except ValueError:
        pass
    return problem(400, f"{request.method} {path_of(request)} takes no body: send none (or {{}})", request)


def _reads_body(request: Request) -> bool:
    return "data" in request.route_handler.parsed_fn_signature.parameters


def body_type_problem(request: Request) -> Response | None:
    if request.method not in ("POST", "PUT", "PATCH"):
        return None
    empty = request.headers.get("content-length") == "0" or (
        "content-length" not in request.headers and "transfer-encoding" not in request.headers
    )
    reads_body = _reads_body(request)
    if empty and not reads_body:
        return None  # an action that takes no body (POST .../accept) is sent none
    detail = json_body_problem(request.headers.get("content-type", ""))
    if detail is not None:
        return problem(415, detail, request)
    if empty and reads_body:
        # Litestar's own message for it was its parameter's name, quoted: 'data'.
        return problem(400, f"{request.method} {path_of(request)} needs a JSON body", request)
    return None


def json_body_problem(content_type: str) -> str | None:
    """Why a body of this Content-Type is refused (None: JSON in UTF-8, or no charset
    said), for every door that reads JSON (/mcp too): the 415's detail."""
    if content_type.partition(";")[0].strip().lower() != "application/json":
        return "send the body as application/json"
    for parameter in content_type.split(";")[1:]:
        name, _, value = parameter.partition("=")
        charset = value.strip().strip('"')
        if name.strip().lower() == "charset" and charset.lower() not in UTF8_CHARSETS:
            return (
                f"a JSON body is read as UTF-8 only (RFC 8259), not charset={charset}: "
                "encode it as UTF-8 and send charset=utf-8 or no charset"
            )
    return None


HOST = re.compile(r"(?:\[[0-9A-Fa-f:.]+\]|[^:\[\]]*)(?::(?P<port>[^:]*))?")


def docs_page_problem(request: Request) -> Response | None:
    """A page the API docs do not have (`/schema/redoc`): Litestar answers it with an
    HTML page of its own; every other unknown path gets problem details, so this does."""
    config = request.app.openapi_config
    if config is None or not config.path:
        return None
    base = config.path.rstrip("/")
    path = request.scope["path"]
    if not path.startswith(base + "/"):
        return None
    page = path[len(base) :]
    served = {p for plugin in config.render_plugins for p in plugin.paths} | {"/", "/openapi.json"}
    if page in served or page.startswith("/assets/"):
        return None
    return problem(404, f"the API docs have no page {page}: they are at {base} and {base}/openapi.json", request)


def host_problem(request: Request) -> Response | None:
    """A Host header whose port is not a number from 0 to 65535 (`x:abc`, `x:-1`,
    `[::1]:abc`) is refused, as docs/http.md says; it was served as if it had none."""
    host = request.headers.get("host")
    if host is None:
        return None
    found = HOST.fullmatch(host)
    port = found.group("port") if found else ""
    if found and (not port or (port.isascii() and port.isdigit() and len(port) <= 5 and int(port) <= 65535)):
        return None
    return problem(400, "the host header's port is not a number from 0 to 65535", request)


URL_CONTROLS = {"path": re.compile(rb"[\x00-\x1f\x7f]"), "query string": re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")}
"""Control characters a path or a query string may not hold once percent-decoded (a tab
may stand in a query value): every pattern of an id ends in `$`, which Python lets match
before a final newline, so `/fragments/1%0A` read fragment 1 and `?org_id=acme%0A` was
taken for an org named with a newline."""


def encoding_problem(request: Request) -> Response | None:
    raw_path = request.scope.get("raw_path") or b""
    for part, raw in (("path", raw_path), ("query string", request.scope.get("query_string") or b"")):
        decoded = unquote_to_bytes(raw.replace(b"+", b" "))
        try:
            decoded.decode("utf-8")
        except UnicodeDecodeError as error:
            return problem(
                400,
                f"the {part} is not UTF-8 once percent-decoded (byte {error.object[error.start]:#04x}): "
                "percent-encode the UTF-8 bytes of each character",
                request,
            )
        control = URL_CONTROLS[part].search(decoded)
        if control is not None:
            return problem(
                400,
                f"the {part} holds a control character once percent-decoded (%{control.group()[0]:02X}): "
                "ids and values hold none",
                request,
            )
    return None


def unknown_query_problem(request: Request) -> Response | None:
    known = request.route_handler.opt.get(QUERY_NAMES)
    if known is None:
        return None
    unknown = sorted(set(request.query_params) - known)
    if not unknown:
        # A repeated one that takes one value: the last one won, where a proxy or a
        # filter before this service may have read the first (`?org_id=a&org_id=b`).
        lists = request.route_handler.opt.get(QUERY_LISTS, frozenset())
        for name in sorted(set(request.query_params) - lists):
            given = len(request.query_params.getall(name))
            if given > 1:
                return problem(400, f"query parameter {name!r} is given {given} times: give it once", request)
        return None
    names = ", ".join(repr(name) for name in unknown)
    accepted = ", ".join(sorted(known)) or "none"
    return problem(
        400,
        f"unknown query parameter{'s' if len(unknown) > 1 else ''} {names}; this endpoint accepts: {accepted}",
        request,
    )
