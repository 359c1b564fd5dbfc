"""Alembic's environment for the floor's schema: run on the connection ``schema.upgrade`` opened.

There are no SQLAlchemy models: each revision (``versions/``) is the SQL both engines run.
The caller holds the connection and its transaction (and, on PostgreSQL, the advisory
lock), so two floor consumers starting together migrate once.
"""

from alembic import context

connection = context.config.attributes["connection"]
context.configure(connection=connection)
with context.begin_transaction():
    context.run_migrations()
