"""Embedding model generations (docs/adr/0021), above both lanes and the eval lane they
use: which generation serves each namespace and how a service follows a promotion
(serving.py), and the upgrade itself: re-embedding into a shadow generation, replaying
recorded retrievals on it, promotion and rollback (upgrade.py). GET /models and
`contexts models` are their doors."""
