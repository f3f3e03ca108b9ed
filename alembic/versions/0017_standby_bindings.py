"""principal bindings on a hot standby

Revision ID: 0017
Revises: 0014
"""

from alembic import op

from app.db.migrate import run_sql_file

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file(op.get_bind(), "migrations/0017_standby_bindings.sql")


def downgrade() -> None:
    raise NotImplementedError("Contexts migrations are forward-only")
