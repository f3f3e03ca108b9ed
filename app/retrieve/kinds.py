"""What a fragment is and what a query asks (docs/adr/0015, 5th amendment).

Pure Python over what a candidate carries (namespace, document kind, path, symbol,
heading path, text): no database, no model, a few regular expressions per fragment, so
the reranker's features stay at ~ms per list. The code kinds read the languages the code
chunkers split (python, javascript/typescript, go, rust, java, c/c++, c#, ruby, sql) by their surface syntax:

- `definition`: a function or method with a body, or a class with methods;
- `declaration`: a type that only declares (a class/struct/dataclass/msgspec Struct/
  TypedDict/enum/interface with fields and no logic, a type alias);
- `imports`: imports, `__all__`, registration and wiring (CLI commands added to a group,
  routes, `module.exports`), with no definition of its own;
- `test`: a fragment of a test file or a test function;
- `explaining`: prose that explains, in sentences;
- `reference`: prose that lists (tables, bullet lists, changelogs, option listings);
- `turn`: a conversation turn;
- `other`: code that is none of the above (constants, statements).

A query is a `path` (a file name or path), an `error` (a traceback or an error message),
an `identifier` (one code name, or a few tokens of which one is code-like) or a
`question` (natural language: everything else).
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import islice
from typing import Final

from app.retrieve.candidates import Candidate

FRAGMENT_KINDS: Final = ("definition", "declaration", "imports", "test", "explaining", "reference", "turn", "other")
QUERY_KINDS: Final = ("question", "identifier", "error", "path")

TEXT_CHARS = 4000
"""How much of a fragment's text is read (its head says what it is)."""

_TEST_PATH = re.compile(
    r"(^|/)(tests?|__tests__|spec|testing)/|(^|/)test_[^/]*$|_test\.(py|go|rs)$|(Test|Tests|IT)\.java$|"
    r"\.(test|spec)\.[jt]sx?$|(^|/)conftest\.py$"
)
_TEST_SYMBOL = re.compile(r"(^|\.)(test_?\w*|Test\w*)$")


def is_test_path(path: str) -> bool:
    """A test file's path, in any of the languages the chunker reads."""
    return _TEST_PATH.search(path) is not None


# A function or method that has a body, per language.
_FUNCTION_FORMS = (
    r"^\s*(?:@[\w.]+(?:\(.*\))?\s*\n\s*)*(?:async\s+)?def\s+\w+\s*\(.*?\)[^:\n]*:\s*(?:#.*)?\n\s+\S"  # python
    r"|^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*\w*\s*\([^)]*\)[^{;\n]*\{"  # js/ts
    r"|^\s*(?:export\s+)?(?:const|let|var)\s+\w+\s*(?::[^=\n]+)?=\s*(?:async\s+)?(?:\([^)]*\)|\w+)\s*(?::[^=\n]+)?=>"
    r"|^\s*(?:(?:public|private|protected|static|async|get|set|override|readonly)\s+)*\w+\s*\([^)\n]*\)\s*(?::[^{\n]+)?\{"
    r"|^\s*func\s+(?:\([^)]*\)\s*)?\w+\s*\("  # go
    r"|^\s*(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?(?:const\s+)?(?:unsafe\s+)?fn\s+\w+[^;{]*\{"  # rust
    r"|^\s*(?i:create\s+(?:or\s+replace\s+)?(?:function|procedure|trigger)\s)"  # sql
    r"|^\s*def\s+(?:self\.)?\w+[?!=]?\s*(?:\([^)\n]*\))?\s*\n\s+\S"  # ruby
)
_JAVA_METHOD = (
    r"|^\s*(?:(?:public|private|protected|static|final|abstract|synchronized|native|default)\s+)*"
    r"(?:<[^>]+>\s+)?[\w<>\[\], ?]+\s+(?:\w+::)*~?\w+\s*\([^)]*\)\s*(?:const\s*)?(?:throws\s+[\w., ]+)?\s*\{"
)
_FUNCTION_BUT_JAVA = re.compile(_FUNCTION_FORMS, re.MULTILINE | re.DOTALL)
_FUNCTION_ANY = re.compile(_FUNCTION_FORMS + _JAVA_METHOD, re.MULTILINE | re.DOTALL)
_JAVA_BODY = re.compile(r"\)\s*(?:throws\s+[\w., ]+)?\s*\{")
"""What the Java form needs somewhere (a parameter list's end, then `{`). The Java form
backtracks over every line of words (about 1 ms a fragment of prose-like code), so it
is searched for only where that can match; elsewhere the other forms find the same."""


def _first_function(head: str) -> re.Match[str] | None:
    """The first function with a body in `head` (every language's form, in one pass)."""
    return (_FUNCTION_ANY if _JAVA_BODY.search(head) else _FUNCTION_BUT_JAVA).search(head)


