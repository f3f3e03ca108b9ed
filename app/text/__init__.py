"""Text as both lanes see it, below both: the embedders (embed.py, onnx_minilm.py), token
counts (tokens.py), the learned reranker's tokenizer and the readings it stores
(stems.py), and the chunker's version (versions.py). Ingestion and retrieval import
these; nothing here imports either lane."""
