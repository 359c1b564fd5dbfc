"""The floor: many tables, one record, one view for the pit (docs/floor.md).

Every table's daemon publishes its coups, alerts and state to MQTT (docs/mqtt.md).
The floor service subscribes to all of them under one prefix and keeps them in one
database (SQLite embedded, PostgreSQL for a real floor), detects the messages it
missed by each table's ``seq`` and fills them from the table's HTTP recall, and
serves the pit's page, a recall across tables, CSV exports and Prometheus metrics.

Modules, one job each:

- ``config``   the ``[floor]`` configuration file
- ``store``    the database: every write and read (SQLite or PostgreSQL)
- ``schema``   its schema version: Alembic's revisions in ``migrations/``
- ``ingest``   one MQTT message -> the rows it makes (pure), and the batching writer
- ``consumer`` the MQTT client (shared subscription, manual acknowledgement after commit)
- ``gaps``     gap detection on the stored ``seq`` and the recall that fills gaps
- ``web``      the pit's page, recall, CSV and metrics (FastAPI)
- ``service``  wires them into ``shoe-daemon floor``
- ``demo``     ``shoe-daemon demo --tables N``
"""
