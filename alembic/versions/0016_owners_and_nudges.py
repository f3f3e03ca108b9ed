"""owners and staleness nudges

Revision ID: 0016
Revises: 0014
"""

from alembic import op

from app.db.migrate import run_sql_file

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file(op.get_bind(), "migrations/0016_owners_and_nudges.sql")


def downgrade() -> None:
    raise NotImplementedError("Contexts migrations are forward-only")
