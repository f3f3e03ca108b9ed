"""git-aware incremental sync: the last synced commit per repo

Revision ID: 0013
Revises: 0012
"""

from alembic import op

from app.db.migrate import run_sql_file

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file(op.get_bind(), "migrations/0013_git_sync.sql")


def downgrade() -> None:
    raise NotImplementedError("Contexts migrations are forward-only")
