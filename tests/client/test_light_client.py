"""The light client (app/client/light, the `contexts-client` distribution under
clients/python): its wire types match the service's, it imports nothing but httpx,
msgspec and the standard library, it makes every call against the real service under
one argument rule, and every failure is a ContextsError carrying status and problem
details (a refusal of the service, a call refused before sending, no answer, an answer
that is not the API's)."""

from __future__ import annotations

import ast
import os
import socket
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import anyio
import httpx
import msgspec
import pytest

from app.client import light
from app.client.light import types
from tests.client.wire_types import TYPES_FILE, render
from tests.mcp.test_mcp import STORAGE_QUERY, served, tenants  # noqa: F401  (fixtures)

LIGHT = Path(light.__file__).parent
RUNBOOK = "runbooks/storage.md#storage-runbook"


@pytest.fixture
def base_url(served: str) -> str:  # noqa: F811
    return served.removesuffix("/mcp")


def test_the_wire_types_are_the_services():
    """app/client/light/types.py is rendered from app.wire; CONTEXTS_UPDATE_GOLDENS=1 rewrites it."""
    rendered = render()
    if os.environ.get("CONTEXTS_UPDATE_GOLDENS"):
        TYPES_FILE.write_text(rendered)
    assert TYPES_FILE.read_text() == rendered, "the service's bodies changed: CONTEXTS_UPDATE_GOLDENS=1 to re-render"


