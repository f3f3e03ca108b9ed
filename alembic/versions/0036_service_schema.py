"""Service-only functions move from schema api to schema service

Revision ID: 0036
Revises: 0035
"""

from alembic import op

from app.db.migrate import run_sql_file

revision = "0036"
down_revision = "0035"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file(op.get_bind(), "migrations/0036_service_schema.sql")


def downgrade() -> None:
    raise NotImplementedError("Contexts migrations are forward-only")
