"""data.bm25_terms.last_first_id becomes end_before (the list's end before the last write)

Revision ID: 0042
Revises: 0041
"""

from alembic import op

from app.db.migrate import run_sql_file

revision = "0042"
down_revision = "0041"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file(op.get_bind(), "migrations/0042_bm25_end_before.sql")


def downgrade() -> None:
    raise NotImplementedError("Contexts migrations are forward-only")
