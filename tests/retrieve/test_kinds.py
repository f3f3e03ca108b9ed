"""Fragment kinds and query kinds (app/retrieve/kinds.py) on real snippets of each kind."""

from __future__ import annotations

import re

import pytest

from app.retrieve import kinds
from app.retrieve.kinds import FRAGMENT_KINDS, QUERY_KINDS, fragment_kind, query_kind


def code(text: str, path: str = "app/module.py", symbol: str | None = None) -> str:
    return fragment_kind("code", "code", path, symbol, (), text)


def prose(text: str, path: str = "docs/guide.md") -> str:
    return fragment_kind("prose", "prose", path, None, (), text)


DEFINITIONS = {
    "python function": (
        "def ranked(rows: list[Row]) -> list[Row]:\n"
        '    """Rows best first."""\n'
        "    return sorted(rows, key=lambda r: -r.score)\n",
        "app/rank.py",
    ),
    "python decorated function": (
        "@click.command()\n@click.option('--json', is_flag=True)\ndef status(json: bool) -> None:\n"
        "    click.echo(render(json))\n",
        "app/cli/status.py",
    ),
    "python class with methods": (
        "class Retriever:\n    def __init__(self, conn):\n        self.conn = conn\n\n"
        "    def rank(self, query):\n        return self.conn.execute(query).fetchall()\n",
        "app/retrieve/service.py",
    ),
    "python dataclass with logic": (
        "@dataclass\nclass Window:\n    start: int\n    end: int\n\n"
        "    def width(self) -> int:\n        return self.end - self.start\n",
        "app/window.py",
    ),
    "js function": (
        "export async function fetchUser(id) {\n  const res = await fetch(`/users/${id}`);\n  return res.json();\n}\n",
        "src/api.js",
    ),
    "js arrow": ("const add = (a, b) => {\n  return a + b;\n};\n", "src/math.js"),
    "ts class": (
        "export class Cache<T> {\n  private items = new Map<string, T>();\n"
        "  get(key: string): T | undefined {\n    return this.items.get(key);\n  }\n}\n",
        "src/cache.ts",
    ),
    "go function": (
        'func (s *Server) Handle(w http.ResponseWriter, r *http.Request) {\n\tif r.Method != "GET" {\n'
        '\t\treturn\n\t}\n\tw.Write([]byte("ok"))\n}\n',
        "server/handler.go",
    ),
    "rust fn": (
        "pub fn parse(input: &str) -> Result<Ast, Error> {\n    let tokens = lex(input)?;\n    build(tokens)\n}\n",
        "src/parser.rs",
    ),
    "rust impl": (
        "impl Display for Token {\n    fn fmt(&self, f: &mut Formatter) -> fmt::Result {\n"
        '        write!(f, "{}", self.text)\n    }\n}\n',
        "src/token.rs",
    ),
    "java method": (
        "public List<String> names(Collection<User> users) {\n"
        "    return users.stream().map(User::getName).collect(Collectors.toList());\n}\n",
        "src/main/java/org/x/Users.java",
    ),
}

DECLARATIONS = {
    "python dataclass": (
        "@dataclass(slots=True)\nclass Hit:\n    fragment_id: int\n    score: float\n    path: str = ''\n",
        "app/hit.py",
    ),
    "msgspec struct": (
        'class RetrieveRequest(msgspec.Struct, kw_only=True):\n    """A retrieval."""\n\n'
        "    query: str\n    limit: int = 10\n",
        "app/wire/retrieve.py",
    ),
    "typeddict": ("class Row(TypedDict):\n    id: int\n    name: str\n", "app/rows.py"),
    "enum": ('class Color(Enum):\n    RED = "red"\n    GREEN = "green"\n', "app/colors.py"),
    "python type alias": ("Scalar = Union[int, float, str]\n", "app/types.py"),
    "ts interface": ("export interface User {\n  id: number;\n  name: string;\n}\n", "src/types.ts"),
    "ts type alias": ("export type Handler = (req: Request) => Promise<Response>;\n", "src/types.ts"),
    "go struct": ("type Config struct {\n\tAddr string\n\tPort int\n}\n", "config/config.go"),
    "rust struct": ("#[derive(Debug, Clone)]\npub struct Point {\n    pub x: f64,\n    pub y: f64,\n}\n", "src/geo.rs"),
    "rust enum": ("pub enum Shape {\n    Circle(f64),\n    Square(f64),\n}\n", "src/geo.rs"),
    "java record": ("public record Point(int x, int y) {}\n", "src/main/java/org/x/Point.java"),
    "java enum": ("public enum Level {\n    LOW, MEDIUM, HIGH\n}\n", "src/main/java/org/x/Level.java"),
}

