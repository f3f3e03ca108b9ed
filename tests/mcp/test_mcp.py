"""The MCP door, driven by the MCP SDK's own client over both transports: Streamable
HTTP against the service as `contexts serve` runs it (uvicorn on a free port), and
stdio against `contexts mcp` spawned as a process. Real database, real keys; a tool
reads and writes exactly what its key's grants allow."""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import psycopg
import pytest
from mcp import ClientSession, types
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from app.access import create_api_key, ensure_admin_principal, key_id_of
from tests.conftest import login_url
from tests.retrieve.corpus import CODE, DOCS

ROOT = Path(__file__).resolve().parents[2]
TOOLS = {
    "whoami",
    "retrieve",
    "get_fragment",
    "get_fragment_links",
    "get_trace",
    "list_documents",
    "read_document",
    "write_note",
    "open_session",
    "promote_note",
    "delete_document",
    "pin",
    "list_pins",
    "unpin",
}
STORAGE_QUERY = "what to do when the storage volume is full"


@dataclass
class Tenants:
    """acme (documents ingested; an administrator and a read-only agent) and globex (empty)."""

    db_url: str
    acme_admin: str
    acme_reader: str
    globex_admin: str


@pytest.fixture
def tenants(db_url, ingest) -> Tenants:
    ingest("acme", DOCS | CODE, author="Ada", owner="Ada")
    return keys_of_tenants(db_url)


def keys_of_tenants(db_url: str) -> Tenants:
    """Keys of acme's administrator and of a read-only agent, and a new org globex."""
    with psycopg.connect(db_url) as conn:
        acme_admin = create_api_key(conn, "acme", "admin").token
        conn.execute("select service.create_principal('acme', 'reader', 'agent', 'read-only agent')")
        conn.execute("select service.grant_scope('acme', 'reader', 'org', null, false)")
        acme_reader = create_api_key(conn, "acme", "reader").token
        conn.execute("select service.create_org('globex')")
        ensure_admin_principal(conn, "globex", "admin")
        globex_admin = create_api_key(conn, "globex", "admin").token
    return Tenants(db_url, acme_admin, acme_reader, globex_admin)


def revoke(db_url: str, token: str) -> None:
    with psycopg.connect(db_url) as conn:
        conn.execute("select service.revoke_api_key(%s)", (key_id_of(token),))


@pytest.fixture
def served(settings, models, tenants, logins) -> Iterator[str]:
    """The service on a free loopback port, as `contexts serve` runs it; yields its /mcp URL."""
    from app.api.server import bind, build_server
    from app.serve.app import build_services, create_app

    local = settings.with_(
        database_url=tenants.db_url,
        service_database_url=login_url(tenants.db_url, logins["service"]),
        log_level="warning",
    )
    services = build_services(local, tenants.db_url)
    sock = bind("127.0.0.1", 0)
    started = threading.Event()
    server = build_server(create_app(local, services=services), local, on_started=started.set)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        assert started.wait(60), "the server did not start"
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    finally:
        server.should_exit = True
        thread.join(30)
        services.close()
        sock.close()


Session = Callable[[ClientSession], Awaitable[Any]]


