"""embedding model generations and the shadow window

Revision ID: 0018
Revises: 0014
"""

from alembic import op

from app.db.migrate import run_sql_file

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file(op.get_bind(), "migrations/0018_model_generations.sql")


def downgrade() -> None:
    raise NotImplementedError("Contexts migrations are forward-only")
