"""BM25 postings packed in blocks by the contexts_bm25 extension

Revision ID: 0027
Revises: 0026
"""

from alembic import op

from app.db.migrate import run_sql_file

revision = "0027"
down_revision = "0026"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file(op.get_bind(), "migrations/0027_lexical_blocks.sql")


def downgrade() -> None:
    raise NotImplementedError("Contexts migrations are forward-only")
