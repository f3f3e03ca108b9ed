"""A write the API accepts can be read back through every listing: a stored time or
metadata value no reader decodes is refused with a 4xx at every door, and nothing of
the refused request is stored (issue 29, section 3)."""

from __future__ import annotations

import itertools
import json
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from app.readable import READABLE_FROM, READABLE_UNTIL

_paths = itertools.count()

EDGE_DAYS = st.one_of(
    st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(1, 1, 3)),
    st.datetimes(min_value=datetime(9999, 12, 29), max_value=datetime(9999, 12, 31, 23, 59, 59, 999999)),
)
OFFSETS = st.integers(min_value=-(23 * 60 + 59), max_value=23 * 60 + 59).map(lambda m: timezone(timedelta(minutes=m)))
"""Every offset ISO 8601 and Python allow; PostgreSQL reads up to 15:59 only (a +16:00
timestamp was a 500)."""
EDGE_TIMES = st.one_of(
    st.builds(lambda at, tz: at.replace(tzinfo=tz).isoformat(), EDGE_DAYS, OFFSETS),
    st.sampled_from(["infinity", "-infinity", "+infinity", "10000-01-01T00:00:00Z", "0000-12-31T23:00:00Z"]),
)


def readable(value: str) -> bool:
    """The rule: an ISO 8601 time with an offset, from 0001-01-02 to 9999-12-30 in UTC."""
    try:
        at = datetime.fromisoformat(value)
    except ValueError:
        return False
    try:
        return READABLE_FROM <= at < READABLE_UNTIL
    except OverflowError:
        return False


def mcp(client, tool: str, arguments: dict) -> dict:
    response = client.post(
        "/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}},
        headers={"Accept": "application/json, text/event-stream"},
    )
    assert response.status_code == 200, response.text
    result = response.json()["result"]
    assert not result["isError"], result
    return result["structuredContent"]


def every_listing_reads(client) -> list[dict]:
    """Every door that lists or reads the org's documents and fragments answers."""
    listed = client.get("/documents", params={"org_id": "acme", "limit": 1000})
    assert listed.status_code == 200, listed.text
    documents = listed.json()["documents"]
    for d in documents[-3:]:
        read = client.get(f"/documents/{d['doc_id']}")
        assert read.status_code == 200, read.text
    assert mcp(client, "list_documents", {"scope": {"org_id": "acme"}, "limit": 1000})["documents"] == documents
    found = client.post("/contexts/retrieve", json={"query": "edge of time", "scope": {"org_id": "acme"}})
    assert found.status_code == 200, found.text
    return documents


def post_document(client, **fields):
    path = fields.pop("path", None) or f"t/{next(_paths)}.md"
    document = {"path": path, "content": f"# Edge of time {path}\n\nWritten at an edge of time.", **fields}
    return path, client.post("/documents", json={"scope": {"org_id": "acme"}, "documents": [document]})


@given(timestamp=EDGE_TIMES)
@example(timestamp="9999-12-31T23:59:59-14:00")
@example(timestamp="0001-01-01T00:00:00+14:00")
@example(timestamp="9999-12-30T23:59:59.999999+00:00")
@example(timestamp="0001-01-02T00:00:00+00:00")
@example(timestamp="2030-01-01T00:00:00+16:00")
@example(timestamp="2030-01-01T00:00:00-23:59")
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_every_accepted_timestamp_reads_back_through_every_listing(client, timestamp):
    path, response = post_document(client, timestamp=timestamp)
    if readable(timestamp):
        assert response.status_code == 201, response.text
    else:
        assert 400 <= response.status_code < 500, response.text
    paths = [d["path"] for d in every_listing_reads(client)]
    assert (path in paths) is (response.status_code == 201)


