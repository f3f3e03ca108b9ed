"""Hostile and concurrent HTTP use: strict ids and content types, requests validated
for what their fields mean, authentication before any work on a body, concurrent
first writes into a session, and /health and reads that never queue behind writers."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import psycopg
import pytest

from tests.api.test_api import ingest, problem
from tests.retrieve.corpus import CODE, DOCS

QUERY = {"query": "what to do when the storage volume is full", "scope": {"org_id": "acme"}}


@pytest.mark.parametrize(
    "raw",
    [
        "+1",
        "%201",
        "1%20",
        "\u0661",
        "01",
        "1_0",
        "0",
        "-1",
        "1.0",
        "0x1",
        "9223372036854775808",
        "99999999999999999999",
    ],
)
def test_fragment_ids_are_read_strictly(client, raw):
    ingest(client, DOCS)
    assert client.get("/fragments/1").status_code == 200
    response = client.get(f"/fragments/{raw}")
    assert response.status_code in (400, 404), response.text
    assert response.headers["content-type"].startswith("application/problem+json")


@pytest.mark.parametrize(
    "raw",
    [
        "{00000000-0000-0000-0000-000000000000}",
        "00000000000000000000000000000000",
        "urn:uuid:00000000-0000-0000-0000-000000000000",
        "%2000000000-0000-0000-0000-000000000000",
    ],
)
def test_trace_ids_are_read_strictly(client, raw):
    problem(client.get(f"/traces/{raw}"), 400)


def test_trace_ids_accept_either_case(client):
    trace_id = client.post("/contexts/retrieve", json=QUERY).json()["trace_id"]
    assert client.get(f"/traces/{trace_id.upper()}").json()["trace_id"] == trace_id


@pytest.mark.parametrize(
    "content_type",
    [None, "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/jsonx"],
)
def test_bodies_are_read_only_as_json(client, content_type):
    headers = {"content-type": content_type} if content_type else {}
    for path in ("/contexts/retrieve", "/documents"):
        response = client.post(path, content=b'{"query": "x"', headers=headers)
        if content_type is None:
            # httpx sends no content-type for raw bytes
            assert response.status_code == 415, response.text
        problem(response, 415)
    ok = client.post("/contexts/retrieve", json=QUERY, headers={"content-type": "application/json; charset=utf-8"})
    assert ok.status_code == 200


@pytest.mark.parametrize("charset", ["latin-1", "ISO-8859-1", "utf-16", '"windows-1252"'])
def test_a_json_body_in_another_charset_is_415(client, charset):
    """JSON is UTF-8 (RFC 8259): a body that says it is not was read as UTF-8 anyway."""
    body = '{"query": "caf\u00e9", "scope": {"org_id": "acme"}}'.encode("latin-1")
    declared = {"content-type": f"application/json; charset={charset}"}
    detail = problem(client.post("/contexts/retrieve", content=body, headers=declared), 415)["detail"]
    assert "UTF-8" in detail
    for utf8 in ("UTF-8", "utf8", '"utf-8"', "us-ascii"):
        ok = client.post("/contexts/retrieve", json=QUERY, headers={"content-type": f"application/json;charset={utf8}"})
        assert ok.status_code == 200, (utf8, ok.text)


@pytest.mark.parametrize(
    "target",
    [
        "/documents?org_id=acme&owner=%FF",
        "/documents?org_id=acme&path_prefix=%C3",
        "/documents?org_id=%E2%82&limit=1",
        "/documents?org_id=acme&owner=%ED%A0%80",  # an encoded lone surrogate
        "/pins?org_id=acme%FE",
        "/fragments/%FF1",
    ],
)
def test_percent_encoding_that_is_not_utf8_is_400(client, target):
    """It was decoded with U+FFFD in place of the bytes and matched nothing, or the wrong thing."""
    ingest(client, DOCS)
    assert "UTF-8" in problem(client.get(target), 400)["detail"]


def test_percent_encoded_utf8_is_read(client):
    ingest(client, DOCS)
    assert client.get("/documents?org_id=acme&owner=caf%C3%A9").status_code == 200
    assert client.get("/documents", params={"org_id": "acme", "path_prefix": "d\u00e9p\u00f4t/"}).status_code == 200


@pytest.mark.parametrize(
    ("target", "unknown"),
    [
        ("/documents?org_id=acme&ownr=ops", "'ownr'"),
        ("/documents?org_id=acme&limit=5&Limit=6", "'Limit'"),
        ("/pins?org=acme", "'org'"),
        ("/health?verbose=1", "'verbose'"),
        ("/whoami?x=&y=", "'x', 'y'"),
    ],
)
def test_an_unknown_query_parameter_is_400_naming_it(client, target, unknown):
    """An ignored parameter made an answer look like one to the question the client meant
    (a misspelt filter returned everything)."""
    detail = problem(client.get(target), 400)["detail"]
    assert unknown in detail and "accepts" in detail


def test_pages_and_assets_take_any_query(client):
    """A cache-busting `?v=` must not break what a browser loads."""
    for path in ("/ui/?v=2", "/ui/assets/ui.js?v=2", "/schema?v=2", "/schema/openapi.json?v=2"):
        assert client.get(path).status_code == 200, path


@pytest.mark.parametrize(
    "change",
    [
        {"query": "   "},
        {"query": "?!. ,;"},
        {"query": "\t\n"},
        {"query": "rotate\u0007journal"},
        {"query": "a\u2028b"},
        {"k_lexical": 0, "k_dense": 0},
        {"min_score": float("nan")},
        {"budget_tokens": 0},
        {"rerank_top": 0},
        {"freshness_halflife_days": 0},
        {"scope": {"org_id": "acme", "repo_id": ""}},
        {"scope": {"org_id": "acme", "session_id": "a b"}},
    ],
)
def test_retrieve_requests_are_validated_for_meaning(client, change):
    body = QUERY | change
    problem(client.post("/contexts/retrieve", content=_json(body), headers={"content-type": "application/json"}), 400)


def test_a_compressed_body_is_415_not_400(client):
    """No door decodes a content coding: a gzip body is refused as unsupported (with what
    is accepted), not read as broken JSON; an identity coding is plain."""
    import gzip
    import json

    for path, body in (
        ("/contexts/retrieve", QUERY),
        ("/documents", {"scope": {"org_id": "acme"}, "documents": [{"path": "a.md", "content": "# A\n\nText.\n"}]}),
        ("/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    ):
        for coding in ("gzip", "deflate", "br", "GZIP", "gzip, identity"):
            response = client.post(
                path,
                content=gzip.compress(json.dumps(body).encode()),
                headers={
                    "content-type": "application/json",
                    "content-encoding": coding,
                    "accept": "application/json, text/event-stream",
                },
            )
            refused = problem(response, 415)
            assert "Content-Encoding" in refused["detail"] and response.headers["accept-encoding"] == "identity"
            assert refused["instance"] == path, refused
    plain = client.post(
        "/contexts/retrieve",
        content=json.dumps(QUERY).encode(),
        headers={"content-type": "application/json", "content-encoding": "identity"},
    )
    assert plain.status_code == 200


def _json(body: dict) -> bytes:
    import json

    return json.dumps(body, allow_nan=True).encode()


def test_metadata_is_bounded(client, db_url):
    body = {
        "scope": {"org_id": "acme"},
        "documents": [{"path": "big.md", "content": "# Big\n\nSome text.\n", "metadata": {"blob": "x" * 20_000}}],
    }
    detail = problem(client.post("/documents", json=body), 400)["detail"]
    assert "metadata" in detail
    with psycopg.connect(db_url) as conn:
        assert conn.execute("select count(*) from data.documents").fetchone() == (0,)


def test_a_bad_key_costs_no_parsing(client, monkeypatch):
    services = client.app.state.services
    prepared: list[str] = []
    original = services.pipeline.prepare
    monkeypatch.setattr(services.pipeline, "prepare", lambda doc: prepared.append(doc.path) or original(doc))
    body = {
        "scope": {"org_id": "acme"},
        "documents": [{"path": f"src/f{i}.py", "content": CODE["billing/limits.py"]} for i in range(50)],
    }
    problem(client.post("/documents", json=body, headers={"Authorization": "Bearer ctx_bogus_key"}), 401)
    problem(client.post("/documents", json=body | {"scope": {"org_id": "globex"}}), 403)
    assert prepared == [], "documents were chunked before the key and grants were checked"


def test_a_bad_key_costs_no_query_embedding(client, monkeypatch):
    """The query is embedded only once the key is known: a flood of requests with bogus
    keys must not make the service run its model."""
    services = client.app.state.services
    embedded: list[str] = []
    original = services.retriever.query_embedder.vectors
    monkeypatch.setattr(services.retriever.query_embedder, "vectors", lambda q: embedded.append(q) or original(q))
    problem(client.post("/contexts/retrieve", json=QUERY, headers={"Authorization": "Bearer ctx_bogus_key"}), 401)
    assert embedded == [], "the query was embedded before the key was checked"
    assert client.post("/contexts/retrieve", json=QUERY).status_code == 200
    assert embedded == [QUERY["query"]]


def test_concurrent_first_writes_into_a_new_session_all_succeed(client, db_url):
    def write(i: int):
        return ingest(
            client, {f"notes/n{i}.md": f"# Note {i}\n\nFinding number {i} about the journal.\n"}, session_id="s-fresh"
        )

    with ThreadPoolExecutor(8) as pool:
        responses = list(pool.map(write, range(8)))
    assert [r.status_code for r in responses] == [201] * 8, [r.text for r in responses]
    with psycopg.connect(db_url) as conn:
        assert conn.execute("select count(*) from data.sessions where session_id = 's-fresh'").fetchone() == (1,)
        assert conn.execute("select count(*) from data.documents where session_id = 's-fresh'").fetchone() == (8,)


def test_health_and_reads_do_not_queue_behind_waiting_writers(client, monkeypatch):
    """Twelve writers stuck in their write (as if waiting on the org's lock) take no
    thread that /health or a read needs."""
    assert ingest(client, DOCS).status_code == 201
    services = client.app.state.services
    release = threading.Event()
    original = services.pipeline.write

    def stuck_write(*args, **kwargs):
        release.wait(60)
        return original(*args, **kwargs)

    monkeypatch.setattr(services.pipeline, "write", stuck_write)
    writers = ThreadPoolExecutor(12)
    try:
        pending = [writers.submit(ingest, client, {f"w/{i}.md": f"# W{i}\n\nWriter {i} text.\n"}) for i in range(12)]
        outcome: dict = {}

        def probe() -> None:
            outcome["health"] = client.get("/health").status_code
            outcome["read"] = client.post("/contexts/retrieve", json=QUERY).status_code

        reader = threading.Thread(target=probe)
        reader.start()
        reader.join(30)
        assert outcome == {"health": 200, "read": 200}, "health or a read waited behind the writers"
    finally:
        release.set()
        assert all(f.result(120).status_code == 201 for f in pending)
        writers.shutdown()


def test_one_structured_log_line_per_request_without_query_text(client, caplog, monkeypatch):
    import json
    import logging

    from app.api.request_log import JsonFormatter

    # A served app earlier in the run (uvicorn's dictConfig) may have stopped this logger
    # propagating to the root, where caplog listens: undo that for this test.
    monkeypatch.setattr(logging.getLogger("contexts.request"), "propagate", True)
    secret_query = "zebra-7731 rotation of the payroll journal"
    with caplog.at_level(logging.INFO), caplog.at_level(logging.INFO, logger="contexts.request"):
        response = client.post("/contexts/retrieve", json=QUERY | {"query": secret_query})
    assert response.status_code == 200
    lines = [r for r in caplog.records if r.name == "contexts.request"]
    assert len(lines) == 1
    entry = json.loads(JsonFormatter().format(lines[0]))
    assert entry | {"ms": 0} == entry | {
        "method": "POST",
        "path": "/contexts/retrieve",
        "status": 200,
        "org": "acme",
        "principal": "admin",
        "trace_id": response.json()["trace_id"],
        "ms": 0,
    }
    assert entry["ms"] > 0
    assert not any(
        "zebra-7731" in r.getMessage() or "zebra-7731" in JsonFormatter().format(r)
        for r in caplog.records
        if r.levelno >= logging.INFO
    )
    # A mounted app's request (MCP) is logged under the path asked, not what follows /mcp.
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="contexts.request"):
        client.post("/mcp", json={})
    (mcp,) = [json.loads(JsonFormatter().format(r)) for r in caplog.records if r.name == "contexts.request"]
    assert mcp["path"] == "/mcp", mcp


@pytest.mark.parametrize("sqlstate", ["40001", "40P01", "55P03", "57014"])
def test_transient_database_errors_are_503_not_500(client, monkeypatch, sqlstate):
    """A statement timeout, deadlock, lock timeout or serialization failure is worth a
    retry: 503 with Retry-After, never a 500, and no database text."""
    services = client.app.state.services

    def fail(conn, request, vectors=None):
        conn.execute(f"do $$ begin raise exception 'internal detail' using errcode = '{sqlstate}'; end $$")

    monkeypatch.setattr(services.retriever, "retrieve", fail)
    response = client.post("/contexts/retrieve", json=QUERY)
    body = problem(response, 503)
    assert response.headers["retry-after"]
    assert "internal detail" not in body["detail"]


def test_a_key_valid_a_moment_ago_skips_the_precheck_but_never_its_transactions_check(client, db_url, monkeypatch):
    """The check before query embedding trusts a key that authenticated seconds ago (one
    transaction fewer per retrieval); the retrieval's own transaction still checks it, so
    a key revoked meanwhile gets its 401 all the same. Unknown keys are never trusted."""
    from tests.api.test_auth import key_for

    services = client.app.state.services
    token = key_for(db_url, "acme", "bot", ("org", None))
    headers = {"Authorization": f"Bearer {token}"}
    checks: list[str] = []
    original = services.auth.authenticate
    monkeypatch.setattr(services.auth, "authenticate", lambda t: checks.append(t) or original(t))
    assert client.post("/contexts/retrieve", json=QUERY, headers=headers).status_code == 200
    assert checks == [token]
    assert client.post("/contexts/retrieve", json=QUERY | {"query": "another"}, headers=headers).status_code == 200
    assert checks == [token], "a key valid a moment ago was checked twice"
    with psycopg.connect(db_url) as conn:
        conn.execute("select service.revoke_api_key(%s)", (token.split("_")[1],))
    problem(client.post("/contexts/retrieve", json=QUERY, headers=headers), 401)
    for _ in range(2):
        problem(client.post("/contexts/retrieve", json=QUERY, headers={"Authorization": "Bearer ctx_x_bogus"}), 401)
    assert checks.count("ctx_x_bogus") == 2
    services.auth.recent_keys.seconds = 0.0  # a stale entry is checked again
    services.auth.recent_keys.add(token)
    problem(client.post("/contexts/retrieve", json=QUERY, headers=headers), 401)
    assert checks.count(token) == 2


def test_the_pools_check_queries_only_a_connection_that_can_have_failed(db_url, monkeypatch):
    """A quiet idle connection passes without a round trip; one whose backend was
    terminated (as by a restart) fails the check, so the pool replaces it."""
    from psycopg_pool import ConnectionPool

    from app.db.pool import check_idle_connection

    queried: list[object] = []
    original = ConnectionPool.check_connection
    monkeypatch.setattr(ConnectionPool, "check_connection", staticmethod(lambda c: queried.append(c) or original(c)))
    with psycopg.connect(db_url) as conn, psycopg.connect(db_url, autocommit=True) as admin:
        conn.execute("select 1")
        conn.commit()
        check_idle_connection(conn)
        assert queried == []
        pid = conn.info.backend_pid
        admin.execute("select pg_terminate_backend(%s, 5000)", (pid,))
        with pytest.raises(psycopg.OperationalError):
            check_idle_connection(conn)
        assert queried == [conn]
        with pytest.raises(psycopg.OperationalError):
            check_idle_connection(conn)  # closed now: no round trip either
        assert queried == [conn]


def test_a_read_that_runs_past_the_statement_timeout_is_cancelled_as_a_503(db_url):
    """The read pool's connections carry statement_timeout (CONTEXTS_READ_STATEMENT_TIMEOUT_S):
    a statement that runs longer is cancelled (57014, which every door answers 503), and
    the connection serves the next request; 0 sets no limit."""
    from app.db.pool import open_pool
    from app.operations.errors import SQLSTATE_STATUS

    pool = open_pool(db_url, 1, name="contexts-test-read", statement_timeout_s=0.2)
    try:
        with pool.connection() as conn:
            with pytest.raises(psycopg.errors.QueryCanceled) as cancelled:
                conn.execute("select pg_sleep(2)")
            assert SQLSTATE_STATUS[cancelled.value.sqlstate] == 503
        with pool.connection() as conn:
            assert conn.execute("show statement_timeout").fetchone() == ("200ms",)
    finally:
        pool.close()
    unlimited = open_pool(db_url, 1, name="contexts-test-unlimited")
    try:
        with unlimited.connection() as conn:
            assert conn.execute("show statement_timeout").fetchone() == ("0",)
    finally:
        unlimited.close()


@pytest.mark.parametrize(
    ("statement", "words"),
    [
        ("set transaction read only; create temporary table t (x int)", "read-only"),
        ("do $$ begin raise exception using errcode = '53100', message = 'could not extend file'; end $$", "disk"),
        ("do $$ begin raise exception using errcode = '53200', message = 'out of memory'; end $$", "memory"),
    ],
)
def test_a_database_that_cannot_write_now_is_a_503_that_says_why(conn, statement, words, caplog):
    """A standby after a failover, a full disk, no memory: a 503 the caller can act on
    (with the database's own text kept out of it), and an error line for the operator;
    these were 500s."""
    from app.operations.errors import failure_of

    with pytest.raises(psycopg.Error) as raised:
        conn.execute(statement)
    failure = failure_of(raised.value, "POST /documents")
    assert failure.status == 503 and words in failure.detail, failure
    assert "extend file" not in failure.detail
    assert any(r.levelname == "ERROR" and raised.value.sqlstate in r.getMessage() for r in caplog.records)


MCP_HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


def _mcp_call(arguments: bytes, ident: bytes = b"1") -> bytes:
    return (
        b'{"jsonrpc": "2.0", "id": ' + ident + b', "method": "tools/call", '
        b'"params": {"name": "retrieve", "arguments": ' + arguments + b"}}"
    )


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (_mcp_call(b'{"query": "retry \\ud800 x", "scope": {"org_id": "acme"}}'), "surrogate"),
        (_mcp_call(b'{"query": "retry \xff", "scope": {"org_id": "acme"}}'), "not UTF-8"),
        (_mcp_call(b'{"query": "storage", "scope": {"org_id": "acme"}}', b"9" * 5000), "out of range"),
        (_mcp_call(b'{"query": "storage", "scope": {"org_id": "acme"}}', b'{"a": 1}'), "JSON-RPC id"),
        (_mcp_call(b'{"query": "storage", "scope": {"org_id": "acme"}, "top_k": NaN}'), "NaN"),
    ],
)
def test_mcp_bodies_the_sdk_would_misread_are_400(client, body, words):
    """The SDK's parser takes what msgspec refuses (a lone surrogate: then a 500 in a
    tool; NaN and an object id: accepted silently) or fails on it with a 500 (bytes that
    are not UTF-8, an id of 5,000 digits)."""
    response = client.post("/mcp", content=body, headers=MCP_HEADERS)
    assert words in problem(response, 400)["detail"]
    assert (
        client.post(
            "/mcp", content=_mcp_call(b'{"query": "storage", "scope": {"org_id": "acme"}}'), headers=MCP_HEADERS
        ).status_code
        == 200
    )


def test_an_mcp_tool_given_a_lone_surrogate_answers_400_not_500(client):
    """Past the HTTP door (stdio has no body check): the tool refuses the argument by its
    path; `write_note` stored nothing and answered a 500."""
    import asyncio

    from mcp import types

    from app.mcp import build_server

    services = client.app.state.services
    server = build_server(lambda: services, client.headers["Authorization"].removeprefix("Bearer "))
    call = server.request_handlers[types.CallToolRequest]
    for name, arguments in (
        ("retrieve", {"query": "a \ud800 b", "scope": {"org_id": "acme"}}),
        ("write_note", {"scope": {"org_id": "acme", "session_id": "s1"}, "text": "a \udc00 b"}),
    ):
        request = types.CallToolRequest(
            method="tools/call", params=types.CallToolRequestParams(name=name, arguments=arguments)
        )
        result = asyncio.run(call(request)).root
        assert result.isError and "400" in result.content[0].text and "surrogate at $." in result.content[0].text


def test_an_mcp_request_for_a_method_mcp_lacks_is_json_rpcs_method_not_found(client):
    """The SDK answered it as invalid parameters (-32602); a notification of no known
    method still goes to the SDK, which ignores it as JSON-RPC says."""
    for ident in (3, "a"):
        response = client.post(
            "/mcp", json={"jsonrpc": "2.0", "id": ident, "method": "tools/lists"}, headers=MCP_HEADERS
        )
        assert response.status_code == 200 and response.headers["content-type"].startswith("application/json")
        answer = response.json()
        assert answer["id"] == ident and answer["error"]["code"] == -32601
        assert '"tools/lists"' in answer["error"]["message"] and answer["error"]["message"].endswith(", tools/list")
    for method in ("resources/list", "prompts/list"):  # MCP's, not this server's: the same answer
        answer = client.post("/mcp", json={"jsonrpc": "2.0", "id": 5, "method": method}, headers=MCP_HEADERS).json()
        assert answer["error"]["code"] == -32601
        assert answer["error"]["message"].endswith("initialize, ping, tools/call, tools/list"), answer
    long = client.post("/mcp", json={"jsonrpc": "2.0", "id": 4, "method": "x\n" * 500}, headers=MCP_HEADERS)
    assert long.json()["error"]["code"] == -32601 and len(long.json()["error"]["message"]) < 600
    notified = client.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/nothing"}, headers=MCP_HEADERS)
    assert notified.status_code < 500


def test_the_methods_named_as_answered_are_the_ones_the_server_handles():
    from typing import get_args

    from app.mcp import ANSWERED_METHODS, build_server

    handlers = build_server(lambda: None).request_handlers
    handled = {get_args(kind.model_fields["method"].annotation)[0] for kind in handlers}
    assert ANSWERED_METHODS == handled | {"initialize"}


def test_an_mcp_body_in_another_charset_is_415(client):
    body = b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}'
    latin = {**MCP_HEADERS, "content-type": "application/json; charset=latin-1"}
    assert "UTF-8" in problem(client.post("/mcp", content=body, headers=latin), 415)["detail"]


def test_a_body_nested_past_the_parsers_is_400_at_every_door(client):
    """JSON nested a thousand levels and more: a problem-details 400 at the HTTP
    endpoints and at /mcp alike (the MCP SDK's parser answered it with a 500)."""
    deep = b"[" * 5000 + b"]" * 5000
    for path in ("/contexts/retrieve", "/documents", "/mcp"):
        response = client.post(
            path,
            content=deep,
            headers={"content-type": "application/json", "accept": "application/json, text/event-stream"},
        )
        assert response.status_code == 400, (path, response.status_code, response.text[:200])
        assert response.headers["content-type"].startswith("application/problem+json"), path
    nested_params = b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"x": ' + deep + b"}}"
    response = client.post(
        "/mcp",
        content=nested_params,
        headers={"content-type": "application/json", "accept": "application/json, text/event-stream"},
    )
    assert response.status_code == 400 and "nested too deeply" in response.json()["detail"]
    ok = client.post(
        "/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"accept": "application/json, text/event-stream"},
    )
    assert ok.status_code == 200, ok.text


def test_a_lone_surrogate_escape_is_named_in_the_400_and_a_cut_body_is_told_it_is_cut(client):
    """`"\\ud800"` without its low half is not Unicode. Near the end of a body msgspec
    reports it as "Input data was truncated", which sent callers looking for a cut body;
    a body that is cut gets the same error from msgspec, and was told it might hold a
    surrogate. The body read tells which."""
    bodies = (
        b'{"scope": {"org_id": "acme"}, "query": "\\ud800"}',  # msgspec: truncated
        b'{"query": "a\\udbff b", "scope": {"org_id": "acme"}}',  # msgspec: names the surrogate pair
        b'{"query": "\\uD83D\\uDE00 and \\udbff", "scope": {"org_id": "acme"}}',  # a pair, then a lone half
    )
    for body in bodies:
        response = client.post("/contexts/retrieve", content=body, headers={"content-type": "application/json"})
        detail = problem(response, 400)["detail"]
        assert "surrogate" in detail and "cut" not in detail, (body, detail)
    for body in (b'{"query": "abc', b'{"query": "\\uD83D\\uDE00", "scope": {"org_id": "ac', b"{"):
        response = client.post("/contexts/retrieve", content=body, headers={"content-type": "application/json"})
        detail = problem(response, 400)["detail"]
        assert "ends inside a value" in detail and "surrogate" not in detail, (body, detail)


@pytest.mark.parametrize("host", ["x: y", "x:1 y", "x a:b", "x:y z"])
def test_a_host_header_whose_port_is_not_a_number_is_a_400_problem(client, host):
    """Reading the request's URL for the problem's `instance` parsed the Host header and
    raised on its port: a 500 in text/plain, on every path, before any key was checked."""
    for path in ("/health", "/whoami", "/nope"):
        response = client.get(path, headers={"host": host})
        assert "host header" in problem(response, 400)["detail"], (host, path)


@pytest.mark.parametrize("host", ["x:abc", "127.0.0.1:8761x", "x:-1", "x:99999999999", "[::1]:abc", "x:1:2"])
def test_a_host_header_whose_port_is_not_one_is_refused_before_the_key_is_read(client, host):
    """Served as if it had no port (the router's own check passes these)."""
    for path in ("/health", "/whoami", "/documents"):
        response = client.get(path, headers={"host": host})
        assert "host header's port" in problem(response, 400)["detail"], (host, path)


@pytest.mark.parametrize("host", ["x", "x:", "localhost:8000", "127.0.0.1:65535", "[::1]:80", "[::1]"])
def test_a_host_header_with_a_port_or_none_is_served(client, host):
    assert client.get("/whoami", headers={"host": host}).status_code == 200, host


def test_an_id_the_tables_refuse_is_told_by_its_rule_not_by_its_constraint(client, db_url):
    """The database's check constraint message named the table and the constraint; the
    caller now reads the id's rule in words (app.scope.ID_FORMATS), at the HTTP door and
    from the SQL functions any door calls."""
    import psycopg

    from app.operations.errors import failure_of

    body = {"scope": {"org_id": "acme", "session_id": "ctx_1@latest"}, "task": "x"}
    details = [problem(client.post("/sessions", json=body), 400)["detail"]]
    with psycopg.connect(db_url) as conn:
        for args, words in (((None, "p:1", None), "invalid persona id"), (("a:b", None, None), "invalid repo id")):
            with pytest.raises(psycopg.Error) as refused:
                conn.execute("select service.ensure_scope('acme', %s, %s, %s)", args)
            conn.rollback()
            failure = failure_of(refused.value, "test")
            assert failure.status == 400 and words in failure.detail, failure
            details.append(failure.detail)
    for detail in details:
        assert "starting with a letter or digit" in detail, detail
        assert "relation" not in detail and "constraint" not in detail and "_format" not in detail


def test_the_mcp_door_answers_every_refusal_as_a_problem_without_the_sdks_internals(client):
    """The SDK answered these with JSON-RPC bodies quoting pydantic's report (its version
    and the input echoed), or held a GET open forever pinging."""
    for method in ("GET", "DELETE", "PUT"):
        response = client.request(method, "/mcp", headers={"accept": "text/event-stream, application/json"})
        assert problem(response, 405)["detail"] and response.headers["allow"] == "POST", method
    plain = client.post(
        "/mcp", content=b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}', headers={"content-type": "text/plain"}
    )
    assert "application/json" in problem(plain, 415)["detail"]
    refused = {
        "no accept": (b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}', {"accept": "text/html"}, 406),
        "version": (b'{"jsonrpc": "1.0", "id": 2, "method": "tools/list"}', {}, 400),
        "params": (b'{"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": "x"}', {}, 400),
        "batch": (b'[{"jsonrpc": "2.0", "id": 4, "method": "ping"}]', {}, 400),
        "empty": (b"", {}, 400),
        "empty batch": (b"[]", {}, 400),
    }
    for case, (body, headers, status) in refused.items():
        response = client.post("/mcp", content=body, headers={**MCP_HEADERS, **headers})
        detail = problem(response, status)["detail"]
        assert "pydantic" not in detail and "input_value" not in detail and "\n" not in detail, (case, detail)
    assert client.post(
        "/mcp", content=b'{"jsonrpc": "2.0", "id": 5, "method": "ping"}', headers=MCP_HEADERS
    ).json() == {
        "jsonrpc": "2.0",
        "id": 5,
        "result": {},
    }
    # An Accept that takes JSON by HTTP's rules is served (the SDK wanted both types listed).
    for accept in ("*/*", "application/*", "application/json", ""):
        ping = client.post(
            "/mcp", content=b'{"jsonrpc": "2.0", "id": 6, "method": "ping"}', headers={**MCP_HEADERS, "accept": accept}
        )
        assert ping.status_code == 200 and ping.json()["result"] == {}, (accept, ping.text)
    html = client.post(
        "/mcp", content=b'{"jsonrpc": "2.0", "id": 7, "method": "ping"}', headers={**MCP_HEADERS, "accept": "text/html"}
    )
    assert problem(html, 406)["title"] == "Not Acceptable"
    assert problem(client.post("/mcp///", json={"jsonrpc": "2.0", "id": 8, "method": "ping"}, headers=MCP_HEADERS), 404)


def test_an_empty_body_where_one_is_needed_says_so(client):
    """Litestar's message for it was its parameter's name, quoted: 'data'."""
    for path in ("/documents", "/contexts/retrieve", "/sessions"):
        response = client.post(path, content=b"", headers={"content-type": "application/json"})
        assert problem(response, 400)["detail"] == f"POST {path} needs a JSON body"


def test_a_query_parameter_given_twice_is_a_400_unless_it_takes_several(client):
    """The last one won, where a proxy or filter in front may have read the first."""
    response = client.get("/documents?org_id=demo&org_id=acme")
    assert "'org_id' is given 2 times" in problem(response, 400)["detail"]
    assert client.get("/documents?org_id=acme").status_code == 200


def test_head_is_served_as_get_without_the_body(client):
    """RFC 9110 asks a general-purpose server for HEAD wherever it serves GET; it was a 405."""
    for path in ("/health", "/documents?org_id=acme", "/whoami"):
        got, head = client.get(path), client.head(path)
        assert head.status_code == got.status_code == 200 and head.content == b"", path
        assert head.headers["content-type"] == got.headers["content-type"], path
    assert client.head("/documents/999999").status_code == 404
    assert client.head("/nope").status_code == 404
    refused = client.head("/contexts/retrieve")
    assert refused.status_code == 405 and "POST" in refused.headers["allow"] and refused.content == b""
    assert client.head("/whoami", headers={"Authorization": "Bearer nope"}).status_code == 401


def test_only_mcp_itself_is_the_mcp_door_and_it_gets_every_request_check(client):
    """The mount answered every path that began with /mcp (`/mcpx`, `/mcp/anything`) as
    the MCP door, and none of the request checks ran on it (a mount is not a route
    handler): an unknown query parameter was ignored."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    for path in ("/mcp", "/mcp/"):
        assert client.post(path, json=body, headers=MCP_HEADERS).json()["result"]["tools"], path
    for path in ("/mcpx", "/mcp/anything", "/mcp/tools/list"):
        assert problem(client.post(path, json=body, headers=MCP_HEADERS), 404)["instance"] == path
    refused = problem(client.post("/mcp?verbose=1", json=body, headers=MCP_HEADERS), 400)
    assert "'verbose'" in refused["detail"] and refused["instance"] == "/mcp"
    assert "UTF-8" in problem(client.post("/mcp?q=%FF", json=body, headers=MCP_HEADERS), 400)["detail"]
    host = problem(client.post("/mcp", json=body, headers=MCP_HEADERS | {"Host": "a:b"}), 400)
    assert "port" in host["detail"]
    keyless = MCP_HEADERS | {"Authorization": ""}  # refused before the key, as at every endpoint
    assert problem(client.post("/mcp?x=1", json=body, headers=keyless), 400)["detail"].startswith("unknown query")
    assert problem(client.post("/mcp", json=body, headers=keyless), 401)


def test_free_text_that_shows_nothing_is_refused_where_it_is_written(client):
    """A pin's reason of one right-to-left override was stored, and reversed whatever a
    listing printed after it; zero-width or blank notes and descriptions read as nothing."""
    org = {"org_id": "acme"}
    for text in ("\u202e", "\u200b \u2066", " \u0301", "\t\u00a0", "\u3164", "\u2800\uffa0"):
        writes = [
            ("POST", "/pins", {"scope": org, "fragment_id": 1, "reason": text}, "reason"),
            ("POST", "/sessions/s1/notes", {"text": text}, "text"),
            ("POST", "/contexts", {"scope": org, "name": "runbooks", "description": text}, "description"),
            ("POST", "/contexts/ctx_1/versions", {"fragment_ids": [1], "note": text}, "note"),
            ("PUT", "/profiles", {"org_id": "acme", "description": text}, "description"),
        ]
        for method, path, body, field in writes:
            refused = problem(client.request(method, path, json=body), 400)
            messages = [error["message"] for error in refused["errors"]]
            refusals = (f"{field} holds no visible character", f"{field} holds a bidirectional")
            assert any(m.startswith(refusals) for m in messages), (path, refused)
    assert client.post("/sessions/s1/notes", json={"text": "\u05e9\u05dc\u05d5\u05dd \u200f"}).status_code == 201
    # The short texts people list: no terminal escape, no text that displays other than it reads.
    for text, words in (
        ("\u001b]0;pwned\u0007 read this", "control character (U+001B)"),
        ("ok\rXX", "control character (U+000D)"),
        ("\u202egnp.exe", "bidirectional embedding, override or isolate character (U+202E)"),
    ):
        for method, path, body, field in (
            ("POST", "/pins", {"scope": org, "fragment_id": 1, "reason": text}, "reason"),
            ("POST", "/contexts", {"scope": org, "name": "runbooks", "description": text}, "description"),
            ("PUT", "/profiles", {"org_id": "acme", "description": text}, "description"),
        ):
            refused = problem(client.request(method, path, json=body), 400)
            assert any(f"{field} holds a {words}" in e["message"] for e in refused.get("errors", [])), (path, refused)
    assert client.put("/profiles", json={"org_id": "acme", "description": "one line\n\tand another"}).status_code == 200


def test_an_id_with_a_slash_in_a_path_gets_a_404_that_says_why(client):
    """`%2F` is decoded into `/` before routing: the 404 of no route said nothing, and read
    as "this repo was never synced"."""
    for method, path in (("GET", "/repos/acme%2Fpayments/sync?org_id=acme"), ("POST", "/sessions/a%2fb/notes")):
        refused = problem(client.request(method, path, json={"text": "x"} if method == "POST" else None), 404)
        assert "%2F" in refused["hint"] and "cannot be named in a URL path" in refused["hint"], refused
    assert "hint" not in problem(client.get("/repos/payments/nothing"), 404)


@pytest.mark.parametrize(
    "target",
    [
        "/fragments/1%0A",
        "/documents/1%0a",
        "/traces/00000000-0000-0000-0000-000000000000%0A",
        "/pins?org_id=acme%0A",
        "/documents?org_id=acme&owner=Ada%0D",
        "/contexts/1%0A/versions",
    ],
)
def test_a_control_character_in_a_path_or_query_is_400(client, target):
    """Python's `$` matches before a final newline: `/fragments/1%0A` read fragment 1, a
    trace id with one got PostgreSQL's own error text, `?org_id=acme%0A` a 403 naming an
    org with a newline."""
    detail = problem(client.get(target), 400)["detail"]
    assert "holds a control character once percent-decoded" in detail, detail


def test_a_key_given_twice_in_one_json_object_is_400_at_every_door(client):
    """The last one won, where a proxy or filter before this service may read the first:
    `"method": "ping", "method": "tools/list"` ran tools/list."""
    body = b'{"query": "storage volume", "scope": {"org_id": "acme"}, "query": "anything else"}'
    refused = problem(
        client.post("/contexts/retrieve", content=body, headers={"content-type": "application/json"}), 400
    )
    assert refused["errors"][0]["key"] == "query" and "given twice" in refused["errors"][0]["message"]
    nested = b'{"query": "storage", "scope": {"org_id": "acme", "org_id": "globex"}}'
    assert "given twice" in str(problem(client.post("/contexts/retrieve", content=nested, headers=MCP_HEADERS), 400))
    envelope = b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "method": "tools/list"}'
    assert (
        "'method' is given twice" in problem(client.post("/mcp", content=envelope, headers=MCP_HEADERS), 400)["detail"]
    )
    null_id = b'{"jsonrpc": "2.0", "id": null, "method": "ping"}'  # the SDK took it for a notification
    assert "must not be null" in problem(client.post("/mcp", content=null_id, headers=MCP_HEADERS), 400)["detail"]
    plain = b'{"query": "storage", "scope": {"org_id": "acme", "repo_id": null}, "top_k": 3}'
    assert client.post("/contexts/retrieve", content=plain, headers=MCP_HEADERS).status_code == 200


def test_mcp_refuses_pages_of_another_origin(settings, models, db_url, logins):
    """MCP requires servers to check Origin: a site the user visits could otherwise call a
    local server through DNS rebinding. Its own origin and the configured ones pass; a
    client that sends none (every non-browser client) is unaffected."""
    from app.settings import Settings
    from tests.conftest import serving

    ping = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}'
    with serving(settings, db_url, logins, mcp_allowed_origins="https://app.example.com") as (client, token):
        headers = MCP_HEADERS | {"Authorization": f"Bearer {token}"}
        for origin in (
            "http://evil.example",
            "null",
            "http://testserver.local.evil.example",
            "https://testserver.local",
        ):
            refused = problem(client.post("/mcp", content=ping, headers=headers | {"Origin": origin}), 403)
            assert "another origin" in refused["detail"] and "CONTEXTS_MCP_ALLOWED_ORIGINS" in refused["detail"]
        for origin in (None, "http://testserver.local", "https://App.Example.com", "https://app.example.com:443"):
            extra = {} if origin is None else {"Origin": origin}
            assert client.post("/mcp", content=ping, headers=headers | extra).json()["result"] == {}, origin
    with pytest.raises(ValueError, match="CONTEXTS_MCP_ALLOWED_ORIGINS"):
        Settings.from_env({"CONTEXTS_MCP_ALLOWED_ORIGINS": "app.example.com"})


def test_an_id_in_a_body_with_a_final_newline_is_refused_by_its_pattern(client):
    """msgspec searches with Python's `re`, whose `$` also matches before a final newline:
    `"org_id": "acme\\n"` passed the pattern and got a 403 naming an org with a newline."""
    for body in (
        {"query": "storage", "scope": {"org_id": "acme\n"}},
        {"query": "storage", "scope": {"org_id": "acme", "repo_id": "platform\n"}},
        {"query": "storage", "scope": {"org_id": "acme"}, "contexts": ["ctx_1@latest\n"]},
        {"query": "storage", "scope": {"org_id": "acme"}, "kinds": ["runbook\n"]},
    ):
        refused = problem(client.post("/contexts/retrieve", json=body), 400)
        assert "matching regex" in refused["errors"][0]["message"], refused
    assert client.post("/contexts/retrieve", json={"query": "storage", "scope": {"org_id": "acme"}}).status_code == 200


def test_text_with_a_final_newline_is_refused_by_its_pattern_at_every_door(client):
    """The same `$` let a rule's glob, a webhook's URL and secret, a new owner's name and
    a touched path end with a newline; the database refused some, later and in its own
    words. Each is the pattern's 400 now."""
    for method, path, body in (
        ("POST", "/rules", {"org_id": "acme", "name": "r", "context": "ctx_1@latest", "path_globs": ["src/**\n"]}),
        ("PUT", "/orgs/acme/webhook", {"url": "https://hooks.example.com/x\n"}),
        ("PUT", "/orgs/acme/webhook", {"url": "https://hooks.example.com/x", "secret": "s" * 16 + "\n"}),
        ("POST", "/owners/reassign", {"org_id": "acme", "from_owner": "bob", "to_owner": "alice\n"}),
        ("POST", "/owners/reassign", {"org_id": "acme", "from_owner": "bob", "to_owner": "a", "path_prefix": "s\n"}),
        ("POST", "/contexts/retrieve", {"query": "storage", "scope": {"org_id": "acme"}, "touching": ["a.py\n"]}),
    ):
        refused = problem(client.request(method, path, json=body), 400)
        assert "matching regex" in refused["errors"][0]["message"], (path, refused)
        assert "(?!" in refused["errors"][0]["message"], refused  # the pattern's, not a later refusal