def over_http(url: str, token: str | None, body: Session) -> Any:
    """Run `body` in an initialized MCP client session over Streamable HTTP."""

    async def main() -> Any:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        async with (
            httpx.AsyncClient(headers=headers, timeout=60, trust_env=False) as http,
            streamable_http_client(url, http_client=http) as (read, write, _),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return await body(session)

    return anyio.run(main)


def data(result: types.CallToolResult) -> dict[str, Any]:
    """A successful call's structured result (the same JSON is the text content)."""
    assert not result.isError, result.content
    assert result.structuredContent is not None
    text = result.content[0]
    assert isinstance(text, types.TextContent) and json.loads(text.text) == result.structuredContent
    return result.structuredContent


def failure(result: types.CallToolResult, status: int) -> str:
    """A failed call: isError, the HTTP status of the same failure, a message, no traceback."""
    assert result.isError, result.structuredContent
    text = result.content[0]
    assert isinstance(text, types.TextContent)
    assert result.structuredContent is not None and result.structuredContent["status"] == status, text.text
    assert "Traceback" not in text.text and 'File "' not in text.text
    return text.text


def retrieval(org: str = "acme", **extra: Any) -> dict[str, Any]:
    return {"query": STORAGE_QUERY, "scope": {"org_id": org}, "budget_tokens": 400, **extra}


# --- Streamable HTTP --------------------------------------------------------------------


def test_http_lists_tools_and_retrieves_cited_fragments_of_the_keys_org(served, tenants):
    async def body(session: ClientSession) -> None:
        listed = await session.list_tools()
        assert {t.name for t in listed.tools} == TOOLS
        for tool in listed.tools:
            assert tool.description and tool.inputSchema["type"] == "object"
        retrieve_tool = next(t for t in listed.tools if t.name == "retrieve")
        assert {"query", "scope", "budget_tokens", "k_lexical", "k_dense"} <= set(
            retrieve_tool.inputSchema["properties"]
        )
        # A field's docstring is its description: an agent learns which id goes where.
        promote = next(t for t in listed.tools if t.name == "promote_note")
        assert "`doc_id` write_note returned" in promote.inputSchema["properties"]["note_id"]["description"]
        assert "relevance" in retrieve_tool.inputSchema["properties"]["min_relevance"]["description"]

        me = data(await session.call_tool("whoami", {}))
        assert (me["org_id"], me["principal_id"], me["org_wide"]) == ("acme", "reader", True)

        result = data(await session.call_tool("retrieve", retrieval()))
        fragments = result["fragments"]
        assert result["trace_id"] and fragments
        top = fragments[0]
        assert top["source"] == "runbooks/storage.md#storage-runbook"
        assert top["text"] == DOCS["runbooks/storage.md"].strip()
        assert top["version"] == 1 and top["doc_id"] and top["owner"] == "Ada"
        assert sum(f["tokens"] for f in fragments) == result["tokens_used"] <= 400

        fragment = data(await session.call_tool("get_fragment", {"fragment_id": top["id"]}))
        assert fragment["org_id"] == "acme" and fragment["sources"][0]["path"] == "runbooks/storage.md"
        links = data(await session.call_tool("get_fragment_links", {"fragment_id": top["id"]}))
        assert links["fragment_id"] == top["id"] and isinstance(links["outgoing"], list)
        trace = data(await session.call_tool("get_trace", {"trace_id": result["trace_id"]}))
        assert trace["query"] == STORAGE_QUERY
        composed = sorted((c for c in trace["candidates"] if c["included"]), key=lambda c: c["final_rank"])
        assert [c["fragment_id"] for c in composed] == [f["id"] for f in fragments]

        page = data(await session.call_tool("list_documents", {"scope": {"org_id": "acme"}, "limit": 5}))
        assert len(page["documents"]) == 5 and page["next_after"] == page["documents"][-1]["doc_id"]
        rest = data(
            await session.call_tool("list_documents", {"scope": {"org_id": "acme"}, "after": page["next_after"]})
        )
        paths = {d["path"] for d in page["documents"] + rest["documents"]}
        assert paths == set(DOCS | CODE) and rest["next_after"] is None
        document = data(await session.call_tool("read_document", {"doc_id": top["doc_id"]}))
        assert document["path"] == "runbooks/storage.md" and document["content"] == DOCS["runbooks/storage.md"]
        assert top["id"] in [f["fragment_id"] for f in document["fragments"]]
        part = data(await session.call_tool("read_document", {"doc_id": top["doc_id"], "offset": 2, "max_chars": 7}))
        assert part["content"] == "Storage" and part["content_chars"] == len(DOCS["runbooks/storage.md"])

    over_http(served, tenants.acme_reader, body)


def test_http_another_orgs_key_sees_nothing_of_it(served, tenants):
    async def as_acme(session: ClientSession) -> dict[str, Any]:
        return data(await session.call_tool("retrieve", retrieval()))

    acme = over_http(served, tenants.acme_admin, as_acme)
    fragment_id, doc_id = acme["fragments"][0]["id"], acme["fragments"][0]["doc_id"]

    async def as_globex(session: ClientSession) -> None:
        assert data(await session.call_tool("whoami", {}))["org_id"] == "globex"
        message = failure(await session.call_tool("retrieve", retrieval("acme")), 403)
        assert "may not read org acme" in message
        assert data(await session.call_tool("retrieve", retrieval("globex")))["fragments"] == []
        assert "unknown fragment" in failure(await session.call_tool("get_fragment", {"fragment_id": fragment_id}), 404)
        failure(await session.call_tool("get_trace", {"trace_id": acme["trace_id"]}), 404)
        failure(await session.call_tool("read_document", {"doc_id": doc_id}), 404)
        failure(await session.call_tool("list_documents", {"scope": {"org_id": "acme"}}), 403)
        assert data(await session.call_tool("list_documents", {"scope": {"org_id": "globex"}}))["documents"] == []
        note = {"scope": {"org_id": "acme", "session_id": "s1"}, "text": "globex was here"}
        failure(await session.call_tool("write_note", note), 403)

    over_http(served, tenants.globex_admin, as_globex)


def test_http_refuses_a_missing_unknown_or_revoked_key_before_any_mcp_session(served, tenants):
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
    }
    accept = {"accept": "application/json, text/event-stream", "content-type": "application/json"}

    def post(token: str | None) -> httpx.Response:
        headers = accept | ({"authorization": f"Bearer {token}"} if token else {})
        return httpx.post(served, json=initialize, headers=headers, trust_env=False, timeout=30)

    assert post(tenants.acme_reader).status_code == 200
    revoke(tenants.db_url, tenants.acme_reader)
    for token in (tenants.acme_reader, None, "ctx_nope_nope"):
        response = post(token)
        assert response.status_code == 401, response.text
        assert response.headers["content-type"].startswith("application/problem+json")
        assert response.headers["www-authenticate"] == 'Bearer realm="contexts"'
        assert response.json()["status"] == 401 and "jsonrpc" not in response.text
    # The SDK's client stops at the 401 of its first request.
    unauthorized = pytest.RaisesExc(httpx.HTTPStatusError, check=lambda e: e.response.status_code == 401)
    with pytest.RaisesGroup(unauthorized, flatten_subgroups=True):
        over_http(served, tenants.acme_reader, lambda session: session.list_tools())


