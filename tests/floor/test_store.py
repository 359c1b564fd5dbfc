"""The floor's store and ingest on real databases (SQLite file, private PostgreSQL): keys, duplicates, bad input."""

from __future__ import annotations

import importlib
import json

from shoe_daemon.floor import schema
from shoe_daemon.floor.ingest import Incoming, Writer
from shoe_daemon.floor.metrics import FloorMetrics
from shoe_daemon.floor.store import SCHEMA_VERSION, Store

RESULT = {"banco": ["7S", "TC"], "banco_pair": False, "banco_total": 7, "cards": 5, "coup": 3, "coup_id": "1-3",
          "last_hand": False, "natural": False, "natural_total": None, "punto": ["6S", "6H", "2C"],
          "punto_pair": True, "punto_total": 4, "revision": 0, "schema": 1, "seq": 98, "shoe": 1,
          "t": 1718000022.5, "table_id": "t1", "type": "result", "winner": "banco"}
CLEARED = {"action": "cleared", "schema": 1, "seq": 99, "t": 1718000030.0, "table_id": "t1", "type": "alert",
           "alert": {"id": "1-3-1", "kind": "extra_card", "severity": "error", "shoe": 1, "coup": 3,
                     "message": "Extra card", "t": 1718000020.0,
                     "acknowledged": {"by": "sup", "t": 1718000025.0},
                     "cleared": {"by": "sup", "reason": "dealt again", "t": 1718000030.0}}}


def _msg(topic: str, payload) -> Incoming:
    return Incoming(topic, payload if isinstance(payload, bytes) else json.dumps(payload).encode())


def test_schema_migrates_once_and_twice_is_a_no_op(db_url):
    a = Store.open(db_url)
    assert a.schema_version() == SCHEMA_VERSION
    b = Store.open(db_url)          # a second consumer opening the same database
    assert b.schema_version() == SCHEMA_VERSION
    assert b.count("alembic_version") == 1
    a.close()
    b.close()


def test_duplicates_double_nothing_and_bad_input_is_kept_with_its_reason(db_url):
    metrics = FloorMetrics()
    writer = Writer(db_url, "baccarat", metrics)
    writer.store = Store.open(db_url)
    batch = [_msg("baccarat/t1/coup/result", RESULT), _msg("baccarat/t1/alerts/event", CLEARED),
             _msg("baccarat/t1/status", {"schema": 1, "state": "online", "table_id": "t1", "version": "0.1.0"}),
             _msg("baccarat/t1/coup/result", RESULT),           # the same message twice in one batch
             _msg("baccarat/t1/coup/card", b"{not json"),
             _msg("baccarat/t2/coup/card", {"table_id": "t2", "type": "card"})]    # no seq
    writer.write(batch)
    writer.write(batch[:3])            # redelivered after a restart
    s = writer.store
    coups = s.coups()
    assert len(coups) == 1
    c = coups[0]
    assert (c["table_id"], c["coup_id"], c["winner"], c["punto"], c["banco"], c["punto_pair"], c["seq"]) == \
        ("t1", "1-3", "banco", ["6S", "6H", "2C"], ["7S", "TC"], True, 98)
    events = s.alert_events()
    assert [(e["alert_id"], e["action"], e["by_user"], e["reason"]) for e in events] == \
        [("1-3-1", "cleared", "sup", "dealt again")]
    assert [(a["action"], a["by_user"]) for a in s.actions()] == [("cleared", "sup")]
    assert [(x["table_id"], x["state"]) for x in s.status_changes()] == [("t1", "online")]
    rejected = s.query("SELECT topic, reason FROM rejected ORDER BY topic")
    assert [r["topic"] for r in rejected] == ["baccarat/t1/coup/card", "baccarat/t2/coup/card"]
    assert "not JSON" in rejected[0]["reason"] and "seq" in rejected[1]["reason"]
    snap = metrics.snapshot()
    assert (snap["stored"], snap["duplicate"], snap["rejected"]) == (2, 3, 2)
    s.close()


