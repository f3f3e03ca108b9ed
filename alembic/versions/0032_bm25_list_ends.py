"""Where each scope group and term's postings end, kept beside its document frequency

Revision ID: 0032
Revises: 0029
"""

from alembic import op

from app.db.migrate import run_sql_file

revision = "0032"
down_revision = "0029"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file(op.get_bind(), "migrations/0032_bm25_list_ends.sql")


def downgrade() -> None:
    raise NotImplementedError("Contexts migrations are forward-only")
