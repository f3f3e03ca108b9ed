"""citation graph and authority

Revision ID: 0011
Revises: 0010
"""

from alembic import op

from app.db.migrate import run_sql_file

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file(op.get_bind(), "migrations/0011_citations.sql")


def downgrade() -> None:
    raise NotImplementedError("Contexts migrations are forward-only")
