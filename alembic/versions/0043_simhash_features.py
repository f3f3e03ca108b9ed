"""data.fragments.simhash recomputed with the features of app/ingest/dedupe.py VERSION 2

Revision ID: 0043
Revises: 0042

The SimHash of a fragment is computed in Python at ingest, so this migration computes it
again in Python, one org at a time in batches: stored values must equal what a fresh
ingest of the same text gives, or near copies written later would be compared against
values of the old features (docs/adr/0003, amendment).
"""

from alembic import op

from app.ingest.dedupe import simhash64, to_signed

revision = "0043"
down_revision = "0042"
branch_labels = None
depends_on = None

BATCH = 5_000


def upgrade() -> None:
    raw = op.get_bind().connection.dbapi_connection
    orgs = [org for (org,) in raw.execute("select org_id from data.orgs order by org_id").fetchall()]
    for org in orgs:
        last = -1
        while True:
            rows = raw.execute(
                "select fragment_id, text, simhash from data.fragments"
                " where org_id = %s and fragment_id > %s order by fragment_id limit %s",
                (org, last, BATCH),
            ).fetchall()
            if not rows:
                break
            last = rows[-1][0]
            changed = [(fid, value) for fid, text, old in rows if (value := to_signed(simhash64(text))) != old]
            if changed:
                raw.execute(
                    "update data.fragments f set simhash = v.simhash"
                    " from unnest(%s::bigint[], %s::bigint[]) as v(fragment_id, simhash)"
                    " where f.org_id = %s and f.fragment_id = v.fragment_id",
                    ([fid for fid, _ in changed], [value for _, value in changed], org),
                )


def downgrade() -> None:
    raise NotImplementedError("Contexts migrations are forward-only")
