"""supersession and validity windows

Revision ID: 0014
Revises: 0013
"""

from alembic import op

from app.db.migrate import run_sql_file

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file(op.get_bind(), "migrations/0014_validity.sql")


def downgrade() -> None:
    raise NotImplementedError("Contexts migrations are forward-only")
