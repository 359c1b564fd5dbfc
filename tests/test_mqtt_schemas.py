"""The JSON Schemas of the MQTT payloads (docs/schemas/) against what the core really publishes.

Every ``Publish`` a real :class:`~shoe_daemon.core.table.Table` produces -- over whole
shuffled shoes and over a session that uses every input kind -- is encoded as it
goes on the wire and validated against the schema of its topic, right after the
``handle()`` that produced it. Mutated payloads must be rejected, so the schemas
are not vacuous; docs/mqtt.md must link every schema and its examples must validate.
"""

from __future__ import annotations

import copy
import json
import random
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry
from referencing.jsonschema import DRAFT202012

from shoe_daemon import __version__
from shoe_daemon.core import alerts as table_module
from shoe_daemon.core.events import Event, Kind
from shoe_daemon.core.outputs import Publish
from shoe_daemon.core.pipeline import Pipeline
from shoe_daemon.core.table import Table
from shoe_daemon.game.alerts import AlertKind
from shoe_daemon.game.cards import ALL_CODES
from shoe_daemon.game.engine import TableRules
from shoe_daemon.publish import topics
from shoe_daemon.publish.mqtt import status_payload

ROOT = Path(__file__).resolve().parents[1]
SCHEMA_DIR = ROOT / "docs" / "schemas"
MQTT_DOC = ROOT / "docs" / "mqtt.md"
TABLE_ID = "t1"
T0 = 1718000000.0

# ------------------------------------------------------------------ schemas


def schema_file(topic: str) -> str:
    return topic.replace("/", "-") + ".json"


ALL_TOPICS = tuple(spec.suffix for spec in topics.TREE)   # status + every topic the core publishes

DOCS = {p.name: json.loads(p.read_text(encoding="utf-8")) for p in sorted(SCHEMA_DIR.glob("*.json"))}
REGISTRY = Registry().with_resources((name, DRAFT202012.create_resource(doc)) for name, doc in DOCS.items())
VALIDATORS = {
    topic: Draft202012Validator(DOCS[schema_file(topic)], registry=REGISTRY)
    for topic in ALL_TOPICS
    if schema_file(topic) in DOCS
}
CORE_TOPICS = set(ALL_TOPICS) - {topics.STATUS}


def errors(topic: str, payload) -> list[str]:
    return [
        f"{'/'.join(map(str, e.absolute_path)) or '<payload>'}: {e.message}"
        for e in VALIDATORS[topic].iter_errors(payload)
    ]


def check(topic: str, payload) -> None:
    assert topic in VALIDATORS, f"no schema for topic {topic!r}"
    problems = errors(topic, payload)
    assert not problems, f"{topic} seq={payload.get('seq')}: {problems}\n{json.dumps(payload)[:2000]}"


# ------------------------------------------------------------------ driving a table


def drive(table: Table, events) -> list[tuple[str, dict]]:
    """Feed events as the daemon does (prepare, then handle); validate each payload as it is published.

    ``events`` may be a generator reading the table between events. Returns (topic, payload)
    pairs, the payload decoded from the bytes that went out at that moment.
    """
    seen = []
    for event in events:
        for out in Pipeline(table).feed_one(event):
            if isinstance(out, Publish):
                payload = json.loads(out.encode())
                check(out.topic, payload)
                seen.append((out.topic, payload))
    return seen


def check_retained(table: Table) -> None:
    for msg in table.retained():
        check(msg.topic, json.loads(msg.encode()))


def shuffled(seed: int, decks: int = 8) -> list[str]:
    cards = [c for c in ALL_CODES for _ in range(decks)]
    random.Random(seed).shuffle(cards)
    return cards


def alert_id(table: Table, kind: str) -> str | None:
    ids = sorted(a["id"] for a in table.active_alerts.values() if a["kind"] == kind)
    return ids[0] if ids else None


