"""drop the one-fragment BM25 wrappers, unused since statement-level indexing

Revision ID: 0020
Revises: 0019
"""

from alembic import op

from app.db.migrate import run_sql_file

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file(op.get_bind(), "migrations/0020_drop_single_fragment_bm25.sql")


def downgrade() -> None:
    raise NotImplementedError("Contexts migrations are forward-only")
