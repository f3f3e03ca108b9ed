"""A question naming one of a conversation's speakers lifts the turns that speaker said
(app/retrieve/speakers.py): replies that name the speaker no longer take the first
places from the speaker's own turns; the trace says which speaker matched."""

from __future__ import annotations

import msgspec
import pytest

from app.retrieve.speakers import named_speaker
from app.wire.retrieve import RetrieveRequest
from tests.retrieve.test_conversation_dates import ranked

# Melanie's replies repeat the question's words ("Caroline", "paint"); what Caroline
# painted is in her own turn, in other words.
TRANSCRIPT = """# Caroline and Melanie

## Session 1, 2023-05-08

Caroline: My new canvas is done: a sunset over the lake, in oil colours, for the gallery show.
Melanie: Caroline, that is lovely! I wish I could paint like you, but I never find the time with the kids around.

## Session 2, 2023-06-10

Melanie: I took the kids camping by the lake last weekend.
Caroline: Melanie, that sounds like fun! Say hi to the kids from me.
"""

NOTES = """# Caroline's notes

Caroline: paint the fence. Caroline: paint the shed, paint the door, Caroline.

Melanie: ask Caroline what to paint next.
"""


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ("What did Caroline paint?", "Caroline"),
        ("What are Caroline's hobbies?", "Caroline"),
        ("what does caroline like?", "Caroline"),  # any case
        ("What did Caroline and Melanie do together?", None),  # both: nobody in particular
        ("What was painted by the lake?", None),
        ("What did Carolineville paint?", None),  # a whole word only
        ("", None),
    ],
)
def test_named_speaker_is_the_one_speaker_a_question_names(query, named):
    assert named_speaker(query, {"Caroline", "Melanie"}) == named


def test_a_question_naming_a_speaker_finds_that_speakers_turns_first(conn, ingest, as_principal, retriever):
    ingest("acme", {"chats/mel.md": TRANSCRIPT}, kind="conversation")
    found = ranked(conn, as_principal, retriever, "What did Caroline paint?")
    texts = [c.text for c in found]
    sunset = next(i for i, t in enumerate(texts) if "sunset over the lake" in t)
    replies = [i for i, t in enumerate(texts) if "Melanie: Caroline, that is lovely" in t]
    assert replies and sunset < min(replies), texts
    assert {c.speaker_match for c in found} == {"Caroline", None}
    for c in found:
        said_by_caroline = c.text.split("\n")[1].startswith("Caroline:")
        assert (c.speaker_match == "Caroline") is said_by_caroline
        # The final score is (1 - WEIGHT) x the blended one, plus WEIGHT for a match.
        assert c.final_score == pytest.approx(0.8 * c.blended + (0.2 if said_by_caroline else 0.0))
    # Both speakers named: no turn is lifted, the final score is the blended one.
    both = ranked(conn, as_principal, retriever, "What did Caroline and Melanie paint?")
    assert all(c.speaker_match is None and c.final_score == c.blended for c in both)


def test_fragments_that_are_not_turns_keep_their_scores(conn, ingest, as_principal, retriever):
    ingest("acme", {"notes/caroline.md": NOTES})
    found = ranked(conn, as_principal, retriever, "What did Caroline paint?")
    assert found
    assert all(c.speaker_match is None and c.final_score == c.blended for c in found)


def test_the_trace_names_the_speaker_a_turn_matched(conn, ingest, as_principal, retriever):
    ingest("acme", {"chats/mel.md": TRANSCRIPT}, kind="conversation")
    as_principal("acme")
    retriever.retrieve(
        conn, msgspec.convert({"query": "What did Caroline paint?", "scope": {"org_id": "acme"}}, RetrieveRequest)
    )
    conn.commit()
    (entries,) = conn.execute("select candidates from data.retrieval_traces").fetchone()
    assert {e["speaker_match"] for e in entries} == {"Caroline", None}
    first = min(entries, key=lambda e: e["final_rank"] or 99)
    assert first["speaker_match"] == "Caroline"
