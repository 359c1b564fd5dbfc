"""The HTTP API over real HTTP, against a running daemon (emulated shoe, Mosquitto, uvicorn).

One daemon serves the module (one per xdist worker). Each test starts and ends
between coups and takes coup ids from the table (``bets_open_for``), so the
tests pass in any order and any subset. The shoe deals only what a test
injects, so every coup and every payout is known in advance.
"""

from __future__ import annotations

import json

import pytest
from websockets.sync.client import connect

from shoe_daemon.api.audit import verify
from shoe_daemon.emulator import Disconnect
from tests.api.harness import ROLES, ws_messages

pytestmark = pytest.mark.timeout(90)

# Every write: (method, path, the role it needs, a valid body).
WRITES = [
    ("POST", "/coup/card", "dealer", {"card": "9H", "reason": "shoe could not read it"}),
    ("POST", "/bets", "dealer", {"bets": [{"seat": 1, "kind": "punto", "amount": "10"}], "reason": "layout"}),
    ("POST", "/alerts/1-1-1/clear", "supervisor", {"reason": "checked"}),
    ("POST", "/alerts/1-1-1/ack", "supervisor", {"reason": "seen"}),
    ("POST", "/coup/void", "supervisor", {"reason": "misdeal"}),
    ("POST", "/coup/resolve", "supervisor", {"reason": "checked the cards"}),
    ("POST", "/coup/correct", "supervisor", {"index": 0, "card": "KH", "reason": "misread"}),
    ("POST", "/shoe/new", "technician", {"reason": "new cards"}),
    ("POST", "/config/reload", "technician", {"reason": "limits changed"}),
]
# Token-protected reads.
PROTECTED_READS = [("/coups/1-1/settlement", ("dealer", "supervisor", "pit")),
                   ("/audit", ("supervisor", "pit", "technician"))]
# The pit boss opens every supervisor endpoint too.
OPENS = {"dealer": {"dealer"}, "supervisor": {"supervisor", "pit"}, "technician": {"technician"}}


def error_of(resp, status):
    assert resp.status_code == status, resp.text
    body = resp.json()
    assert set(body) == {"error"}, body
    err = body["error"]
    assert err["status"] == status and err["code"] and err["message"], err
    return err


def test_health_readiness_and_status(stack):
    assert stack.get("/healthz").json() == {"status": "ok"}
    ready = stack.get("/readyz")
    assert ready.status_code == 200, ready.text
    assert ready.json() == {"ready": True, "reasons": [],
                            "checks": {"journal": True, "shoe": True, "broker": True, "core": True}}
    status = stack.get("/status").json()
    assert status["table_id"] == "api-test" and status["version"]
    assert status["uptime_s"] > 0 and status["ready"] is True
    assert status["sources"]["shoe"]["link"] == "up"
    assert status["shoe_port"]["connected"] is True and status["shoe_port"]["reconnects"] >= 0
    assert status["broker"]["connected"] is True
    assert status["journal"]["open"] is True and status["journal"]["last_seq"] >= 1
    assert status["api"]["host"] == "127.0.0.1" and status["api"]["tokens"] == len(ROLES)


def test_openapi_schema_has_models_and_bearer_auth(stack):
    schema = stack.get("/openapi.json").json()
    paths = schema["paths"]
    for path in ("/healthz", "/readyz", "/status", "/coup/current", "/coups", "/coups/{coup_id}", "/shoe",
                 "/alerts", "/journal", "/metrics", "/coups/{coup_id}/settlement", "/audit"):
        assert "get" in paths[path], path
    for _method, path, _role, _body in WRITES:
        op = paths[path.replace("1-1-1", "{alert_id}")]["post"]
        assert op["requestBody"]["required"] is True
        assert {"200", "401", "403", "409", "422"} <= set(op["responses"])
        assert op["security"] == [{"HTTPBearer": []}]
    assert schema["components"]["securitySchemes"]["HTTPBearer"]["scheme"] == "bearer"
    ok = paths["/coups/{coup_id}"]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert ok == {"$ref": "#/components/schemas/CoupRecall"}
    assert "reason" in schema["components"]["schemas"]["Write"]["required"]
    assert stack.get("/docs").status_code == 200


