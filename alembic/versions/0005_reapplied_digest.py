"""the digest of what migrate re-applied

Revision ID: 0005
Revises: 0004
"""

from alembic import op

from app.db.migrate import run_sql_file

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file(op.get_bind(), "migrations/0005_reapplied_digest.sql")


def downgrade() -> None:
    raise NotImplementedError("Contexts migrations are forward-only")
