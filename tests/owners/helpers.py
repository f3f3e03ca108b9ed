"""Shared by the owners tests: retrievals recorded as traces, and an old corpus."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

OLD = datetime(2024, 1, 15, tzinfo=UTC)
"""When the corpus's text was written (its source timestamp): long before now."""


def record_returns(conn, org: str, fragment_ids: list[int], times: int, days_ago: float = 1.0) -> None:
    """`times` retrievals of `org` that each returned `fragment_ids` (as the service's
    traces do), `days_ago` days ago; the trace trigger keeps data.fragment_returns."""
    candidates = json.dumps([{"fragment_id": f, "included": True, "final_rank": i} for i, f in enumerate(fragment_ids)])
    when = datetime.now(UTC) - timedelta(days=days_ago)
    for _ in range(times):
        conn.execute(
            "insert into data.retrieval_traces (org_id, principal_id, query, request, pipeline, candidates, created_at)"
            " values (%s, 'admin', 'q', '{}', '{}', %s, %s)",
            (org, candidates, when),
        )


def fragments_of(conn, org: str, path: str) -> list[int]:
    return [
        r[0]
        for r in conn.execute(
            "select distinct s.fragment_id from data.fragment_sources s join data.documents d on d.doc_id = s.doc_id"
            " where d.org_id = %s and d.path = %s and s.retired_at is null order by 1",
            (org, path),
        )
    ]
