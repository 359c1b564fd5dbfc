"""The service's journal-first loop, in process, on a real journal (what the e2e runs found).

- An event whose journaled form depends on the core's state (a new shoe carries the active
  alerts and the message seq) is prepared after the events before it in the same batch are
  handled: a link that came back just before a new shoe does not leave link_lost active.
- A restart numbers its messages as the live run did (replay of the current shoe, with or without
  a new_shoe in the journal): seq goes on increasing, no display drops a new message as old.
- A coup record lost between an event's append and its record (a crash) is written again.
- A restart in a later shoe numbers it as the live run did (coup ids do not collide with shoe 1's),
  keeps the last coups of the earlier shoes in `history`: the retained state is the live one.
"""

from __future__ import annotations

from shoe_daemon.config import Config, JournalConfig, TableConfig
from shoe_daemon.core.events import Event, Kind
from shoe_daemon.service import Daemon


class Publisher:
    def __init__(self):
        self.sent: list[tuple[str, bytes]] = []

    def publish(self, topic, payload, qos=1, retain=False):
        self.sent.append((topic, payload))


def start(path) -> Daemon:
    d = Daemon(Config(table=TableConfig(id="t1", burn="none"), journal=JournalConfig(path=str(path), synchronous="normal")))
    d.open_journal()
    d.build_table()
    d.replay()
    d.publisher = Publisher()
    for out in d.table.retained():
        d.publisher.publish(out.topic, out.encode())
    return d


def ev(t, kind, **data) -> Event:
    return Event(1_700_000_000.0 + t, kind, "shoe", data)


NATURAL = ["9S", "2H", "KD", "3C"]          # Punto 9 natural, Banco 5
MORE = ["2S", "3H", "4D", "KC", "5S", "QH"]    # Punto 6 stands, Banco 3 draws; the next coup starts


def cards(codes, start=0):
    return [ev(start + i, Kind.CARD, card=c, counter=start + i + 1) for i, c in enumerate(codes)]


def test_a_new_shoe_is_prepared_after_the_events_before_it(tmp_path):
    d = start(tmp_path / "j.sqlite3")
    d.process([ev(0, Kind.LINK_DOWN, reason="unplugged")])
    assert [a["kind"] for a in d.table.active_alerts.values()] == ["link_lost"]
    d.process([ev(1, Kind.LINK_UP), ev(2, Kind.BUTTON, button="new_shoe")])
    assert d.table.active_alerts == {}
    new_shoe = [e.event for e in d.journal.events() if e.event.kind is Kind.NEW_SHOE][0]
    assert new_shoe.data["carried_alerts"] == []
    d.journal.close()


def seqs(d: Daemon) -> list[int]:
    import json

    return [json.loads(p)["seq"] for _, p in d.publisher.sent]


def test_a_restart_goes_on_numbering_where_the_live_run_was(tmp_path):
    for with_new_shoe in (False, True):
        path = tmp_path / f"j{with_new_shoe}.sqlite3"
        d = start(path)
        first = [ev(0, Kind.LINK_UP), ev(1, Kind.SHOE_INSERTED)]
        if with_new_shoe:
            first.append(ev(2, Kind.BUTTON, button="new_shoe", decks=8))
        d.process(first)
        d.process(cards(NATURAL, 10))
        live = seqs(d)
        d.journal.close()

        again = start(path)
        republished = seqs(again)
        assert set(republished) <= set(live), "the retained state got new numbers on the restart"
        again.process(cards(MORE, 20))
        new = seqs(again)[len(republished):]
        assert new and min(new) == max(live) + 1, (with_new_shoe, max(live), new[:3])
        again.journal.close()


def test_a_lost_coup_record_is_written_again_on_restart(tmp_path):
    path = tmp_path / "j.sqlite3"
    d = start(path)
    d.process([ev(0, Kind.BUTTON, button="new_shoe", decks=8)])
    d.process(cards(NATURAL, 10))
    assert d.journal.coup_count() == 1
    record = d.journal.coups()[0]
    d.journal.rebuild_coups([])              # as if the process died before the coup's record
    d.journal.close()
    again = start(path)
    assert [(c.coup_id, c.result) for c in again.journal.coups()] == [(record.coup_id, record.result)]
    again.journal.close()


def test_a_restart_in_a_later_shoe_keeps_its_number_its_history_and_the_first_shoes_records(tmp_path):
    path = tmp_path / "j.sqlite3"
    d = start(path)
    d.process([ev(0, Kind.LINK_UP), ev(1, Kind.BUTTON, button="new_shoe", decks=8)])
    d.process(cards(NATURAL, 10))                          # coup 1-1
    d.process([ev(20, Kind.BUTTON, button="new_shoe", decks=8)])
    d.process(cards(["8S", "7H", "QD", "KC"], 30))          # coup 2-1
    shoe1 = d.journal.coup("1-1").result
    live = {m.topic: m.encode() for m in d.table.retained() if m.topic != "sources"}
    d.journal.close()

    again = start(path)
    assert {m.topic: m.encode() for m in again.table.retained() if m.topic != "sources"} == live
    assert again.table.engine.shoe_state().shoe == 2
    again.process(cards(MORE, 34))                          # coup 2-2 (shoe counters 35...)
    assert [c.coup_id for c in again.journal.coups()] == ["1-1", "2-1", "2-2"]
    assert again.journal.coup("1-1").result == shoe1, "shoe 1's record was overwritten"
    assert [c["coup_id"] for c in again.table.history] == ["1-1", "2-1", "2-2"]
    again.journal.close()
