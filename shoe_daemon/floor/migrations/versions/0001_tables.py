"""Schema 1: tables, messages, coups, alerts, actions, status, gaps, rejected.

Revision ids are the schema's numbers (``Store.schema_version``). The SQL is the same on
SQLite and PostgreSQL (types both accept; JSON is text, booleans 0/1): see ``store.py``.
"""

from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

STATEMENTS = [
    """CREATE TABLE tables (
        table_id TEXT PRIMARY KEY,
        status TEXT, status_at DOUBLE PRECISION, version TEXT,
        coup_seq BIGINT NOT NULL DEFAULT 0, coup_json TEXT,
        shoe_seq BIGINT NOT NULL DEFAULT 0, shoe_json TEXT,
        active_seq BIGINT NOT NULL DEFAULT 0, active_json TEXT,
        updated_at DOUBLE PRECISION)""",
    # Apart from `tables`, so that the gap checker never waits for the writer's row locks.
    """CREATE TABLE seq_state (
        table_id TEXT PRIMARY KEY, contiguous_seq BIGINT NOT NULL DEFAULT 0)""",
    """CREATE TABLE messages (
        table_id TEXT NOT NULL, seq BIGINT NOT NULL, topic TEXT NOT NULL, type TEXT,
        t DOUBLE PRECISION, received_at DOUBLE PRECISION NOT NULL, consumer TEXT,
        PRIMARY KEY (table_id, seq))""",
    """CREATE TABLE coups (
        table_id TEXT NOT NULL, coup_id TEXT NOT NULL, revision INTEGER NOT NULL,
        shoe INTEGER NOT NULL, coup INTEGER NOT NULL, seq BIGINT, t DOUBLE PRECISION,
        punto TEXT, banco TEXT, punto_total INTEGER, banco_total INTEGER, winner TEXT,
        natural_hand INTEGER, punto_pair INTEGER, banco_pair INTEGER, cards INTEGER,
        last_hand INTEGER, voided INTEGER NOT NULL DEFAULT 0,
        settlement TEXT, dealt TEXT, recalled INTEGER NOT NULL DEFAULT 0,
        source TEXT NOT NULL, stored_at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (table_id, coup_id, revision))""",
    "CREATE INDEX coups_t ON coups (t)",
    "CREATE INDEX coups_shoe ON coups (table_id, shoe, coup)",
    """CREATE TABLE alert_events (
        table_id TEXT NOT NULL, alert_id TEXT NOT NULL, action TEXT NOT NULL,
        seq BIGINT, kind TEXT, severity TEXT, shoe INTEGER, coup INTEGER, message TEXT,
        by_user TEXT, reason TEXT, t DOUBLE PRECISION, alert TEXT, source TEXT NOT NULL,
        stored_at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (table_id, alert_id, action))""",
    "CREATE INDEX alert_events_t ON alert_events (t)",
    """CREATE TABLE actions (
        table_id TEXT NOT NULL, alert_id TEXT NOT NULL, action TEXT NOT NULL,
        kind TEXT, by_user TEXT, reason TEXT, t DOUBLE PRECISION, shoe INTEGER, coup INTEGER,
        PRIMARY KEY (table_id, alert_id, action))""",
    """CREATE TABLE status_changes (
        table_id TEXT NOT NULL, at DOUBLE PRECISION NOT NULL, state TEXT NOT NULL, version TEXT,
        PRIMARY KEY (table_id, at, state))""",
    """CREATE TABLE gaps (
        table_id TEXT NOT NULL, from_seq BIGINT NOT NULL, to_seq BIGINT NOT NULL,
        detected_at DOUBLE PRECISION NOT NULL, state TEXT NOT NULL,
        filled_at DOUBLE PRECISION,
        coups_recovered INTEGER NOT NULL DEFAULT 0, alerts_recovered INTEGER NOT NULL DEFAULT 0,
        error TEXT,
        PRIMARY KEY (table_id, from_seq))""",
    """CREATE TABLE rejected (
        topic TEXT NOT NULL, payload TEXT, reason TEXT NOT NULL, received_at DOUBLE PRECISION NOT NULL)""",
]


def upgrade() -> None:
    for statement in STATEMENTS:
        op.execute(statement)


def downgrade() -> None:
    raise NotImplementedError("the floor's record is never migrated down: restore a backup instead")
