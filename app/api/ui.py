"""GET /ui: the trace page, a few static files that explain a retrieval in a browser
(docs/adr/0011). The files load without a key; every call they make for data sends
the key the user entered, as any other client does, to the JSON endpoints.

/ui/traces/{id} and /ui/fragments/{id} serve the same page (deep links: the script
reads the path). The page is not part of the API, so it is left out of the OpenAPI
document, as Swagger UI's own assets are."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import msgspec
from litestar import Response, Router, route
from litestar.enums import HttpMethod
from litestar.exceptions import NotFoundException
from litestar.params import FromPath

UI_DIR = Path(__file__).resolve().parent.parent / "ui"
"""Shipped as package data (pyproject.toml): no build step, no CDN."""

ASSETS = {"ui.js": "text/javascript", "ui.css": "text/css"}
"""Every file the page loads besides itself; any other name is a 404. (Litestar adds
`; charset=utf-8` to a text/ media type: naming it here too sent it twice.)"""
GET_AND_HEAD = [HttpMethod.GET, HttpMethod.HEAD]
"""HEAD answers as GET without the body (link checkers, proxies, `curl -I`)."""

CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "connect-src 'self'",
        "img-src 'self'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
    )
)
"""Only the page's own script and style run, only the service is called; inline
scripts, inline handlers (`onerror=`), eval and other origins' resources are refused."""

SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-cache",
}


@cache
def _read(name: str) -> bytes:
    return (UI_DIR / name).read_bytes()


def _page() -> Response[bytes]:
    return Response(_read("index.html"), media_type="text/html", headers=SECURITY_HEADERS)


@route("/", http_method=GET_AND_HEAD, include_in_schema=False, name="ui")
async def ui_page() -> Response[bytes]:
    """The search box and, after a search, its trace."""
    return _page()


@route("/traces/{trace_id:str}", http_method=GET_AND_HEAD, include_in_schema=False)
async def ui_trace() -> Response[bytes]:
    """One trace (the script reads its id from the path and asks GET /traces/{id})."""
    return _page()


@route("/fragments/{fragment_id:str}", http_method=GET_AND_HEAD, include_in_schema=False)
async def ui_fragment() -> Response[bytes]:
    """One fragment and its sources (the script asks GET /fragments/{id})."""
    return _page()


@route("/assets/{name:str}", http_method=GET_AND_HEAD, include_in_schema=False)
async def ui_asset(name: FromPath[str]) -> Response[bytes]:
    media_type = ASSETS.get(name)
    if media_type is None:
        raise NotFoundException(f"no such file: {name}")
    return Response(_read(name), media_type=media_type, headers=SECURITY_HEADERS)


@cache
def _glossary() -> bytes:
    from app.retrieve.features import MEANINGS

    return msgspec.json.encode({"features": MEANINGS})


@route("/glossary.json", http_method=GET_AND_HEAD, include_in_schema=False)
async def ui_glossary() -> Response[bytes]:
    """What each of the learned reranker's features says about a candidate, in words
    (app.retrieve.features.MEANINGS): the page shows it beside each contribution and
    under the tables. Public, as the page is: names and meanings, no data."""
    return Response(_glossary(), media_type="application/json", headers=SECURITY_HEADERS)


@route("/favicon.ico", http_method=GET_AND_HEAD, include_in_schema=False, status_code=204)
async def favicon() -> Response[None]:
    """Browsers ask for it on every page: no icon, said once a day, instead of a 404."""
    return Response(None, status_code=204, headers={"Cache-Control": "public, max-age=86400"})


ui_router = Router(path="/ui", route_handlers=[ui_page, ui_trace, ui_fragment, ui_asset, ui_glossary])
