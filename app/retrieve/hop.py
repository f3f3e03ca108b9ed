"""A second hop over conversation turns, and the session a turn was said in (issue 32,
docs/adr/0027).

A question about a memory ("What do Melanie's kids like?", "What does Gina say to Jon
about the grand opening?") is often answered by a turn that shares few of its words: the
turn after the one that names the topic, or a turn of the same story told in other
words. The first turns the fusion finds are close to that evidence, in meaning and in
time. So, when the fused candidates hold conversation turns:

1. **A second hop.** The query's vector is moved toward what its FEEDBACK best turns say
   (the unit mean of the query's vector and theirs, per namespace), and one more call of
   api.retrieve_candidates, the caller's own scoped function with the request's words,
   list depths and filters, restricted to the kinds of turns the first call found,
   fuses the query's words with the moved vector over turns alone. Each turn's fused
   score becomes (1 - WEIGHT) of what the first fusion gave it plus WEIGHT x its fused
   score in the hop over the hop's best (`hop_score`, 0 when the hop did not list it);
   a turn only the hop listed enters with WEIGHT x `hop_score`.
2. **The session.** Each listed turn's fused score then becomes (1 - SESSION_WEIGHT) of
   itself plus SESSION_WEIGHT x the best fused score among its session's turns over the
   best of any session (`session_score`): a turn of the session the question is about
   passes an equal one of another.

The list is put back in fused order; fragments that are not turns keep their fused
scores, and a retrieval whose candidates hold no turn makes no second call (other
corpora cannot move). The trace names both shares (`hop_score`, `session_score`); like
`date_match`, they are withheld from a reader who may not read the fragment.

Measured through the gate's full stage (nDCG@10 / recall@10), the parameters chosen on two
conversations and the third held out, in turn (docs/adr/0027): conv-26 0.6329 / 0.7917 ->
0.6389 / 0.7983, conv-30 0.6652 / 0.7772 -> 0.6765 / 0.8228, conv-41 0.7119 / 0.8263 ->
0.7178 / 0.8280. It costs one more SQL call and one embedding call of two short texts.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import replace

from app.retrieve.candidates import Candidate, Filters
from app.retrieve.query_vectors import QueryVectors
from app.text.embed import Embedder
from app.text.turns import TURN_KINDS, split_speaker

FEEDBACK = 2
"""The best fused turns whose vectors move the query's (more drifts off the question)."""
WEIGHT = 0.4
"""The hop's share of a turn's fused score."""
SESSION_WEIGHT = 0.2
"""The session's share of a turn's fused score (after the hop)."""

Embedders = Mapping[str, Embedder]
"""The query lane's model of each namespace (the retriever's query embedder's)."""
Fetch = Callable[[Filters, QueryVectors], list[Candidate]]
"""The hop's call: api.retrieve_candidates with the request's query, scope and list
depths, these filters and these vectors."""


def said(c: Candidate) -> str:
    """What a turn's speaker said, without the name: the lines below its session label up
    to the first blank line (the turn and the dates its relative times name; the
    questions carried from the turn before come after that line)."""
    body: list[str] = []
    for line in c.text.split("\n")[1:]:
        if not line.strip():
            break
        body.append(line)
    text = "\n".join(body)
    _, rest = split_speaker(text)
    return rest or text


def session_of(c: Candidate) -> str:
    """A turn's session: the label its fragment opens with (conversation.turn_fragment)."""
    return c.text.split("\n", 1)[0]


def moved(query: QueryVectors, feedback: list[Candidate], embedders: Embedders) -> QueryVectors:
    """Per namespace of the feedback turns, the unit mean of the query's vector and what
    each of them said, embedded by that namespace's query model in one call."""
    out: QueryVectors = {}
    for ns in sorted({c.namespace for c in feedback}):
        if ns not in query or ns not in embedders:
            continue
        rows = [query[ns], *embedders[ns].embed([said(c) for c in feedback if c.namespace == ns])]
        mean = [sum(col) / len(rows) for col in zip(*rows, strict=True)]
        norm = math.sqrt(sum(x * x for x in mean))
        if norm > 0:
            out[ns] = [x / norm for x in mean]
    return out


def second_hop(
    filters: Filters, fused: list[Candidate], vectors: QueryVectors, embedders: Embedders, fetch: Fetch
) -> list[Candidate]:
    """The fused candidates with the hop's and the session's shares in their turns' fused
    scores (module docstring), in fused order; the candidates outside both lists (pins)
    stay after them. Unchanged when no listed candidate is a turn, or without the
    query's vectors (a lexical-only request)."""
    listed = [c for c in fused if c.lexical_rank is not None or c.dense_rank is not None]
    others = [c for c in fused if c.lexical_rank is None and c.dense_rank is None]
    turns = [c for c in listed if c.kind in TURN_KINDS]
    if not turns or not vectors:
        return fused
    kinds = sorted({c.kind for c in turns})
    if filters.kinds is not None:
        kinds = [k for k in kinds if k in filters.kinds]
    hop_vectors = moved(vectors, turns[:FEEDBACK], embedders)
    if not kinds or not hop_vectors:
        return fused
    found = fetch(replace(filters, kinds=kinds), hop_vectors)
    ranked = [c for c in found if c.lexical_rank is not None or c.dense_rank is not None]
    best = max((c.fused_score for c in ranked), default=0.0)
    shares = {c.fragment_id: c.fused_score / best for c in ranked} if best > 0 else {}
    for c in turns:
        c.hop_score = shares.get(c.fragment_id, 0.0)
        c.fused_score = (1.0 - WEIGHT) * c.fused_score + WEIGHT * c.hop_score
    listed_ids = {c.fragment_id for c in listed}
    for c in found:
        if c.fragment_id in listed_ids or c.fragment_id not in shares or c.kind not in TURN_KINDS:
            continue
        # Found by the hop alone: no place in the query's own lists.
        c.lexical_rank = c.lexical_score = c.dense_rank = c.dense_similarity = None
        c.lexical_norm = c.dense_norm = c.lexical_weight = c.dense_weight = None
        c.hop_score = shares[c.fragment_id]
        c.fused_score = WEIGHT * c.hop_score
        listed.append(c)
        turns.append(c)
    sessions: dict[str, float] = {}
    for c in turns:
        sessions[session_of(c)] = max(sessions.get(session_of(c), 0.0), c.fused_score)
    top = max(sessions.values())
    for c in turns:
        c.session_score = sessions[session_of(c)] / top if top > 0 else 0.0
        c.fused_score = (1.0 - SESSION_WEIGHT) * c.fused_score + SESSION_WEIGHT * c.session_score
    listed.sort(key=lambda c: -c.fused_score)
    return listed + others
