"""documents: owner and tombstone; new signatures of begin/list/get document and retrieve_candidates

Revision ID: 0006
Revises: 0005
"""

from alembic import op

from app.db.migrate import run_sql_file

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file(op.get_bind(), "migrations/0006_documents_and_sessions.sql")


def downgrade() -> None:
    raise NotImplementedError("Contexts migrations are forward-only")
