"""Where knowledge lives and who may see it: org, repo, persona, session."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Scope:
    org_id: str
    repo_id: str | None = None
    persona_id: str | None = None
    session_id: str | None = None

    def as_args(self) -> tuple[str, str | None, str | None, str | None]:
        return (self.org_id, self.repo_id, self.persona_id, self.session_id)
