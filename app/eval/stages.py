"""The eval's stage names and list depth, apart from app.eval.golden (which loads the
ingestion and retrieval lanes) so the CLI can declare its options without loading them."""

STAGES = ("lexical", "dense", "hybrid", "full")
DEFAULT_DEPTH = 200
"""Candidates of the single-list stages: deep enough that 100 distinct documents can be
ranked (a list's order does not depend on its depth)."""