@pytest.mark.parametrize("method,path,role,body", WRITES, ids=[w[1] for w in WRITES])
def test_every_write_needs_a_token_of_its_role(stack, method, path, role, body):
    journal_before = stack.last_seq()
    no_token = stack.http.request(method, path, json=body)
    err = error_of(no_token, 401)
    assert no_token.headers["www-authenticate"].startswith("Bearer")
    assert "bearer token" in err["message"]
    bad = stack.http.request(method, path, json=body, headers={"Authorization": "Bearer not-a-token"})
    error_of(bad, 401)
    assert 'error="invalid_token"' in bad.headers["www-authenticate"]
    basic = stack.http.request(method, path, json=body, headers={"Authorization": "Basic dXNlcjpwdw=="})
    error_of(basic, 401)
    for other in ("dealer", "supervisor", "pit", "technician"):
        if other in OPENS[role]:
            continue
        resp = stack.http.request(method, path, json=body, headers=stack.auth(other))
        err = error_of(resp, 403)
        assert f"has the role {other}; this needs {role}" in err["message"]
    assert stack.last_seq() == journal_before  # nothing refused was journaled


@pytest.mark.parametrize("path,roles", PROTECTED_READS)
def test_protected_reads(stack, path, roles):
    error_of(stack.get(path), 401)
    for role in ("dealer", "supervisor", "pit", "technician"):
        resp = stack.get(path, role)
        assert resp.status_code in ((200, 404) if role in roles else (403,)), (role, resp.text)


@pytest.mark.parametrize("path,role,body,where,words", [
    ("/coup/void", "supervisor", {}, "body.reason", "required"),
    ("/coup/void", "supervisor", {"reason": "   "}, "body.reason", "blank"),
    ("/coup/void", "supervisor", {"reason": "x", "coup": "1-1"}, "body.coup", "not a field"),
    ("/coup/void", "supervisor", {"reason": "x", "coup_id": "one"}, "body.coup_id", "coup id"),
    ("/coup/card", "dealer", {"card": "1X", "reason": "x"}, "body.card", "card code"),
    ("/coup/correct", "supervisor", {"index": 9, "card": "KH", "reason": "x"}, "body.index", "less than or equal"),
    ("/bets", "dealer", {"bets": [{"seat": 1, "kind": "punto", "amount": 10.5}], "reason": "x"},
     "body.bets.0.amount", "string"),
    ("/bets", "dealer", {"bets": [{"seat": 1, "kind": "punto", "amount": "-5"}], "reason": "x"},
     "body.bets.0.amount", "positive decimal amount"),
    ("/bets", "dealer", {"bets": [{"seat": 8, "kind": "punto", "amount": "10"}], "reason": "x"},
     "body.bets.0.seat", "less than or equal to 7"),
    ("/bets", "dealer", {"bets": [{"seat": 1, "kind": "dragon", "amount": "10"}], "reason": "x"},
     "body.bets.0.kind", "punto"),
    ("/shoe/new", "technician", {"decks": 5, "reason": "x"}, "body.decks", "4, 6 or 8"),
])
def test_bad_bodies_are_422_with_a_clear_message(stack, path, role, body, where, words):
    err = error_of(stack.post(path, body, role), 422)
    assert err["code"] == "invalid_request"
    assert err["message"].startswith(where + ":"), err
    assert words in err["message"], err
    assert err["details"][0]["loc"] == where


def test_malformed_json_is_422(stack):
    resp = stack.http.post("/coup/void", content=b"{not json", headers={**stack.auth("supervisor"),
                                                                      "Content-Type": "application/json"})
    err = error_of(resp, 422)
    assert "JSON" in err["message"]


