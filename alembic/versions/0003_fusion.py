"""weighted score fusion: api.retrieve_candidates takes p_fusion

Revision ID: 0003
Revises: 0001 (to become 0002 once the partitions / row-level-security revision lands)
"""

from alembic import op

from app.db.migrate import run_sql_file

revision = "0003"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file(op.get_bind(), "migrations/0003_fusion.sql")


def downgrade() -> None:
    raise NotImplementedError("Contexts migrations are forward-only")
