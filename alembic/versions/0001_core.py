"""core schema: tenants, documents, fragments, BM25 statistics, embeddings, traces

Revision ID: 0001
Revises:
"""

from alembic import op

from app.db.migrate import run_sql_file

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file(op.get_bind(), "migrations/0001_core.sql")


def downgrade() -> None:
    raise NotImplementedError("Contexts migrations are forward-only")