def test_a_coup_is_dealt_and_recalled_with_its_cards_and_sources(stack):
    coup_id = stack.open_coup()
    shoe0 = stack.get("/shoe").json()
    stack.deal("2H", "8S", "3C", "KD")  # Punto 5, Banco 8 (natural): Banco
    current = stack.get("/coup/current").json()
    assert current["coup_id"] == coup_id and current["settled"] is True
    assert current["announce"] == "Punto 5, Banco 8" and current["bets_open_for"] == next_coup(coup_id)
    recall = stack.get(f"/coups/{coup_id}").json()
    assert recall["winner"] == "banco" and recall["natural"] is True
    assert recall["punto"] == ["2H", "3C"] and recall["banco"] == ["8S", "KD"]
    assert [c["card"] for c in recall["dealt"]] == ["2H", "8S", "3C", "KD"]
    assert recall["sources"] == ["shoe"] and all(c["source"] == "shoe" for c in recall["dealt"])
    assert recall["alerts"] == [] and recall["recorded"] > 0
    listing = stack.get("/coups", params={"last": 10}).json()["coups"]
    assert listing[-1]["coup_id"] == coup_id and len(listing) <= 10
    error_of(stack.get(f"/coups/{next_coup(coup_id)}"), 404)
    shoe = stack.get("/shoe").json()
    assert shoe["dealt"] == shoe0["dealt"] + 4 and shoe["remaining"] == shoe0["remaining"] - 4
    assert shoe["dealt_by_code"]["2H"] == shoe0["dealt_by_code"]["2H"] + 1
    assert shoe["remaining_by_code"]["2H"] == shoe0["remaining_by_code"]["2H"] - 1
    assert shoe["dealt_by_value"][0] == shoe0["dealt_by_value"][0] + 1
    assert shoe["dealt_by_value"][8] == shoe0["dealt_by_value"][8] + 1


def test_odds_roads_and_stats_follow_the_coups(stack):
    coup_id = stack.open_coup()
    before = stack.get("/stats").json()
    stack.deal("2H", "8S", "3C", "KD")  # Punto 5, Banco 8 (natural): Banco
    stats = stack.get("/stats").json()
    assert stats["banco"] == before["banco"] + 1
    roads = stack.get("/roads").json()
    assert roads["bead_plate"]["cells"][-1]["winner"] == "banco"
    odds = stack.get("/odds").json()
    shoe = stack.get("/shoe").json()
    assert odds["available"] is True and odds["cards"] == shoe["remaining"]
    assert odds["banco"] + odds["punto"] + odds["tie"] == odds["total"]
    assert 0 < odds["house_edge"]["banco"] < 0.05, odds["house_edge"]
    assert stack.get(f"/coups/{coup_id}").json()["winner"] == "banco"


def next_coup(coup_id: str) -> str:
    shoe, coup = coup_id.split("-")
    return f"{shoe}-{int(coup) + 1}"


def test_manual_card_is_refused_when_no_card_is_awaited(stack):
    before = stack.last_seq()
    err = error_of(stack.post("/coup/card", {"card": "9H", "reason": "try"}, "dealer"), 409)
    assert err["code"] == "rejected"
    assert "no card is awaited" in err["message"]
    assert err["journal_seq"] == before + 1  # journaled like any event, and refused by the core
    assert err["alert"]["kind"] == "action_rejected"


def test_bets_are_checked_against_the_limits(stack):
    over = stack.post("/bets", {"reason": "layout", "bets": [
        {"seat": 3, "kind": "punto", "amount": "600"},
        {"seat": 4, "kind": "tie", "amount": "2"},
    ]}, "dealer")
    err = error_of(over, 422)
    assert err["code"] == "over_limit"
    assert "seat 3: punto bet 600 is above the table maximum 500" in err["message"]
    assert "seat 4: tie bet 2 is below the table minimum 5" in err["message"]
    assert {(v["seat"], v["limit"]) for v in err["violations"]} == {(3, "max"), (4, "min")}
    total = stack.post("/bets", {"reason": "layout", "bets": [
        {"seat": s, "kind": "banco", "amount": "300"} for s in (1, 2, 5, 7)]}, "dealer")
    err = error_of(total, 422)
    assert err["violations"] == [{"seat": None, "kind": "banco", "amount": "1200", "limit": "table_max",
                                  "bound": "1000", "message": err["violations"][0]["message"]}]
    assert "banco bets total 1200 (seats 1, 2, 5, 7) is above the table maximum 1000" in err["message"]
    zero = error_of(stack.post("/bets", {"reason": "x", "bets": [{"seat": 2, "kind": "tie", "amount": "0"}]},
                               "dealer"), 422)
    # "0" is refused by the published schema's pattern itself (the schema and the code agree).
    assert zero["details"][0]["loc"] == "body.bets.0.amount" and "positive decimal" in zero["message"]
    open_ = stack.open_coup()
    later = next_coup(next_coup(open_))
    wrong = error_of(stack.post("/bets", {"reason": "x", "coup_id": later, "bets": []}, "dealer"), 409)
    assert f"bets are open for coup {open_}, not {later}" in wrong["message"]