def session(table: Table) -> Iterator[Event]:
    """A day at the table with every input kind (alert ids are read from the table as it goes)."""
    clock = iter(T0 + 0.75 * i for i in range(10_000))
    counter = 0

    def ev(kind, source="shoe", **data):
        return Event(next(clock), kind, source, data)

    def shoe_card(code, **data):
        nonlocal counter
        counter += 1
        return ev(Kind.CARD, card=code, counter=counter, quality=90 + counter % 10, **data)

    def api(kind, **data):
        return ev(kind, "api", user="sup", **data)

    yield ev(Kind.LINK_UP, driver="protocol", model="S1", serial="A1", firmware="1.2.3", protocol=1,
             boot=7, resumed=False, missed=0)
    yield ev(Kind.SHOE_INSERTED)
    yield ev(Kind.LINK_UP, "camera", driver="camera")
    yield ev(Kind.BUTTON, button="new_shoe")
    for code in ("3S", "KD", "9C", "4H"):                  # burn: first_card_value turns 3S, burns 3
        yield shoe_card(code)
    # Coup 1: the shoe cannot read Banco's first card; the camera gives it; the dealer confirms.
    yield shoe_card("2S")
    counter += 1
    yield ev(Kind.CARD_UNREADABLE, counter=counter, reason="no_read")
    yield shoe_card("4D")                                   # waits behind the unread card
    yield shoe_card("5C")
    yield ev(Kind.CARD, "camera", card="3H", confidence=0.97)
    yield ev(Kind.BUTTON, button="coup_confirm")
    # Coup 2: complete, then an extra card before the confirm (closing="confirm"): held, pushed back, void.
    yield ev(Kind.CAMERA_CARD, "camera", card="9S", value=9, status="ok", confidence=0.9, zone="punto")
    for code in ("9H", "8H", "2D", "QC"):
        yield shoe_card(code)
    yield shoe_card("7D")
    yield ev(Kind.CARD_PUSHED_BACK, card="7D", counter=counter)
    counter -= 1                                            # the next draw reuses the counter
    yield ev(Kind.BUTTON, button="coup_confirm")
    yield api(Kind.VOID_COUP, reason="extra card at the table")
    yield api(Kind.ACK_ALERT, alert_id=alert_id(table, "extra_card"))
    yield api(Kind.CLEAR_ALERT, alert_id=alert_id(table, "extra_card"), reason="dealt again")
    yield api(Kind.CLEAR_ALERT, alert_id=alert_id(table, "card_pushed_back"), reason="seen")
    # Coup 3: Punto draws, closed through the API, then a card corrected: re-settled (revision 1).
    for code in ("6S", "7S", "6H", "TC", "2C"):
        yield shoe_card(code)
    yield ev(Kind.CLOSE_COUP, "api", user="dealer", reason="")
    yield api(Kind.CORRECT_CARD, index=4, card="3C", reason="the camera shows 3C")
    # Coup 4: the counter skips one and the card lands on the wrong side: held, void.
    counter += 1
    yield shoe_card("5D", side="banco")
    yield api(Kind.VOID_COUP, reason="counter gap")
    # Coup 5: a fifth KS from a 4-deck shoe: impossible card (critical), void.
    for _ in range(5):
        yield shoe_card("KS")
    yield api(Kind.VOID_COUP, reason="foreign card")
    # Coup 6: closed with a card due: missing card, void.
    yield shoe_card("8C")
    yield shoe_card("2H")
    yield ev(Kind.CLOSE_COUP, "api", user="dealer")
    if hasattr(Kind, "RESOLVE_COUP"):                       # released, then void all the same
        yield api(Kind.RESOLVE_COUP, reason="checking the layout")
    yield api(Kind.VOID_COUP, reason="missing card")
    # Links, tamper, faults, a card code nobody knows, the shoe out of its cradle.
    yield ev(Kind.LINK_DOWN, reason="serial port closed")
    yield ev(Kind.CAMERA_CARD, "camera", card=None, value=None, status="unsure", confidence=0.41, zone="punto",
             reason="index corner covered")
    yield ev(Kind.LINK_DOWN, "camera", reason="timeout")
    yield ev(Kind.LINK_UP, "camera", driver="camera")
    yield ev(Kind.TAMPER, what="lid_open", active=True)
    yield ev(Kind.FAULT, code="0x0011", active=True, detail="optical sensor dirty")
    yield ev(Kind.FAULT, code="events_lost", severity="error", first_seq=40, count=2, reason="ring overflow")
    # Lost events stop the game (the error policy): a supervisor releases it.
    yield api(Kind.RESOLVE_COUP, reason="the lost events were checked against the camera")
    yield ev(Kind.FAULT, "mqtt", code="broker_connection_lost", error="connection refused")
    yield ev(Kind.CARD, "api", card="1X", user="sup")
    yield ev(Kind.SHOE_REMOVED)
    yield ev(Kind.SHOE_INSERTED)
    yield ev(Kind.LINK_UP, driver="protocol", model="S1", serial="A1", firmware="1.2.3", protocol=1,
             boot=7, resumed=True, missed=0)
    yield ev(Kind.TAMPER, what="lid_closed", active=False)
    yield api(Kind.ACK_ALERT, alert_id=alert_id(table, "tamper"))
    yield api(Kind.CLEAR_ALERT, alert_id=alert_id(table, "tamper"), reason="lid closed, cards checked")
    yield api(Kind.CLEAR_ALERT, alert_id="9-9-x99", reason="no such alert")
    yield api(Kind.ACK_ALERT, alert_id="9-9-x99")
    yield ev(Kind.CLOSE_COUP, "api", user="dealer")           # nothing to close
    # The cut card: coup 7 is the last hand; a card after it; the shoe runs empty; a new shoe.
    yield ev(Kind.CUT_CARD, counter=counter)
    for code in ("AH", "2H", "3H", "4C", "5H"):
        yield shoe_card(code)
    yield ev(Kind.BUTTON, button="coup_confirm")
    yield shoe_card("8S")
    yield ev(Kind.SHOE_EMPTY)
    yield ev(Kind.BETS, "api", bets={"punto": 100})
    if hasattr(Kind, "CONFIG_RELOAD"):
        yield ev(Kind.CONFIG_RELOAD, "config", applied=["table.odds_alert_edge"], restart_needed=[])
    yield api(Kind.NEW_SHOE, decks=8, reason="new shoe")
    counter = 0
    yield shoe_card("9D")


