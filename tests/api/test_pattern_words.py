"""Every pattern a request field must match has its rule in words (app/wire/
pattern_words.py), and the doors show it: a regex alone told a reader little."""

from __future__ import annotations

import msgspec
import msgspec.inspect as mi

from app.mcp import TOOLS
from app.wire import bodies, retrieve
from app.wire.pattern_words import WORDS, in_words


def patterns(info: mi.Type, seen: set[type]) -> set[str]:
    if isinstance(info, mi.StrType):
        return {info.pattern} if info.pattern else set()
    if isinstance(info, mi.StructType):
        if info.cls in seen:
            return set()
        seen.add(info.cls)
        return set().union(*(patterns(f.type, seen) for f in info.fields))
    found: set[str] = set()
    for name in ("item_type", "key_type", "value_type"):
        if hasattr(info, name):
            found |= patterns(getattr(info, name), seen)
    for name in ("types", "item_types"):
        for item in getattr(info, name, ()):
            found |= patterns(item, seen)
    return found


def request_types() -> list[type]:
    modules = (bodies, retrieve)
    structs = {
        value
        for module in modules
        for value in vars(module).values()
        if isinstance(value, type) and issubclass(value, msgspec.Struct) and value.__module__ == module.__name__
    }
    return sorted(structs | {tool.arguments for tool in TOOLS}, key=lambda t: t.__qualname__)


def test_every_request_pattern_has_words():
    seen: set[type] = set()
    used = set().union(*(patterns(mi.type_info(t), seen) for t in request_types()))
    assert used, "no pattern found: the walk is broken"
    assert sorted(used - set(WORDS)) == []


def test_a_pattern_failure_reads_in_words_at_the_http_door(client):
    response = client.post("/contexts/retrieve", json={"query": "x", "scope": {"org_id": "bad org"}})
    assert response.status_code == 400
    (error,) = response.json()["errors"]
    assert "starting with a letter or digit" in error["message"]


def test_an_unknown_pattern_is_left_as_it_is():
    message = "Expected `str` matching regex '^z+$' - at `$.x`"
    assert in_words(message) == message
