"""each fragment's reading for the learned reranker, stored at ingest

Revision ID: 0022
Revises: 0021
"""

from alembic import op

from app.db.migrate import run_sql_file

revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file(op.get_bind(), "migrations/0022_fragment_readings.sql")


def downgrade() -> None:
    raise NotImplementedError("Contexts migrations are forward-only")
