"""context bundles and subscriptions

Revision ID: 0015
Revises: 0014
"""

from alembic import op

from app.db.migrate import run_sql_file

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file(op.get_bind(), "migrations/0015_context_bundles.sql")


def downgrade() -> None:
    raise NotImplementedError("Contexts migrations are forward-only")
