"""supersession evidence, what validity windows leave out of a retrieval, superseded pins

Revision ID: 0024
Revises: 0022
"""

from alembic import op

from app.db.migrate import run_sql_file

revision = "0024"
down_revision = "0022"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file(op.get_bind(), "migrations/0024_supersession_evidence.sql")


def downgrade() -> None:
    raise NotImplementedError("Contexts migrations are forward-only")
