"""Bearer API keys: every endpoint but /health needs `Authorization: Bearer <key>`.
The key is checked (and its principal bound) inside the request's transaction."""

from __future__ import annotations

from litestar import Request
from litestar.exceptions import NotAuthorizedException

MAX_TOKEN_LENGTH = 256


def bearer_token(request: Request) -> str:
    return token_from_header(request.headers.get("authorization"))


def token_from_header(header: str | None) -> str:
    """The key of an `Authorization: Bearer <key>` header (HTTP API and /mcp alike)."""
    if not header:
        raise NotAuthorizedException("missing Authorization header: send `Authorization: Bearer <API key>`")
    scheme, _, token = header.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise NotAuthorizedException("the Authorization header must be `Bearer <API key>`")
    if len(token) > MAX_TOKEN_LENGTH or "\x00" in token:
        raise NotAuthorizedException("invalid or revoked API key")
    return token
