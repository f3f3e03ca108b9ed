"""The Python client of the server's distribution (app.client: the light client answering
the server's structs), sync and async, against the real service on a free loopback port
(uvicorn, as `contexts serve` runs it), the argument orders of earlier releases it still
takes, and the CLI's remote mode that uses it: typed results, problems as ContextsError,
a CLI message and a non-zero exit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

from app.cli.remote_ingest import BATCH_BYTES
from app.client import AsyncClient, Client, ContextsError, InvalidCall, NotFound
from app.wire.bodies import (
    ContextPack,
    DocumentDeleted,
    DocumentIn,
    DocumentPage,
    RetrieveResponse,
    ScopeIn,
    WhoamiOut,
)
from tests.mcp.test_mcp import ROOT, STORAGE_QUERY, served, tenants  # noqa: F401  (fixtures)


@pytest.fixture
def base_url(served: str) -> str:  # noqa: F811
    return served.removesuffix("/mcp")


def test_sync_client_reads_writes_and_raises_problems(base_url, tenants):  # noqa: F811
    with Client(base_url, tenants.acme_admin) as contexts:
        me = contexts.whoami()
        assert isinstance(me, WhoamiOut) and me.org_id == "acme"
        found = contexts.retrieve(STORAGE_QUERY, org_id="acme", budget_tokens=400, top_k=1)
        assert isinstance(found, RetrieveResponse) and len(found.fragments) == 1
        assert found.fragments[0].source == "runbooks/storage.md#storage-runbook"
        assert contexts.get_trace(found.trace_id).query == STORAGE_QUERY
        page = contexts.list_documents(org_id="acme", path_prefix="runbooks/")
        assert isinstance(page, DocumentPage) and {d.path for d in page.documents} >= {"runbooks/storage.md"}
        storage = next(d for d in page.documents if d.path == "runbooks/storage.md")
        assert contexts.get_document(storage.doc_id).versions[0].current

        pack = contexts.open_session("the storage volume is full", org_id="acme", budget_tokens=300)
        assert isinstance(pack, ContextPack) and pack.fragments and "## [1]" in pack.markdown
        note = contexts.write_note(pack.session_id, "# Note\n\nNode 7's journal cron is commented out.\n")
        promoted = contexts.promote_note(pack.session_id, note.doc_id, owner="Grace")
        assert promoted.owner == "Grace" and promoted.provenance.session_id == pack.session_id

        deleted = contexts.delete_document(storage.doc_id)
        assert isinstance(deleted, DocumentDeleted) and deleted.path == "runbooks/storage.md"
        with pytest.raises(ContextsError) as gone:
            contexts.get_document(storage.doc_id)
        assert gone.value.status == 404 and gone.value.title == "Not Found"
        with pytest.raises(ContextsError) as unknown_repo:
            contexts.retrieve(STORAGE_QUERY, org_id="acme", repo_id="no-such-repo")
        assert unknown_repo.value.status == 404 and "unknown repo" in unknown_repo.value.detail

    with Client(base_url, tenants.acme_reader) as reader, pytest.raises(ContextsError) as refused:
        reader.open_session("anything at all")
    assert refused.value.status == 403
    with Client(base_url, "ctx_not_a_key") as stranger, pytest.raises(ContextsError) as unauthorized:
        stranger.whoami()
    assert unauthorized.value.status == 401
    with Client("http://127.0.0.1:9", tenants.acme_admin, timeout=2) as nowhere, pytest.raises(ContextsError) as down:
        nowhere.whoami()
    assert down.value.status == 0


def test_async_client_makes_the_same_calls(base_url, tenants):  # noqa: F811
    async def main() -> None:
        async with AsyncClient(base_url, tenants.acme_admin) as contexts:
            found = await contexts.retrieve(STORAGE_QUERY, budget_tokens=400)
            assert found.fragments[0].source == "runbooks/storage.md#storage-runbook"
            fragment = await contexts.get_fragment(found.fragments[0].id)
            assert fragment.sources[0].path == "runbooks/storage.md"
            with pytest.raises(ContextsError) as bad:
                await contexts.get_trace("00000000-0000-0000-0000-000000000000")
            assert bad.value.status == 404

    anyio.run(main)


def test_earlier_argument_orders_still_work_with_a_warning(base_url, tenants):  # noqa: F811
    """Each earlier form has more positional arguments than today's: the count tells them
    apart, the call is made as today's, and it warns. A swapped call is an InvalidCall."""
    with Client(base_url, tenants.acme_admin) as contexts:
        with pytest.warns(DeprecationWarning, match="retrieve: positional org_id"):
            found = contexts.retrieve(STORAGE_QUERY, "acme", top_k=1)
        assert isinstance(found, RetrieveResponse) and found.fragments[0].source.startswith("runbooks/storage.md")
        with pytest.warns(
            DeprecationWarning, match=r"open_session: positional org_id .* open_session\(task, \*, ...\)"
        ):
            pack = contexts.open_session("acme", "the storage volume is full", budget_tokens=300)
        assert isinstance(pack, ContextPack) and pack.task == "the storage volume is full"
        with pytest.warns(DeprecationWarning, match="list_documents"):
            assert contexts.list_documents("acme", path_prefix="runbooks/").documents
        with pytest.warns(DeprecationWarning, match="ingest: positional scope"):
            written = contexts.ingest(ScopeIn("acme"), [DocumentIn("notes/legacy.md", "# Legacy\n\nStill taken.\n")])
        assert written.documents[0].path == "notes/legacy.md"
        with pytest.warns(DeprecationWarning, match="pin: positional org_id"):
            pinned = contexts.pin("acme", found.fragments[0].id, "the runbook to read first")
        with pytest.warns(DeprecationWarning, match="list_pins"):
            assert [p.pin_id for p in contexts.list_pins("acme").pins] == [pinned.pin_id]
        with pytest.warns(DeprecationWarning, match="profile: positional org_id, persona_id"):
            assert contexts.profile("acme", None).org_id == "acme"
        with pytest.warns(DeprecationWarning, match="sync_state"), pytest.raises(NotFound):
            contexts.sync_state("acme", "platform")

        # swapped: the query where the org goes; three strings where two are taken
        with pytest.raises(InvalidCall) as swapped:  # read as (org_id, task): the task is no org id
            contexts.open_session("the storage volume is full", "acme")
        assert swapped.value.status == 0 and "$.scope.org_id" in swapped.value.detail
        with pytest.raises(InvalidCall) as too_many:
            contexts.retrieve(STORAGE_QUERY, "acme", "platform")
        assert "too many positional arguments" in str(too_many.value) and too_many.value.status == 0
        with pytest.raises(InvalidCall, match="fragment_id must be an int"):
            contexts.pin("acme", "12", "why")


