"""A kill between the journal's commit and the broker: the events were journaled but their messages
never left. After the restart the messages of the journal's last events go out again, with the seq
and the bytes the core gave them the first time (subscribers dedupe by seq), before the retained
state. Before, those cards were journaled but never published (bench drills: 2 of 406 after 10 kills)."""

from __future__ import annotations

import json

from shoe_daemon.config import load_config
from shoe_daemon.core.events import Event, Kind
from shoe_daemon.core.pipeline import Pipeline
from shoe_daemon.core.table import Table
from shoe_daemon.journal import Journal
from shoe_daemon.service import Daemon
from tests.e2e.harness import write_config

CARDS = ["9H", "2C", "KS", "3D", "8S", "4H", "QC", "5D"]


def test_journaled_but_unpublished_cards_are_published_after_a_restart(tmp_path, mosquitto, mqtt_subscriber):
    journal_path = tmp_path / "journal.sqlite3"
    cfg = load_config(write_config(tmp_path / "daemon.toml", shoe_port=str(tmp_path / "no-shoe"),
                                   journal=journal_path, mqtt_port=mosquitto.port))
    # The live run: every event journaled, the core ran, and then the process died before its
    # publisher wrote anything (emit=None: nothing left the process).
    journal = Journal.open(journal_path)
    live = Pipeline(Table.from_config(cfg), journal=journal)
    live.table.retained()
    expected, shoe_msgs = [], []
    for i, code in enumerate(CARDS):
        for h in live.feed([Event(100.0 + i, Kind.CARD, "shoe", {"card": code, "counter": i + 1})]):
            expected += [(o.topic, o.encode()) for o in h.outputs if getattr(o, "topic", None) == "coup/card"]
            shoe_msgs += [o.encode() for o in h.outputs if getattr(o, "topic", None) == "shoe"]
    journal.close()
    assert len(expected) == len(CARDS)

    sub = mqtt_subscriber(mosquitto.port, "baccarat/#")
    daemon = Daemon(cfg)
    daemon.open_journal()
    daemon.build_table()
    assert daemon.replay() == len(CARDS)
    daemon.start_mqtt()
    try:
        got = sub.wait_for(lambda msgs: [m for m in msgs if m.topic.endswith("/coup/card")] or None, timeout=20)
        sub.wait_for(lambda msgs: len([m for m in msgs if m.topic.endswith("/coup/card")]) == len(CARDS), timeout=20)
        cards = [m for m in sub.messages if m.topic.endswith("/coup/card")]
        assert [m.payload for m in cards] == [payload for _, payload in expected]   # the same bytes
        # Not only the cards: every message of those events (here each card's shoe state too).
        sub.wait_for(lambda msgs: len([m for m in msgs if m.topic.endswith("/shoe")]) >= len(shoe_msgs), timeout=20)
        assert [m.payload for m in sub.messages if m.topic.endswith("/shoe")][-len(shoe_msgs):] == shoe_msgs
        seqs = [json.loads(m.payload)["seq"] for m in sub.messages if not m.topic.endswith("/status")]
        assert seqs == sorted(seqs)                                                 # in seq order
        assert got
    finally:
        daemon.publisher.stop(timeout=2.0)
        daemon.journal.close()
