"""weighted score fusion: api.retrieve_candidates takes p_fusion

Revision ID: 0003
Revises: 0002
"""

from alembic import op

from app.db.migrate import run_sql_file

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file(op.get_bind(), "migrations/0003_fusion.sql")


def downgrade() -> None:
    raise NotImplementedError("Contexts migrations are forward-only")