BETS = [  # seven boxes, every kind
    {"seat": 1, "kind": "punto", "amount": "20"},
    {"seat": 2, "kind": "banco", "amount": "20"},
    {"seat": 3, "kind": "tie", "amount": "10"},
    {"seat": 4, "kind": "banco", "amount": "12.50"},
    {"seat": 5, "kind": "punto", "amount": "500"},
    {"seat": 6, "kind": "tie", "amount": "5"},
    {"seat": 7, "kind": "banco", "amount": "100"},
]


def test_bets_settle_a_tie_after_a_manual_card_for_an_unreadable_one(stack):
    api_cards = stack.metric('shoe_cards_read_total{source="api"}')
    unreadable = stack.metric('shoe_cards_unreadable_total{source="shoe"}')
    coup_id = stack.open_coup()
    placed = stack.post("/bets", {"reason": "layout", "bets": BETS}, "dealer")
    assert placed.status_code == 200, placed.text
    body = placed.json()
    assert body["coup_id"] == coup_id
    assert body["totals"] == {"punto": "520", "banco": "132.5", "tie": "15"}
    assert body["limits"]["tie"] == {"min": "5", "max": "100", "table_max": "200"}
    open_ = stack.get(f"/coups/{coup_id}/settlement", "dealer").json()
    assert open_["status"] == "open" and len(open_["bets"]) == 7 and open_["placed"]["by"] == "dealer-1"

    # Banco's first card leaves the shoe unread; the shoe's next cards wait behind it.
    stack.deal("9H", "9S", "KH", "TC", unreadable=(1,))
    current = stack.get("/coup/current").json()
    assert current["awaiting"] == {"unreadable": 1, "queued_cards": 2}
    active = stack.get("/alerts", params={"state": "active"}).json()["active"]
    unread = [a for a in active if a["kind"] == "card_unreadable"]
    assert len(unread) == 1

    done = stack.post("/coup/card", {"card": "9S", "reason": "read it off the table"}, "dealer")
    assert done.status_code == 200, done.text
    result = done.json()
    cards = [m["payload"] for m in result["messages"] if m["topic"] == "coup/card"]
    assert [(c["card"], c["source"]) for c in cards] == [("9S", "api"), ("KH", "shoe"), ("TC", "shoe")]
    assert cards[0]["fills_unreadable"] == stack.counter - 2 and cards[0]["user"] == "dealer-1"
    cleared = [a for a in result["alerts"] if a["action"] == "cleared"]
    assert cleared[0]["id"] == unread[0]["id"] and cleared[0]["cleared"]["by"] == "dealer-1"
    assert result["coup"]["settled"] is True and result["coup"]["punto_total"] == 9
    # GET /coup/current says who read each card: the person's card among the shoe's.
    sources = stack.get("/coup/current").json()["card_sources"]
    assert sources == {"punto": [{"source": "shoe"}, {"source": "shoe"}], "banco": [{"source": "api"}, {"source": "shoe"}]}

    recall = stack.get(f"/coups/{coup_id}").json()
    assert recall["winner"] == "tie" and recall["punto"] == ["9H", "KH"] and recall["banco"] == ["9S", "TC"]
    assert recall["sources"] == ["api", "shoe"]
    assert "card_unreadable" in [a["kind"] for a in recall["alerts"]]
    settled = stack.get(f"/coups/{coup_id}/settlement", "supervisor").json()
    assert recall["settlement"] == settled
    assert settled["status"] == "settled" and settled["winner"] == "tie" and settled["revision"] == 0
    got = {b["seat"]: (b["outcome"], b["won"], b["returned"], b["net"]) for b in settled["bets"]}
    assert got == {
        1: ("push", "0", "20", "0"),        # Punto and Banco are returned on a tie
        2: ("push", "0", "20", "0"),
        3: ("win", "80", "90", "80"),       # Tie pays 8:1
        4: ("push", "0", "12.5", "0"),
        5: ("push", "0", "500", "0"),
        6: ("win", "40", "45", "40"),
        7: ("push", "0", "100", "0"),
    }
    assert settled["totals"] == {"staked": "667.5", "won": "120", "returned": "787.5", "net": "120"}
    assert stack.metric('shoe_cards_read_total{source="api"}') == api_cards + 1
    assert stack.metric('shoe_cards_unreadable_total{source="shoe"}') == unreadable + 1


