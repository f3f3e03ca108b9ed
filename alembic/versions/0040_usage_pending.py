"""Traces are listed as pending on write; the usage roll-ups fold them in batches

Revision ID: 0040
Revises: 0036
"""

from alembic import op

from app.db.migrate import run_sql_file

revision = "0040"
down_revision = "0036"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file(op.get_bind(), "migrations/0040_usage_pending.sql")


def downgrade() -> None:
    raise NotImplementedError("Contexts migrations are forward-only")
