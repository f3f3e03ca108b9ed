"""Owners from a repo's CODEOWNERS file (GitHub's syntax), the second source of an owner
after the document's own and before the org's default (R-DOC-3, docs/owners.md).

GitHub reads the first of .github/CODEOWNERS, CODEOWNERS and docs/CODEOWNERS; each line
is a gitignore-style pattern followed by owners (@user, @org/team, an email), and the
last line that matches a path wins. A matching line without owners leaves the path
unowned, as on GitHub. The first owner listed is the fragment's owner, without its @.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import pathspec

CODEOWNERS_PATHS = (".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS")
"""Where GitHub looks, in the order it looks."""


@dataclass(frozen=True, slots=True)
class _Rule:
    spec: pathspec.PathSpec
    owners: tuple[str, ...]


class CodeOwners:
    def __init__(self, text: str, path: str = "CODEOWNERS") -> None:
        self.path = path
        self.rules: list[_Rule] = []
        for raw in text.splitlines():
            line = raw.split(" #", 1)[0].strip() if not raw.lstrip().startswith("#") else ""
            if not line:
                continue
            pattern, *owners = line.split()
            if pattern.startswith("!") or pattern.startswith("["):
                continue  # GitHub ignores negation and character ranges
            spec = pathspec.GitIgnoreSpec.from_lines([pattern])
            self.rules.append(_Rule(spec, tuple(o.removeprefix("@") for o in owners)))

    def owner_of(self, path: str) -> str | None:
        """The first owner of the last rule matching `path`; None when none matches or
        the matching rule names nobody."""
        for rule in reversed(self.rules):
            if rule.spec.match_file(path):
                return rule.owners[0] if rule.owners else None
        return None


def find_codeowners(files: Mapping[str, str | bytes]) -> CodeOwners | None:
    """The CODEOWNERS among `files` (path -> content), where GitHub would look first."""
    for path in CODEOWNERS_PATHS:
        content = files.get(path)
        if content is not None:
            text = content.decode("utf-8", "replace") if isinstance(content, bytes) else content
            return CodeOwners(text, path)
    return None


def is_codeowners(path: str) -> bool:
    return path in CODEOWNERS_PATHS


def owners_for(rules: CodeOwners | None, paths: Iterable[str]) -> dict[str, str | None]:
    return {p: rules.owner_of(p) if rules else None for p in paths}
