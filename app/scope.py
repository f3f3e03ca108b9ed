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
            problem = id_problem(name, value)
            if problem is not None:
                return problem
        return None


@dataclass(frozen=True, slots=True)
class IdFormat:
    pattern: str
    """Anchored, as the table's `<id>_format` check constraint states it."""
    characters: str
    """The same in words."""

    @property
    def rule(self) -> str:
        return f"{self.characters}, starting with a letter or digit"


ID_FORMATS: dict[str, IdFormat] = {
    "org_id": IdFormat(r"^[a-z0-9][a-z0-9_.-]{0,62}$", "1 to 63 lowercase letters, digits, '.', '_' or '-'"),
    "repo_id": IdFormat(r"^[A-Za-z0-9][A-Za-z0-9_./-]{0,127}$", "1 to 128 letters, digits, '.', '_', '/' or '-'"),
    "persona_id": IdFormat(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$", "1 to 64 letters, digits, '.', '_' or '-'"),
    "session_id": IdFormat(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$", "1 to 128 letters, digits, '.', '_', ':' or '-'"),
    "principal_id": IdFormat(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,127}$", "1 to 128 letters, digits, '.', '_', '@' or '-'"),
}
"""Each id's format (sql/migrations/0001_core.sql), the one place Python states it: the
HTTP and MCP doors' session ids, the CLI's checks and the messages all read it here."""


def id_problem(name: str, value: str | None) -> str | None:
    """Why `value` is no `name` (an ID_FORMATS key) the tables store (None: it is, or absent)."""
    if value is None or re.fullmatch(ID_FORMATS[name].pattern, value):  # `$` alone takes a final newline
        return None
    return id_rule(name, value)


def id_rule(name: str, value: str | None = None) -> str:
    """The rule of an id in words, with the refused value (shortened) when given."""
    shown = ":" if value is None else f" {value[:40]!r}{'...' if len(value) > 40 else ''}:"
    return f"invalid {name.removesuffix('_id')} id{shown} use {ID_FORMATS[name].rule}"


def constraint_rule(constraint: str | None) -> str | None:
    """The rule in words behind a `<id>_format` check constraint (None: another one)."""
    name = (constraint or "").removesuffix("_format")
    return id_rule(name) if name in ID_FORMATS else None
