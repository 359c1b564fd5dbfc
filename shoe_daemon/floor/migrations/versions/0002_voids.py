"""Schema 2: voids: a coup voided (also after it settled), by whom, why, when.

Revision ids are the schema's numbers (``Store.schema_version``). The SQL is the same on
SQLite and PostgreSQL (types both accept; JSON is text, booleans 0/1): see ``store.py``.
"""

from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

STATEMENTS = [
    # One row per voided coup, whatever came first: the coup_voided alert or the result.
    """CREATE TABLE voids (
        table_id TEXT NOT NULL, coup_id TEXT NOT NULL, shoe INTEGER, coup INTEGER,
        by_user TEXT, reason TEXT, t DOUBLE PRECISION, result_withdrawn INTEGER,
        alert_id TEXT, seq BIGINT, source TEXT NOT NULL, stored_at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (table_id, coup_id))""",
    "ALTER TABLE coups ADD COLUMN voided_by TEXT",
    "ALTER TABLE coups ADD COLUMN void_reason TEXT",
    "ALTER TABLE coups ADD COLUMN voided_at DOUBLE PRECISION",
]


def upgrade() -> None:
    for statement in STATEMENTS:
        op.execute(statement)


def downgrade() -> None:
    raise NotImplementedError("the floor's record is never migrated down: restore a backup instead")
