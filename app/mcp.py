"""The MCP door (Model Context Protocol): the service's capabilities as tools, over
Streamable HTTP at /mcp in the service itself and over stdio (`contexts mcp`).

Each tool runs what the matching HTTP endpoint runs (app.operations.*), with the same argument
structs and the same validation, as the principal of the caller's API key: every call
authenticates the key in its own transaction (the `Authorization: Bearer` header of the
HTTP request; CONTEXTS_KEY over stdio), so row-level security bounds a tool exactly as
it bounds an HTTP request, and a key revoked mid-session fails the next call. Errors
are tool results with `isError` (the HTTP status, title and message of the same
failure over HTTP, from app.operations.errors), never a traceback. Streamable HTTP is
mounted in the service's application by app.serve.mcp_http; this module loads no
Litestar.
"""

from __future__ import annotations

import ast
import inspect
import json
import os
import sys
import textwrap
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from functools import cache
from io import TextIOWrapper
from typing import Annotated, Any

import anyio
import msgspec
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from app import __version__
from app.operations.auth import token_from_header
from app.operations.documents import delete_document, list_documents, read_document
from app.operations.errors import Failure, failure_of
from app.operations.fragments import read_fragment, read_links, read_trace
from app.operations.pins import add_pin, list_pins, remove_pin
from app.operations.retrieve import run_retrieval
from app.operations.services import Services
from app.operations.sessions import SESSION_PATTERN, open_session, promote_note, write_note
from app.operations.whoami import whoami
from app.readable import repeated_key, surrogate_at
from app.wire.bodies import (
    MAX_BIGINT,
    UUID_PATTERN,
    ContextPack,
    DocumentDeleted,
    DocumentDetail,
    DocumentPage,
    DocumentPath,
    DocumentQuery,
    DocumentRead,
    DocumentRef,
    FragmentDetail,
    FragmentLinks,
    Identifier,
    NotePromote,
    NoteResult,
    NoteWrite,
    PersonName,
    PinCreate,
    PinList,
    PinOut,
    PinQuery,
    PinRef,
    PromotedNote,
    SessionOpen,
    TraceOut,
    WhoamiOut,
)
from app.wire.pattern_words import in_words
from app.wire.retrieve import RetrieveRequest, RetrieveResponse, ScopeIn

MOUNT_PATH = "/mcp"

INSTRUCTIONS = """\
Contexts holds your organisation's durable knowledge (code, ADRs, runbooks, policies,
earlier session notes), each fragment cited as path#anchor at a document version.
Call `whoami` first: it gives your org_id (every other tool names it in `scope`) and the
repos, personas and sessions you may read. `retrieve` returns cited fragments within a
token budget; quote their text exactly and cite `source`. Starting a task, call
`open_session` with the task: it opens a session and returns its context pack (pinned
fragments and known traps first: a fragment with `negative: true` says what NOT to do).
Write what you learn in that session with `write_note` (scope.session_id required)."""


class NoArguments(msgspec.Struct, forbid_unknown_fields=True):
    pass


class FragmentRef(msgspec.Struct, forbid_unknown_fields=True):
    fragment_id: Annotated[int, msgspec.Meta(ge=1, le=MAX_BIGINT)]


class TraceRef(msgspec.Struct, forbid_unknown_fields=True):
    trace_id: Annotated[str, msgspec.Meta(pattern=UUID_PATTERN)]
    """The `trace_id` a retrieval returned."""


class NoteIn(NoteWrite, kw_only=True, forbid_unknown_fields=True):
    """A session note: POST /sessions/{id}/notes's body, with the scope that names the session."""

    scope: ScopeIn
    """scope.session_id is required: a note lives in its session (and expires with it)."""


async def _write_note(services: Services, token: str, note: NoteIn) -> NoteResult:
    if note.scope.session_id is None:
        raise msgspec.ValidationError("a note needs `scope.session_id`: notes are written into a session")
    result, _replayed = await write_note(services, token, note.scope.org_id, note.scope.session_id, note)
    return result


class NoteRef(msgspec.Struct, forbid_unknown_fields=True):
    """The MCP tool `promote_note`'s arguments: which note, and where it goes."""

    session_id: Annotated[str, msgspec.Meta(pattern=SESSION_PATTERN)]
    note_id: Annotated[int, msgspec.Meta(ge=1, le=MAX_BIGINT)]
    """The note's id: the `doc_id` write_note returned."""
    repo_id: Identifier | None = None
    """Target repo; absent: org-wide (needs an org write grant)."""
    owner: PersonName | None = None
    path: DocumentPath | None = None


