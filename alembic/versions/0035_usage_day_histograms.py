"""data.usage_days: one row per day, principal and scope, with its latency histogram

Revision ID: 0035
Revises: 0032
"""

from alembic import op

from app.db.migrate import run_sql_file

revision = "0035"
down_revision = "0032"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file(op.get_bind(), "migrations/0035_usage_day_histograms.sql")


def downgrade() -> None:
    raise NotImplementedError("Contexts migrations are forward-only")