def test_bets_settle_punto_and_banco_at_19_to_20(stack):
    punto_coup = stack.open_coup()
    resp = stack.post("/bets", {"reason": "layout", "bets": BETS, "coup_id": punto_coup}, "dealer")
    assert resp.status_code == 200, resp.text
    stack.deal("4D", "6H", "3S", "QC")  # Punto 7 and Banco 6 both stand: Punto
    assert stack.get(f"/coups/{punto_coup}").json()["winner"] == "punto"
    banco_coup = stack.open_coup()
    stack.post("/bets", {"reason": "layout", "bets": BETS}, "dealer").raise_for_status()
    stack.deal("3H", "7D", "KS", "JH", "AC")  # Punto 3 draws AC -> 4; Banco 7 stands: Banco
    settled = stack.get(f"/coups/{banco_coup}/settlement", "dealer").json()
    assert settled["winner"] == "banco"
    got = {b["seat"]: (b["outcome"], b["won"], b["returned"]) for b in settled["bets"]}
    assert got[2] == ("win", "19", "39")            # 19:20 on Banco
    assert got[4] == ("win", "11.875", "24.375")     # exact decimals, no rounding
    assert got[7] == ("win", "95", "195")
    assert got[1] == ("lose", "0", "0") and got[3] == ("lose", "0", "0")
    punto = {b["seat"]: b["outcome"] for b in stack.get(f"/coups/{punto_coup}/settlement", "dealer").json()["bets"]}
    assert punto == {1: "win", 2: "lose", 3: "lose", 4: "lose", 5: "win", 6: "lose", 7: "lose"}


def test_correct_then_void_keeps_the_original_reading_and_returns_the_bets(stack):
    coup_id = stack.open_coup()
    stack.post("/bets", {"reason": "layout", "bets": BETS[:2]}, "dealer").raise_for_status()
    stack.deal("5H", "6D")
    corrected = stack.post("/coup/correct", {"index": 0, "card": "4H", "reason": "the shoe misread it"},
                           "supervisor")
    assert corrected.status_code == 200, corrected.text
    alert = next(a for a in corrected.json()["alerts"] if a["kind"] == "card_corrected")
    assert alert["evidence"]["original"] == "5H" and alert["evidence"]["corrected"] == "4H"
    assert corrected.json()["coup"]["punto"] == ["4H"]

    before = stack.last_seq()
    other = next_coup(coup_id)
    stale = error_of(stack.post("/coup/void", {"reason": "x", "coup_id": other}, "supervisor"), 409)
    assert f"the current coup is {coup_id}, not {other}" in stale["message"]
    assert stack.last_seq() == before  # refused by the API: never reached the journal
    voided = stack.post("/coup/void", {"reason": "misdeal", "coup_id": coup_id}, "supervisor")
    assert voided.status_code == 200, voided.text
    assert voided.json()["coup"]["voided"] is True
    again = error_of(stack.post("/coup/void", {"reason": "twice"}, "supervisor"), 409)
    assert "already void" in again["message"] and again["journal_seq"] > voided.json()["journal_seq"]

    recall = stack.get(f"/coups/{coup_id}").json()
    assert recall["voided"] is True and recall["reason"] == "misdeal"
    assert [c["card"] for c in recall["dealt"]] == ["5H", "6D"]   # as read
    assert recall["punto"] == ["4H"]                              # as corrected
    assert {"card_corrected", "coup_voided"} <= {a["kind"] for a in recall["alerts"]}
    void = recall["settlement"]
    assert void["status"] == "void"
    assert [(b["outcome"], b["returned"]) for b in void["bets"]] == [("void", "20"), ("void", "20")]


