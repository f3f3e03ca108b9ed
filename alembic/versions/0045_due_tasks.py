"""public.contexts_due: tasks migrate() runs once the functions are current; validity windows recomputed

Revision ID: 0045
Revises: 0044
"""

from alembic import op

from app.db.migrate import run_sql_file

revision = "0045"
down_revision = "0044"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file(op.get_bind(), "migrations/0045_due_tasks.sql")


def downgrade() -> None:
    raise NotImplementedError("Contexts migrations are forward-only")
