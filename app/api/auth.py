"""Bearer API keys: every endpoint but /health needs `Authorization: Bearer <key>`.
The key is checked (and its principal bound) inside the request's transaction."""

from __future__ import annotations

from litestar import Request

from app.operations.auth import token_from_header
from app.operations.errors import Invalid


def bearer_token(request: Request) -> str:
    sent = request.headers.getall("authorization", [])
    if len(sent) > 1:
        # Which of two keys would count is a guess (two orgs' keys were served as the first).
        raise Invalid(f"the authorization header is sent {len(sent)} times: send it once")
    return token_from_header(sent[0] if sent else None)