async def _promote(services: Services, token: str, ref: NoteRef) -> msgspec.Struct:
    return await promote_note(
        services, token, ref.session_id, ref.note_id, NotePromote(ref.repo_id, ref.owner, ref.path)
    )


async def _delete(services: Services, token: str, ref: DocumentRef) -> msgspec.Struct:
    return await delete_document(services, token, ref.doc_id)


async def _unpin(services: Services, token: str, ref: PinRef) -> msgspec.Struct:
    return await remove_pin(services, token, ref.pin_id)


@dataclass(frozen=True, slots=True)
class Tool:
    name: str
    description: str
    arguments: type[msgspec.Struct]
    result: type[msgspec.Struct]
    run: Callable[[Services, str, Any], Awaitable[msgspec.Struct]]
    writes: bool = False
    destructive: bool = False

    def definition(self) -> types.Tool:
        return types.Tool(
            name=self.name,
            description=self.description,
            inputSchema=object_schema(self.arguments),
            outputSchema=object_schema(self.result),
            annotations=types.ToolAnnotations(
                readOnlyHint=not self.writes,
                destructiveHint=self.destructive,
                idempotentHint=not self.destructive,
                openWorldHint=False,
            ),
        )


def object_schema(struct: type[msgspec.Struct]) -> dict[str, Any]:
    """msgspec's JSON Schema of a struct with the struct itself at the top (MCP wants an
    object schema there, not a `$ref`); the structs it uses stay under `$defs`. Each
    field's docstring becomes its `description`: an agent reads the schema, not our source."""
    schema = msgspec.json.schema(struct)
    documented = {
        cls.__name__: {k: v for base in reversed(cls.__mro__) for k, v in field_docs(base).items()}
        for cls in structs_within(struct)
    }
    for name, definition in schema.get("$defs", {}).items():
        for field, doc in documented.get(name, {}).items():
            prop = definition.get("properties", {}).get(field)
            if prop is not None and "description" not in prop:
                prop["description"] = doc
    defs: dict[str, Any] = schema.pop("$defs", {})
    top = defs.pop(schema["$ref"].rsplit("/", 1)[-1]) if "$ref" in schema else schema
    if defs:
        top["$defs"] = defs
    return top


def structs_within(struct: type[msgspec.Struct]) -> list[type[msgspec.Struct]]:
    """The struct and every struct its fields hold, however nested (lists, unions)."""
    found: dict[type, None] = {}

    def visit(info: msgspec.inspect.Type) -> None:
        if isinstance(info, msgspec.inspect.StructType):
            if info.cls in found:
                return
            found[info.cls] = None
            for f in info.fields:
                visit(f.type)
        elif isinstance(info, msgspec.inspect.UnionType):
            for t in info.types:
                visit(t)
        elif isinstance(info, msgspec.inspect.ListType | msgspec.inspect.SetType | msgspec.inspect.FrozenSetType):
            visit(info.item_type)
        elif isinstance(info, msgspec.inspect.DictType):
            visit(info.value_type)
        elif isinstance(info, msgspec.inspect.Metadata):
            visit(info.type)

    visit(msgspec.inspect.type_info(struct))
    return list(found)


