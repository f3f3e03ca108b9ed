"""R-EVAL: golden sets (layer 1), regression replays (layer 2), graded agent tasks
(layer 3) and the regression gate over the development sets."""

from pathlib import Path

EVAL_DIR = Path(__file__).resolve().parents[2] / "eval"
"""The repository's eval/ folder: baseline, configurations, committed vectors."""
VECTORS_DIR = EVAL_DIR / "embeddings"
"""The golden sets' corpus vectors (docs/adr/0024): `make eval-cache` builds them."""
