"""HTTP API (Litestar): thin controllers over SQL functions and the retrieval lane."""