def test_a_held_coup_is_resolved_and_its_alert_acknowledged_and_cleared(stack):
    errors = stack.metric('shoe_dealing_errors_total{kind="out_of_order"}')
    error_of(stack.post("/coup/resolve", {"reason": "nothing held"}, "supervisor"), 409)
    coup_id = stack.open_coup()
    stack.deal("8C")
    stack.counter += 1  # the shoe's counter skips one: out of order, the coup is held
    stack.deal("2C")
    current = stack.get("/coup/current").json()
    assert current["held"] is True and current["coup_id"] == coup_id
    alert = [a for a in stack.get("/alerts").json()["active"] if a["kind"] == "out_of_order"][-1]
    resolved = stack.post("/coup/resolve", {"reason": "counter glitch, cards checked"}, "supervisor")
    assert resolved.status_code == 200, resolved.text
    assert [a["kind"] for a in resolved.json()["alerts"]] == ["coup_resolved"]
    stack.deal("9D", "KC")  # Punto 8+9 = 7 stands, Banco 2+K = 2 draws
    stack.deal("AD")
    assert stack.get(f"/coups/{coup_id}").json()["winner"] == "punto"
    assert stack.metric('shoe_dealing_errors_total{kind="out_of_order"}') == errors + 1

    ack = stack.post(f"/alerts/{alert['id']}/ack", {"reason": "seen"}, "supervisor")
    assert ack.status_code == 200, ack.text
    active = stack.get("/alerts", params={"state": "active"}).json()["active"]
    assert next(a for a in active if a["id"] == alert["id"])["acknowledged"]["by"] == "supervisor-1"
    clear = stack.post(f"/alerts/{alert['id']}/clear", {"reason": "counter checked"}, "supervisor")
    assert clear.status_code == 200, clear.text
    alerts = stack.get("/alerts").json()
    assert alert["id"] not in [a["id"] for a in alerts["active"]]
    past = next(a for a in alerts["past"] if a["id"] == alert["id"])
    assert past["cleared"] == {"by": "supervisor-1", "t": past["cleared"]["t"], "reason": "counter checked"}
    again = error_of(stack.post(f"/alerts/{alert['id']}/clear", {"reason": "twice"}, "supervisor"), 409)
    assert "no active alert" in again["message"]
    error_of(stack.post(f"/alerts/{alert['id']}/ack", {"reason": "late"}, "supervisor"), 409)


def test_websocket_stream_carries_what_mqtt_gets(stack):
    url = f"ws://127.0.0.1:{stack.api_port}/stream"
    # max_queue=None: messages left unread must not hold back the closing handshake.
    with connect(url, max_queue=None) as ws, connect(url + "?topic=coup/card&retained=false",
                                                     max_queue=None) as cards_only:
        retained = ws_messages(ws, 50, timeout=1.0, where=lambda m: m["retained"])
        assert {"coup/current", "shoe", "alerts/active", "sources", "history"} <= {m["topic"] for m in retained}
        assert all(m["retain"] for m in retained)
        stack.deal("7H", "7S", "QD", "QS")  # 7 and 7: both stand, a tie
        live = ws_messages(ws, 4, where=lambda m: m["topic"] == "coup/card")
        assert [m["payload"]["card"] for m in live] == ["7H", "7S", "QD", "QS"]
        assert all(m["payload"]["type"] == "card" and m["payload"]["table_id"] == "api-test" for m in live)
        result = ws_messages(ws, 1, where=lambda m: m["topic"] == "coup/result")
        assert result[0]["payload"]["winner"] == "tie"
        only = ws_messages(cards_only, 4, timeout=2.0)
        assert [m["topic"] for m in only] == ["coup/card"] * 4
        seqs = [m["payload"]["seq"] for m in live]
        assert seqs == sorted(seqs)


def test_journal_is_paged_and_api_events_carry_who_and_why(stack):
    stack.post("/bets", {"reason": "layout", "bets": BETS[:1]}, "dealer").raise_for_status()
    stack.deal("2H", "8S", "3C", "KD")  # at least 6 events in the journal
    first = stack.get("/journal", params={"after": 0, "limit": 5}).json()
    assert [e["seq"] for e in first["events"]] == [1, 2, 3, 4, 5] and first["next_after"] == 5
    second = stack.get("/journal", params={"after": first["next_after"], "limit": 5}).json()
    assert second["events"][0]["seq"] == 6
    tail = stack.get("/journal", params={"last": 50}).json()
    assert tail["events"][-1]["seq"] == tail["last_seq"]
    api = [e for e in tail["events"] if e["source"] == "api"]
    for e in api:
        assert e["data"]["user"] and e["data"]["reason"] and e["data"]["role"] in ("dealer", "supervisor",
                                                                                    "technician")
    bets = [e for e in api if e["kind"] == "bets"][-1]
    assert bets["data"]["user"] == "dealer-1" and bets["data"]["reason"] == "layout"
    assert bets["data"]["limits"]["banco"]["max"] == "500"   # the limits in force go with the bets
    error_of(stack.get("/journal", params={"limit": 0}), 422)


