"""The schema Citus needs: signed bindings, document_versions.org_id, authority as a table

Revision ID: 0028
Revises: 0027
"""

from alembic import op

from app.db.migrate import run_sql_file

revision = "0028"
down_revision = "0027"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file(op.get_bind(), "migrations/0028_citus_path.sql")


def downgrade() -> None:
    raise NotImplementedError("Contexts migrations are forward-only")