SESSION_RULES = {
    "confirm-hold-4decks": TableRules(decks=4, closing="confirm", burn="first_card_value", on_error="hold"),
    "auto-continue-6decks": TableRules(decks=6, closing="auto", cut_card="one_more", burn="fixed",
                                       burn_count=2, on_error="continue"),
    "confirm-void-8decks": TableRules(decks=8, closing="confirm", on_error="void"),
}


@pytest.fixture(scope="module")
def primary_session() -> tuple[list[Event], list[tuple[str, dict]]]:
    table = Table(SESSION_RULES["confirm-hold-4decks"], TABLE_ID)
    events = []

    def recording():
        for event in session(table):
            events.append(event)
            yield event

    seen = drive(table, recording())
    check_retained(table)
    return events, seen


def payloads(seen, topic: str) -> list[dict]:
    return [p for tp, p in seen if tp == topic]


# ------------------------------------------------------------------ the schema files


@pytest.mark.parametrize("name", sorted(DOCS))
def test_schema_files_are_draft_2020_12_schemas(name):
    doc = DOCS[name]
    assert doc["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(doc)


def test_every_topic_has_a_schema_and_every_schema_a_topic():
    expected = {schema_file(topic) for topic in ALL_TOPICS} | {"common.json"}
    assert set(DOCS) == expected
    assert set(VALIDATORS) == set(ALL_TOPICS)


# ------------------------------------------------------------------ real payloads validate


@pytest.mark.parametrize(("seed", "cut_after"), [(1, None), (2, 400)])
def test_a_whole_shuffled_shoe_validates(seed, cut_after):
    table = Table(TableRules(), TABLE_ID)
    check_retained(table)
    events = []
    for i, code in enumerate(shuffled(seed)):
        events.append(Event(T0 + 2.5 * i, Kind.CARD, "shoe", {"card": code}))
        if i + 1 == cut_after:
            events.append(Event(T0 + 2.5 * i + 1.0, Kind.CUT_CARD, "shoe", {}))
    seen = drive(table, events)
    check_retained(table)
    assert len(payloads(seen, "coup/card")) == 8 * 52
    assert len(payloads(seen, "coup/result")) > 40
    seqs = [p["seq"] for _, p in seen]
    assert seqs == list(range(seqs[0], seqs[0] + len(seen)))
    assert {"coup/current", "coup/card", "coup/result", "history", "shoe"} <= {tp for tp, _ in seen}
    if cut_after is not None:   # cards after the last hand: alerts
        assert "after_last_hand" in {p["alert"]["kind"] for p in payloads(seen, "alerts/event")}


def test_a_session_with_every_input_kind_validates(primary_session):
    events, seen = primary_session
    assert {e.kind for e in events} == set(Kind), "the session must use every input kind"
    assert {tp for tp, _ in seen} == CORE_TOPICS
    raised = {p["alert"]["kind"] for p in payloads(seen, "alerts/event") if p["action"] == "raised"}
    table_kinds = {table_module.LINK_LOST, table_module.TAMPER, table_module.FAULT,
                   table_module.CARD_UNREADABLE, table_module.SHOE_REMOVED, table_module.SHOE_EMPTY,
                   table_module.ACTION_REJECTED, "manual_entry_needed", "camera_mismatch"}
    # coup_resolved needs a resolve input; odds_advantage needs a shoe that favours the player
    assert ({k.value for k in AlertKind} - {"coup_resolved"}) | table_kinds <= raised
    assert {p["action"] for p in payloads(seen, "alerts/event")} == {"raised", "acknowledged", "cleared"}
    cards = payloads(seen, "coup/card")
    assert {c["role"] for c in cards} == {"coup", "burn", "extra"}
    assert any("fills_unreadable" in c and c["source"] == "camera" for c in cards)
    assert {r["revision"] for r in payloads(seen, "coup/result")} == {0, 1}
    assert any(s["shoe_over"] for s in payloads(seen, "shoe"))
    assert any(p["alerts"] for p in payloads(seen, "alerts/active"))
    # the alerts carried into the new shoe (shoe 2: the untouched first shoe was replaced) stay active
    assert payloads(seen, "coup/current")[-1]["shoe"] == 2
    assert payloads(seen, "alerts/active")[-1]["alerts"]


def test_card_sources_are_parallel_to_the_hands(primary_session):
    """What a schema cannot say: one source per card, side by side; the camera's and a person's show."""
    _, seen = primary_session
    snapshots = payloads(seen, "coup/current")
    for p in snapshots:
        assert [len(p["card_sources"][s]) for s in ("punto", "banco")] == [len(p["punto"]), len(p["banco"])], p
    shown = {(e["source"], "confidence" in e) for p in snapshots for s in ("punto", "banco") for e in p["card_sources"][s]}
    assert {("shoe", False), ("camera", True), ("api", False)} <= shown


@pytest.mark.parametrize("rules", [k for k in SESSION_RULES if k != "confirm-hold-4decks"])
def test_the_session_validates_under_other_table_rules(rules):
    table = Table(SESSION_RULES[rules], TABLE_ID)
    seen = drive(table, session(table))
    check_retained(table)
    assert {tp for tp, _ in seen} == CORE_TOPICS


@pytest.mark.parametrize("state", ["online", "offline"])
def test_the_status_payload_validates(state):
    check(topics.STATUS, json.loads(status_payload(state, TABLE_ID, __version__)))


# ------------------------------------------------------------------ mutated payloads are rejected


def _first(topic: str, where: Callable[[dict], bool] = lambda p: True):
    return topic, where


def _set(path, value):
    def mutate(p):
        obj = p
        for key in path[:-1]:
            obj = obj[key]
        obj[path[-1]] = value
    return mutate


def _del(path):
    def mutate(p):
        obj = p
        for key in path[:-1]:
            obj = obj[key]
        del obj[path[-1]]
    return mutate


def _rename_key(path, old, new):
    def mutate(p):
        obj = p
        for key in path:
            obj = obj[key]
        obj[new] = obj.pop(old)
    return mutate


def _truncate(path, n):
    def mutate(p):
        obj = p
        for key in path[:-1]:
            obj = obj[key]
        obj[path[-1]] = obj[path[-1]][:n]
    return mutate


def _status(p):
    return True


def _complete_with_cards(p):
    return p["complete"] and len(p["punto"]) >= 2


MUTATIONS = {
    # card codes
    "card code 1X": (_first("coup/card"), _set(["card"], "1X")),
    "card code 1X in a hand": (_first("coup/current", _complete_with_cards), _set(["punto", 0], "1X")),
    "card code 1X in a result": (_first("coup/result"), _set(["banco", 1], "1X")),
    "card code 1X in history": (_first("history", lambda p: p["coups"]), _set(["coups", 0, "punto", 0], "1X")),
    "card code 1X in the composition": (_first("shoe"), _rename_key(["remaining_by_code"], "AS", "1X")),
    "lower-case card code": (_first("coup/card"), _set(["card"], "ks")),
    # missing fields
    "missing punto_total in a result": (_first("coup/result"), _del(["punto_total"])),
    "missing punto_total in a card": (_first("coup/card"), _del(["punto_total"])),
    "missing punto_total in the snapshot": (_first("coup/current"), _del(["punto_total"])),
    "missing punto_total in history": (_first("history", lambda p: p["coups"]), _del(["coups", 0, "punto_total"])),
    "missing next_side": (_first("coup/current"), _del(["next_side"])),
    "missing alert id": (_first("alerts/event"), _del(["alert", "id"])),
    "missing remaining": (_first("shoe"), _del(["remaining"])),
    "missing seq": (_first("coup/card"), _del(["seq"])),
    "missing t": (_first("sources"), _del(["t"])),
    "missing status version": (_first("status", _status), _del(["version"])),
    # types, ranges and enums
    "seq 0": (_first("shoe"), _set(["seq"], 0)),
    "t as a string": (_first("coup/card"), _set(["t"], "12:00")),
    "table_id with a slash": (_first("coup/current"), _set(["table_id"], "t1/x")),
    "table_id upper case": (_first("status", _status), _set(["table_id"], "T1")),
    "type of another topic": (_first("coup/card"), _set(["type"], "coup")),
    "total 10": (_first("coup/current"), _set(["banco_total"], 10)),
    "side player": (_first("coup/card", lambda p: p["role"] == "coup"), _set(["side"], "player")),
    "next_side as a string none": (_first("coup/current"), _set(["next_side"], "none")),
    "coup card without a side": (_first("coup/card", lambda p: p["role"] == "coup"), _set(["side"], None)),
    "burn card with a side": (_first("coup/card", lambda p: p["role"] == "burn"), _set(["side"], "punto")),
    "value not the card's": (_first("coup/card", lambda p: p["card"][0] == "K"), _set(["value"], 3)),
    "role unknown": (_first("coup/card"), _set(["role"], "discard")),
    "card source without its source": (_first("coup/current", lambda p: p["card_sources"]["punto"]),
                                      _del(["card_sources", "punto", 0, "source"])),
    "card source confidence 1.5": (_first("coup/current", lambda p: p["card_sources"]["punto"]),
                                   _set(["card_sources", "punto", 0, "confidence"], 1.5)),
    "card sources without banco": (_first("coup/current"), _del(["card_sources", "banco"])),
    "four card sources on a side": (_first("coup/current", lambda p: p["card_sources"]["punto"]),
                                    lambda p: p["card_sources"].update(punto=p["card_sources"]["punto"] * 4)),
    "complete with a next side": (_first("coup/current", _complete_with_cards), _set(["next_side"], "punto")),
    "winner player": (_first("coup/result"), _set(["winner"], "player")),
    "natural without its total": (_first("coup/result", lambda p: p["natural"]), _set(["natural_total"], None)),
    "natural_total without a natural": (_first("coup/result", lambda p: not p["natural"]),
                                        _set(["natural_total"], 8)),
    "seven cards in a result": (_first("coup/result"), _set(["cards"], 7)),
    "one card hand in a result": (_first("coup/result"), _truncate(["punto"], 1)),
    "21 coups of history": (_first("history", lambda p: p["coups"]), lambda p: p.update(coups=p["coups"] * 21)),
    "severity fatal": (_first("alerts/event"), _set(["alert", "severity"], "fatal")),
    "alert kind unknown": (_first("alerts/event"), _set(["alert", "kind"], "gremlins")),
    "action deleted": (_first("alerts/event"), _set(["action"], "deleted")),
    "cleared without cleared": (_first("alerts/event", lambda p: p["action"] == "cleared"),
                                _del(["alert", "cleared"])),
    "acknowledged without acknowledged": (_first("alerts/event", lambda p: p["action"] == "acknowledged"),
                                          _del(["alert", "acknowledged"])),
    "info alert active": (_first("alerts/active", lambda p: p["alerts"]), _set(["alerts", 0, "severity"], "info")),
    "cleared alert active": (_first("alerts/active", lambda p: p["alerts"]),
                             _set(["alerts", 0, "cleared"], {"by": "sup", "t": T0, "reason": ""})),
    "decks 5": (_first("shoe"), _set(["decks"], 5)),
    "cards not 52 x decks": (_first("shoe"), _set(["cards"], 400)),
    "negative remaining": (_first("shoe"), _set(["remaining"], -1)),
    "nine values": (_first("shoe"), _truncate(["remaining_by_value"], 9)),
    "51 codes": (_first("shoe"), _del(["remaining_by_code", "KC"])),
    "link sideways": (_first("sources", lambda p: "shoe" in p["sources"]), _set(["sources", "shoe", "link"], "sideways")),
    "link up without info": (_first("sources", lambda p: p["sources"].get("camera", {}).get("link") == "up"),
                             _del(["sources", "camera", "info"])),
    "status maybe": (_first("status", _status), _set(["state"], "maybe")),
    "road mark green": (_first("roads", lambda p: p["big_eye_boy"]["marks"] or p["ask_banco"]["big_eye_boy"]),
                        _set(["ask_banco", "big_eye_boy"], "green")),
    "big road cell without its coup": (_first("roads", lambda p: p["big_road"]["cells"]),
                                       _del(["big_road", "cells", 0, "coup"])),
    "bead plate winner player": (_first("roads", lambda p: p["bead_plate"]["cells"]),
                                 _set(["bead_plate", "cells", 0, "winner"], "player")),
    "missing naturals": (_first("stats"), _del(["naturals"])),
    "negative streak": (_first("stats"), _set(["current_streak", "length"], -1)),
    "odds without house_edge": (_first("odds", lambda p: p["available"]), _del(["house_edge"])),
    "probability 1.5": (_first("odds", lambda p: p["available"]), _set(["probability", "tie"], 1.5)),
    "odds unavailable without a reason": (_first("odds", lambda p: p["available"]),
                                          lambda p: p.update(available=False)),
}
# The wrong schema number, on every topic.
for _topic in sorted(ALL_TOPICS):
    MUTATIONS[f"schema 2 on {_topic}"] = (_first(_topic), _set(["schema"], 2))
MUTATIONS["schema as a string"] = (_first("coup/result"), _set(["schema"], "1"))
MUTATIONS["schema missing"] = (_first("alerts/active"), _del(["schema"]))


@pytest.mark.parametrize("name", sorted(MUTATIONS))
def test_the_schemas_reject_mutated_payloads(name, primary_session):
    (topic, where), mutate = MUTATIONS[name]
    _, seen = primary_session
    pool = payloads(seen, topic)
    if topic == topics.STATUS:
        pool = [json.loads(status_payload("online", TABLE_ID, __version__))]
    original = next((p for p in pool if where(p)), None)
    assert original is not None, f"the session published no {topic} payload to mutate for {name!r}"
    assert not errors(topic, original)
    mutated = copy.deepcopy(original)
    mutate(mutated)
    assert mutated != original
    assert errors(topic, mutated), f"the {topic} schema accepts a payload with {name}"


# ------------------------------------------------------------------ the documentation


def test_docs_mqtt_links_every_schema_file():
    text = MQTT_DOC.read_text(encoding="utf-8")
    missing = [name for name in sorted(DOCS) if f"schemas/{name}" not in text]
    assert not missing, f"docs/mqtt.md does not mention {missing}"


def test_docs_mqtt_payload_examples_validate():
    text = MQTT_DOC.read_text(encoding="utf-8")
    section = text.split("\n## Payloads\n", 1)
    assert len(section) == 2, "docs/mqtt.md has no '## Payloads' section"
    body = section[1].split("\n## ", 1)[0]
    examples: dict[str, list[str]] = {}
    for part in re.split(r"^### ", body, flags=re.M)[1:]:
        heading = re.match(r"`([^`]+)`", part)
        if heading:
            examples[heading.group(1)] = re.findall(r"^```json\n(.*?)^```", part, flags=re.M | re.S)
    assert set(examples) == set(ALL_TOPICS)
    for topic, blocks in examples.items():
        assert blocks, f"docs/mqtt.md has no example payload for {topic}"
        for block in blocks:
            check(topic, json.loads(block))