@pytest.mark.parametrize(
    "raw",
    [
        '{"deep": ' + "[" * 32 + "]" * 32 + "}",  # 33 levels with the object
        '{"deep": ' + "[" * 3000 + "]" * 3000 + "}",
        '{"n": NaN}',
        '{"n": Infinity}',
        '{"n": 1e400}',
        '{"n": ' + "1" * 400 + "}",
        '{"s": "nul\\u0000"}',
        '{"nul\\u0000key": 1}',
        '{"s": "lone \\ud800 surrogate"}',
        '{"s": "' + "x" * (16 * 1024) + '"}',
        '{"valid_until": "9999-12-31T23:59:59-14:00"}',
        '{"valid_from": "0001-01-01T00:00:00+14:00"}',
    ],
)
def test_unreadable_metadata_is_refused_at_every_write_door(client, raw):
    """POST /documents, and POST /sessions/{id}/notes (the same path): 4xx, nothing stored."""
    body = (
        '{"scope": {"org_id": "acme"}, "documents": [{"path": "m.md", "content": "# M\\n\\nmetadata", "metadata": '
        + raw
        + "}]}"
    )
    response = client.post("/documents", content=body.encode(), headers={"content-type": "application/json"})
    assert 400 <= response.status_code < 500, response.text
    session = client.post("/sessions", json={"scope": {"org_id": "acme"}, "task": "write a note"}).json()["session_id"]
    note = client.post(
        f"/sessions/{session}/notes",
        content=('{"text": "a note", "metadata": ' + raw + "}").encode(),
        headers={"content-type": "application/json"},
    )
    assert 400 <= note.status_code < 500, note.text
    if "\\u0000" in raw:  # said with where it is, not as PostgreSQL's "unsupported Unicode escape sequence"
        for refused in (response, note):
            assert "holds a NUL character (U+0000) at $" in refused.text, refused.text
    assert every_listing_reads(client) == []
    assert client.get("/documents", params={"org_id": "acme", "session_id": session}).json()["documents"] == []


def test_metadata_at_the_bounds_is_accepted_and_reads_back(client):
    _, response = post_document(client, metadata={"deep": json.loads("[" * 31 + "]" * 31), "n": 1.5e308})
    assert response.status_code == 201, response.text
    _, response = post_document(client, metadata={"valid_until": "9999-12-30T23:59:59+00:00"})
    assert response.status_code == 201, response.text
    for d in every_listing_reads(client):
        assert client.get(f"/documents/{d['doc_id']}").json()["metadata"]


@pytest.mark.parametrize(
    "path",
    ["nul\x00.md", "line\nbreak.md", "bell\x07.md", "rtl\u202eevil.md", "zero\u200bwidth.md", "x" * 1025, "../up.md"],
)
def test_unreadable_paths_are_refused(client, path):
    _, response = post_document(client, path=path)
    assert 400 <= response.status_code < 500, response.text
    session = client.post("/sessions", json={"scope": {"org_id": "acme"}, "task": "write a note"}).json()["session_id"]
    note = client.post(f"/sessions/{session}/notes", json={"text": "a note", "path": path})
    assert 400 <= note.status_code < 500, note.text
    assert every_listing_reads(client) == []
    assert client.get("/documents", params={"org_id": "acme", "session_id": session}).json()["documents"] == []


def test_offsets_past_what_postgresql_reads_are_stored_in_utc(client):
    """ISO 8601 allows offsets to 23:59, PostgreSQL reads 15:59: a timestamp and a
    validity window with such offsets are stored as the same instants in UTC."""
    metadata = {"valid_from": "2030-01-01T00:00:00+23:30", "valid_until": "2030-06-01T00:00:00-16:00"}
    path, response = post_document(client, timestamp="2030-01-01T12:00:00+16:00", metadata=metadata)
    assert response.status_code == 201, response.text
    listed = every_listing_reads(client)
    doc = next(d for d in listed if d["path"] == path)
    read = client.get(f"/documents/{doc['doc_id']}").json()
    stamp = read.get("timestamp") or read.get("source_ts")
    assert datetime.fromisoformat(stamp.replace("Z", "+00:00")) == datetime(2029, 12, 31, 20, 0, tzinfo=UTC)
    stored = read["metadata"]
    assert datetime.fromisoformat(stored["valid_from"]) == datetime(2029, 12, 31, 0, 30, tzinfo=UTC)
    assert datetime.fromisoformat(stored["valid_until"]) == datetime(2030, 6, 1, 16, 0, tzinfo=UTC)


