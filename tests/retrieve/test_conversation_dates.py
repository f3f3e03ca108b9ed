"""A day or a month named in a question lifts the conversation turns about it
(app/retrieve/dates.py): written in any form, against the session's date and the dates
the turn's relative times name; the trace says which date matched."""

from __future__ import annotations

import msgspec
import pytest

from app.text.turns import fragment_dates, query_dates
from app.wire.retrieve import RetrieveRequest

# Two sessions; the turn that says more about painting was said
# in May, the one asked about on 10 June. Session labels are ISO dates, the questions
# write dates in words.
TRANSCRIPT = """# Caroline and Melanie

## Session 1, 2023-05-08

Caroline: I took a pottery class, the class was great, the best class I ever took.
Melanie: Lovely, I should try it too.

## Session 2, 2023-06-10

Caroline: Guess what, I signed up for a painting class.
Melanie: Wow! Last month I ran a marathon.
"""


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ("What class did Caroline take on 10 June, 2023?", {(2023, 6, 10)}),
        ("What class did Caroline take on June 10th, 2023?", {(2023, 6, 10)}),
        ("What class did Caroline take on 2023-06-10?", {(2023, 6, 10)}),
        ("What did Maria donate in December 2023?", {(2023, 12)}),
        ("What happened in Sept. 2023 and on 3 Jan 2024?", {(2023, 9), (2024, 1, 3)}),
        ("What did Melanie do in 2023?", set()),  # a year alone: most turns share it
        ("What did Melanie paint in June?", set()),  # a month without its year
        ("Where did John go last year?", set()),  # relative: to when it was said
        ("What happened on 31 February, 2023?", {(2023, 2)}),  # no such day: its month
        ("", set()),
        ("the of and", set()),
        ("2023-13-45 99 Smarch 2023", set()),
    ],
)
def test_query_dates_reads_days_and_months_in_any_form(query, named):
    assert query_dates(query) == named


def test_fragment_dates_are_the_session_day_and_what_relative_times_name():
    text = "Session 2, 1:56 pm on 10 June, 2023\nMelanie: Last month I ran.\n(May 2023; week of 29 May 2023)\n\nWhy?"
    dates = fragment_dates(text)
    assert {(2023, 6, 10), (2023, 6), (2023, 5), (2023, 5, 29), (2023, 6, 4)} <= dates
    assert (2023, 6, 5) not in dates
    assert fragment_dates("Session 3, undated\nCaroline: see you on 10 June 2023!") == frozenset()
    assert fragment_dates("") == frozenset()


def ranked(conn, as_principal, retriever, query: str) -> list:
    as_principal("acme")
    request = msgspec.convert({"query": query, "scope": {"org_id": "acme"}, "rerank_top": 10}, RetrieveRequest)
    ranking = retriever.rank(conn, request)
    conn.rollback()
    return ranking.ranked


def test_a_question_naming_a_day_or_month_finds_the_turn_said_then(conn, ingest, as_principal, retriever):
    ingest("acme", {"chats/mel.md": TRANSCRIPT}, kind="conversation")
    # No date named: the turn with the most painting words is first.
    plain = ranked(conn, as_principal, retriever, "What class did Caroline take?")
    assert "pottery" in plain[0].text and plain[0].date_match is None
    for query, label in (
        ("What class did Caroline take on 10 June, 2023?", "10 June 2023"),
        ("What class did Caroline take on June 10, 2023?", "10 June 2023"),
        ("What class did Caroline take in June 2023?", "June 2023"),
    ):
        found = ranked(conn, as_principal, retriever, query)
        assert "painting class" in found[0].text, (query, [c.text for c in found])
        assert found[0].date_match == label
        assert all(c.date_match is None for c in found if "Session 1" in c.text)
    # "Last month", said on 10 June, is May 2023: that turn is about May as well.
    may = ranked(conn, as_principal, retriever, "What did Melanie run in May 2023?")
    assert "marathon" in may[0].text and may[0].date_match == "May 2023"


def test_the_trace_names_the_date_a_turn_matched(conn, ingest, as_principal, retriever):
    ingest("acme", {"chats/mel.md": TRANSCRIPT}, kind="conversation")
    as_principal("acme")
    retriever.retrieve(
        conn,
        msgspec.convert(
            {"query": "What class did Caroline take on 10 June, 2023?", "scope": {"org_id": "acme"}}, RetrieveRequest
        ),
    )
    conn.commit()
    (entries,) = conn.execute("select candidates from data.retrieval_traces").fetchone()
    matched = {e["date_match"] for e in entries}
    assert matched == {"10 June 2023", None}
    first = min(entries, key=lambda e: e["fused_rank"])
    assert first["date_match"] == "10 June 2023"
