"""Authority in a retrieval: each candidate carries it (from the one SQL call), the
trace records it and when it was computed, and the ranking profile's `w_authority`
blends it into final scores that stay within [0, 1]; the background refresh is debounced."""

from __future__ import annotations

import threading
import time

import msgspec
import psycopg

from app.access import act_as
from app.authority import DebouncedRefresh
from app.retrieve.config import PipelineConfig
from app.retrieve.service import Retriever
from app.retrieve.trace import get_trace
from app.wire.retrieve import RetrieveRequest

DOCS = {
    "storage/volumes.md": "# Volumes\n\nA storage volume fills up when the journal is never rotated.\n",
    "storage/journal.md": "# Journal\n\nRotate the journal before the volume fills. See [volumes](volumes.md).\n",
    "runbooks/disk.md": "# Disk full\n\nWhen a storage volume fills, follow [volumes](../storage/volumes.md).\n",
}


def request(query: str) -> RetrieveRequest:
    return msgspec.convert({"query": query, "scope": {"org_id": "acme"}}, RetrieveRequest)


def test_candidates_carry_authority_and_the_weight_blends_it(conn, ingest, models):
    ingest("acme", DOCS)
    conn.execute("select service.refresh_authority()")
    conn.commit()
    plain = Retriever(models, None, PipelineConfig())
    act_as(conn, "acme", "admin")
    ranking = plain.rank(conn, request("storage volume fills"))
    by_path = {c.path: c for c in ranking.candidates}
    assert by_path["storage/volumes.md"].authority == 1.0
    assert by_path["runbooks/disk.md"].authority == 0.0
    assert all(c.authority_refreshed_at is not None for c in ranking.candidates)
    conn.rollback()

    # The org's profile gives authority half the blend (everything else: relevance).
    act_as(conn, "acme", "admin")
    conn.execute("select service.ranking_profile_set('acme', null, 0.5, 0, 0.5, 0, 0)")
    conn.commit()
    act_as(conn, "acme", "admin")
    ranked = plain.rank(conn, request("storage volume fills")).ranked
    for c in ranked:
        assert 0.0 <= c.final_score <= 1.0
        assert c.terms is not None and c.terms["authority"] == (c.authority or 0.0)
        assert c.final_score == 0.5 * c.terms["rerank"] + 0.5 * c.terms["authority"]
    assert ranked[0].path == "storage/volumes.md"
    conn.rollback()

    act_as(conn, "acme", "admin")
    response = plain.retrieve(conn, request("storage volume fills"))
    conn.commit()
    act_as(conn, "acme", "admin")
    trace = get_trace(conn, response.trace_id)
    assert trace["pipeline"]["profile"]["weights"]["authority"] == 0.5
    assert trace["pipeline"]["authority_refreshed_at"] is not None
    recorded = {c["fragment_id"]: c["authority"] for c in trace["candidates"]}
    assert recorded and set(recorded.values()) <= {0.0, 1.0} | {c.authority for c in ranked}


def test_a_profile_that_weighs_authority_0_does_not_read_it(conn, ingest, models):
    """The relevance-only profile (what `make bench` compares the blend with) skips the
    authority look-up: no candidate carries authority, the term counts 0, order kept."""
    ingest("acme", DOCS)
    conn.execute("select service.refresh_authority()")
    conn.commit()
    plain = Retriever(models, None, PipelineConfig())
    act_as(conn, "acme", "admin")
    conn.execute("select service.ranking_profile_set('acme', null, 1, 0, 0, 0, 0)")
    conn.commit()
    act_as(conn, "acme", "admin")
    ranking = plain.rank(conn, request("storage volume fills"))
    conn.rollback()
    assert ranking.candidates
    assert all(c.authority is None and c.authority_refreshed_at is None for c in ranking.candidates)
    assert all(c.terms is not None and c.terms["authority"] == 0.0 for c in ranking.ranked)
    assert [c.final_score for c in ranking.ranked] == [c.terms["rerank"] for c in ranking.ranked if c.terms]


def test_the_background_refresh_is_debounced():
    runs: list[float] = []
    done = threading.Event()

    def run() -> None:
        runs.append(time.monotonic())
        done.set()

    refresher = DebouncedRefresh(run, 1.0)  # pokes 0.02 s apart fall within it on a loaded machine too
    for _ in range(5):
        refresher.poke()
        time.sleep(0.02)
    assert done.wait(5)
    time.sleep(0.3)
    assert len(runs) == 1
    refresher.close()
    refresher.poke()
    time.sleep(0.3)
    assert len(runs) == 1  # closed: no more refreshes
    assert DebouncedRefresh(run, 0).poke() is None  # 0: never


def test_a_refresh_during_a_database_outage_logs_one_line_not_a_traceback(caplog):
    """An outage is expected (the monitor says so, and the next poke refreshes): a warning
    without a traceback; any other failure keeps its traceback."""
    import logging

    from app.db.availability import DatabaseUnavailable

    def down() -> None:
        raise DatabaseUnavailable("database unavailable for 3.7 s")

    def broken() -> None:
        raise ValueError("a bug")

    with caplog.at_level(logging.WARNING, logger="app.authority"):
        DebouncedRefresh(down, 1.0)._fire()
        DebouncedRefresh(broken, 1.0)._fire()
    outage, bug = caplog.records
    assert (outage.levelname, outage.exc_info) == ("WARNING", None)
    assert "skipped" in outage.getMessage() and "3.7 s" in outage.getMessage()
    assert bug.levelname == "ERROR" and bug.exc_info is not None


def test_the_service_refreshes_authority_after_ingestion(client, db_url):
    """Off the request path: the ingestion answers first, the refresh follows once the
    writes have stopped for the debounce delay."""
    client.app.state.services.authority.delay = 0.2
    body = {
        "scope": {"org_id": "acme"},
        "documents": [{"path": p, "content": text} for p, text in DOCS.items()],
    }
    assert client.post("/documents", json=body).status_code == 201
    deadline = time.monotonic() + 20
    rows: list = []
    while time.monotonic() < deadline and not rows:
        time.sleep(0.2)
        with psycopg.connect(db_url) as conn:
            rows = conn.execute(
                "select d.path from data.fragment_authority a join data.fragments f using (fragment_id)"
                " join data.documents d on d.doc_id = f.doc_id where a.authority = 1"
            ).fetchall()
    assert rows == [("storage/volumes.md",)]
