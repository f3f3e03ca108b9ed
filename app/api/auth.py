"""Bearer API keys: every endpoint but /health needs `Authorization: Bearer <key>`.
The key is checked (and its principal bound) inside the request's transaction."""

from __future__ import annotations

from litestar import Request
from litestar.exceptions import ValidationException

from app.api.errors import path_of
from app.api.request_checks import strict_body_errors
from app.operations.auth import token_from_header
from app.operations.errors import Invalid


async def bearer_token(request: Request) -> str:
    """The key, then the body's JSON types checked strictly: after the key, as Litestar
    validates a body only once the key's header was read (a request without one is a 401
    whatever its body)."""
    sent = request.headers.getall("authorization", [])
    if len(sent) > 1:
        # Which of two keys would count is a guess (two orgs' keys were served as the first).
        raise Invalid(f"the authorization header is sent {len(sent)} times: send it once")
    token = token_from_header(sent[0] if sent else None)
    errors = await strict_body_errors(request)
    if errors:
        raise ValidationException(f"Validation failed for {request.method} {path_of(request)}", extra=errors)
    return token