def test_the_light_client_imports_only_httpx_msgspec_and_the_standard_library():
    allowed = {"httpx", "msgspec", *sys.stdlib_module_names}
    for path in sorted(LIGHT.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 0:
                assert node.module and node.module.split(".")[0] in allowed, f"{path.name}: from {node.module}"
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    assert alias.name.split(".")[0] in allowed, f"{path.name}: import {alias.name}"
    linked = LIGHT.parents[2] / "clients" / "python" / "src" / "contexts_client"
    assert linked.resolve() == LIGHT, "the distribution's package is app/client/light"


def swapped_and_wrong_calls(contexts: light.Client, session_id: str) -> None:
    """Every one of these is an InvalidCall (a ContextsError and a TypeError, status 0),
    refused before anything is sent, never msgspec's or httpx's exception or a bare TypeError."""
    calls = {
        "retrieve(org, query)": lambda: contexts.retrieve("acme", STORAGE_QUERY),
        "open_session(org, task)": lambda: contexts.open_session("acme", "fix the storage test"),
        "pin(fragment, reason)": lambda: contexts.pin(12, "why"),
        "sync_state(org, repo)": lambda: contexts.sync_state("acme", "platform"),
        "list_documents(org)": lambda: contexts.list_documents("acme"),  # type: ignore[misc]
        "profile(org, persona)": lambda: contexts.profile("acme", "sre"),  # type: ignore[misc]
        "retrieve(int)": lambda: contexts.retrieve(42),  # type: ignore[arg-type]
        "retrieve()": lambda: contexts.retrieve(),  # type: ignore[call-arg]
        "retrieve(blank)": lambda: contexts.retrieve("   "),
        "retrieve(top_k=str)": lambda: contexts.retrieve(STORAGE_QUERY, top_k="ten"),
        "retrieve(unknown option)": lambda: contexts.retrieve(STORAGE_QUERY, topk=3),
        "retrieve(scope=)": lambda: contexts.retrieve(STORAGE_QUERY, scope={"org_id": "globex"}),
        "retrieve(org_id=int)": lambda: contexts.retrieve(STORAGE_QUERY, org_id=7),  # type: ignore[arg-type]
        "get_document(str)": lambda: contexts.get_document("12"),  # type: ignore[arg-type]
        "get_document(bool)": lambda: contexts.get_document(True),
        "get_fragment(0)": lambda: contexts.get_fragment(0),
        "get_trace(int)": lambda: contexts.get_trace(5),  # type: ignore[arg-type]
        "ingest(str)": lambda: contexts.ingest("# a note"),  # type: ignore[arg-type]
        "ingest(dict)": lambda: contexts.ingest({"path": "a.md", "content": "x"}),  # type: ignore[arg-type]
        "ingest(no content)": lambda: contexts.ingest([{"path": "a.md"}]),
        "write_note(session, no text)": lambda: contexts.write_note(session_id),  # type: ignore[call-arg]
        "write_note(text, session)": lambda: contexts.write_note("a note", 7),  # type: ignore[arg-type]
        "promote_note(session, str)": lambda: contexts.promote_note(session_id, "3"),  # type: ignore[arg-type]
        "send(str)": lambda: contexts.send("what"),  # type: ignore[arg-type]
        "send(missing scope)": lambda: contexts.send({"query": STORAGE_QUERY}),
        # An id the URL would resolve to another endpoint (/contexts/../subscriptions).
        "list_context_subscriptions(..)": lambda: contexts.list_context_subscriptions(".."),
        "retire_context(.)": lambda: contexts.retire_context("."),
        "read_context(..)": lambda: contexts.read_context(".."),
        "get_trace(..)": lambda: contexts.get_trace(".."),
        "write_note(.., text)": lambda: contexts.write_note("..", "a note"),
        "sync_state(repo int)": lambda: contexts.sync_state(5),  # type: ignore[arg-type]
        "read_context(ctx_1@0)": lambda: contexts.read_context("ctx_1@0"),
        "read_context(budget str)": lambda: contexts.read_context(2, budget_tokens="x"),  # type: ignore[arg-type]
        "list_subscriptions(flag int)": lambda: contexts.list_subscriptions(include_revoked=1),  # type: ignore[arg-type]
        "list_context_subscriptions(flag None)": lambda: contexts.list_context_subscriptions(2, include_revoked=None),  # type: ignore[arg-type]
        "list_contexts(repo int)": lambda: contexts.list_contexts(repo_id=5),  # type: ignore[arg-type]
        "list_rules(repo int)": lambda: contexts.list_rules(repo_id=5),  # type: ignore[arg-type]
        "delete_rule(2**64)": lambda: contexts.delete_rule(2**64),
    }
    for name, call in calls.items():
        with pytest.raises(light.ContextsError) as refused:
            call()
        error = refused.value
        assert type(error) is light.InvalidCall and isinstance(error, TypeError), name
        assert error.status == 0 and error.problem["title"] == "Invalid call" and error.detail, name
        assert not isinstance(error.__cause__, msgspec.ValidationError | httpx.HTTPError), name


def test_every_call_against_the_service_and_its_refusals(base_url, tenants):  # noqa: F811
    with light.Client(base_url, tenants.acme_admin) as contexts:  # no org: the key's own
        found = contexts.retrieve(STORAGE_QUERY, budget_tokens=400, top_k=1)
        assert isinstance(found, types.RetrieveResponse) and [f.source for f in found.fragments] == [RUNBOOK]
        assert contexts.get_trace(found.trace_id).query == STORAGE_QUERY
        fragment = contexts.get_fragment(found.fragments[0].id)
        assert isinstance(fragment, types.FragmentDetail) and fragment.sources[0].path == "runbooks/storage.md"
        request = types.RetrieveRequest(STORAGE_QUERY, types.ScopeIn("acme"), top_k=1)
        assert contexts.send(request).fragments[0].id == found.fragments[0].id

        pack = contexts.open_session("the storage volume is full", budget_tokens=300)
        assert isinstance(pack, types.ContextPack) and "## [1]" in pack.markdown
        note = contexts.write_note(pack.session_id, "# Note\n\nNode 7's journal cron is commented out.\n")
        promoted = contexts.promote_note(pack.session_id, note.doc_id, owner="Grace")
        assert promoted.owner == "Grace" and promoted.provenance.session_id == pack.session_id

        written = contexts.ingest([{"path": "notes/light.md", "content": "# Light\n\nThe light client wrote this.\n"}])
        assert isinstance(written, types.IngestResponse) and written.documents[0].path == "notes/light.md"
        page = contexts.list_documents(path_prefix="notes/light")
        assert [d.path for d in page.documents] == ["notes/light.md"]
        detail = contexts.get_document(page.documents[0].doc_id, max_chars=7)
        assert detail.content == "# Light" and detail.versions[0].current

        pinned = contexts.pin(found.fragments[0].id, reason="read this first")
        assert [p.pin_id for p in contexts.list_pins().pins] == [pinned.pin_id]
        assert contexts.unpin(pinned.pin_id).pin_id == pinned.pin_id
        assert contexts.profile().org_id == "acme" and isinstance(contexts.list_profiles(), types.RankingProfileList)
        assert contexts.whoami().org_id == "acme"
        deleted = contexts.delete_document(page.documents[0].doc_id)
        assert isinstance(deleted, types.DocumentDeleted) and deleted.path == "notes/light.md"

        swapped_and_wrong_calls(contexts, pack.session_id)

        refusals = {
            "retrieve(top_k=0)": (lambda: contexts.retrieve(STORAGE_QUERY, top_k=0), light.BadRequest, 400, "top_k"),
            "retrieve(unknown repo)": (
                lambda: contexts.retrieve(STORAGE_QUERY, repo_id="no-such-repo"),
                light.NotFound,
                404,
                "unknown repo",
            ),
            "get_document(deleted)": (lambda: contexts.get_document(deleted.doc_id), light.NotFound, 404, ""),
            "sync_state(never synced)": (lambda: contexts.sync_state("platform"), light.NotFound, 404, ""),
            # A repo id with a '/' is asked in the query (GET /sync): no path segment holds it.
            "sync_state(a/b)": (lambda: contexts.sync_state("acme/platform"), light.NotFound, 404, "acme/platform"),
            "retrieve(org_id=bad)": (
                lambda: contexts.retrieve(STORAGE_QUERY, org_id="Not An Id"),
                light.BadRequest,
                400,
                "",
            ),
        }
        for name, (call, kind, status, words) in refusals.items():
            with pytest.raises(light.ServiceError) as refused:
                call()
            error = refused.value
            assert type(error) is kind and error.status == status and words in str(error), (name, error)
            assert error.problem["status"] == status and error.problem["title"] and error.problem["detail"], name

    with light.Client(base_url, tenants.acme_reader) as reader, pytest.raises(light.Forbidden) as forbidden:
        reader.open_session("anything at all")
    assert forbidden.value.status == 403 and forbidden.value.problem["status"] == 403
    with light.Client(base_url, "ctx_not_a_key") as stranger, pytest.raises(light.Unauthorized) as unauthorized:
        stranger.retrieve(STORAGE_QUERY)  # the key's org is asked first: 401 there
    assert unauthorized.value.status == 401

    async def main() -> None:
        async with light.AsyncClient(base_url, tenants.acme_admin) as contexts:
            found = await contexts.retrieve(STORAGE_QUERY, top_k=1)
            assert isinstance(found, types.RetrieveResponse) and found.fragments[0].source == RUNBOOK
            with pytest.raises(light.InvalidCall, match="too many positional arguments"):
                await contexts.retrieve(STORAGE_QUERY, "acme")  # type: ignore[misc]
            with pytest.raises(light.NotFound):
                await contexts.get_trace("00000000-0000-0000-0000-000000000000")
            assert (await contexts.profile()).org_id == "acme"

    anyio.run(main)
    contexts_subscriptions_and_rules(base_url, tenants, found.fragments[0].id)


def contexts_subscriptions_and_rules(base_url: str, tenants, fragment_id: int) -> None:  # noqa: F811
    """A Context made, versioned, read, published to another org, accepted there, revoked;
    a workflow rule that brings it; each answer of the light client's own types."""
    with light.Client(base_url, tenants.acme_admin) as acme, light.Client(base_url, tenants.globex_admin) as globex:
        made = acme.create_context("storage-runbooks", description="what on-call reads first")
        assert isinstance(made, types.ContextOut) and made.name == "storage-runbooks"
        version = acme.add_context_version(made.context_id, fragment_ids=[fragment_id], note="the runbook")
        assert isinstance(version, types.ContextVersionOut) and version.ref == f"ctx_{made.context_id}@1"
        read = acme.read_context(made.context_id)  # an id alone: the newest version
        assert isinstance(read, types.ContextRead) and [f.id for f in read.fragments] == [fragment_id]
        assert acme.read_context(version.ref, query=STORAGE_QUERY).fragments[0].id == fragment_id
        assert [v.version for v in acme.list_context_versions(f"ctx_{made.context_id}").versions] == [1]
        assert [c.context_id for c in acme.list_contexts().contexts] == [made.context_id]

        offer = acme.subscribe(made.context_id, "globex")
        assert isinstance(offer, types.SubscriptionOut) and offer.state == "pending"
        pending = globex.list_subscriptions(state="pending").subscriptions
        assert [s.subscription_id for s in pending] == [offer.subscription_id]
        with pytest.raises(light.NotFound):
            globex.read_context(version.ref)  # nothing until accepted
        assert globex.accept_subscription(made.context_id, offer.subscription_id).state == "live"
        assert [f.id for f in globex.read_context(version.ref).fragments] == [fragment_id]
        listed = acme.list_context_subscriptions(made.context_id).subscriptions
        assert [(s.subscription_id, s.state) for s in listed] == [(offer.subscription_id, "live")]
        assert acme.revoke_subscription(made.context_id, offer.subscription_id).state == "revoked"
        assert globex.list_subscriptions().subscriptions == []
        assert len(globex.list_subscriptions(include_revoked=True).subscriptions) == 1

        rule = acme.add_rule("storage code pulls the runbook", made.context_id, path_globs=["storage/**"])
        assert isinstance(rule, types.RuleOut) and rule.context_ref == f"ctx_{made.context_id}@latest"
        assert [r.rule_id for r in acme.list_rules().rules] == [rule.rule_id]
        touched = acme.retrieve(STORAGE_QUERY, touching=["storage/volume.py"])
        assert any(f.rule == rule.rule_id for f in touched.fragments)
        assert acme.delete_rule(rule.rule_id).rule_id == rule.rule_id
        assert acme.retire_context(made.context_id).retired_at is not None
        with pytest.raises(light.Conflict):
            acme.retire_context(made.context_id)

        for name, call in {
            "create_context(int)": lambda: acme.create_context(7),  # type: ignore[arg-type]
            "read_context(bool)": lambda: acme.read_context(True),
            "accept_subscription(str id)": lambda: acme.accept_subscription(made.context_id, "2"),  # type: ignore[arg-type]
            "add_rule(no context)": lambda: acme.add_rule("a rule"),  # type: ignore[call-arg]
            "add_version(unknown member)": lambda: acme.add_context_version(made.context_id, fragments=[1]),
            "subscribe(org int)": lambda: acme.subscribe(made.context_id, 7),  # type: ignore[arg-type]
        }.items():
            with pytest.raises(light.InvalidCall):
                call()
                pytest.fail(f"{name} was sent")


class Proxy(BaseHTTPRequestHandler):
    """What sits between a client and the service and answers instead of it: a proxy's
    HTML page (200 or 502), a rate limit, a truncated body."""

    answers = {
        "/whoami": (200, "text/html", b"<html><body>Sign in to the corporate proxy</body></html>", {}),
        "/fragments/1": (502, "text/html", b"<html><body>502 Bad Gateway</body></html>", {}),
        "/fragments/2": (
            429,
            "application/problem+json",
            b'{"status":429,"title":"Too Many Requests","detail":"slow down"}',
            {"Retry-After": "3"},
        ),
        "/fragments/3": (200, "application/json", b'{"fragment_id": 3, "org_id": "acme"', {}),
        "/fragments/4": (200, "application/json", b'{"fragment_id": "three"}', {}),
    }

    def do_GET(self) -> None:
        status, kind, body, headers = self.answers[self.path]
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: object) -> None:
        pass