_PY_CLASS = re.compile(r"^\s*class\s+\w+\s*(\((?P<bases>[^)]*)\))?\s*:", re.MULTILINE)
_PY_DECLARATIVE_BASE = re.compile(
    r"\b(Struct|TypedDict|NamedTuple|Enum|IntEnum|StrEnum|Flag|IntFlag|BaseModel|Protocol|TypeAlias)\b"
)
_PY_DATACLASS = re.compile(r"^\s*@(?:dataclasses\.)?dataclass\b|^\s*@(?:attr\.s|attrs\.define|define|frozen)\b", re.M)
_DECLARATION = re.compile(
    r"^\s*(?:export\s+)?(?:declare\s+)?(?:interface|enum|type)\s+\w+[^=\n{]*[={]"  # ts
    r"|^\s*type\s+\w+\s+(?:struct|interface|\w+)"  # go
    r"|^\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?(?:struct|enum|union|type|trait)\s+\w+"  # rust
    r"|^\s*(?:(?:public|private|protected|internal|static|final|sealed|readonly|partial)\s+)*"
    r"(?:record|enum|interface|@interface|struct)\s+\w+"  # java, c#
    r"|^\s*(?:typedef\s+)?(?:struct|union|enum)\s+\w*\s*\{"  # c
    r"|^\s*\w+\s*(?::\s*TypeAlias\s*)?=\s*(?:typing\.)?(?:Union|Optional|Literal|Callable|dict|list|tuple)\["  # py
    r"|^\s*(?i:create\s+(?:or\s+replace\s+)?(?:(?:temp|temporary|unlogged|materialized)\s+)?"  # sql
    r"(?:table|type|domain|view|index|unique\s+index)\s)",
    re.MULTILINE,
)
_IMPORT_LINE = re.compile(
    r"^\s*(?:from\s+[\w.]+\s+import\b|import\s+[\w.{*\"']|import\s*\(|export\s+(?:\*|\{[^}]*\})\s*(?:from\b|;|$)"
    r"|(?:const|let|var)\s+[\w{}, ]+=\s*require\(|use\s+[\w:{}]+|package\s+[\w.]+;?\s*$|mod\s+\w+;|extern\s+crate"
    r"|__all__\s*[+]?=|module\.exports\b|exports\.\w+\s*="
    r"|using\s+(?:static\s+)?[\w.]+\s*;|require(?:_relative)?\s*\(?\s*['\"]"
    r"|[\w.]+\.(?:add_command|add_typer|add_url_rule|include_router|register(?:_blueprint)?|add_route|route|"
    r"use|get|post|put|delete|patch|HandleFunc|Handle)\s*\("
    r"|app\.(?:command|group)\(|router\.\w+\()",
    re.MULTILINE,
)
_CONTINUATION = re.compile(r"^\s*(?:[\w./\"']+\s*,?\s*|[)\]}],?;?|\)\s*$)$")
_BLANK_OR_COMMENT = re.compile(r"^\s*(?:$|#|//|/\*|\*|--)")

_SENTENCE = re.compile(r"(?<![a-z])[a-z][a-z,;'’)]*\s+[a-z]+[^.!?\n]{8,}[.!?](?:\s|$)")
"""A sentence. The look-behind changes no count: where a match could start after a letter,
one starts at that letter already (findall goes left to right, and no match ends on a
letter); it only spares the search a try at every letter of a long line (4x faster).
"""
_LIST_LINE = re.compile(r"^\s*(?:[-*+•]\s|\d+[.)]\s|\|.*\||#{1,6}\s|:?-{3,}|`[^`]+`\s*[:|-])")
_CHANGELOG = re.compile(r"(^|/)(CHANGE(S|LOG)|HISTORY|NEWS|RELEASES?)(\.\w+)?$", re.IGNORECASE)


def _code_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if not _BLANK_OR_COMMENT.match(line)]


def _is_imports(lines: list[str]) -> bool:
    """Import, export and registration statements (and their continuation lines) only."""
    hits = 0
    for line in lines:
        if _IMPORT_LINE.match(line):
            hits += 1
        elif not _CONTINUATION.match(line):
            return False
    return hits > 0


def _python_class_kind(text: str) -> str | None:
    """A python class: a definition when it has a method with logic, else a declaration."""
    match = _PY_CLASS.search(text)
    if match is None:
        return None
    methods = re.findall(r"^\s+(?:async\s+)?def\s+(\w+)", text, re.MULTILINE)
    logic = [m for m in methods if m not in ("__repr__", "__str__")]
    declarative = bool(_PY_DECLARATIVE_BASE.search(match.group("bases") or "")) or bool(
        _PY_DATACLASS.search(text[: match.start()] + "\n")
    )
    if logic:
        return "definition"
    if declarative or _fields_only(text[match.end() :]):
        return "declaration"
    return "definition"


def _fields_only(body: str) -> bool:
    """A class body of annotated fields, assignments, docstrings and `pass` only."""
    for line in _code_lines(body):
        stripped = line.strip()
        if re.match(r"^(?:\w+\s*:\s*[^=]+(?:=.*)?|\w+\s*=.*|\"\"\"|'''|\"|'|pass|\.\.\.|@\w+)", stripped):
            continue
        if stripped.startswith(('"', "'")) or stripped.endswith(('"""', "'''")):
            continue
        return False
    return True


