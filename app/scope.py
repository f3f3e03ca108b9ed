"""Where knowledge lives and who may see it: org, repo, persona, session."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Scope:
    org_id: str
    repo_id: str | None = None
    persona_id: str | None = None
    session_id: str | None = None

    def as_args(self) -> tuple[str, str | None, str | None, str | None]:
        return (self.org_id, self.repo_id, self.persona_id, self.session_id)

    def problem(self) -> str | None:
        """Why an id of this scope cannot be stored (None: each can), checked before any
        work: the database refuses it only at the first write, naming a constraint."""
        for name, value in zip(("org_id", "repo_id", "persona_id", "session_id"), self.as_args(), strict=True):
            if value is not None and not ID_FORMATS[name][0].fullmatch(value):
                return id_rule(name, value)
        return None


ID_FORMATS: dict[str, tuple[re.Pattern[str], str]] = {
    "org_id": (re.compile(r"[a-z0-9][a-z0-9_.-]{0,62}"), "1 to 63 lowercase letters, digits, '.', '_' or '-'"),
    "repo_id": (re.compile(r"[A-Za-z0-9][A-Za-z0-9_./-]{0,127}"), "1 to 128 letters, digits, '.', '_', '/' or '-'"),
    "persona_id": (re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}"), "1 to 64 letters, digits, '.', '_' or '-'"),
    "session_id": (re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}"), "1 to 128 letters, digits, '.', '_', ':' or '-'"),
    "principal_id": (
        re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@-]{0,127}"),
        "1 to 128 letters, digits, '.', '_', '@' or '-'",
    ),
}
"""Each id's format, as the tables' `<id>_format` check constraints state it (sql/
migrations/0001_core.sql), and the rule in words."""


def id_rule(name: str, value: str | None = None) -> str:
    """The rule of an id in words, with the refused value (shortened) when given."""
    shown = "" if value is None else f" {value[:40]!r}{'...' if len(value) > 40 else ''}:"
    return f"invalid {name.removesuffix('_id')} id{shown} use {ID_FORMATS[name][1]}, starting with a letter or digit"


def constraint_rule(constraint: str | None) -> str | None:
    """The rule in words behind a `<id>_format` check constraint (None: another one)."""
    name = (constraint or "").removesuffix("_format")
    return id_rule(name) if name in ID_FORMATS else None
