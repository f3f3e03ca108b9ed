"""A subscription gives nothing until a writer of the subscriber scope accepts it

Revision ID: 0046
Revises: 0045
"""

from alembic import op

from app.db.migrate import run_sql_file

revision = "0046"
down_revision = "0045"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file(op.get_bind(), "migrations/0046_subscription_consent.sql")


def downgrade() -> None:
    raise NotImplementedError("Contexts migrations are forward-only")