@cache
def field_docs(cls: type) -> dict[str, str]:
    """A class's attribute docstrings (the string right after a field), read from its
    source: Python keeps no such docstring at run time, and msgspec reads only
    `Meta(description=...)`, which would say each of them a second time."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    except (OSError, TypeError, SyntaxError):
        return {}
    body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
    docs: dict[str, str] = {}
    for field, after in zip(body, body[1:], strict=False):
        if (
            isinstance(field, ast.AnnAssign)
            and isinstance(field.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            docs[field.target.id] = " ".join(after.value.value.split())
    return docs


async def _whoami(services: Services, token: str, _: NoArguments) -> msgspec.Struct:
    return await whoami(services, token)


async def _fragment(services: Services, token: str, ref: FragmentRef) -> msgspec.Struct:
    return await read_fragment(services, token, ref.fragment_id)


async def _links(services: Services, token: str, ref: FragmentRef) -> msgspec.Struct:
    return await read_links(services, token, ref.fragment_id)


async def _trace(services: Services, token: str, ref: TraceRef) -> msgspec.Struct:
    return await read_trace(services, token, ref.trace_id)


TOOLS = [
    Tool(
        "whoami",
        "Your org_id and principal, and the repos, personas and sessions you may read "
        "(org_wide: every repo and persona). Every other tool names the org in scope.org_id.",
        NoArguments,
        WhoamiOut,
        _whoami,
    ),
    Tool(
        "retrieve",
        "Hybrid (BM25 + dense) retrieval of cited fragments for a query within a scope and a "
        "token budget: each fragment's exact text, `source` (path#anchor), document id and "
        "version, score, and the request's `trace_id` (see get_trace). Same arguments as "
        "POST /contexts/retrieve. Persona and session fragments are included only when "
        "scope names that persona or session.",
        RetrieveRequest,
        RetrieveResponse,
        run_retrieval,
    ),
    Tool(
        "get_fragment",
        "A fragment you may read, with its provenance (owner, chunker version, embedding "
        "model) and every source pointer; any other id is 'not found'.",
        FragmentRef,
        FragmentDetail,
        _fragment,
    ),
    Tool(
        "get_fragment_links",
        "What a fragment you may read cites (`outgoing`: resolved, or still waiting for "
        "its target) and what cites it (`incoming`), each with the fragment at the other "
        "end and its source: follow links on demand instead of retrieving more.",
        FragmentRef,
        FragmentLinks,
        _links,
    ),
    Tool(
        "get_trace",
        "A retrieval trace: every candidate's lexical and dense rank, fused, rerank and final "
        "score, and whether (or why not) it was included. Yours, or your org's with an audit grant.",
        TraceRef,
        TraceOut,
        _trace,
    ),
    Tool(
        "list_documents",
        "A page of the documents a retrieval in this scope reads from (those you may read), in "
        "doc_id order; pass `next_after` as `after` for the next page.",
        DocumentQuery,
        DocumentPage,
        list_documents,
    ),
    Tool(
        "read_document",
        "One version of a document (the current one by default): its text, or a slice of it "
        "(offset, max_chars), and the fragments it was cut into.",
        DocumentRead,
        DocumentDetail,
        read_document,
    ),
    Tool(
        "write_note",
        "Write a note into a session (scope.session_id required; a session you may write, or a "
        "new one, which is then opened for you): stored as a document of the session, indexed "
        "at once, readable by retrieve in that session, and expiring with it.",
        NoteIn,
        NoteResult,
        _write_note,
        writes=True,
    ),
    Tool(
        "open_session",
        "Start a task: open a session (or join scope.session_id) and get its context pack, the "
        "fragments best matching `task` within `budget_tokens`, each cited, also rendered as one "
        "Markdown block. Write what you learn with write_note in that session.",
        SessionOpen,
        ContextPack,
        open_session,
        writes=True,
    ),
    Tool(
        "promote_note",
        "Promote a session note to a repo (repo_id) or to the whole org: it becomes canonical "
        "knowledge there, with an owner and its provenance. Needs a write grant on the target.",
        NoteRef,
        PromotedNote,
        _promote,
        writes=True,
    ),
    Tool(
        "delete_document",
        "Delete a document you may write: its fragments leave retrieval at once (its history is "
        "kept for audit). Needs a write grant on its scope.",
        DocumentRef,
        DocumentDeleted,
        _delete,
        writes=True,
        destructive=True,
    ),
    Tool(
        "pin",
        "Pin a fragment to a scope (where you hold a write grant): every retrieval and session "
        "pack that sees that scope returns it first, flagged pinned, whatever its relevance. "
        "Give the reason; expires_at (optional) ends the pin.",
        PinCreate,
        PinOut,
        add_pin,
        writes=True,
    ),
    Tool(
        "list_pins",
        "The pins a retrieval in this scope sees, earliest first (the order they are composed in).",
        PinQuery,
        PinList,
        list_pins,
    ),
    Tool(
        "unpin",
        "Remove a pin (a write grant on its scope is needed).",
        PinRef,
        PinOut,
        _unpin,
        writes=True,
        destructive=True,
    ),
]


TOOLS_BY_NAME = {tool.name: tool for tool in TOOLS}


@cache
def tool_definitions() -> list[types.Tool]:
    """Made once (a schema per struct, each field's description read from its source),
    not on every tools/list."""
    return [tool.definition() for tool in TOOLS]


def error_result(failure: Failure) -> types.CallToolResult:
    """A failed call: the status and message an HTTP client would get, as text and structured."""
    body: dict[str, Any] = {"status": failure.status, "title": failure.title, "detail": failure.detail}
    if failure.sqlstate:
        body["sqlstate"] = failure.sqlstate
    text = f"{failure.title} ({failure.status}): {failure.detail}"
    if failure.hint:
        body["hint"] = failure.hint
        text += f" ({failure.hint})"
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structuredContent=body,
        isError=True,
    )


def build_server(services: Callable[[], Services], key: str | None = None) -> Server:
    """The MCP server. With `key` (stdio) every call acts for that key; without it (HTTP),
    for the key in the `Authorization` header of the request that carries the call."""
    server: Server = Server("contexts", version=__version__, instructions=INSTRUCTIONS)

    def token() -> str:
        if key is not None:
            return key
        request = server.request_context.request
        return token_from_header(request.headers.get("authorization") if request is not None else None)

    @server.list_tools()
    async def list_tools() -> list[types.Tool]:
        return tool_definitions()

    # Arguments are validated below by the same msgspec structs as the HTTP bodies, so
    # the messages are the HTTP API's; the SDK's own jsonschema pass would only differ.
    @server.call_tool(validate_input=False)
    async def call_tool(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        tool = TOOLS_BY_NAME.get(name)
        if tool is None:
            return error_result(Failure(404, f"unknown tool {name!r}; tools: {', '.join(TOOLS_BY_NAME)}"))
        where = surrogate_at(arguments)
        if where is not None:  # the SDK's JSON parser lets `"\ud800"` through; nothing else can store it
            return error_result(
                Failure(400, f"invalid arguments: a lone UTF-16 surrogate at {where}; send valid Unicode text")
            )
        try:
            args = msgspec.convert(arguments, tool.arguments)
            result = await tool.run(services(), token(), args)
        except msgspec.ValidationError as exc:
            return error_result(Failure(400, f"invalid arguments: {in_words(str(exc))}"))
        except Exception as exc:
            return error_result(failure_of(exc, f"mcp tool {name}"))
        data = msgspec.to_builtins(result)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=json.dumps(data, ensure_ascii=False))],
            structuredContent=data,
        )

    return server


# -- stdio ------------------------------------------------------------------------------


async def serve_stdio(services: Services, key: str) -> None:
    """Serve one MCP client on stdin/stdout as the key's principal. Stray writes to file
    descriptor 1 (a library's print) would corrupt the protocol: the protocol keeps its
    own copy of stdout and fd 1 is pointed at stderr."""
    protocol_out = os.fdopen(os.dup(1), "w", encoding="utf-8", newline="\n")
    os.dup2(2, 1)
    server = build_server(lambda: services, key)
    stdout = anyio.wrap_file(protocol_out)
    # Bytes that are not UTF-8 pass as lone surrogates and are refused by line_error
    # (with "replace" they became U+FFFD and were stored as written text).
    stdin = CheckedLines(
        anyio.wrap_file(TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="surrogateescape")), stdout
    )
    async with stdio_server(stdin=stdin, stdout=stdout) as (read_stream, write_stream):  # type: ignore[arg-type]
        await server.run(read_stream, write_stream, server.create_initialization_options())


class EnvelopeError(ValueError):
    """A JSON-RPC message that the SDK would misread: its JSON-RPC error code, and the
    request's id where the message still shows it."""

    def __init__(self, code: int, message: str, ident: object = None) -> None:
        super().__init__(message)
        self.code = code
        self.ident = ident


class UnknownMethod(EnvelopeError):
    """A request for a method this server does not answer: JSON-RPC's -32601. The SDK
    answered a name MCP lacks as invalid parameters (-32602), so a client could not tell a
    typo from a bad call."""


ANSWERED_METHODS = frozenset({"initialize", "ping", "tools/list", "tools/call"})
"""The requests this server answers: the session's own `initialize` and the handlers
build_server registers (tests/api/test_hardening.py holds the two together). MCP's other
methods (resources/*, prompts/*, ...) get JSON-RPC's -32601 naming these."""


def read_envelope(raw: bytes) -> object:
    """A JSON-RPC message (or batch) as both transports take it: the SDK's own parser
    (Python's) takes what is not JSON (NaN, Infinity, a lone UTF-16 surrogate) and fails
    with a 500 on bytes that are not UTF-8 or an integer of thousands of digits, and it
    accepts an id that is an object. Raises EnvelopeError for each of those."""
    try:
        message = msgspec.json.decode(raw)
    except RecursionError:  # the SDK's parser hits Python's recursion limit too
        raise EnvelopeError(-32700, "the message is nested too deeply") from None
    except msgspec.DecodeError as exc:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as bad:
            raise EnvelopeError(
                -32700, f"the message is not UTF-8 (byte {bad.object[bad.start]:#04x} at {bad.start})"
            ) from None
        if "out of range" in str(exc):  # an integer past 64 bits: Python's parser fails past 4,300 digits
            raise EnvelopeError(-32700, f"the message holds a number out of range ({exc})") from None
        try:
            lax = json.loads(text)
        except (ValueError, RecursionError):
            raise EnvelopeError(-32700, f"malformed JSON: {exc}") from None
        ident = lax.get("id") if isinstance(lax, dict) else None
        raise EnvelopeError(
            -32700,
            "the message is not standard JSON: it holds NaN, Infinity or a lone UTF-16 surrogate (\\ud800)",
            ident if _valid_id(ident) else None,
        ) from None
    for each in message if isinstance(message, list) else [message]:
        if isinstance(each, dict) and "id" in each and not _valid_id(each["id"]):
            raise EnvelopeError(-32600, "a JSON-RPC id must be a string, an integer within 64 bits, or null")
        shape = envelope_problem(each)
        if shape is not None:
            raise EnvelopeError(-32600, shape, each.get("id") if isinstance(each, dict) else None)
    repeated = repeated_key(raw)
    if repeated is not None:
        ident = message.get("id") if isinstance(message, dict) else None
        raise EnvelopeError(-32600, f"the key {repeated!r} is given twice in one object: give it once", ident)
    if isinstance(message, dict) and message.get("id", 0) is None and isinstance(message.get("method"), str):
        # JSON-RPC takes it as a request; MCP forbids it, and the SDK took it for a notification (no answer).
        raise EnvelopeError(-32600, "a request's id must not be null in MCP: give a string or an integer")
    if isinstance(message, dict) and "id" in message and isinstance(message.get("method"), str):
        if message["method"] not in ANSWERED_METHODS:  # a notification of no known method is ignored
            raise UnknownMethod(
                -32601,
                f"no method {shown_method(message['method'])}; "
                f"this server answers {', '.join(sorted(ANSWERED_METHODS))}",
                message["id"],
            )
    return message


def envelope_problem(message: object) -> str | None:
    """What makes a message no JSON-RPC 2.0 request, notification or response (None: it
    is one). The SDK answered these with a log notification and never with the request's
    id, so a client waiting on that id waited forever."""
    if not isinstance(message, dict):
        return "a JSON-RPC message is an object"
    if message.get("jsonrpc") != "2.0":
        return 'a JSON-RPC 2.0 message has "jsonrpc": "2.0"'
    if "method" in message:
        if not isinstance(message["method"], str):
            return "a method is named by a string"
        if "params" in message and not isinstance(message["params"], dict):
            return "MCP's params are an object (named parameters)"
        return None
    if "id" in message and ("result" in message) != ("error" in message):
        return None  # a response to a request of this server's
    return "a message names a method (a request or a notification) or answers one (a result or an error, with its id)"


def shown_method(name: str) -> str:
    """A client's method name quoted, cut short and with control characters escaped."""
    return json.dumps(name if len(name) <= 80 else name[:80] + "...")


class CheckedLines:
    """stdin's lines for the SDK's stdio transport, each one that is not a JSON-RPC
    message it can answer answered here instead, with JSON-RPC's error and the request's
    id where it can be read: the SDK answered malformed JSON, a batch, a lone surrogate
    or an id of thousands of digits with a notification, so a client waiting on its id
    waited forever."""

    def __init__(self, lines: Any, out: Any) -> None:
        self.lines = lines
        self.out = out

    async def __aiter__(self) -> AsyncIterator[str]:
        async for line in self.lines:
            if not line.strip():
                continue
            error = line_error(line)
            if error is None:
                yield line
                continue
            await self.out.write(json.dumps(error) + "\n")
            await self.out.flush()


def line_error(line: str) -> dict[str, Any] | None:
    """The JSON-RPC error response to one line of stdin (None: the SDK may read it)."""
    try:
        message = read_envelope(line.encode("utf-8", "surrogateescape"))
    except EnvelopeError as exc:
        return json_rpc_error(exc.ident, exc.code, str(exc))
    if isinstance(message, list):
        return json_rpc_error(None, -32600, "batches are not supported; send one message per line")
    return None


def _valid_id(ident: object) -> bool:
    """JSON-RPC 2.0 (4): a string, a number (here: an integer within 64 bits) or null."""
    return ident is None or isinstance(ident, str) or (type(ident) is int and -(2**63) <= ident < 2**63)


def json_rpc_error(ident: object, code: int, message: str) -> dict[str, Any]:
    title = {-32700: "Parse error", -32601: "Method not found"}.get(code, "Invalid Request")
    return {"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": f"{title}: {message}"}}