def cli(*args: str, cwd: Path = ROOT, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("CONTEXTS_")}
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=clean | env | {"CONTEXTS_DATABASE_URL": "postgresql://nobody@127.0.0.1:9/none", "PYTHONPATH": str(ROOT)},
        timeout=120,
    )


def test_the_cli_ingests_files_through_a_running_service(base_url, tenants, tmp_path):  # noqa: F811
    """`contexts ingest --url --key` walks files as a local ingest does and writes them with
    POST /documents: what the service refuses (an empty file, within a batch; a file over its
    body limit, alone) is skipped and said, a file over a batch's bytes but within the limit is
    sent alone and stored, binary files are counted, nothing reaches the
    database of CONTEXTS_HOME (the URL given points nowhere), and a key without write stops
    the command with the service's 403."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "retries.md").write_text(
        "# Retries\n\nA failed payment is retried three times, with exponential backoff.\n"
    )
    (notes / "empty.md").write_text("")
    (notes / "blob.bin").write_bytes(b"\x00\x01binary")
    (notes / "ansi.log").write_text("\x1b[31m\x1b[0m\x07" * 200)  # text, but mostly control characters
    (notes / ".hidden.md").write_text("# Hidden\n\nNever ingested.\n")
    for n in range(17):  # two batches (BATCH_DOCUMENTS)
        (notes / f"ledger-{n:02}.md").write_text(f"# Ledger {n}\n\nEntry {n} of the billing ledger.\n")
    # Alone in its batch (over BATCH_BYTES) and over the service's body limit (8 MiB): a 413.
    (notes / "huge.md").write_text("# Huge\n\n" + "A line of the archived ledger export.\n" * 250_000)
    # Alone in its batch too, but within the body limit: stored (its repeated windows are
    # one fragment, so the model embeds little).
    large = "# Ledger archive\n\nThe quarterly ledger archive of the billing team.\n\n"
    (notes / "archive.md").write_text(large + "A line of the archived ledger export.\n" * 8_000)
    assert BATCH_BYTES < (notes / "archive.md").stat().st_size < 8 * 1024 * 1024
    remote = {"CONTEXTS_URL": base_url, "CONTEXTS_KEY": tenants.acme_admin}

    done = cli("ingest", "notes", "--org", "acme", "--repo", "billing", cwd=tmp_path, **remote)
    said = done.stdout + done.stderr
    assert done.returncode == 0, said
    assert "19 document(s) changed" in said and "notes/archive.md" not in said
    assert "notes/empty.md: empty after normalization" in said and "2 binary or non-UTF-8 file(s)" in said
    assert "notes/blob.bin" in said and "notes/ansi.log" in said
    assert "notes/huge.md: larger than the service accepts in one request (413)" in said
    found = cli(
        "query", "how often is a failed payment retried?", "--org", "acme", "--repo", "billing", "--json", **remote
    )
    assert found.returncode == 0, found.stderr
    assert [f["source"] for f in json.loads(found.stdout)["fragments"]][:1] == ["notes/retries.md#retries"]
    archived = cli("query", "the quarterly ledger archive", "--org", "acme", "--repo", "billing", "--json", **remote)
    assert archived.returncode == 0, archived.stderr
    assert json.loads(archived.stdout)["fragments"][0]["source"].startswith("notes/archive.md"), archived.stdout

    again = cli("ingest", "notes", "--org", "acme", "--repo", "billing", cwd=tmp_path, **remote)
    assert again.returncode == 0 and "0 document(s) changed" in again.stdout + again.stderr
    noted = cli("ingest", "notes/retries.md", "--org", "acme", "--no-create-org", cwd=tmp_path, **remote)
    assert (
        noted.returncode == 0 and "--create-org/--no-create-org: for a local ingest only" in noted.stdout + noted.stderr
    )
    named = cli("ingest", "notes/blob.bin", "--org", "acme", cwd=tmp_path, **remote)
    assert named.returncode != 0 and "binary file" in named.stderr and "Traceback" not in named.stderr
    reader = cli(
        "ingest", "notes", "--org", "acme", cwd=tmp_path, CONTEXTS_URL=base_url, CONTEXTS_KEY=tenants.acme_reader
    )
    assert reader.returncode != 0 and "403" in reader.stderr and "Traceback" not in reader.stderr
    no_key = cli("ingest", "notes", "--org", "acme", "--url", base_url, cwd=tmp_path)
    assert no_key.returncode != 0 and "--key" in no_key.stderr


def test_the_cli_queries_and_manages_documents_through_a_running_service(base_url, tenants):  # noqa: F811
    """The database URL given points nowhere: everything goes through the service."""
    started = time.perf_counter()
    done = cli("query", STORAGE_QUERY, "--org", "acme", "--top-k", "1", "--url", base_url, "--key", tenants.acme_admin)
    elapsed = time.perf_counter() - started
    assert done.returncode == 0, done.stderr
    assert "runbooks/storage.md#storage-runbook" in done.stdout and "1 fragment(s)" in done.stderr
    print(f"remote query, whole process: {elapsed:.2f} s")

    listed = cli(
        "documents", "list", "--org", "acme", "--kind", "code", CONTEXTS_URL=base_url, CONTEXTS_KEY=tenants.acme_admin
    )
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.strip().splitlines()
    assert lines and all("\tcode\t" in line for line in lines)
    doc_id = lines[0].split("\t")[0]
    shown = cli("documents", "show", doc_id, "--json", CONTEXTS_URL=base_url, CONTEXTS_KEY=tenants.acme_admin)
    assert shown.returncode == 0 and '"versions"' in shown.stdout
    refused = cli("documents", "delete", doc_id, CONTEXTS_URL=base_url, CONTEXTS_KEY=tenants.acme_reader)
    assert refused.returncode != 0 and "403" in refused.stderr and "Traceback" not in refused.stderr
    deleted = cli("documents", "delete", doc_id, CONTEXTS_URL=base_url, CONTEXTS_KEY=tenants.acme_admin)
    assert deleted.returncode == 0 and "deleted" in deleted.stderr
    again = cli("documents", "delete", doc_id, CONTEXTS_URL=base_url, CONTEXTS_KEY=tenants.acme_admin)
    assert again.returncode != 0 and "404" in again.stderr
    bad = cli("query", "x", "--org", "acme", "--top-k", "0", "--url", base_url, "--key", tenants.acme_admin)
    assert bad.returncode != 0 and "top_k" in bad.stderr
    no_key = cli("query", "storage", "--org", "acme", "--url", base_url)
    assert no_key.returncode != 0 and "--key" in no_key.stderr

    # pins and ranking profiles, through the client's keyword-only calls
    remote = {"CONTEXTS_URL": base_url, "CONTEXTS_KEY": tenants.acme_admin}
    found = cli("query", STORAGE_QUERY, "--org", "acme", "--top-k", "1", "--json", **remote)
    fragment_id = str(json.loads(found.stdout)["fragments"][0]["id"])
    until = "2100-01-01T00:00:00+00:00"
    added = cli(
        "pin", "add", fragment_id, "--org", "acme", "--reason", "read first", "--expires-at", until, "--json", **remote
    )
    assert added.returncode == 0, added.stderr
    pin = json.loads(added.stdout)
    assert pin["fragment_id"] == int(fragment_id) and pin["expires_at"].startswith("2100-01-01")
    listed_pins = cli("pin", "list", "--org", "acme", "--json", **remote)
    assert listed_pins.returncode == 0 and [p["pin_id"] for p in json.loads(listed_pins.stdout)["pins"]] == [
        pin["pin_id"]
    ]
    assert cli("pin", "remove", str(pin["pin_id"]), **remote).returncode == 0
    stored = cli("profile", "set", "--org", "acme", "--w-rerank", "0.7", "--halflife", "runbook=30", "--json", **remote)
    assert stored.returncode == 0, stored.stderr
    shown_profile = cli("profile", "show", "--org", "acme", "--json", **remote)
    assert shown_profile.returncode == 0 and json.loads(shown_profile.stdout)["w_rerank"] == 0.7
    profiles = cli("profile", "list", "--org", "acme", "--json", **remote)
    assert profiles.returncode == 0 and len(json.loads(profiles.stdout)["profiles"]) == 1
    assert cli("profile", "delete", "--org", "acme", **remote).returncode == 0


def test_the_cli_remote_path_loads_no_model():
    """What makes a remote query fast: the command path imports neither torch nor the server
    (nor does a remote ingest's: the service embeds)."""
    code = (
        "import sys; import app.cli, app.client, app.cli.remote_ingest, app.ingest.files, app.ingest.normalize; "
        "names = ('torch', 'sentence_transformers', 'litestar', 'app.ingest.pipeline'); "
        "heavy = [m for m in names if m in sys.modules]; "
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