def test_front_matter_windows_no_reader_decodes_are_refused(client):
    for bound in ("valid_until: 9999-12-31T23:59:59-14:00", "valid_from: 0001-01-01T00:00:00+14:00"):
        _, response = post_document(client, content=f"---\n{bound}\n---\n# Window\n\nA window at the edge.")
        assert response.status_code == 422, response.text
        assert "outside the times every reader can decode" in response.json()["detail"]
    assert every_listing_reads(client) == []


@pytest.mark.parametrize("expires_at", ["9999-12-31T23:59:59-14:00", "9999-12-31T00:00:00Z"])
def test_pins_and_rules_refuse_expiries_no_reader_decodes(client, expires_at):
    _, response = post_document(client)
    assert response.status_code == 201
    documents = every_listing_reads(client)
    fragment = client.get(f"/documents/{documents[0]['doc_id']}").json()["fragments"][0]["fragment_id"]
    pin = client.post(
        "/pins",
        json={"scope": {"org_id": "acme"}, "fragment_id": fragment, "reason": "edge", "expires_at": expires_at},
    )
    assert pin.status_code == 400 and "9999-12-30" in pin.text, pin.text
    assert client.get("/pins", params={"org_id": "acme"}).json()["pins"] == []
    context = client.post("/contexts", json={"scope": {"org_id": "acme"}, "name": "edge"}).json()
    version = client.post(f"/contexts/{context['context_id']}/versions", json={"fragment_ids": [fragment]}).json()
    body = {"org_id": "acme", "name": "edge", "context": version["ref"], "path_globs": ["**"]}
    rule = client.post("/rules", json=body | {"expires_at": expires_at})
    assert rule.status_code == 400 and "9999-12-30" in rule.text, rule.text
    assert client.get("/rules", params={"org_id": "acme"}).json()["rules"] == []


def test_other_stored_text_fields_refuse_what_cannot_be_stored(client):
    """Context names and descriptions, owners, reasons: NUL, controls where a name may not
    hold them, and lengths past their bounds are 400s; every listing still reads."""
    for body in (
        {"scope": {"org_id": "acme"}, "name": "nul", "description": "a\x00b"},
        {"scope": {"org_id": "acme"}, "name": "long", "description": "x" * 2001},
        {"scope": {"org_id": "acme"}, "name": "bad\nname"},
    ):
        assert client.post("/contexts", json=body).status_code == 400
    assert client.get("/contexts", params={"org_id": "acme"}).json()["contexts"] == []
    for owner in ("a\x00b", "x" * 257):
        _, response = post_document(client, owner=owner)
        assert response.status_code == 400, response.text
    reassign = client.post("/owners/reassign", json={"org_id": "acme", "from_owner": "Ada", "to_owner": "Eve\nBob"})
    assert reassign.status_code == 400
    assert every_listing_reads(client) == []


def test_the_rule_in_python_is_the_range(client):
    """The edges themselves, to the microsecond, at the two offsets furthest apart."""
    east, west = timezone(timedelta(hours=14)), timezone(timedelta(hours=-14))
    last = READABLE_UNTIL - timedelta(microseconds=1)
    for at, ok in (
        (READABLE_FROM.astimezone(east), True),
        ((READABLE_FROM - timedelta(microseconds=1)).astimezone(east), False),
        (last.astimezone(west).replace(tzinfo=west), True),
        (READABLE_UNTIL.astimezone(UTC), False),
    ):
        _, response = post_document(client, timestamp=at.isoformat())
        assert (response.status_code == 201) is ok, (at, response.text)
    every_listing_reads(client)
