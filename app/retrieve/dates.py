"""A day or a month named in a question, matched against the dates of conversation turns
(issue 32, docs/adr/0027).

"What did Maria donate in December 2023?" is about what was said then: a turn of a
session held in December 2023, or one whose relative time ("last month", said in January
2024) names it. The session's date is in each turn's text, but BM25 matches it only when
the question writes it the same way ("10 June, 2023" against a session labelled
"2023-06-10" shares no word), and the dense model does not read dates at all. So after
fusion, each listed candidate that is a conversation turn about a day or a month the
question names (app.ingest.query_dates and fragment_dates) gets WEIGHT of
its fused score from that match (the other turns none), and the fused list is put back
in order. The trace names the date a turn matched (`date_match`); a turn's fused score is
then no longer the fusion's alone (lexical_weight x lexical_norm + dense_weight x
dense_norm): it is (1 - WEIGHT) of that, plus WEIGHT when `date_match` is set.

Measured on the development conversations (full stage, nDCG@10 / recall@10; 40 of their
383 questions name a day or a month, 29 of them in locomo-conv-41): conv-41 0.6660 /
0.8009 -> 0.6738 / 0.8140; conv-26 and conv-30 unchanged (their 11 such questions were
already found first). Offline, 0.1 or 0.3 added to a matching turn's fused score gave
conv-41 0.6711 / 0.8075 and 0.6718 / 0.8075 (docs/adr/0027).
"""

from __future__ import annotations

from app.retrieve.candidates import Candidate
from app.text.turns import TURN_KINDS, day_or_month_label, fragment_dates, query_dates

WEIGHT = 0.2
"""A conversation turn's fused score becomes (1 - WEIGHT) x fused + WEIGHT x (1 when it is
about a date the question names, else 0): a match moves a turn past one without it whose
fused score is up to WEIGHT / (1 - WEIGHT) = 0.25 higher; the words still count.
Candidates of other kinds keep their fused score."""


def match_dates(query: str, candidates: list[Candidate]) -> list[Candidate]:
    """The fused candidates, conversation turns rescored by whether they are about a day or
    month the query names (marked when they are), in fused order again (ties keep their
    order). Pins outside both lists (no rank, after the others) are left where they are.
    A query naming no date, or naming none that a listed turn is about, returns the list
    as it is."""
    named = query_dates(query)
    if not named:
        return candidates
    listed: list[Candidate] = []
    others: list[Candidate] = []
    for c in candidates:
        # A turn only the second hop found (app.retrieve.hop) is listed too.
        ranked = c.lexical_rank is not None or c.dense_rank is not None or c.hop_score is not None
        (listed if ranked else others).append(c)
    turns = [c for c in listed if c.kind in TURN_KINDS]
    matched: dict[int, str] = {}
    for c in turns:
        common = named & fragment_dates(c.text)
        if common:
            matched[c.fragment_id] = day_or_month_label(max(common, key=lambda k: (len(k), k)))
    if not matched:
        return candidates
    for c in turns:
        c.date_match = matched.get(c.fragment_id)
        c.fused_score = (1.0 - WEIGHT) * c.fused_score + (WEIGHT if c.date_match else 0.0)
    listed.sort(key=lambda c: -c.fused_score)
    return listed + others
