"""data.fragments without its GIN index on tsv (BM25 reads its own blocks)

Revision ID: 0041
Revises: 0040
"""

from alembic import op

from app.db.migrate import run_sql_file

revision = "0041"
down_revision = "0040"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file(op.get_bind(), "migrations/0041_fragments_without_gin.sql")


def downgrade() -> None:
    raise NotImplementedError("Contexts migrations are forward-only")
