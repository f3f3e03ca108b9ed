"""API keys that expire, and keys restricted to reading or to named repos

Revision ID: 0024
Revises: 0023
"""

from alembic import op

from app.db.migrate import run_sql_file

revision = "0024"
down_revision = "0023"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file(op.get_bind(), "migrations/0024_key_limits.sql")


def downgrade() -> None:
    raise NotImplementedError("Contexts migrations are forward-only")