def test_http_bad_arguments_are_tool_errors(served, tenants):
    async def body(session: ClientSession) -> None:
        bad_retrievals = {
            "budget_tokens": retrieval(budget_tokens=0),
            "k_dense": retrieval(k_dense=5000),
            "unexpected": retrieval(unexpected=True),
            "letter or digit": retrieval(query="   "),
            "both 0": retrieval(k_lexical=0, k_dense=0),
            "org_id": {"query": "x", "scope": {"org_id": "acme'; drop table data.fragments; --"}},
            "query": {"scope": {"org_id": "acme"}},
        }
        for expected, arguments in bad_retrievals.items():
            assert expected in failure(await session.call_tool("retrieve", arguments), 400)
        assert "fragment_id" in failure(await session.call_tool("get_fragment", {"fragment_id": "12"}), 400)
        failure(await session.call_tool("get_fragment", {"fragment_id": 2**63}), 400)
        failure(await session.call_tool("get_trace", {"trace_id": "not-a-uuid"}), 400)
        failure(await session.call_tool("list_documents", {"scope": {"org_id": "acme"}, "limit": 0}), 400)
        failure(await session.call_tool("read_document", {"doc_id": 1, "offset": -1}), 400)
        failure(await session.call_tool("read_document", {"doc_id": 1, "version": 99}), 404)
        assert "session_id" in failure(
            await session.call_tool("write_note", {"scope": {"org_id": "acme"}, "text": "no session"}), 400
        )
        assert "unknown tool" in failure(await session.call_tool("drop_everything", {}), 404)

    over_http(served, tenants.acme_admin, body)


