"""workflow rules: path and symbol globs that bring a Context into a retrieval

Revision ID: 0019
Revises: 0018
"""

from alembic import op

from app.db.migrate import run_sql_file

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file(op.get_bind(), "migrations/0019_workflow_rules.sql")


def downgrade() -> None:
    raise NotImplementedError("Contexts migrations are forward-only")
