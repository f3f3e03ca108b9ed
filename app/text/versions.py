"""Versions of how text is cut, recorded with what they made: the chunker's on every
fragment (ingestion), in every trace and every golden-set run (retrieval, eval). Here,
below both lanes, so that retrieval names the chunker's version without importing it."""

from __future__ import annotations

CHUNKER_VERSION = "2026.12-2"
"""Bump whenever chunk boundaries change: it is recorded on every fragment (2026.12-1:
prose front matter is left out of every chunk; 2026.12-2: a Markdown table in a section
over the size bound is cut into runs of whole rows, ADR 0036)."""