IMPORTS = {
    "python imports": (
        "from __future__ import annotations\n\nimport json\nfrom pathlib import Path\n\n"
        "from app.retrieve import (\n    features,\n    learned,\n)\n",
        "app/cli/rerank.py",
    ),
    "python __all__": ('__all__ = [\n    "extract",\n    "FEATURES",\n]\n', "app/__init__.py"),
    "click registration": (
        "cli.add_command(eval_group)\ncli.add_command(rerank)\ncli.add_command(db)\n",
        "app/cli/__init__.py",
    ),
    "js imports": ("import React from 'react';\nimport { useState } from 'react';\n", "src/App.jsx"),
    "express routes": ("app.get('/users', listUsers);\napp.post('/users', createUser);\n", "src/routes.js"),
    "go imports": ('import (\n\t"fmt"\n\t"net/http"\n)\n', "main.go"),
    "rust uses": ("use std::collections::HashMap;\nuse crate::token::Token;\nmod lexer;\n", "src/lib.rs"),
    "java imports": ("package org.x;\n\nimport java.util.List;\nimport java.util.Map;\n", "src/main/java/org/x/A.java"),
}

TESTS = {
    "python test file": (
        "def test_ranked_orders_best_first():\n    assert ranked([a, b]) == [b, a]\n",
        "tests/test_rank.py",
    ),
    "go test": (
        'func TestParse(t *testing.T) {\n\tif _, err := Parse("x"); err != nil {\n\t\tt.Fatal(err)\n\t}\n}\n',
        "parser/parse_test.go",
    ),
    "js spec": ("it('adds', () => {\n  expect(add(1, 2)).toBe(3);\n});\n", "src/math.test.js"),
    "java test": (
        '@Test\nvoid parses() {\n    assertEquals(1, parse("1"));\n}\n',
        "src/test/java/org/x/ParserTest.java",
    ),
}


@pytest.mark.parametrize("name", sorted(DEFINITIONS))
def test_a_definition_with_a_body_is_a_definition(name: str) -> None:
    text, path = DEFINITIONS[name]
    assert code(text, path) == "definition"


@pytest.mark.parametrize("name", sorted(DECLARATIONS))
def test_a_type_that_only_declares_is_a_declaration(name: str) -> None:
    text, path = DECLARATIONS[name]
    assert code(text, path) == "declaration"


@pytest.mark.parametrize("name", sorted(IMPORTS))
def test_imports_and_registration_are_an_import_block(name: str) -> None:
    text, path = IMPORTS[name]
    assert code(text, path) == "imports"


@pytest.mark.parametrize("name", sorted(TESTS))
def test_tests_are_tests(name: str) -> None:
    text, path = TESTS[name]
    assert code(text, path) == "test"


def test_a_test_function_outside_a_tests_folder_is_a_test() -> None:
    assert code("def test_it():\n    assert f() == 1\n", "app/checks.py", symbol="test_it") == "test"


