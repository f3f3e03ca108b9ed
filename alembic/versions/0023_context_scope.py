"""a Context's scope bounds who reads it

Revision ID: 0023
Revises: 0022
"""

from alembic import op

from app.db.migrate import run_sql_file

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file(op.get_bind(), "migrations/0023_context_scope.sql")


def downgrade() -> None:
    raise NotImplementedError("Contexts migrations are forward-only")