def _code_kind(text: str, symbol: str | None) -> str:
    lines = _code_lines(text)
    if not lines:
        return "other"
    head = "\n".join(lines)
    py_class = _python_class_kind(head)
    if py_class is not None and _PY_CLASS.search(lines[0] if not lines[0].lstrip().startswith("@") else head):
        return py_class
    first_def = _first_function(head)
    first_decl = _DECLARATION.search(head)
    if first_decl is not None and (first_def is None or first_decl.start() <= first_def.start()):
        # A type with no logic of its own; a Rust/Java/TS type with methods is a definition.
        body_after = head[first_decl.end() :]
        if re.search(r"^\s*(?:impl\b|class\b)", head, re.MULTILINE) or (
            first_def is not None and re.search(r"\b(return|if|for|while|match|switch)\b", body_after)
        ):
            return "definition"
        return "declaration"
    if re.search(r"^\s*(?:export\s+)?(?:abstract\s+)?class\s+\w+", head, re.MULTILINE) or re.search(
        r"^\s*impl\b", head, re.MULTILINE
    ):
        return "definition" if first_def is not None else "declaration"
    if first_def is not None:
        return "definition"
    if py_class is not None:
        return py_class
    if _is_imports(lines):
        return "imports"
    return "other"


def _prose_kind(path: str, text: str) -> str:
    if _CHANGELOG.search(path):
        return "reference"
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return "reference"
    listed = sum(1 for line in lines if _LIST_LINE.match(line))
    # Two sentences decide it (the tests below): the search stops there.
    sentences = sum(1 for _ in islice(_SENTENCE.finditer(text), 2))
    prose_lines = len(lines) - listed
    if sentences >= 2 and prose_lines * 2 >= len(lines):
        return "explaining"
    if sentences >= 1 and listed == 0:
        return "explaining"
    return "reference"


@lru_cache(maxsize=65536)
def fragment_kind(
    namespace: str, doc_kind: str, path: str, symbol: str | None, heading_path: tuple[str, ...], text: str
) -> str:
    """One of FRAGMENT_KINDS for a fragment's fields (Candidate's names)."""
    if doc_kind.startswith("conversation"):
        return "turn"
    if is_test_path(path) or (symbol is not None and _TEST_SYMBOL.search(symbol)):
        return "test"
    text = text[:TEXT_CHARS]
    if namespace == "code":
        return _code_kind(text, symbol)
    return _prose_kind(path, text)


_PATH_QUERY = re.compile(r"^\s*[\w.\-~]*(?:/[\w.\-]+)+/?\s*$|^\s*[\w\-]+\.(?:[a-z]{1,5})\s*$")
_ERROR_QUERY = re.compile(
    r"Traceback \(most recent call last\)|\b[A-Z]\w*(?:Error|Exception|Exit|Warning)\b\s*:|"
    r"\b(?:error|ERROR|fatal|FATAL|panic|undefined reference|segmentation fault|cannot find|"
    r"could not|no such file|not found|permission denied|failed to)\b[^?]*(?::|$)|"
    r"\bE\d{3,4}\b|\b(?:at|in)\s+[\w./]+:\d+|line \d+, in\b",
)
_CODE_TOKEN = re.compile(r"[A-Za-z_]\w*(?:[.:]{1,2}\w+)+\(?\)?|\w*_\w+|[a-z]+[A-Z]\w*|[A-Z][a-z]+[A-Z]\w*|\w+\(\)")
_QUESTION_WORD = re.compile(
    r"^(?:how|what|why|when|where|which|who|whom|whose|is|are|can|could|should|does|do|did|will|would|"
    r"explain|describe|show|find|list|give|tell)\b",
    re.IGNORECASE,
)


@lru_cache(maxsize=4096)
def query_kind(query: str) -> str:
    """One of QUERY_KINDS for a query's text."""
    text = query.strip()
    if not text:
        return "question"
    if _ERROR_QUERY.search(text) and not _QUESTION_WORD.match(text):
        return "error"
    if "\n" not in text and " " not in text and _PATH_QUERY.match(text) and not text.endswith("()"):
        if "/" in text or not re.match(r"^\w+\.\w+$", text) or re.search(r"\.(py|js|ts|go|rs|java|md|txt|toml)$", text):
            return "path"
    words = text.split()
    if _QUESTION_WORD.match(text) or text.endswith("?"):
        return "question"
    if len(words) <= 3 and any(_CODE_TOKEN.fullmatch(w.strip("`'\",")) for w in words):
        return "identifier"
    if len(words) == 1 and re.fullmatch(r"`?[A-Za-z_][\w.]*`?", text):
        return "identifier"
    return "question"


def candidate_kind(c: Candidate) -> str:
    """fragment_kind of a candidate."""
    return fragment_kind(c.namespace, c.kind, c.path, c.symbol, tuple(c.heading_path), c.text)
