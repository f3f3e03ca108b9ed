"""Bearer API keys: every endpoint but /health needs `Authorization: Bearer <key>`.
The key is checked (and its principal bound) inside the request's transaction."""

from __future__ import annotations

from litestar import Request

from app.operations.auth import token_from_header


def bearer_token(request: Request) -> str:
    return token_from_header(request.headers.get("authorization"))
