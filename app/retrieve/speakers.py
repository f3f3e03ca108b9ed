"""The person a question is about, matched against who said each conversation turn
(issue 32, docs/adr/0027).

"What career path has Caroline decided to pursue?" is answered by what Caroline said,
not by Melanie's "Congrats Caroline!": the words of a reply name the other speaker as
often as the speaker's own turns do, so BM25, the dense model and the reranker rank
both alike, and the first ten fill with the replies. After the final score, when the
question names exactly one of the speakers of the ranked conversation turns (a whole
word, in any case: "Caroline's"), each ranked turn gets WEIGHT of its final score from
whether that speaker said it (the other turns none), and the head is put back in order.
A question naming both speakers, or neither, changes nothing; nor does any fragment
that is not a conversation turn. The trace names the speaker a turn matched
(`speaker_match`); such a turn's final score is then (1 - WEIGHT) x the blended score
(with the named Context's lift after it, in `boost` mode), plus WEIGHT when
`speaker_match` is set.

Measured on the development conversations (full stage, nDCG@10 / recall@10; WEIGHT
chosen on conv-26 and conv-30, conv-41 held out): conv-26 0.6105 / 0.7850 -> 0.6310 /
0.7950, conv-30 0.6201 / 0.7586 -> 0.6598 / 0.7772, conv-41 (held out) 0.6738 / 0.8140
-> 0.7135 / 0.8263 (docs/adr/0027).
"""

from __future__ import annotations

import re

from app.retrieve.candidates import Candidate
from app.text.turns import TURN_KINDS, split_speaker

WEIGHT = 0.2
"""A conversation turn's final score becomes (1 - WEIGHT) x final + WEIGHT x (1 when the
speaker the question names said it, else 0): a turn of that speaker moves past a turn of
another whose score is up to WEIGHT / (1 - WEIGHT) = 0.25 higher."""


def speaker_of(c: Candidate) -> str | None:
    """Who said a conversation turn (the name opening its second line, as
    conversation.turn_fragment writes it); None for other kinds or an unnamed turn."""
    if c.kind not in TURN_KINDS:
        return None
    lines = c.text.split("\n", 2)
    if len(lines) < 2:
        return None
    speaker, _ = split_speaker(lines[1])
    return speaker


def named_speaker(query: str, speakers: set[str]) -> str | None:
    """The one speaker among `speakers` the query names as a whole word (any case);
    None when it names none or several."""
    named = [s for s in speakers if re.search(rf"(?<!\w){re.escape(s)}(?!\w)", query, re.IGNORECASE)]
    return named[0] if len(named) == 1 else None


def match_speaker(query: str, ranked: list[Candidate]) -> None:
    """Rescore the ranked conversation turns, in place, by whether the one speaker the
    query names said them (marked when they did). The caller orders the list by the
    final score afterwards. Nothing changes when the query names none of the turns'
    speakers, or several, or when no ranked candidate is a turn."""
    said = {c.fragment_id: s for c in ranked if (s := speaker_of(c)) is not None}
    if not said:
        return
    named = named_speaker(query, set(said.values()))
    if named is None:
        return
    for c in ranked:
        if c.fragment_id not in said or c.final_score is None:
            continue
        c.speaker_match = named if said[c.fragment_id] == named else None
        c.final_score = (1.0 - WEIGHT) * c.final_score + (WEIGHT if c.speaker_match else 0.0)
