"""Who a transaction acts for: API keys (made here, stored only as SHA-256) and the
binding of a principal to the current transaction, which row-level security reads."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import psycopg

SERVICE_ROLE = "contexts_service"
"""Group role of the API service: owns no table, is not a superuser, reads under RLS."""
TOKEN_PREFIX = "ctx_"


@dataclass(frozen=True, slots=True)
class NewKey:
    key_id: str
    token: str
    """Shown once; only its hash is stored."""


def key_hash(token: str) -> bytes:
    # A high-entropy random token needs no slow hash: SHA-256 resists preimages, and
    # Postgres recomputes it with sha256() to look the key up by an index.
    return hashlib.sha256(token.encode("utf-8")).digest()


def create_api_key(
    conn: psycopg.Connection,
    org_id: str,
    principal_id: str,
    label: str = "",
    *,
    expires_at: datetime | None = None,
    read_only: bool = False,
    repos: Sequence[str] | None = None,
) -> NewKey:
    """A new key for the principal. `expires_at`: when it stops authenticating (None:
    never); `read_only`: it writes nothing; `repos`: the only repos it reaches (None: all
    its principal's grants cover). Its effective grants are its principal's intersected
    with these (data._acl)."""
    key_id = secrets.token_hex(6)
    token = f"{TOKEN_PREFIX}{key_id}_{secrets.token_urlsafe(32)}"
    conn.execute(
        "select service.create_api_key(%s, %s, %s, %s, %s, %s, %s, %s)",
        (
            org_id,
            principal_id,
            key_id,
            key_hash(token),
            label,
            expires_at,
            read_only,
            None if repos is None else list(repos),
        ),
    )
    return NewKey(key_id, token)


def key_id_of(token: str) -> str | None:
    """The key id a token made by create_api_key carries (ctx_<key id>_<secret>)."""
    prefix, _, rest = token.partition(TOKEN_PREFIX)
    key_id, sep, secret = rest.partition("_")
    return key_id if not prefix and sep and key_id and secret else None


def authenticate(conn: psycopg.Connection, token: str) -> tuple[str, str]:
    """Bind the key's principal to the open transaction; 28000 when unknown or revoked.
    Returns (org, principal)."""
    row = conn.execute("select org_id, principal_id from service.authenticate(%s)", (token,)).fetchone()
    assert row is not None  # service.authenticate raises instead
    return row[0], row[1]


def act_as(conn: psycopg.Connection, org_id: str, principal_id: str) -> None:
    """Administrators (the CLI): bind a principal, then drop to the service role for the
    rest of the transaction so row-level security applies exactly as over HTTP."""
    conn.execute("select service.bind_principal(%s, %s)", (org_id, principal_id))
    conn.execute(f"set local role {SERVICE_ROLE}")


def ensure_admin_principal(conn: psycopg.Connection, org_id: str, principal_id: str) -> None:
    """An org's first principal: a human with read and write on the whole org."""
    conn.execute("select service.create_principal(%s, %s, 'human', 'org administrator')", (org_id, principal_id))
    conn.execute("select service.grant_scope(%s, %s, 'org', null, true)", (org_id, principal_id))
    conn.execute("select service.grant_scope(%s, %s, 'audit', null, false)", (org_id, principal_id))
