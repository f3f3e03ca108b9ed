"""Bearer API keys: every operation acts for the principal of a key, checked (and its
principal bound) inside the operation's transaction. This reads the key out of an
`Authorization: Bearer <key>` header, as HTTP and MCP over HTTP both carry it."""

from __future__ import annotations

from app.operations.errors import Unauthorized

MAX_TOKEN_LENGTH = 256


def token_from_header(header: str | None) -> str:
    """The key of an `Authorization: Bearer <key>` header (HTTP API and /mcp alike)."""
    if not header:
        raise Unauthorized("missing Authorization header: send `Authorization: Bearer <API key>`")
    scheme, _, token = header.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise Unauthorized("the Authorization header must be `Bearer <API key>`")
    if len(token) > MAX_TOKEN_LENGTH or "\x00" in token:
        raise Unauthorized("invalid or revoked API key")
    return token
