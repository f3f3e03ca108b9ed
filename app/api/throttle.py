"""Throttling failed authentication: a client address, or a key id, that has failed too
often is answered 429 with `Retry-After` instead of having more keys checked.

Every failed authentication (a response 401: no key, a malformed, unknown, revoked or
expired key, on every door: the HTTP API, MCP over HTTP, /metrics) counts against the
client's address and, when the token names one (`ctx_<key id>_<secret>`), against that
key id from any address. Once either has `auth_failures_per_client` or
`auth_failures_per_key` failures in the current window (`auth_failure_window`: second,
minute, hour or day, from its first failure), it is answered 429 until the window ends:
- a client address's requests before any key is looked up;
- a key id's requests only when their secret is wrong (the 401 they would get becomes the
  429). A key id is no secret (it opens every token, and `contexts key list` shows it),
  so refusing before the check let anyone lock a key's holder out with ten bad guesses a
  minute; a guess at its 256-bit secret is hopeless anyway, and the lock-out still tells
  a guesser nothing more.
Successful requests count nothing; a token that authenticated in the last day (in this
process) skips both checks, so a client behind the same address as an attacker keeps
working with a key it has used.

Litestar's RateLimitMiddleware (and its stores) does the bookkeeping: one fixed window per
identifier, timestamps kept in the app's store `auth_failures` (a MemoryStore per process
unless the app registers another, e.g. Redis, under that name to share counts between
processes). Its __call__ counts every request before it runs, which would throttle
successful traffic, so this subclass checks before the request and records after it,
only when the answer was 401: that part is written here, on its helpers.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict
from time import time as wall_time
from typing import TYPE_CHECKING, Any, Literal, cast

from litestar.exceptions import TooManyRequestsException
from litestar.middleware.base import DefineMiddleware
from litestar.middleware.rate_limit import DURATION_VALUES, CacheObject, RateLimitConfig, RateLimitMiddleware

from app.access import key_id_of
from app.operations.auth import MAX_TOKEN_LENGTH
from app.operations.log_fields import current_fields

if TYPE_CHECKING:
    from litestar.stores.base import Store
    from litestar.types import ASGIApp, Message, Receive, Scope, Send

    from app.settings import Settings

STORE = "auth_failures"
"""Name of the Litestar store holding the failure windows."""
TRUSTED_SECONDS = 86400.0
"""How long a token that authenticated is exempt from the lock-outs."""
TRUSTED_SIZE = 65536
"""Tokens remembered as having authenticated (SHA-256 digests, least recent dropped first)."""
EXCLUDE = ["^/health$", "^/schema"]
"""Paths that ask for no key: never refused (they never fail authentication either)."""


class TrustedTokens:
    """Digests of tokens that authenticated recently (bounded, expiring): only a
    successful authentication adds one, a failed one removes it."""

    def __init__(self, seconds: float = TRUSTED_SECONDS, size: int = TRUSTED_SIZE) -> None:
        self.seconds = seconds
        self.size = size
        self._until: OrderedDict[bytes, float] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def digest(token: str) -> bytes:
        return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()

    def add(self, digest: bytes) -> None:
        with self._lock:
            self._until[digest] = time.monotonic() + self.seconds
            self._until.move_to_end(digest)
            while len(self._until) > self.size:
                self._until.popitem(last=False)

    def discard(self, digest: bytes) -> None:
        with self._lock:
            self._until.pop(digest, None)

    def __contains__(self, digest: bytes) -> bool:
        with self._lock:
            until = self._until.get(digest)
            if until is None:
                return False
            if until < time.monotonic():
                del self._until[digest]
                return False
            return True


def bearer_of(scope: Scope) -> str | None:
    """The token of an `Authorization: Bearer` header, as app.operations.auth reads it (None:
    none, or not one a key could be)."""
    for name, value in scope.get("headers", ()):
        if name == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            token = token.strip()
            if scheme.lower() == "bearer" and token and len(token) <= MAX_TOKEN_LENGTH:
                return token
            return None
    return None


class FailedAuthenticationLimit(RateLimitMiddleware):
    """Counts 401s per client address and per key id; refuses with 429 once a window is
    full. `config.rate_limit` holds the per-client limit, `key_limit` the per-key one."""

    def __init__(self, app: ASGIApp, config: RateLimitConfig, key_limit: int, trusted: TrustedTokens) -> None:
        super().__init__(app, config)
        self.limits = {"client": self.max_requests, "key": key_limit}
        self.trusted = trusted

    def identifiers(self, scope: Scope, token: str | None) -> list[tuple[str, int]]:
        """(store key, limit) of each window this request counts in."""
        client = scope.get("client")
        found = [(f"{type(self).__name__}::client::{client[0] if client else 'unknown'}", self.limits["client"])]
        key_id = key_id_of(token) if token else None
        if key_id is not None:
            found.append((f"{type(self).__name__}::key::{key_id}", self.limits["key"]))
        return [(key, limit) for key, limit in found if limit > 0]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        store = self.config.get_store_from_app(scope["litestar_app"])
        token = bearer_of(scope)
        digest = TrustedTokens.digest(token) if token else None
        windows = [] if digest is not None and digest in self.trusted else self.identifiers(scope, token)
        locked_key: TooManyRequestsException | None = None
        if windows:
            async with self._lock:
                for key, limit in windows:
                    window = await self.retrieve_cached_history(key, store)
                    if len(window.history) >= limit:
                        refusal = _refusal(key, window)
                        if "::key::" not in key:
                            raise refusal
                        locked_key = refusal
        status: list[int] = []

        async def watching(message: Message) -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])
            if locked_key is not None and status and status[0] == 401:
                return  # a wrong secret for a locked key id: answered 429 below instead
            await send(message)

        await self.app(scope, receive, watching)
        if status and status[0] == 401:
            if digest is not None:
                self.trusted.discard(digest)
            if locked_key is not None:
                raise locked_key
            windows = windows or self.identifiers(scope, token)
            async with self._lock:
                for key, _ in windows:
                    await self.record_failure(key, store)
        elif digest is not None and (current_fields() or {}).get("principal"):
            self.trusted.add(digest)  # the key authenticated in this request

    async def record_failure(self, key: str, store: Store) -> None:
        window: CacheObject = await self.retrieve_cached_history(key, store)
        await self.set_cached_history(key=key, cache_object=window, store=store)


def _refusal(key: str, window: CacheObject) -> TooManyRequestsException:
    retry_after = max(1, window.reset - int(wall_time()))
    return TooManyRequestsException(
        detail=f"too many failed authentications from this {key.split('::')[1]}; retry in {retry_after} s",
        headers={"Retry-After": str(retry_after)},
    )


def auth_throttle(settings: Settings) -> DefineMiddleware:
    """The middleware with the limits of `settings` (0 for both: none)."""
    unit = cast("Literal['second', 'minute', 'hour', 'day']", settings.auth_failure_window)
    config = RateLimitConfig(
        rate_limit=(unit, settings.auth_failures_per_client),
        exclude=EXCLUDE,
        middleware_class=FailedAuthenticationLimit,
        set_rate_limit_headers=False,
        store=STORE,
    )
    kwargs: dict[str, Any] = {"config": config, "key_limit": settings.auth_failures_per_key, "trusted": TrustedTokens()}
    return DefineMiddleware(FailedAuthenticationLimit, **kwargs)


WINDOWS = tuple(DURATION_VALUES)
"""The window lengths Litestar's limiter knows."""
