"""Owners from a repo's CODEOWNERS file (GitHub's syntax), the second source of an owner
after the document's own and before the org's default (R-DOC-3, docs/owners.md).

GitHub reads the first of .github/CODEOWNERS, CODEOWNERS and docs/CODEOWNERS; each line
is a gitignore-style pattern followed by owners (@user, @org/team, an email), and the
last line that matches a path wins. A matching line without owners leaves the path
unowned, as on GitHub. The first owner listed is the fragment's owner, without its @.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import pathspec

CODEOWNERS_PATHS = (".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS")
"""Where GitHub looks, in the order it looks."""


_NAME_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
"""What SQL's [[:cntrl:]] matches in a UTF-8 database: C0, DEL and C1."""
BIDI_CONTROL = re.compile("[\u202a-\u202e\u2066-\u2069]")
"""Bidirectional embeddings, overrides and isolates: text holding them displays other
than it reads ("Trojan Source"); a name written in a right-to-left script needs none."""
INVISIBLE = (
    "\\s\u00a0\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u1680\u180e\u2000-\u200f"
    "\u2028-\u202f\u205f-\u2064\u2066-\u206f\u3000\ufeff\ufff9-\ufffb\U000110bd\U000110cd"
    "\U00013430-\U00013438\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f"
)
VISIBLE = re.compile(f"[^{INVISIBLE}]")
"""A character that shows: not one of Unicode's separators (Z*) or format characters
(Cf), nor a control character (listed, as SQL's data._owner_problem lists them)."""


def owner_problem(name: str) -> str | None:
    """What is wrong with an owner's name, or None: SQL's data._owner_problem, checked
    in Python to refuse a document before it is chunked and embedded, and to skip a
    CODEOWNERS line naming such an owner."""
    if not 1 <= len(name) <= 256:
        return "1 to 256 characters"
    hidden = _NAME_CONTROL.search(name)
    if hidden is not None:
        return f"no control characters (U+{ord(hidden.group()):04X})"
    if BIDI_CONTROL.search(name):
        return "no bidirectional embedding, override or isolate characters (U+202A to U+202E, U+2066 to U+2069)"
    if not VISIBLE.search(name):
        return "at least one visible character"
    return None


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
            names = tuple(o.removeprefix("@") for o in owners)
            if any(owner_problem(name) is not None for name in names):
                continue  # GitHub skips a line it cannot read; one bad name must not stop an ingest
            spec = pathspec.GitIgnoreSpec.from_lines([pattern])
            self.rules.append(_Rule(spec, names))

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