def test_http_session_note_is_written_and_retrieved_only_in_its_session(served, tenants):
    note = "# Deploy freeze\n\nThe payments deploy is frozen until the ledger migration lands on Friday.\n"
    in_session = {"org_id": "acme", "session_id": "run-42"}

    async def body(session: ClientSession) -> None:
        written = data(await session.call_tool("write_note", {"scope": in_session, "text": note}))
        assert written["changed"] and written["fragments"] >= 1 and written["path"].startswith("notes/")
        again = data(await session.call_tool("write_note", {"scope": in_session, "text": note}))
        assert (again["doc_id"], again["changed"]) == (written["doc_id"], False)

        query = {"query": "is the payments deploy frozen", "budget_tokens": 400}
        found = data(await session.call_tool("retrieve", {**query, "scope": in_session}))
        top = found["fragments"][0]
        assert top["doc_id"] == written["doc_id"] and top["source"].startswith(written["path"] + "#")
        assert top["owner"] == "admin" and top["text"] == note.strip()
        outside = data(await session.call_tool("retrieve", {**query, "scope": {"org_id": "acme"}}))
        assert written["doc_id"] not in {f["doc_id"] for f in outside["fragments"]}
        listed = data(await session.call_tool("list_documents", {"scope": in_session, "path_prefix": "notes/"}))
        assert [d["doc_id"] for d in listed["documents"]] == [written["doc_id"]]

    over_http(served, tenants.acme_admin, body)

    async def as_reader(session: ClientSession) -> None:
        failure(await session.call_tool("write_note", {"scope": {**in_session, "session_id": "r"}, "text": note}), 403)
        failure(await session.call_tool("retrieve", {"query": "payments", "scope": in_session}), 403)

    over_http(served, tenants.acme_reader, as_reader)


def test_http_sessions_promotion_and_deletion_follow_the_keys_grants(served, tenants):
    async def as_admin(session: ClientSession) -> None:
        pack = data(await session.call_tool("open_session", {"scope": {"org_id": "acme"}, "task": STORAGE_QUERY}))
        assert pack["fragments"][0]["source"] in pack["markdown"] and pack["session_id"]
        note = data(
            await session.call_tool(
                "write_note",
                {
                    "scope": {"org_id": "acme", "session_id": pack["session_id"]},
                    "text": "# Finding\n\nNode 7 never rotates its journal.\n",
                },
            )
        )
        promoted = data(
            await session.call_tool("promote_note", {"session_id": pack["session_id"], "note_id": note["doc_id"]})
        )
        assert promoted["org_id"] == "acme" and promoted["provenance"]["note_id"] == note["doc_id"]
        failure(await session.call_tool("promote_note", {"session_id": "elsewhere", "note_id": note["doc_id"]}), 404)
        return promoted["doc_id"]

    doc_id = over_http(served, tenants.acme_admin, as_admin)

    async def as_reader(session: ClientSession) -> None:
        failure(await session.call_tool("delete_document", {"doc_id": doc_id}), 403)
        failure(await session.call_tool("open_session", {"scope": {"org_id": "acme"}, "task": "anything"}), 403)

    over_http(served, tenants.acme_reader, as_reader)

    async def deleting(session: ClientSession) -> None:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert tools["delete_document"].annotations.destructiveHint is True
        assert data(await session.call_tool("delete_document", {"doc_id": doc_id}))["doc_id"] == doc_id
        failure(await session.call_tool("read_document", {"doc_id": doc_id}), 404)

    over_http(served, tenants.acme_admin, deleting)


def test_http_pin_tools_follow_the_keys_grants(served, tenants):
    async def as_reader(session: ClientSession) -> int:
        hit = data(await session.call_tool("retrieve", retrieval()))["fragments"][-1]
        failure(
            await session.call_tool("pin", {"scope": {"org_id": "acme"}, "fragment_id": hit["id"], "reason": "r"}), 403
        )
        return hit["id"]

    fragment_id = over_http(served, tenants.acme_reader, as_reader)

    async def as_admin(session: ClientSession) -> int:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert tools["pin"].annotations.readOnlyHint is False and tools["unpin"].annotations.destructiveHint is True
        pin = data(
            await session.call_tool(
                "pin", {"scope": {"org_id": "acme"}, "fragment_id": fragment_id, "reason": "the team's first read"}
            )
        )
        failure(await session.call_tool("pin", {"scope": {"org_id": "acme"}, "fragment_id": fragment_id}), 400)
        return pin["pin_id"]

    pin_id = over_http(served, tenants.acme_admin, as_admin)

    async def reading(session: ClientSession) -> None:
        listed = data(await session.call_tool("list_pins", {"scope": {"org_id": "acme"}}))
        assert [p["pin_id"] for p in listed["pins"]] == [pin_id]
        first = data(await session.call_tool("retrieve", retrieval()))["fragments"][0]
        assert (first["id"], first["pinned"], first["pin_id"]) == (fragment_id, True, pin_id)
        failure(await session.call_tool("unpin", {"pin_id": pin_id}), 403)

    over_http(served, tenants.acme_reader, reading)
    assert over_http(served, tenants.acme_admin, lambda s: s.call_tool("unpin", {"pin_id": pin_id})).isError is False


