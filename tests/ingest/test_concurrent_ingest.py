"""Ingestion is shared by concurrent requests: one pipeline (and its chunkers) serves
every worker thread, so parallel uploads must give exactly what sequential ones give.
Hostile paths are refused at the HTTP edge before anything is stored."""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psycopg
import pytest
from litestar.testing import TestClient

from app.access import create_api_key, ensure_admin_principal
from app.ingest.normalize import SourceDocument
from app.ingest.pipeline import IngestPipeline
from app.serve.app import build_services, create_app
from tests.conftest import login_url

CODE = Path(__file__).parents[1] / "fixtures" / "code"
PROSE = [Path(__file__).parents[2] / name for name in ("README.md", "docs/architecture.md", "docs/dba.md")]
COMMENT = {".py": "#", ".js": "//", ".ts": "//", ".go": "//", ".rs": "//", ".java": "//"}
"""The fixtures these tests vary (one per language family; more would only add minutes)."""


def code_variants(count: int) -> dict[str, str]:
    """`count` versions of every code fixture: each shifted by a different number of
    header lines and carrying its own marker, so a chunk taken from the wrong file or
    the wrong call shows up in its text or its line numbers."""
    files = {}
    for source in sorted(p for p in CODE.iterdir() if p.suffix in COMMENT):
        marker = COMMENT[source.suffix]
        text = source.read_text()
        for n in range(count):
            header = "".join(f"{marker} variant {n} header line {i}\n" for i in range(n % 7))
            files[f"v{n}/{source.name}"] = f"{header}{text}{marker} end of variant {n}\n"
    return files


@pytest.fixture
def switch_often():
    """Switch threads every microsecond so interleavings a real server meets now and
    then happen in every run."""
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(previous)


def chunk_view(pipeline: IngestPipeline, path: str, text: str) -> list[tuple]:
    prepared = pipeline.prepare(SourceDocument(path=path, content=text))
    return [
        (c.text, c.heading_path, c.symbol, c.start_line, c.end_line, c.anchor, c.token_count) for c in prepared.chunks
    ]


def prose_variants(count: int) -> dict[str, str]:
    return {
        f"v{n}/{source.name}": f"# Variant {n}\n\n{source.read_text()}\nEnd of variant {n}.\n"
        for source in PROSE
        for n in range(count)
    }


def test_parallel_preparation_matches_sequential(settings, switch_often):
    pipeline = IngestPipeline(settings.with_(max_fragment_tokens=64, overlap_tokens=16), {})
    files = code_variants(8) | prose_variants(3)
    expected = {path: chunk_view(pipeline, path, text) for path, text in files.items()}
    work = list(files.items()) * 3
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda item: (item[0], chunk_view(pipeline, *item)), work))
    wrong = sorted({path for path, chunks in results if chunks != expected[path]})
    assert not wrong, f"{len(wrong)} of {len(files)} files chunked differently in parallel: {wrong[:5]}"


# -- over HTTP -------------------------------------------------------------------------


@pytest.fixture
def api(settings, models, db_url, logins):
    """The API as deployed (see tests/api/test_api.py), with keys for two orgs: `acme`
    receives parallel uploads, `solo` the same files one at a time."""
    local = settings.with_(
        database_url=db_url,
        max_fragment_tokens=64,
        overlap_tokens=16,
        service_database_url=login_url(db_url, logins["service"]),
    )
    services = build_services(local, db_url)
    keys = {}
    with psycopg.connect(db_url) as conn:
        for org in ("acme", "solo"):
            conn.execute("select service.create_org(%s)", (org,))
            ensure_admin_principal(conn, org, "admin")
            keys[org] = create_api_key(conn, org, "admin").token
    try:
        with TestClient(app=create_app(local, services=services)) as client:
            yield client, keys
    finally:
        services.runtime.pool.close()


def upload(client: TestClient, key: str, org: str, files: dict[str, str]):
    body = {
        "scope": {"org_id": org, "repo_id": "platform"},
        "documents": [{"path": p, "content": c, "author": "Ada"} for p, c in files.items()],
    }
    return client.post("/documents", json=body, headers={"Authorization": f"Bearer {key}"})


def stored_fragments(conn: psycopg.Connection, org: str) -> dict[str, list[tuple]]:
    """Each document's chunks as stored: each chunk's place and the hash of its own text.
    Not its fragment's text: a near copy of another variant's chunk ("// end of variant 3"
    against "... 4") points at whichever of the two was written first (ADR 0003), so that
    depends on the order of the writes; the chunk's own text does not."""
    rows = conn.execute(
        """select d.path, s.ordinal, s.anchor, s.start_line, s.end_line, s.content_hash
             from data.documents d
             join data.fragment_sources s on s.doc_id = d.doc_id and s.doc_version = d.current_version
            where d.org_id = %s
            order by d.path, s.ordinal""",
        (org,),
    ).fetchall()
    stored: dict[str, list[tuple]] = {}
    for path, *fragment in rows:
        stored.setdefault(path, []).append(tuple(fragment))
    return stored


def test_parallel_uploads_store_what_sequential_uploads_store(api, conn, switch_often):
    client, keys = api
    files = code_variants(8)
    # One request per variant: each prepares its six files while the others do too.
    requests = [{p: t for p, t in files.items() if p.startswith(f"v{n}/")} for n in range(8)]
    for request in requests:
        assert upload(client, keys["solo"], "solo", request).status_code == 201
    with ThreadPoolExecutor(max_workers=8) as pool:
        statuses = list(pool.map(lambda request: upload(client, keys["acme"], "acme", request).status_code, requests))
    assert statuses == [201] * len(requests)
    sequential, parallel = stored_fragments(conn, "solo"), stored_fragments(conn, "acme")
    assert set(sequential) == set(parallel) == set(files)
    wrong = sorted(path for path in files if parallel[path] != sequential[path])
    assert not wrong, f"{len(wrong)} of {len(files)} files stored different fragments: {wrong[:5]}"


@pytest.mark.parametrize(
    ("path", "named"),
    [
        ("../../etc/passwd", "'..' segment"),
        ("docs/guide.md\nsource: forged.md", "control character U+000A"),
        ("docs/\u202edm.exe", "invisible formatting character U+202E"),
        ("  ", "blank segment"),
    ],
)
def test_a_misleading_path_is_refused_and_nothing_is_stored(api, conn, path, named):
    client, keys = api
    good = {"docs/fine.md": "# Fine\n\nA perfectly good document."}
    response = upload(client, keys["acme"], "acme", good | {path: "Looks harmless."})
    assert response.status_code == 422, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    body = response.json()
    assert body["status"] == 422 and named in body["detail"]
    assert conn.execute("select count(*) from data.documents").fetchone()[0] == 0
    assert conn.execute("select count(*) from data.fragments").fetchone()[0] == 0
