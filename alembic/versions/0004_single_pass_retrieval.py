"""single-pass retrieval: data._fuse takes completed candidates

Revision ID: 0004
Revises: 0003
"""

from alembic import op

from app.db.migrate import run_sql_file

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file(op.get_bind(), "migrations/0004_single_pass_retrieval.sql")


def downgrade() -> None:
    raise NotImplementedError("Contexts migrations are forward-only")
