"""Conversation turns as memory fragments: speaker, session date, relative times resolved
against it, and the question asked before each turn carried with it."""

from __future__ import annotations

from datetime import date

import pytest

from app.ingest import conversation
from app.ingest.conversation import Turn
from app.text import turns

S1 = "session 1, 1:56 pm on 8 May, 2023"
S2 = "session 2, 10:37 am on 3 January, 2024"


@pytest.mark.parametrize(
    "text, expected",
    [
        (S1, date(2023, 5, 8)),
        ("1:14 pm on 25 May 2023", date(2023, 5, 25)),
        ("on May 25th, 2023 at noon", date(2023, 5, 25)),
        ("Sept 3, 2021", date(2021, 9, 3)),
        ("logged 2022-11-30 by the bot", date(2022, 11, 30)),
        ("31 February, 2023", None),
        ("session 4", None),
        ("", None),
    ],
)
def test_session_labels_give_their_date(text, expected):
    assert turns.parse_date(text) == expected


@pytest.mark.parametrize(
    "text, speaker, said",
    [
        ("Caroline: Hey Mel!", "Caroline", "Hey Mel!"),
        ("Mary Ann O'Neil: Sure.", "Mary Ann O'Neil", "Sure."),
        ("just text: with a colon", None, "just text: with a colon"),
        ("Caroline:no space", None, "Caroline:no space"),
        ("Note 12:30 pm", None, "Note 12:30 pm"),
    ],
)
def test_speaker_prefix(text, speaker, said):
    assert turns.split_speaker(text) == (speaker, said)


@pytest.mark.parametrize(
    "text, said_on, expected",
    [
        ("I went to a support group yesterday.", date(2023, 5, 8), ["7 May 2023"]),
        ("Yesterday, and again today!", date(2023, 3, 1), ["28 February 2023", "1 March 2023"]),
        ("We went camping last year; next year again.", date(2023, 7, 20), ["2022", "2024"]),
        ("Last month was busy", date(2024, 1, 3), ["December 2023"]),
        ("next month I show my art", date(2023, 12, 14), ["January 2024"]),
        ("a parade last week", date(2023, 7, 3), ["week of 26 June 2023"]),
        ("last weekend and last week", date(2023, 7, 3), ["week of 26 June 2023"]),
        ("no time here", date(2023, 7, 3), []),
    ],
)
def test_relative_times_resolve_against_the_day_they_were_said(text, said_on, expected):
    assert turns.resolve_relative(text, said_on) == expected


def test_questions_are_the_sentences_that_ask():
    text = "Wow, that's cool! What happened? Did you hear any stories?\"  Nice."
    assert conversation.questions(text) == 'What happened? Did you hear any stories?"'
    assert conversation.questions("No question here. None.") == ""


def test_a_turn_carries_its_date_and_the_question_before_it_within_its_session():
    turns = conversation.turns_of(
        [
            ("D1:1", S1, "Melanie: Great to see you! What do your kids like these days?"),
            ("D1:2", S1, "Caroline: They loved the dinosaur bones we saw yesterday."),
            ("D1:3", S1, "Melanie: So fun. I signed up for pottery."),
            ("D2:1", S2, "Caroline: Did you keep up the pottery?"),
            ("D2:2", S2, "Melanie: Yes! Last month I made a bowl."),
        ]
    )
    assert turns[1] == Turn("D1:2", S1, "Caroline", "They loved the dinosaur bones we saw yesterday.", date(2023, 5, 8))
    stored = conversation.fragments(turns)
    assert stored["D1:2"] == (
        f"{S1}\nCaroline: They loved the dinosaur bones we saw yesterday.\n(7 May 2023)\n\n"
        "What do your kids like these days?"
    )
    # The turn before asked nothing: nothing is carried.
    assert stored["D1:3"] == f"{S1}\nMelanie: So fun. I signed up for pottery."
    # A session's first turn carries nothing of the previous session.
    assert stored["D2:1"] == f"{S2}\nCaroline: Did you keep up the pottery?"
    assert stored["D2:2"].endswith("(December 2023)\n\nDid you keep up the pottery?")


def test_a_long_question_is_clipped_at_a_word():
    turns = conversation.turns_of([("a", S1, "Ann: " + "why " * 400 + "?"), ("b", S1, "Bob: Because.")])
    carried = conversation.fragments(turns)["b"].split("\n\n", 1)[1]
    assert len(carried) <= conversation.CONTEXT_CHARS + 2 and carried.endswith(" …")


def test_what_is_a_conversation():
    turns = [(S1, f"{name}: line {i}") for i, name in enumerate(["Ann", "Bob"] * 4)]
    assert conversation.is_conversation(turns)
    # Prose, code, a single speaker, labels that are all different, one document a session.
    assert not conversation.is_conversation([(S1, f"Paragraph {i} of an abstract.") for i in range(8)])
    assert not conversation.is_conversation([("", f"def f{i}(x):\n    return x") for i in range(8)])
    assert not conversation.is_conversation([(S1, f"Ann: line {i}") for i in range(8)])
    assert not conversation.is_conversation([(S1, f"Label{i}: value") for i in range(20)])
    assert not conversation.is_conversation([(f"s{i}", f"{name}: hi") for i, name in enumerate(["Ann", "Bob"] * 4)])
    assert not conversation.is_conversation(turns[:3])
