"""pins and negative fragments

Revision ID: 0009
Revises: 0008
"""

from alembic import op

from app.db.migrate import run_sql_file

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file(op.get_bind(), "migrations/0009_pins_and_negatives.sql")


def downgrade() -> None:
    raise NotImplementedError("Contexts migrations are forward-only")
