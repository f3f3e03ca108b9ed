"""Duplicates a caller made (a name taken, a pin made twice): retrying never helps, so
every door says what is taken instead of PostgreSQL's words, which name an index."""

from __future__ import annotations

import psycopg

DUPLICATE_DETAIL = {
    "contexts_live_name": "a live Context of that name exists in this scope: choose another name, or retire that one",
    "pins_identity": "that fragment is already pinned to this scope",
    "context_subscriptions_live": "that subscriber already holds a live subscription to this version of the Context",
    "context_rules_name": "a workflow rule of that name exists in this scope: choose another name",
}
"""Unique indexes whose violation is the caller's duplicate, by index name."""


def duplicate_detail(exc: psycopg.Error) -> str | None:
    """What is taken, for a unique violation of one of those indexes; None otherwise."""
    if exc.sqlstate != "23505":
        return None
    return DUPLICATE_DETAIL.get(exc.diag.constraint_name or "")
