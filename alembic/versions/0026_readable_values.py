"""every stored time one every reader can decode: unreadable ones clamped, then checked

Revision ID: 0026
Revises: 0025
"""

from alembic import op

from app.db.migrate import run_sql_file

revision = "0026"
down_revision = "0025"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file(op.get_bind(), "migrations/0026_readable_values.sql")


def downgrade() -> None:
    raise NotImplementedError("Contexts migrations are forward-only")