def test_metrics(stack):
    stack.deal("2H", "8S", "3C", "KD")
    resp = stack.get("/metrics")
    assert resp.status_code == 200 and resp.headers["content-type"].startswith("text/plain")
    text = resp.text
    for needle in (
        'shoe_cards_read_total{source="shoe"}',
        'shoe_events_processed_total{kind="card",source="shoe"}',
        "shoe_journal_append_seconds_bucket",
        "shoe_publish_seconds_count",
        "shoe_mqtt_queue_depth",
        "shoe_mqtt_connected 1.0",
        'shoe_port_reconnects_total{port=',
        'shoe_port_connected{port=',
        'shoe_source_link_up{source="shoe"} 1.0',
        'shoe_source_active{source="shoe"} 1.0',
        'shoe_coups_settled_total{winner="banco"}',
        'shoe_alerts_active{severity="error"}',
        "shoe_ready 1.0",
        'shoe_api_requests_total{method="GET",route="/journal",status="200"}',
        "# TYPE shoe_dealing_errors_total counter",
        "# TYPE shoe_alerts_total counter",
    ):
        assert needle in text, needle
    assert "python_gc_objects_collected_total" not in text  # its own registry, not the global one


def test_shoe_unplugged_not_ready_and_cards_entered_by_hand(stack):
    reconnects = stack.get("/status").json()["shoe_port"]["reconnects"]
    coup_id = stack.open_coup()
    stack.shoe.inject(Disconnect(1.5))
    not_ready = stack.wait(lambda: (r := stack.get("/readyz")).status_code == 503 and r, 5, "readyz 503")
    body = not_ready.json()
    assert body["ready"] is False and body["checks"]["shoe"] is False and body["checks"]["journal"] is True
    assert body["reasons"] and body["reasons"][0].startswith("shoe: ")
    stack.wait(lambda: stack.get("/status").json()["sources"]["shoe"]["link"] == "down", 5, "the link down")
    for code in ("7C", "7D", "KC", "KD"):  # the dealer goes on by hand: 7 and 7, a tie
        resp = stack.post("/coup/card", {"card": code, "reason": "shoe unplugged"}, "dealer")
        assert resp.status_code == 200, resp.text
    recall = stack.get(f"/coups/{coup_id}").json()
    assert recall["winner"] == "tie" and recall["sources"] == ["api"]
    stack.wait(lambda: stack.get("/readyz").status_code == 200, 10, "the shoe to come back")
    status = stack.get("/status").json()
    assert status["shoe_port"]["reconnects"] == reconnects + 1 and status["sources"]["shoe"]["link"] == "up"


def test_new_shoe(stack):
    stack.deal("2H", "8S", "3C", "KD")  # (a new shoe replacing an untouched one keeps its number)
    shoe = stack.get("/shoe").json()["shoe"]
    resp = stack.post("/shoe/new", {"reason": "fresh cards", "decks": 6}, "technician")
    assert resp.status_code == 200, resp.text
    now = stack.get("/shoe").json()
    assert now["shoe"] == shoe + 1 and now["decks"] == 6 and now["dealt"] == 0 and now["remaining"] == 312
    assert stack.get("/coup/current").json()["bets_open_for"] == f"{shoe + 1}-1"
    stack.deal("7C", "7D", "KC", "KD")
    assert stack.get(f"/coups/{shoe + 1}-1").json()["winner"] == "tie"
    assert stack.get("/coups", params={"shoe": shoe + 1}).json()["coups"][0]["coup_id"] == f"{shoe + 1}-1"
    resp = stack.post("/shoe/new", {"reason": "back to eight decks"}, "technician")
    assert resp.status_code == 200, resp.text
    assert stack.get("/shoe").json()["decks"] == 8


def test_recall_and_settlement_survive_a_restart(stack):
    coup_id = stack.open_coup()
    stack.post("/bets", {"reason": "layout", "bets": BETS}, "dealer").raise_for_status()
    stack.deal("3H", "7D", "KS", "JH", "AC")  # Banco
    recall = stack.get(f"/coups/{coup_id}").json()
    settlement = stack.get(f"/coups/{coup_id}/settlement", "dealer").json()
    last_seq = stack.last_seq()
    stack.restart()
    assert stack.get(f"/coups/{coup_id}").json() == recall
    assert stack.get(f"/coups/{coup_id}/settlement", "dealer").json() == settlement
    assert stack.last_seq() >= last_seq and stack.open_coup() == next_coup(coup_id)
    stack.deal("2H", "8S", "3C", "KD")  # the shoe deals on after the restart
    assert stack.get(f"/coups/{next_coup(coup_id)}").json()["winner"] == "banco"
    ok, _lines, problem = verify(stack.get("/audit", "supervisor").json()["path"])
    assert ok, problem


