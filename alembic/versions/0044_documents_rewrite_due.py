"""data.documents.rewrite_due: documents with near-copy pointers are re-chunked at their next write

Revision ID: 0044
Revises: 0043
"""

from alembic import op

from app.db.migrate import run_sql_file

revision = "0044"
down_revision = "0043"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file(op.get_bind(), "migrations/0044_documents_rewrite_due.sql")


def downgrade() -> None:
    raise NotImplementedError("Contexts migrations are forward-only")
