"""drop the per-posting foreign key to fragments: postings are the BM25 triggers' derived rows

Revision ID: 0021
Revises: 0020
"""

from alembic import op

from app.db.migrate import run_sql_file

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file(op.get_bind(), "migrations/0021_postings_without_fragment_key.sql")


def downgrade() -> None:
    raise NotImplementedError("Contexts migrations are forward-only")
