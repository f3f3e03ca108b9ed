"""One structured log line per HTTP request: method, path, status, latency, principal,
org, scope and trace id, as JSON. Query text and document content never appear at
info level (a query can hold what its asker may not share); at debug it may.

The fields are a dict in a context variable (app.operations.log_fields) set by the
middleware: worker threads run in a copy of the request's context, which holds the same
dict, so what the operations learn there (the key's principal, the trace id) reaches the
line written when the response ends."""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from litestar.types import ASGIApp, Message, Receive, Scope, Send

from app.api.errors import logged_status
from app.operations.log_fields import FIELDS

log = logging.getLogger("contexts.request")


def request_log_middleware(app: ASGIApp) -> ASGIApp:
    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        # The path as requested: a mounted app's scope (/mcp) holds only what follows the
        # mount, and its raw path (the request line's, still %-escaped) the whole of it.
        raw = scope.get("raw_path")
        path = raw.decode("latin-1") if raw else scope["path"]
        fields: dict[str, Any] = {"method": scope.get("method"), "path": path}
        token = FIELDS.set(fields)
        started = time.perf_counter()

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                fields["status"] = message["status"]
            await send(message)

        try:
            await app(scope, receive, sending)
        except BaseException as exc:
            # Answered by Litestar's handler outside this middleware (a 429 of the
            # authentication throttle, a 400 of a body the server could not parse):
            # logged with the status that handler sends, not as a 500.
            fields.setdefault("status", logged_status(exc))
            raise
        finally:
            fields["ms"] = round((time.perf_counter() - started) * 1000, 1)
            fields.setdefault("status", 500)
            log.info("request", extra={"fields": fields})
            FIELDS.reset(token)

    return middleware


class JsonFormatter(logging.Formatter):
    """A JSON object per line: time (UTC), level, logger, message, structured fields."""

    converter = staticmethod(time.gmtime)

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": self.formatTime(record, "%Y-%m-%dT%H:%M:%S") + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        entry.update(getattr(record, "fields", {}))
        if record.exc_info:
            entry["error"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


def logging_config(level: str = "info") -> dict[str, Any]:
    """For uvicorn's `log_config`: the service's and uvicorn's own records as JSON lines
    on stderr (uvicorn's access log is off: the request line above replaces it)."""
    handler = {"class": "logging.StreamHandler", "formatter": "json", "stream": "ext://sys.stderr"}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": f"{__name__}.JsonFormatter"}},
        "handlers": {"stderr": handler},
        "loggers": {
            **{
                name: {"handlers": ["stderr"], "level": level.upper(), "propagate": False}
                for name in ("contexts", "uvicorn", "uvicorn.error")
            },
            # The MCP SDK logs every message at info; the request line already says it.
            "mcp": {"handlers": ["stderr"], "level": "WARNING", "propagate": False},
        },
    }
