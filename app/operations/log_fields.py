"""The fields of the current request's log line, as operations learn them (the key's
principal, its org, the trace id). A door that writes one line per request sets
`FIELDS` to a dict when the request starts (HTTP: app.api.request_log); worker threads
run in a copy of the request's context, which holds the same dict. Outside a request
(the CLI, MCP over stdio) noting is a no-op."""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

FIELDS: ContextVar[dict[str, Any] | None] = ContextVar("contexts_request_fields", default=None)


def note(**fields: Any) -> None:
    """Add fields to the current request's log line (no-op outside a request)."""
    current = FIELDS.get()
    if current is not None:
        current.update({k: v for k, v in fields.items() if v is not None})


def current_fields() -> dict[str, Any] | None:
    """The current request's log fields so far (None outside a request): `principal` is
    there once its key authenticated."""
    return FIELDS.get()
