"""documents: owner and tombstone; new signatures of begin/list/get document and retrieve_candidates

Revision ID: 0005
Revises: 0004
"""

from alembic import op

from app.db.migrate import run_sql_file

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file(op.get_bind(), "migrations/0005_documents_and_sessions.sql")


def downgrade() -> None:
    raise NotImplementedError("Contexts migrations are forward-only")
