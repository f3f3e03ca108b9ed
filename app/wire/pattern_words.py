"""The request patterns in words. msgspec reports a value that fails a pattern as
"Expected `str` matching regex '^[A-Za-z0-9][A-Za-z0-9_.:@/-]*$'": exact, but a reader
must decode the regex to learn what to send. Every door (HTTP problem details, MCP tool
errors, the CLI) passes msgspec's messages through `in_words`, which adds the rule in
words and keeps the regex for those who want it."""

from __future__ import annotations

import re

from app.scope import ID_FORMATS
from app.wire.bodies import (
    CONTEXT_NAME_PATTERN,
    NO_C0_CONTROL,
    NO_CONTROL,
    NO_NUL,
    SIMHASH_PATTERN,
    UUID_PATTERN,
    WEBHOOK_URL,
)
from app.wire.retrieve import (
    CONTEXT_REF_PATTERN,
    CONTROL_CHARACTERS,
    IDENTIFIER_PATTERN,
    KIND_PATTERN,
    TOUCHED_PATTERN,
)

WORDS: dict[str, str] = {
    IDENTIFIER_PATTERN: "letters, digits, '_', '.', ':', '@', '/' or '-', starting with a letter or digit",
    UUID_PATTERN: "a UUID such as 0b5c4ffe-8f7e-4a7e-9d77-2b8f4c1a9e10",
    NO_NUL: "text without a NUL character (U+0000)",
    NO_CONTROL: "text without control characters",
    f"^[^{CONTROL_CHARACTERS}]*$": "text without control characters",
    TOUCHED_PATTERN: "a path without control characters, tabs or line breaks",
    NO_C0_CONTROL: "text without control characters",
    WEBHOOK_URL: "an http:// or https:// URL with a host, no user:password@ and no spaces or control characters",
    CONTEXT_NAME_PATTERN: "1 to 128 letters, digits, '_', '.', ':', '/', ' ' or '-', starting with a letter or digit",
    CONTEXT_REF_PATTERN: "ctx_<id>@<version> or ctx_<id>@latest",
    KIND_PATTERN: "1 to 32 lowercase letters, digits or '-', starting with a letter",
    SIMHASH_PATTERN: "16 lowercase hexadecimal digits",
    # A session id (app.operations.sessions.SESSION_PATTERN), and any other id stated there
    **{id_format.pattern: id_format.rule for id_format in ID_FORMATS.values()},
}
"""The patterns of app/wire's request types, each in words."""
_BY_QUOTED = {repr(pattern)[1:-1]: words for pattern, words in WORDS.items()}
"""msgspec quotes a pattern as Python's repr does (backslashes doubled, NUL as \\x00)."""

_MATCHING = re.compile(r"matching regex '(.*?)'(?= - at |$)", re.DOTALL)


def in_words(message: str) -> str:
    """msgspec's message with each pattern it quotes followed by the rule in words."""

    def explained(match: re.Match[str]) -> str:
        words = _BY_QUOTED.get(match.group(1))
        return match.group(0) if words is None else f"{match.group(0)} ({words})"

    return _MATCHING.sub(explained, message)