def test_prose_that_explains_and_prose_that_lists() -> None:
    explaining = (
        "The reranker reorders the fused list. It reads features of each candidate and scores "
        "them with a linear model trained on the development sets, so a change of a feature "
        "needs a retrained model."
    )
    table = "| option | default |\n|---|---|\n| --limit | 10 |\n| --json | off |\n"
    bullets = "- `collect`: candidates\n- `train`: the model\n- `validate`: held out\n"
    changelog = "## 0.9.0\n\nThe reranker now reads kinds of fragments and queries, which helps.\n"
    assert prose(explaining) == "explaining"
    assert prose(table) == "reference"
    assert prose(bullets) == "reference"
    assert prose(changelog, "CHANGELOG.md") == "reference"


SHORTCUT_SAMPLES = [
    *(text for text, _path in (*DEFINITIONS.values(), *DECLARATIONS.values(), *IMPORTS.values(), *TESTS.values())),
    "public final class Parser {\n  public static <T> List<T> parse(Map<String, T> in, int n) throws IOException {\n"
    "    return null;\n  }\n}\n",
    "class Config {\n  String name() { return n; }\n}\n",
    '"""\nThe dialect supports the returning clause with the\nbackend of choice, as documented in the sections\n'
    'below, e.g. the server side cursors and the two phase transactions.\n"""\n' * 3,
    "x = f(a) {\n",
    "values = [(a, b) for a, b in pairs if (a) {b}]\n",
    "the quick brown fox jumps over the lazy dog.Then again.  and the second sentence follows here! yes\n"
    "e.g. this one, has no end\nbut this line has one again. and here? maybe not",
    "   word\n   another word follows the first one closely. Yes.",
]


@pytest.mark.parametrize("text", SHORTCUT_SAMPLES)
def test_the_searches_shortcuts_find_what_the_full_patterns_find(text: str) -> None:
    """The Java form searched only where its `) ... {` occurs, and sentences searched only
    from a letter that follows no letter: the same matches as the patterns without them."""
    full_function = re.compile(kinds._FUNCTION_FORMS + kinds._JAVA_METHOD, re.MULTILINE | re.DOTALL).search(text)
    shortcut = kinds._first_function(text)
    assert (shortcut and shortcut.span()) == (full_function and full_function.span())
    every_start = re.compile(kinds._SENTENCE.pattern.removeprefix("(?<![a-z])"))
    assert kinds._SENTENCE.pattern.startswith("(?<![a-z])")
    assert [m.span() for m in kinds._SENTENCE.finditer(text)] == [m.span() for m in every_start.finditer(text)]


def test_a_conversation_turn_is_a_turn() -> None:
    kind = fragment_kind("prose", "conversation-turn", "conv-26/session-1", None, (), "Caroline: I went hiking.")
    assert kind == "turn"


@pytest.mark.parametrize(
    ("query", "kind"),
    [
        ("how does the reranker pick the top fragment?", "question"),
        ("what happens when a token expires", "question"),
        ("convert a list of strings to integers python", "question"),
        ("load pretrained resnet for image classification", "question"),
        ("fragment_kind", "identifier"),
        ("Retriever.rank", "identifier"),
        ("useState hook", "identifier"),
        ("parseInt()", "identifier"),
        ("ValueError: invalid literal for int() with base 10: 'x'", "error"),
        ('Traceback (most recent call last):\n  File "a.py", line 3, in <module>', "error"),
        ("panic: runtime error: index out of range", "error"),
        ("error[E0382]: borrow of moved value: `v`", "error"),
        ("app/retrieve/features.py", "path"),
        ("src/main/java/org/x/Users.java", "path"),
        ("Makefile", "identifier"),
        ("README.md", "path"),
    ],
)
def test_what_a_query_asks(query: str, kind: str) -> None:
    assert query_kind(query) == kind


def test_kinds_are_among_the_named_ones() -> None:
    every = [*DEFINITIONS.values(), *DECLARATIONS.values(), *IMPORTS.values(), *TESTS.values()]
    assert {code(text, path) for text, path in every} <= set(FRAGMENT_KINDS)
    assert query_kind("") in QUERY_KINDS
