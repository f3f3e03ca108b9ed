"""Renders the light client's wire types (app/client/light/types.py) from the server's
structs (app.wire): the same names, fields, types and defaults, without the server's
constraints (patterns, bounds, custom checks: the service applies them and answers a
problem) and with literal choices as plain strings, so an older client still decodes a
newer service's answers. tests/client/test_light_client.py compares the committed file
with this rendering; CONTEXTS_UPDATE_GOLDENS=1 rewrites it."""

from __future__ import annotations

import json
import types
import typing
import uuid
from datetime import datetime
from pathlib import Path
from typing import Any

import msgspec

from app.wire import bodies

TYPES_FILE = Path(__file__).resolve().parents[2] / "app" / "client" / "light" / "types.py"

ROOTS = (
    "RetrieveRequest",
    "RetrieveResponse",
    "IngestRequest",
    "IngestResponse",
    "DocumentPage",
    "DocumentDetail",
    "DocumentDeleted",
    "FragmentDetail",
    "TraceOut",
    "WhoamiOut",
    "SessionOpen",
    "ContextPack",
    "NoteWrite",
    "NoteResult",
    "NotePromote",
    "PromotedNote",
    "PinCreate",
    "PinOut",
    "PinList",
    "RankingProfileSet",
    "RankingProfileOut",
    "RankingProfileList",
    "SyncState",
    "ContextCreate",
    "ContextOut",
    "ContextList",
    "ContextRead",
    "ContextVersionCreate",
    "ContextVersionOut",
    "ContextVersionList",
    "SubscriptionCreate",
    "SubscriptionOut",
    "SubscriptionList",
    "RuleCreate",
    "RuleOut",
    "RuleList",
)

HEADER = '''"""The bodies the Contexts HTTP API takes and answers, as msgspec structs.

Generated from the service's own definitions (app.wire) by tests/client/wire_types.py:
do not edit by hand. Field names, types and defaults are the service's; its constraints
(lengths, patterns, bounds) are checked by the service, which answers a problem
(`contexts_client.BadRequest`). Answers may carry fields this version does not know:
they are ignored."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

__all__ = [
{names}
]
'''


def _structs() -> list[type[msgspec.Struct]]:
    """The root structs and every struct their fields name, roots first, then by name."""
    seen: dict[str, type[msgspec.Struct]] = {}
    todo = [getattr(bodies, name) for name in ROOTS]
    while todo:
        cls = todo.pop(0)
        if cls.__name__ in seen:
            continue
        seen[cls.__name__] = cls
        for hint in typing.get_type_hints(cls).values():
            todo += [t for t in _leaves(hint) if isinstance(t, type) and issubclass(t, msgspec.Struct)]
    roots = [seen[name] for name in ROOTS]
    return roots + sorted((c for c in seen.values() if c not in roots), key=lambda c: c.__name__)


def _leaves(hint: Any) -> list[Any]:
    args = typing.get_args(hint)
    if typing.get_origin(hint) is typing.Annotated:
        return _leaves(args[0])
    if not args or typing.get_origin(hint) is typing.Literal:
        return [hint]
    return [leaf for arg in args for leaf in _leaves(arg)]


def _type(hint: Any) -> str:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Annotated:
        return _type(args[0])
    if origin is typing.Literal:
        return " | ".join(dict.fromkeys(_type(type(a)) for a in args))
    if origin in (typing.Union, types.UnionType):
        return " | ".join(dict.fromkeys(_type(a) for a in args))
    if origin in (list, dict):
        return f"{origin.__name__}[{', '.join(_type(a) for a in args)}]"
    if hint is type(None):
        return "None"
    if hint is Any:
        return "Any"
    if hint is msgspec.UnsetType:
        return "UnsetType"
    if hint is uuid.UUID:
        return "uuid.UUID"
    if hint in (int, float, str, bool, dict, list, object, datetime):
        return hint.__name__
    if isinstance(hint, type) and issubclass(hint, msgspec.Struct):
        return hint.__name__
    raise TypeError(f"no rendering for {hint!r}")


def _literal(value: object) -> str:
    """As ruff formats it: strings in double quotes."""
    return json.dumps(value) if isinstance(value, str) else repr(value)


def _default(field: msgspec.structs.FieldInfo) -> str:
    if field.default is msgspec.UNSET:
        return " = UNSET"
    if field.default is not msgspec.NODEFAULT:
        return f" = {_literal(field.default)}"
    if field.default_factory is not msgspec.NODEFAULT:
        return f" = {_literal(field.default_factory())}"
    return ""


def _class(cls: type[msgspec.Struct]) -> str:
    config = cls.__struct_config__
    fields = msgspec.structs.fields(cls)
    # A required field after one with a default: the server's struct is keyword-only.
    kw_only = any(f.required and any(not g.required for g in fields[:i]) for i, f in enumerate(fields))
    options = (", kw_only=True" if kw_only else "") + (
        ", forbid_unknown_fields=True" if config.forbid_unknown_fields else ""
    )
    lines = [f"class {cls.__name__}(msgspec.Struct{options}):"]
    doc = (cls.__doc__ or "").strip()
    if doc:
        lines += ['    """' + doc.replace("\\", "\\\\").replace('"""', '\\"\\"\\"') + '"""', ""]
    hints = typing.get_type_hints(cls, include_extras=True)
    for field in fields:
        lines.append(f"    {field.name}: {_type(hints[field.name])}{_default(field)}")
    return "\n".join(lines)


def render() -> str:
    structs = _structs()
    names = "\n".join(f'    "{c.__name__}",' for c in sorted(structs, key=lambda c: c.__name__))
    return HEADER.format(names=names) + "".join(f"\n\n{_class(c)}\n" for c in structs)


if __name__ == "__main__":
    TYPES_FILE.write_text(render())
