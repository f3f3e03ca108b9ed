"""How the two candidate lists are fused for one query (R-RET-2): the p_fusion object
of api.retrieve_candidates, built from the pipeline configuration and a look at the
query. The math itself is SQL (sql/functions/45_fusion.sql)."""

from __future__ import annotations

import re

from app.retrieve.config import PipelineConfig

# Code-shaped tokens: snake_case, camelCase / PascalCase with an inner capital,
# dotted or :: paths, calls, and -> / => arrows.
_IDENTIFIER = re.compile(r"[A-Za-z0-9]_[A-Za-z0-9]|[a-z0-9][A-Z]|[A-Z]{2,}[a-z]|\w\.\w|\w::\w|\w\(|->|=>")


def query_shape(query: str) -> str:
    """ "identifier" when the query names code (or is one bare token), else "prose"."""
    words = query.split()
    if len(words) == 1 or _IDENTIFIER.search(query):
        return "identifier"
    return "prose"


def fusion_spec(config: PipelineConfig, query: str) -> dict:
    """Method and weights for this query, as SQL takes them.

    A natural-language question discounts the lexical evidence of code fragments; a
    query naming an identifier keeps it whole (an exact name is lexical evidence)."""
    if config.fusion == "rrf":
        return {"method": "rrf", "k": config.rrf_k}
    shape = query_shape(query)
    return {
        "method": "weighted",
        "query_shape": shape,
        "dense_weight": config.dense_weight,
        "lexical_weight": {"code": config.code_lexical_weight if shape == "prose" else 1.0},
        "calibration": "score / best score of its side (cosine: per model)",
        "completion": "exact score from the other side for single-side candidates",
    }
