"""contexts-client: a light, typed Python client of the Contexts HTTP API, sync
(`Client`) and async (`AsyncClient`), on httpx and msgspec only.

    from contexts_client import Client
    with Client("http://127.0.0.1:8000", key="ctx_...") as contexts:
        found = contexts.retrieve("how do we rotate the storage keys?", budget_tokens=2000)
        for fragment in found.fragments:
            print(fragment.source, fragment.text[:80])

Arguments, every method alike: what the call is about comes first and positionally (the
query, the task, the note's text, or the ids in the URL path); everything else is
keyword-only, `org_id` included (default: the key's own org). Every failure is a
`ContextsError` (errors.py), carrying `status` and the problem details.
"""

from . import types
from ._client import DEFAULT_TIMEOUT, AsyncClient, Client
from .errors import (
    BadRequest,
    BadResponse,
    Conflict,
    ContextsError,
    Forbidden,
    InvalidCall,
    NotFound,
    RateLimited,
    ServerError,
    ServiceError,
    TimedOut,
    Unauthorized,
    Unreachable,
)

__version__ = "0.1.0"
__all__ = [
    "DEFAULT_TIMEOUT",
    "AsyncClient",
    "BadRequest",
    "BadResponse",
    "Client",
    "Conflict",
    "ContextsError",
    "Forbidden",
    "InvalidCall",
    "NotFound",
    "RateLimited",
    "ServerError",
    "ServiceError",
    "TimedOut",
    "Unauthorized",
    "Unreachable",
    "types",
]