# --- stdio ------------------------------------------------------------------------------


def stdio_parameters(tenants: Tenants, logins, home: Path, key: str | None) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONTEXTS_")}
    env |= {
        "CONTEXTS_DATABASE_URL": tenants.db_url,
        "CONTEXTS_SERVICE_DATABASE_URL": login_url(tenants.db_url, logins["service"]),
        "CONTEXTS_HOME": str(home),
        "CONTEXTS_LOG_LEVEL": "warning",
    }
    if key is not None:
        env["CONTEXTS_KEY"] = key
    return StdioServerParameters(command=sys.executable, args=["-m", "app.cli", "mcp"], env=env, cwd=ROOT)


def test_stdio_serves_the_keys_principal_and_fails_calls_once_the_key_is_revoked(tenants, logins, tmp_path):
    log = tmp_path / "stderr.log"

    async def main() -> None:
        with log.open("w") as errlog:
            async with (
                stdio_client(stdio_parameters(tenants, logins, tmp_path, tenants.acme_reader), errlog=errlog) as (
                    read,
                    write,
                ),
                ClientSession(read, write) as session,
            ):
                with anyio.fail_after(120):
                    await session.initialize()
                assert {t.name for t in (await session.list_tools()).tools} == TOOLS
                assert data(await session.call_tool("whoami", {}))["principal_id"] == "reader"
                result = data(await session.call_tool("retrieve", retrieval()))
                assert result["fragments"][0]["source"] == "runbooks/storage.md#storage-runbook"
                assert result["trace_id"]
                failure(await session.call_tool("retrieve", retrieval("globex")), 403)
                failure(await session.call_tool("retrieve", retrieval(budget_tokens=-1)), 400)
                revoke(tenants.db_url, tenants.acme_reader)
                message = failure(await session.call_tool("retrieve", retrieval()), 401)
                assert "invalid or revoked API key" in message

    anyio.run(main)
    assert "serving MCP on stdio as principal reader of org acme" in log.read_text()


