"""R-ING-2, code: fragments along syntax-tree boundaries (tree-sitter).

Each top-level function, class or other definition is one fragment when it fits the
size bound; consecutive top-level statements (imports, constants) are grouped; a
container that does not fit (class, impl, module) is split into its members, each
headed by the enclosing symbols; a single function that does not fit is split at its
inner statement boundaries, with overlap. Lines are cut only when one line alone is over
the bound (minified code; see `Lines.pieces`).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from functools import cache

import tree_sitter as ts

from app.ingest.chunks import Chunk, Lines

# Node types that form one code unit, per grammar.
DEFINITIONS: dict[str, frozenset[str]] = {
    "python": frozenset({"function_definition", "class_definition", "decorated_definition"}),
    "javascript": frozenset(
        {
            "function_declaration",
            "generator_function_declaration",
            "class_declaration",
            "method_definition",
            "export_statement",
            "lexical_declaration",
            "variable_declaration",
        }
    ),
    "typescript": frozenset(
        {
            "function_declaration",
            "generator_function_declaration",
            "class_declaration",
            "abstract_class_declaration",
            "method_definition",
            "export_statement",
            "lexical_declaration",
            "variable_declaration",
            "interface_declaration",
            "type_alias_declaration",
            "enum_declaration",
            "internal_module",
            "module",
            "function_signature",
            "abstract_method_signature",
        }
    ),
    "go": frozenset({"function_declaration", "method_declaration", "type_declaration"}),
    "rust": frozenset(
        {
            "function_item",
            "impl_item",
            "struct_item",
            "enum_item",
            "trait_item",
            "mod_item",
            "macro_definition",
            "union_item",
            "const_item",
            "static_item",
            "type_item",
        }
    ),
    "java": frozenset(
        {
            "class_declaration",
            "interface_declaration",
            "enum_declaration",
            "record_declaration",
            "annotation_type_declaration",
            "method_declaration",
            "constructor_declaration",
        }
    ),
    "c": frozenset({"function_definition", "struct_specifier", "union_specifier", "enum_specifier", "type_definition"}),
    "cpp": frozenset(
        {
            "function_definition",
            "struct_specifier",
            "union_specifier",
            "enum_specifier",
            "type_definition",
            "class_specifier",
            "namespace_definition",
            "template_declaration",
            "concept_definition",
        }
    ),
    "csharp": frozenset(
        {
            "namespace_declaration",
            "class_declaration",
            "struct_declaration",
            "interface_declaration",
            "enum_declaration",
            "record_declaration",
            "method_declaration",
            "constructor_declaration",
            "destructor_declaration",
            "operator_declaration",
            "property_declaration",
            "delegate_declaration",
        }
    ),
    "ruby": frozenset({"class", "module", "method", "singleton_method", "singleton_class"}),
}
DEFINITIONS["tsx"] = DEFINITIONS["typescript"]
# Nodes that only wrap top-level code (include guards, `#if`, `extern "C" {}`): their
# members are walked as if they stood at the top.
TRANSPARENT = frozenset(
    {"preproc_ifdef", "preproc_if", "preproc_else", "preproc_elif", "preproc_elifdef", "linkage_specification"}
)
COMMENTS = frozenset({"comment", "line_comment", "block_comment"})
# Wrappers whose meaning (and name) is in one child.
WRAPPER_FIELDS = {"decorated_definition": "definition", "export_statement": "declaration"}
SMALL_PRELUDE_TOKENS = 48
FUNCTION_VALUES = frozenset({"arrow_function", "function_expression", "function", "generator_function"})


GRAMMARS = {
    "python": ("tree_sitter_python", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "java": ("tree_sitter_java", "language"),
    "c": ("tree_sitter_c", "language"),
    "cpp": ("tree_sitter_cpp", "language"),
    "csharp": ("tree_sitter_c_sharp", "language"),
    "ruby": ("tree_sitter_ruby", "language"),
}
"""Grammar wheel and the function that returns its language, per syntax."""


@cache
def _language(syntax: str) -> ts.Language:
    try:
        module, function = GRAMMARS[syntax]
    except KeyError:
        raise ValueError(f"no tree-sitter grammar for {syntax!r}") from None
    return ts.Language(getattr(importlib.import_module(module), function)())


def supports(syntax: str) -> bool:
    return syntax in DEFINITIONS


def _unwrap(node: ts.Node) -> ts.Node:
    while node.type in WRAPPER_FIELDS or node.type == "template_declaration":
        if node.type == "template_declaration":  # C++: what the template parameters are for
            inner = node.named_children[-1] if node.named_children else None
        else:
            inner = node.child_by_field_name(WRAPPER_FIELDS[node.type])
        if inner is None:
            break
        node = inner
    return node


def _declarator_name(node: ts.Node) -> str | None:
    """C and C++: the name a declarator chain ends in (`*f(int)` -> f, `A::g` -> A::g)."""
    declarator = node.child_by_field_name("declarator")
    while declarator is not None and declarator.child_by_field_name("declarator") is not None:
        declarator = declarator.child_by_field_name("declarator")
    return _text(declarator)


def _flatten(nodes: list[ts.Node]) -> list[ts.Node]:
    """Top-level nodes with the TRANSPARENT wrappers replaced by what they hold."""
    out: list[ts.Node] = []
    for node in nodes:
        if node.type in TRANSPARENT:
            body = node.child_by_field_name("body")
            out.extend(_flatten(body.named_children if body is not None else node.named_children))
        else:
            out.append(node)
    return out


def _text(node: ts.Node | None) -> str | None:
    return node.text.decode("utf-8", "replace") if node is not None and node.text is not None else None


def symbol_name(node: ts.Node) -> str | None:
    node = _unwrap(node)
    name = node.child_by_field_name("name")
    if name is not None and node.type == "method_declaration":
        receiver = node.child_by_field_name("receiver")  # Go: func (a *Account) Debit
        if receiver is not None:
            base = _base_type(_text(receiver) or "")
            return f"{base}.{_text(name)}" if base else _text(name)
    if name is not None:
        return _text(name)
    if node.type in ("function_definition", "type_definition"):  # C, C++
        return _declarator_name(node)
    if node.type == "impl_item":
        target, trait = node.child_by_field_name("type"), node.child_by_field_name("trait")
        target_name = _base_type(_text(target) or "")
        return f"{_base_type(_text(trait) or '')} for {target_name}" if trait is not None else target_name
    for child in node.named_children:
        if child.type in ("type_spec", "variable_declarator"):
            return _text(child.child_by_field_name("name"))
    return None


def _base_type(text: str) -> str:
    """`(a *Account)` -> Account, `Ring<T>` -> Ring."""
    words = [w for w in text.strip("()").replace("*", " ").replace("&", " ").split() if w]
    return (words[-1] if words else "").split("<")[0]


def _is_definition(node: ts.Node, syntax: str) -> bool:
    if node.type not in DEFINITIONS[syntax]:
        return False
    inner = _unwrap(node)
    if inner.type in ("lexical_declaration", "variable_declaration"):
        # `const f = () => ...` is a function; `const x = 1` is a plain statement.
        return any(
            (value := d.child_by_field_name("value")) is not None and value.type in FUNCTION_VALUES
            for d in inner.named_children
            if d.type == "variable_declarator"
        )
    if node.type == "export_statement":
        return inner is not node
    return True


def _body(node: ts.Node) -> ts.Node | None:
    body = _unwrap(node).child_by_field_name("body")
    if body is not None and body.named_child_count > 0:
        return body
    return None


@dataclass(slots=True)
class _Span:
    start: int  # 0-based line, inclusive
    end: int  # 0-based line, inclusive


class CodeChunker:
    """Chunks code files; one instance serves every thread, so each call walks with
    state of its own (a `_Walk`) and the chunker keeps only its settings."""

    def __init__(self, max_tokens: int, overlap_tokens: int) -> None:
        self.max_tokens = max_tokens
        self.overlap_tokens = overlap_tokens

    def chunk(self, text: str, syntax: str) -> list[Chunk]:
        # A parser per call: they cost a microsecond and hold per-parse state.
        tree = ts.Parser(_language(syntax)).parse(text.encode("utf-8"))
        walk = _Walk(syntax, Lines(text, self.max_tokens, self.overlap_tokens))
        walk.members(_flatten(tree.root_node.named_children), (), first_line=0, last_line=len(walk.doc) - 1)
        return walk.chunks


@dataclass(slots=True)
class _Walk:
    """One file's walk over its syntax tree, and the fragments it has emitted so far."""

    syntax: str
    doc: Lines
    chunks: list[Chunk] = field(default_factory=list)

    @property
    def max_tokens(self) -> int:
        return self.doc.max_tokens

    # -- walking ---------------------------------------------------------------

    def members(self, nodes: list[ts.Node], path: tuple[str, ...], first_line: int, last_line: int) -> None:
        """Emit fragments for the children of one container, covering first..last_line."""
        group: _Span | None = None
        cursor = first_line
        pending_comments: int | None = None  # start line of comments just above a definition
        shared = _sharing_a_line(nodes)
        for node in nodes:
            start, end = max(node.start_point.row, cursor), node.end_point.row
            if end < cursor:
                continue
            if node.type in COMMENTS:
                pending_comments = start if pending_comments is None else pending_comments
                continue
            if _is_definition(node, self.syntax) and node.id not in shared:
                unit_start = pending_comments if pending_comments is not None else start
                if group is not None:
                    # A short prelude (an import or two, a constant) is context for the
                    # unit after it, not a fragment of its own that would match anything.
                    if (
                        self._span_tokens(group.start, unit_start - 1) < SMALL_PRELUDE_TOKENS
                        and self._span_tokens(group.start, end) <= self.max_tokens
                    ):
                        unit_start = group.start
                    else:
                        self._emit(group.start, unit_start - 1, path)
                    group = None
                elif unit_start > cursor:
                    # Lines before the first member (a class line, a file header) stay
                    # with it when they fit; otherwise they stand alone.
                    if self._span_tokens(cursor, end) <= self.max_tokens:
                        unit_start = cursor
                    else:
                        self._emit(cursor, unit_start - 1, path)
                self._definition(node, path, unit_start, end)
            else:
                group_start = pending_comments if pending_comments is not None else start
                if group is None:
                    group = _Span(min(cursor, group_start), end)
                elif self._span_tokens(group.start, end) > self.max_tokens:
                    self._emit(group.start, group_start - 1, path)
                    group = _Span(group_start, end)
                else:
                    group.end = end
            pending_comments = None
            cursor = end + 1
        if group is not None:
            self._emit(group.start, max(group.end, last_line), path)
        elif cursor <= last_line:
            self._emit(cursor, last_line, path)

    def _definition(self, node: ts.Node, path: tuple[str, ...], start: int, end: int) -> None:
        name = symbol_name(node) or _unwrap(node).type
        symbol_path = (*path, name)
        if self._span_tokens(start, end) <= self.max_tokens:
            self._emit(start, end, symbol_path)
            return
        body = _body(node)
        inner = _unwrap(node)
        if body is not None and inner.type not in _FUNCTION_LIKE:
            members = [c for c in body.named_children if c.end_point.row >= start]
            # The container's own lines (signature, docstring, fields) go with its
            # first statements; each member definition becomes its own fragment.
            self.members(members, symbol_path, first_line=start, last_line=end)
            return
        breaks = _statement_starts(body, start) if body is not None else frozenset()
        self._emit(start, end, symbol_path, breaks)

    # -- emitting --------------------------------------------------------------

    def _span_tokens(self, start: int, end: int) -> int:
        return self.doc.span_tokens(start, end + 1)

    def _emit(self, start: int, end: int, path: tuple[str, ...], breaks: frozenset[int] = frozenset()) -> None:
        """Lines start..end as one fragment, or as several when over the bound, cut at
        `breaks` (lines where a statement starts) when it can."""
        lines = self.doc.lines
        end = min(end, len(lines) - 1)  # a node left open at the end reaches the row after the last newline
        while start <= end and not lines[start].strip():
            start += 1
        while end >= start and not lines[end].strip():
            end -= 1
        for piece in self.doc.pieces(start, end + 1, breaks):
            self.chunks.append(Chunk.of(piece, path, ".".join(path) if path else None))


_FUNCTION_LIKE = frozenset(
    {
        "function_definition",
        "function_declaration",
        "method_definition",
        "method_declaration",
        "function_item",
        "constructor_declaration",
        "generator_function_declaration",
        "lexical_declaration",
        "variable_declaration",
    }
)


def _sharing_a_line(nodes: list[ts.Node]) -> set[int]:
    """Ids of one-line nodes followed on their line by another node (minified code): a
    fragment of that line holds more than their symbol."""
    shared: set[int] = set()
    next_start: int | None = None
    for node in reversed(nodes):
        if node.type in COMMENTS:
            continue
        if node.start_point.row == node.end_point.row == next_start:
            shared.add(node.id)
        next_start = node.start_point.row
    return shared


def _statement_starts(body: ts.Node, floor: int) -> frozenset[int]:
    """Lines where a statement of the body (or of a nested block) begins."""
    starts: set[int] = set()
    stack = list(body.named_children)
    while stack:
        node = stack.pop()
        if node.start_point.row > floor:
            starts.add(node.start_point.row)
        if node.end_point.row - node.start_point.row > 3:
            block = node.child_by_field_name("body") or node.child_by_field_name("consequence")
            if block is not None:
                stack.extend(block.named_children)
    return frozenset(starts)
