"""Usage roll-ups: per fragment and per day, kept from the traces by triggers

Revision ID: 0029
Revises: 0028
"""

from alembic import op

from app.db.migrate import run_sql_file

revision = "0029"
down_revision = "0028"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file(op.get_bind(), "migrations/0029_usage_rollups.sql")


def downgrade() -> None:
    raise NotImplementedError("Contexts migrations are forward-only")