@pytest.mark.parametrize("case", ["missing", "revoked"])
def test_stdio_refuses_to_start_without_a_valid_key(tenants, logins, tmp_path, case):
    import subprocess

    if case == "revoked":
        revoke(tenants.db_url, tenants.acme_reader)
    parameters = stdio_parameters(tenants, logins, tmp_path, tenants.acme_reader if case == "revoked" else None)
    done = subprocess.run(
        [parameters.command, *parameters.args],
        env=parameters.env,
        cwd=parameters.cwd,
        input="",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0 and done.stdout == ""
    expected = "set CONTEXTS_KEY" if case == "missing" else "CONTEXTS_KEY is not a valid API key"
    assert expected in done.stderr and "Traceback" not in done.stderr


def test_http_a_session_context_reaches_no_other_org_through_retrieve(served, tenants):
    """The retrieve tool names Contexts as HTTP does: a session's Context, which cannot be
    subscribed, is unknown to another org, and outside the scope of its own org's
    requests that do not name the session."""
    base = served.removesuffix("/mcp")
    acme = {"Authorization": f"Bearer {tenants.acme_admin}"}
    pack = httpx.post(
        f"{base}/sessions", json={"scope": {"org_id": "acme"}, "task": "rotate keys"}, headers=acme, trust_env=False
    )
    session = pack.json()["session_id"]
    note = {"text": "# Secret\n\nThe vault unseal share is in the red envelope.\n", "path": "notes/unseal.md"}
    assert httpx.post(f"{base}/sessions/{session}/notes", json=note, headers=acme, trust_env=False).status_code == 201
    ctx = httpx.post(
        f"{base}/contexts", json={"scope": {"org_id": "acme", "session_id": session}, "name": "n"}, headers=acme
    ).json()
    built = httpx.post(f"{base}/contexts/{ctx['ref']}/versions", json={"path_globs": ["notes/**"]}, headers=acme)
    assert built.status_code == 201
    offer = httpx.post(
        f"{base}/contexts/{ctx['ref']}/subscriptions", json={"subscriber_org_id": "globex"}, headers=acme
    )
    assert offer.status_code == 403
    ref = f"{ctx['ref']}@latest"
    # A Context of acme's with no version yet: acme is told so; another org learns nothing.
    empty = httpx.post(f"{base}/contexts", json={"scope": {"org_id": "acme"}, "name": "empty"}, headers=acme).json()
    empty_ref = f"{empty['ref']}@latest"

    async def as_globex(session: ClientSession) -> None:
        for asked_ref in (ref, empty_ref):
            asked = retrieval("globex", contexts=[asked_ref], context_mode="restrict")
            message = failure(await session.call_tool("retrieve", asked), 404)
            assert "unknown context" in message and "no version" not in message, message

    async def as_acme(mcp: ClientSession) -> None:
        unbuilt = retrieval(contexts=[empty_ref], context_mode="restrict")
        assert "has no version yet" in failure(await mcp.call_tool("retrieve", unbuilt), 404)
        outside = retrieval(contexts=[ref], context_mode="restrict")
        assert "outside the requested scope" in failure(await mcp.call_tool("retrieve", outside), 400)
        inside = retrieval(contexts=[ref], context_mode="restrict", scope={"org_id": "acme", "session_id": session})
        assert [f["source"] for f in data(await mcp.call_tool("retrieve", inside))["fragments"]] == [
            "notes/unseal.md#secret"
        ]

    over_http(served, tenants.globex_admin, as_globex)
    over_http(served, tenants.acme_admin, as_acme)


def test_stdio_answers_lines_it_cannot_read_with_json_rpc_errors(tenants, logins, tmp_path):
    """The SDK answered these with a log notification and no response, so a client
    waiting on its id waited forever: now each gets JSON-RPC's error, with its id where
    the line still shows it."""
    import subprocess

    parameters = stdio_parameters(tenants, logins, tmp_path, tenants.acme_reader)
    lines = [
        '{"jsonrpc": "2.0", "id": 6, "method": "tools/lis',
        '{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "retrieve", '
        '"arguments": {"query": "a \\ud800 b"}}}',
        '[{"jsonrpc": "2.0", "id": 8, "method": "ping"}]',
        '{"jsonrpc": "2.0", "id": ' + "9" * 5000 + ', "method": "ping"}',
        '{"jsonrpc": "2.0", "id": 10, "method": "tools/lists"}',
        # Not JSON-RPC 2.0 messages: answered with their id, never left waiting.
        '{"id": 11, "method": "ping"}',
        '{"jsonrpc": "1.0", "id": 12, "method": "ping"}',
        '{"jsonrpc": "2.0", "id": 13}',
        '{"jsonrpc": "2.0", "id": 14, "method": "tools/list", "params": [1]}',
        '{"jsonrpc": "2.0", "id": 15, "method": 5}',
        "null",
    ]
    # Bytes that are not UTF-8 are refused, never stored as U+FFFD.
    raw = "\n".join(lines).encode() + b'\n{"jsonrpc": "2.0", "id": 16, "method": "ping", "x": "\xff\xfe"}\n'
    done = subprocess.run(
        [parameters.command, *parameters.args],
        env=parameters.env,
        cwd=parameters.cwd,
        input=raw,
        capture_output=True,
        timeout=120,
    )
    stdout, stderr = done.stdout.decode(), done.stderr.decode()
    answers = [json.loads(line) for line in stdout.splitlines()]
    expected = [(None, -32700), (7, -32700), (None, -32600), (None, -32700), (10, -32601)]
    expected += [(11, -32600), (12, -32600), (13, -32600), (14, -32600), (15, -32600), (None, -32600), (None, -32700)]
    assert [(a["id"], a["error"]["code"]) for a in answers] == expected, stdout
    assert "surrogate" in answers[1]["error"]["message"] and "Traceback" not in stderr
    assert answers[4]["error"]["message"].startswith('Method not found: no method "tools/lists"; this server answers')
    assert "not UTF-8 (byte 0xff" in answers[-1]["error"]["message"], answers[-1]
