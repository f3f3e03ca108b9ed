"""citation graph and authority

Revision ID: 0010
Revises: 0009
"""

from alembic import op

from app.db.migrate import run_sql_file

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file(op.get_bind(), "migrations/0010_citations.sql")


def downgrade() -> None:
    raise NotImplementedError("Contexts migrations are forward-only")
