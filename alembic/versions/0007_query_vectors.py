"""query vectors in traces: api.record_trace takes the query vectors

Revision ID: 0007
Revises: 0006
"""

from alembic import op

from app.db.migrate import run_sql_file

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file(op.get_bind(), "migrations/0007_query_vectors.sql")


def downgrade() -> None:
    raise NotImplementedError("Contexts migrations are forward-only")
