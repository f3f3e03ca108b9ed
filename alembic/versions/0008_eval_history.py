"""eval history: runs, figures and replayed queries of the eval commands

Revision ID: 0008
Revises: 0007
"""

from alembic import op

from app.db.migrate import run_sql_file

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file(op.get_bind(), "migrations/0008_eval_history.sql")


def downgrade() -> None:
    raise NotImplementedError("Contexts migrations are forward-only")