def test_a_recalled_coup_and_its_mqtt_result_are_one_row(db_url):
    from shoe_daemon.floor.gaps import GapChecker

    s = Store.open(db_url)
    recalled = {**{k: v for k, v in RESULT.items() if k not in ("seq", "schema", "type", "table_id", "t")},
                "recorded": 1718000023.0, "settlement": {"status": "settled"}, "dealt": [{"card": "6S"}]}
    alerts = {"active": [], "past": [CLEARED["alert"]]}
    assert GapChecker.store_recall(s, "t1", [recalled], alerts) == (1, 3)
    assert GapChecker.store_recall(s, "t1", [recalled], alerts) == (0, 0)   # a second fill doubles nothing
    w = Writer(db_url, "baccarat", FloorMetrics())
    w.store = s
    w.write([_msg("baccarat/t1/coup/result", RESULT), _msg("baccarat/t1/alerts/event", CLEARED)])
    coups = s.coups()
    assert len(coups) == 1 and coups[0]["seq"] == 98 and coups[0]["settlement"] == {"status": "settled"}
    assert sorted(e["action"] for e in s.alert_events()) == ["acknowledged", "cleared", "raised"]
    assert s.count("actions") == 2      # acknowledged and cleared by "sup"
    s.close()


def test_a_database_newer_than_the_code_is_refused(sqlite_url):
    import pytest

    from shoe_daemon.floor.store import StoreError

    s = Store.open(sqlite_url)
    with s.transaction():
        s.execute("UPDATE alembic_version SET version_num = '0099'")     # a newer floor's revision
    s.close()
    with pytest.raises(StoreError, match="schema 99, newer than this floor"):
        Store.open(sqlite_url)
    s = Store.open(sqlite_url, migrate=False)
    assert s.schema_version() == 99            # refused, and left as it was
    s.close()


def _voided(seq: int, coup_id: str = "1-3", user: str | None = "sam") -> dict:
    shoe, coup = (int(x) for x in coup_id.split("-"))
    evidence = {"reason": "misdeal", "result_withdrawn": True, "punto": ["6S", "6H", "2C"], "banco": ["7S", "TC"],
                "punto_total": 4, "banco_total": 7}
    if user:
        evidence["user"] = user
    return {"action": "raised", "schema": 1, "seq": seq, "t": 1718000040.0, "table_id": "t1", "type": "alert",
            "alert": {"id": f"{coup_id}-2", "kind": "coup_voided", "severity": "info", "shoe": shoe, "coup": coup,
                      "message": f"Coup {coup} is void: misdeal. Its result is withdrawn.", "t": 1718000040.0,
                      "evidence": evidence}}


def test_a_void_after_settlement_marks_the_stored_coup_once_whatever_the_order(db_url):
    metrics = FloorMetrics()
    w = Writer(db_url, "baccarat", metrics)
    w.store = s = Store.open(db_url)
    other = {**RESULT, "seq": 120, "coup": 4, "coup_id": "1-4"}
    w.write([_msg("baccarat/t1/coup/result", RESULT)])
    assert s.coups()[0]["voided"] is False and s.coups()[0]["voided_by"] is None
    w.write([_msg("baccarat/t1/alerts/event", _voided(99))])
    # The void comes before its coup's result (another consumer of the share group was slower).
    w.write([_msg("baccarat/t1/alerts/event", _voided(121, "1-4", user=None))])
    w.write([_msg("baccarat/t1/coup/result", other)])
    c3, c4 = s.coups()
    assert (c3["coup_id"], c3["voided"], c3["voided_by"], c3["void_reason"], c3["voided_at"]) == \
        ("1-3", True, "sam", "misdeal", 1718000040.0)
    assert c3["winner"] == "banco"            # the withdrawn result is kept for the record
    assert (c4["voided"], c4["voided_by"], c4["void_reason"]) == (True, None, "misdeal")   # a void by the policy
    # Redelivered (the same seqs) and a result delivered again: nothing changes, nothing doubles.
    w.write([_msg("baccarat/t1/alerts/event", _voided(99)), _msg("baccarat/t1/coup/result", RESULT)])
    assert [(c["coup_id"], c["voided"], c["voided_by"], c["voided_at"]) for c in s.coups()] == \
        [("1-3", True, "sam", 1718000040.0), ("1-4", True, None, 1718000040.0)]
    assert s.count("voids") == 2 and s.count("coups") == 2
    assert [(a["kind"], a["by_user"], a["reason"]) for a in s.actions()][0] == ("coup_voided", "sam", "misdeal")
    assert metrics.snapshot()["duplicate"] == 2
    s.close()


