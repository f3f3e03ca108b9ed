"""HEAD on every GET endpoint: the GET's status and headers, no body.

RFC 9110 (9.1) asks every general-purpose server to support GET and HEAD; Litestar
routes HEAD only to handlers declared for it, so a HEAD was a 405 everywhere. A HEAD is
served here as its GET, whose body is dropped on the way out: monitors and caches that
probe with HEAD see what a GET would answer (a 404, a 401, a 405 with `Allow` where the
path takes no GET), at the cost of running the GET.
"""

from __future__ import annotations

from typing import Any

from litestar import Litestar
from litestar.types import Message, Send


class HeadServingLitestar(Litestar):
    """Litestar, with HEAD served as GET without its body."""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope.get("method") == "HEAD":
            scope = {**scope, "method": "GET"}
            send = _without_body(send)
        await super().__call__(scope, receive, send)


def _without_body(send: Send) -> Send:
    async def sending(message: Message) -> None:
        if message["type"] == "http.response.body":
            if not message.get("more_body", False):
                await send({"type": "http.response.body", "body": b"", "more_body": False})
            return
        await send(message)

    return sending
