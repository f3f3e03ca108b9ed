"""R-RANK-1: the blended score of a candidate (docs/adr/0014).

    score(f) = w_rerank * rerank(f, q) + w_freshness * freshness(f)
             + w_authority * authority(f) + w_pinned * pinned(f) + w_persona * persona(f)

Every term is in [0, 1] and the weights are normalised to sum to 1, so a score is in
[0, 1] too. `rerank` is the pipeline's relevance score (the cross-encoder's probability,
else the fused score over the best possible); `freshness` a half-life decay by document
kind; `authority` the citation graph's (0 while none is computed); `pinned` 1 for a
pinned fragment; `persona` the cosine to the persona's centroid (sql/functions/40).

The weights and half-lives come from the ranking profile in effect, which
api.retrieve_candidates returns (sql/functions/43_ranking_profiles.sql). A term that is
the same for every candidate (freshness when everything was written the same day,
authority while absent) adds a constant to every score: the blend is then a monotone
affine map of the rerank score and the order is the pipeline's own.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

from app.retrieve.candidates import Candidate

TERMS = ("rerank", "freshness", "authority", "pinned", "persona")
"""The blend's terms, in the order a trace lists them."""


@dataclass(frozen=True, slots=True)
class Profile:
    """The ranking profile of one retrieval, with its weights normalised."""

    source: str
    """"persona", "org" or "built-in": where the weights came from (the most specific)."""
    persona_id: str | None
    weights: dict[str, float]
    """Per term, summing to 1."""
    halflife_days: dict[str, float]
    """Per document kind; "default" for the others."""
    halflife_override: float | None = None
    """The request's `freshness_halflife_days`: one half-life for every kind."""

    @classmethod
    def from_row(cls, row: dict, halflife_override: float | None = None) -> Profile:
        raw = {term: max(0.0, float(row.get(f"w_{term}") or 0.0)) for term in TERMS}
        total = sum(raw.values())
        if total <= 0.0:  # the database refuses such a profile; rank by relevance alone
            raw, total = {term: float(term == "rerank") for term in TERMS}, 1.0
        return cls(
            source=str(row.get("source", "built-in")),
            persona_id=row.get("persona_id"),
            weights={term: value / total for term, value in raw.items()},
            halflife_days={str(k): float(v) for k, v in (row.get("halflife_days") or {}).items()},
            halflife_override=halflife_override,
        )

    def halflife(self, kind: str) -> float:
        if self.halflife_override:
            return self.halflife_override
        return self.halflife_days.get(kind) or self.halflife_days.get("default") or 90.0

    def to_trace(self) -> dict:
        """No persona id: the request's scope says it, and is redacted with it."""
        return {
            "source": self.source,
            "weights": self.weights,
            "halflife_days": self.halflife_days,
            "halflife_override": self.halflife_override,
        }


BUILT_IN = Profile.from_row(
    {
        "source": "built-in",
        "w_rerank": 0.75,
        "w_freshness": 0.1,
        "w_authority": 0.1,
        "w_pinned": 0.05,
        "w_persona": 0.0,
        "halflife_days": {"default": 90, "policy": 365},
    }
)
"""What data._ranking_profile returns when nothing is stored (only used when the SQL
call returned no row, i.e. no candidate to rank)."""


def freshness(updated_at: datetime, halflife_days: float, now: datetime) -> float:
    """0.5 ** (age / half-life), age in whole days: text written the same day is equally
    fresh, so a corpus ingested in one go gets one constant (the order stays the
    pipeline's) and a score does not drift within a day."""
    age_days = max(0, math.floor((now - updated_at).total_seconds() / 86400.0))
    return math.pow(0.5, age_days / halflife_days)


def blend(candidates: list[Candidate], profile: Profile, now: datetime) -> None:
    """Set each candidate's terms and its blended score, from its base score
    (app.retrieve.rerank.order)."""
    w = profile.weights
    for c in candidates:
        terms = {
            "rerank": c.base_score or 0.0,
            "freshness": freshness(c.updated_at, profile.halflife(c.kind), now),
            "authority": c.authority or 0.0,
            "pinned": 1.0 if c.pin_id is not None else 0.0,
            "persona": c.persona_similarity or 0.0,
        }
        c.terms = terms
        c.blended = min(1.0, max(0.0, sum(w[t] * terms[t] for t in TERMS)))