def test_a_voided_coup_from_the_recall_is_marked_with_its_alert(sqlite_url):
    from shoe_daemon.floor.gaps import GapChecker

    s = Store.open(sqlite_url)
    record = {"coup_id": "1-3", "shoe": 1, "coup": 3, "voided": True, "reason": "misdeal", "result_withdrawn": True,
              "punto": ["6S", "6H", "2C"], "banco": ["7S", "TC"], "punto_total": 4, "banco_total": 7,
              "recorded": 1718000040.0}
    alert = _voided(99)["alert"]
    assert GapChecker.store_recall(s, "t1", [record], {"active": [], "past": [alert]}) == (1, 1)
    c = s.coups()[0]
    assert (c["voided"], c["winner"], c["voided_by"], c["void_reason"], c["voided_at"]) == \
        (True, None, "sam", "misdeal", 1718000040.0)
    # A coup stored from MQTT and voided later: the recall alone (its alert not recalled) marks it.
    w = Writer(sqlite_url, "baccarat", FloorMetrics())
    w.store = s
    w.write([_msg("baccarat/t1/coup/result", {**RESULT, "coup": 5, "coup_id": "1-5", "seq": 130})])
    assert GapChecker.store_recall(s, "t1", [{**record, "coup": 5, "coup_id": "1-5"}], {}) == (0, 0)
    c5 = s.coups(coup=5)[0]
    assert (c5["voided"], c5["winner"], c5["void_reason"], c5["recalled"]) == (True, "banco", "misdeal", True)
    s.close()




def test_a_version_1_database_is_migrated_and_keeps_its_rows(sqlite_url):
    assert schema.upgrade(sqlite_url, to="0001") == 1
    old = Store.open(sqlite_url, migrate=False)
    with old.transaction():
        old.execute("INSERT INTO coups (table_id, coup_id, revision, shoe, coup, winner, source, stored_at) "
                    "VALUES ('t1', '1-1', 0, 1, 1, 'tie', 'mqtt', 0)")
    old.close()
    s = Store.open(sqlite_url)
    assert s.schema_version() == SCHEMA_VERSION == 2
    c = s.coups()[0]
    assert (c["coup_id"], c["winner"], c["voided"], c["voided_by"], c["voided_at"]) == ("1-1", "tie", False, None, None)
    s.close()


def test_a_database_of_the_floor_before_alembic_is_stamped_then_upgraded(db_url):
    """The floor's own migration list recorded its versions in floor_schema: such a database
    (here at version 1, with a row) is taken at that version by Alembic and upgraded."""
    first = importlib.import_module("shoe_daemon.floor.migrations.versions.0001_tables")
    old = Store.open(db_url, migrate=False)
    with old.transaction():
        for statement in first.STATEMENTS:
            old.execute(statement)
        old.execute("CREATE TABLE floor_schema (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
                    "applied_at DOUBLE PRECISION NOT NULL)")
        old.execute("INSERT INTO floor_schema (version, name, applied_at) VALUES (1, 'tables', 0)")
        old.execute("INSERT INTO coups (table_id, coup_id, revision, shoe, coup, winner, source, stored_at) "
                    "VALUES ('t1', '1-1', 0, 1, 1, 'punto', 'mqtt', 0)")
    old.close()
    s = Store.open(db_url)
    assert s.schema_version() == SCHEMA_VERSION
    assert [(c["coup_id"], c["winner"], c["voided_by"]) for c in s.coups()] == [("1-1", "punto", None)]
    s.close()


def test_the_newest_revision_is_the_schema_version_the_code_names():
    assert schema.head_version() == SCHEMA_VERSION


def test_without_alembic_the_floor_says_which_extra_to_install(sqlite_url, monkeypatch):
    import pytest

    from shoe_daemon.floor.store import StoreError

    monkeypatch.setitem(__import__("sys").modules, "alembic", None)     # import alembic fails
    with pytest.raises(StoreError, match=r"need Alembic: pip install 'shoe-daemon\[floor\]'"):
        Store.open(sqlite_url)