def test_audit_log_has_who_when_why_and_a_chain(stack):
    stack.post("/coup/void", {"reason": "not mine"}, "dealer")                               # forbidden
    stack.post("/bets", {"reason": "too much", "bets": [{"seat": 1, "kind": "tie", "amount": "900"}]},
               "dealer")                                                                      # refused
    stack.post("/coup/card", {"card": "9H", "reason": "nothing awaited"}, "dealer")           # rejected
    done = stack.post("/bets", {"reason": "layout", "bets": BETS[:1]}, "dealer").json()      # done
    entries = stack.get("/audit", "technician", params={"last": 4}).json()
    got = [(e["action"], e["outcome"], e["status"], e["user"]) for e in entries["entries"]]
    assert got == [("POST /coup/void", "forbidden", 403, "dealer-1"), ("bets", "refused", 422, "dealer-1"),
                   ("manual_card", "rejected", 409, "dealer-1"), ("bets", "done", 200, "dealer-1")]
    last = entries["entries"][-1]
    assert last["role"] == "dealer" and last["reason"] == "layout" and last["t"] > 0
    assert last["journal_seq"] == done["journal_seq"] and last["request"]["path"] == "/bets"
    assert last["data"]["bets"] == BETS[:1]
    ok, lines, problem = verify(entries["path"])
    assert ok, problem
    assert lines >= 4


def test_config_reload_applies_limits_and_tokens_and_reports_restarts(stack):
    old_dealer, old_limits = stack.tokens["dealer"], stack.limits
    try:
        stack.tokens["dealer"] = "rotated-dealer-token"
        stack.limits = {**stack.limits, "tie": {"min": "5", "max": "50", "table_max": "200"}}
        stack.write_config()
        text = stack.config_path.read_text().replace("[mqtt]\n", "[mqtt]\nkeepalive = 45\n")
        stack.config_path.write_text(text)
        resp = stack.post("/config/reload", {"reason": "tie limit lowered, dealer token rotated"}, "technician")
        assert resp.status_code == 200, resp.text
        body = resp.json()
        assert body["applied"] == ["api.tokens", "table.limits.tie.max"]
        assert body["restart_needed"] == ["mqtt.keepalive"]
        error_of(stack.http.post("/bets", json={"reason": "x", "bets": []},
                                 headers={"Authorization": f"Bearer {old_dealer}"}), 401)
        over = error_of(stack.post("/bets", {"reason": "x", "bets": [{"seat": 1, "kind": "tie", "amount": "60"}]},
                                   "dealer"), 422)
        assert "above the table maximum 50" in over["message"]
        journaled = stack.get("/journal", params={"last": 5}).json()["events"]
        reload_event = next(e for e in journaled if e["kind"] == "config_reload")
        assert reload_event["data"]["user"] == "technician-1" and "rotated-dealer-token" not in json.dumps(journaled)

        stack.config_path.write_text(text.replace("decks = 8", "decks = 7"))
        broken = error_of(stack.post("/config/reload", {"reason": "typo"}, "technician"), 409)
        assert broken["code"] == "config_invalid" and "table.decks" in broken["message"]
        assert "nothing was applied" in broken["message"]
    finally:  # back to the module's configuration, for the tests that run after this one
        stack.tokens["dealer"], stack.limits = old_dealer, old_limits
        stack.write_config()
        restored = stack.post("/config/reload", {"reason": "test over"}, "technician")
        assert restored.status_code == 200, restored.text
        assert restored.json()["restart_needed"] == []


def test_the_pit_boss_resolves_a_held_coup_that_a_dealer_may_not(stack):
    stack.deal("9H", "2C")
    stack.deal("KS", unreadable=(0,))                    # waits for a person: the coup stops
    refused = stack.post("/coup/void", {"reason": "misdeal"}, "dealer")
    assert error_of(refused, 403)["message"].endswith("this needs supervisor, pit")
    voided = stack.post("/coup/void", {"reason": "misdeal, checked by the pit"}, "pit")
    assert voided.status_code == 200, voided.text
    assert stack.get("/auth/whoami", "pit").json()["role"] == "pit"
    entries = stack.get("/audit", "pit").json()["entries"]
    assert any(e["role"] == "pit" and e["action"] == "void_coup" for e in entries)
