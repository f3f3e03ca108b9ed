"""scope security: principals, grants, API keys, tenant partitions, row-level security

Revision ID: 0002
Revises: 0001
"""

from alembic import op

from app.db.migrate import run_sql_file

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file(op.get_bind(), "migrations/0002_scope_security.sql")


def downgrade() -> None:
    raise NotImplementedError("Contexts migrations are forward-only")
