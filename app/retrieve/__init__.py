"""Retrieval lane: SQL candidates, Python rerank, compose, trace."""
