"""Ingestion lane: normalize, chunk, deduplicate, embed, write."""
