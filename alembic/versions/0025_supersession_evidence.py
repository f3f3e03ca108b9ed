"""supersession evidence, what validity windows leave out of a retrieval, superseded pins

Revision ID: 0025
Revises: 0024
"""

from alembic import op

from app.db.migrate import run_sql_file

revision = "0025"
down_revision = "0024"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file(op.get_bind(), "migrations/0025_supersession_evidence.sql")


def downgrade() -> None:
    raise NotImplementedError("Contexts migrations are forward-only")