@pytest.fixture
def proxy() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_no_answer_or_not_the_apis_answer_is_a_contexts_error(proxy):
    with socket.socket() as closed:  # a port nothing listens on
        closed.bind(("127.0.0.1", 0))
        refused_url = f"http://127.0.0.1:{closed.getsockname()[1]}"
    with light.Client(refused_url, "ctx_x", org_id="acme") as nowhere, pytest.raises(light.Unreachable) as down:
        nowhere.get_fragment(1)
    assert down.value.status == 0 and "cannot reach" in down.value.detail and type(down.value) is light.Unreachable

    with socket.socket() as silent:  # accepts connections (the backlog), never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        with light.Client(url, "ctx_x", org_id="acme", timeout=0.3) as slow, pytest.raises(light.TimedOut) as late:
            slow.get_fragment(1)
    assert late.value.status == 0 and isinstance(late.value, light.Unreachable)

    with light.Client(proxy, "ctx_x") as contexts:
        with pytest.raises(light.BadResponse) as page:
            contexts.retrieve(STORAGE_QUERY)  # asks /whoami for the org: a sign-in page
        assert page.value.status == 200 and "text/html" in page.value.detail and "WhoamiOut" in page.value.detail
        with pytest.raises(light.ServerError) as gateway:
            contexts.get_fragment(1)
        assert gateway.value.status == 502 and "Bad Gateway" in gateway.value.detail
        with pytest.raises(light.RateLimited) as limited:
            contexts.get_fragment(2)
        assert limited.value.retry_after == 3.0 and limited.value.detail == "slow down"
        for truncated_or_wrong in (3, 4):
            with pytest.raises(light.BadResponse):
                contexts.get_fragment(truncated_or_wrong)

    async def main() -> None:
        async with light.AsyncClient(refused_url, "ctx_x") as nowhere:
            with pytest.raises(light.Unreachable):
                await nowhere.whoami()

    anyio.run(main)


def test_settings_missing_or_wrong_are_contexts_errors(monkeypatch):
    monkeypatch.delenv("CONTEXTS_URL", raising=False)
    monkeypatch.delenv("CONTEXTS_KEY", raising=False)
    for args, words in (
        ((), "CONTEXTS_URL"),
        (("http://127.0.0.1:1",), "CONTEXTS_KEY"),
        (("127.0.0.1:8000", "k"), "http://"),
        (("http://[::1", "k"), "Invalid port"),
    ):
        with pytest.raises(light.InvalidCall, match=words):
            light.Client(*args)
    monkeypatch.setenv("CONTEXTS_URL", "http://127.0.0.1:1")
    monkeypatch.setenv("CONTEXTS_KEY", "ctx_x")
    with light.Client() as contexts:
        assert "127.0.0.1:1" in repr(contexts)
