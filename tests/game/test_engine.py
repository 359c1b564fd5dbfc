"""The dealing engine: announcements, closing, cut card, burn, every alert and policy, supervisor actions."""

from __future__ import annotations

import dataclasses
import json

import pytest

from shoe_daemon.game.alerts import Alert, AlertKind, Severity
from shoe_daemon.game.cards import ALL_CODES, CardCodeError, parse_card
from shoe_daemon.game.coup import CoupResult, CoupSnapshot, Winner
from shoe_daemon.game.engine import (
    CardRecord,
    DealingEngine,
    EngineError,
    Role,
    Step,
    TableRules,
)
from shoe_daemon.game.shoe import ShoeState
from shoe_daemon.game.tableau import Side

P, B = Side.PUNTO, Side.BANCO

NATURAL = "8H 2S KH 3S"        # Punto natural 8 against 5: 4 cards
FIVE = "2H 3S 2S 3D 9C"        # Punto 4 draws 9 (3); Banco 6 stands on a 9: 5 cards
SIX = "2H 3S 2S TD 7C 9D"      # Punto 4 draws 7 (1); Banco 3 draws on a 7 (2): 6 cards
STAND = "3H 3S 3D 3C"          # 6 against 6, both stand: 4 cards


def engine(**rules) -> DealingEngine:
    return DealingEngine(TableRules(**rules))


def deal(e: DealingEngine, text: str, **kw) -> list[Step]:
    return [e.deal(c, **kw) for c in text.split()]


def kinds(step_or_steps) -> list[str]:
    steps = step_or_steps if isinstance(step_or_steps, list) else [step_or_steps]
    return [a.kind.value for s in steps for a in s.alerts]


def only_alert(step: Step, kind: AlertKind) -> Alert:
    found = [a for a in step.alerts if a.kind is kind]
    assert len(found) == 1, step.alerts
    return found[0]


# ------------------------------------------------------------------ announcements


def test_every_card_announces_both_totals_and_the_next_side():
    e = engine()
    steps = deal(e, SIX)
    assert [(s.snapshot.punto_total, s.snapshot.banco_total, s.snapshot.next_side) for s in steps] == [
        (2, 0, B), (2, 3, P), (4, 3, B), (4, 3, P), (1, 3, B), (1, 2, None)]
    assert [s.record.side for s in steps] == [P, B, P, B, P, B]
    assert [s.record.index for s in steps] == [0, 1, 2, 3, 4, 5]
    assert [s.record.seq for s in steps] == [1, 2, 3, 4, 5, 6]
    assert [(s.record.punto_total, s.record.banco_total) for s in steps][-1] == (1, 2)
    assert all(s.result is None for s in steps[:-1])
    r = steps[-1].result
    assert [c.code for c in r.punto] == ["2H", "2S", "7C"] and [c.code for c in r.banco] == ["3S", "TD", "9D"]
    assert (r.punto_total, r.banco_total, r.winner, r.cards, r.coup_id) == (1, 2, Winner.BANCO, 6, "1-1")
    snap = steps[-1].snapshot
    assert snap.complete and snap.settled and not snap.held and not snap.voided


def test_cards_as_codes_or_cards_and_recorded_inputs():
    e = engine()
    s = e.deal(parse_card("8H"), source="camera", t=12.5)
    s2 = e.deal("2s", t=13.0)
    assert s.record.card is parse_card("8H") and s2.record.card is parse_card("2S")
    assert (s.record.source, s.record.t, s2.record.source) == ("camera", 12.5, "shoe")
    with pytest.raises(CardCodeError):
        e.deal("ZZ")
    assert e.snapshot().punto_total == 8 and e.shoe_state().dealt == 2  # the bad code changed nothing


def test_auto_closing_next_card_opens_the_next_coup():
    e = engine()
    steps = deal(e, NATURAL + " " + STAND)
    assert steps[3].result.coup == 1 and steps[3].result.natural
    assert steps[4].snapshot.coup == 2 and steps[4].record.coup == 2 and steps[4].record.index == 0
    assert steps[7].result.coup_id == "1-2" and steps[7].result.winner is Winner.TIE
    assert e.shoe_state().coups == 2 and e.shoe_state().dealt == 8


def test_snapshot_before_any_card():
    snap = engine().snapshot()
    assert (snap.coup, snap.coup_id, snap.punto, snap.next_side, snap.complete) == (1, "1-1", (), P, False)


# ---------------------------------------------------------------------- closing


def test_confirm_closing_settles_on_close():
    e = engine(closing="confirm")
    steps = deal(e, NATURAL)
    assert steps[-1].result is None
    snap = steps[-1].snapshot
    assert snap.complete and not snap.settled and snap.next_side is None
    step = e.close_coup(t=5.0)
    assert step.result.coup_id == "1-1" and step.snapshot.settled and step.alerts == ()
    assert e.close_coup().result is None  # a second close does nothing
    assert e.deal("AS").record.coup == 2


def test_confirm_extra_card_holds_the_coup():
    e = engine(closing="confirm")
    deal(e, NATURAL)
    step = e.deal("9D", counter=None, t=7.0)
    alert = only_alert(step, AlertKind.EXTRA_CARD)
    assert alert.severity is Severity.ERROR and alert.id == "1-1-1" and alert.t == 7.0
    assert alert.evidence["card"] == "9D" and alert.evidence["cards"] == 4
    assert alert.evidence["punto"] == ["8H", "KH"] and alert.evidence["banco"] == ["2S", "3S"]
    assert step.record.role is Role.EXTRA and step.record.side is None and step.record.coup == 1
    assert step.snapshot.held and step.snapshot.punto == (parse_card("8H"), parse_card("KH"))
    state = e.shoe_state()
    assert (state.dealt, state.discarded, state.remaining) == (4, 1, 416 - 5)
    assert e.close_coup().result is None            # held: the close is remembered, not settled
    step = e.resolve("card was a burn", t=9.0)
    assert kinds(step) == ["coup_resolved"] and step.result.coup_id == "1-1"
    assert step.alerts[0].evidence["reason"] == "card was a burn"


def test_confirm_extra_card_resolve_before_close():
    e = engine(closing="confirm")
    deal(e, NATURAL + " 9D")
    assert e.resolve().result is None               # not closed yet
    assert e.close_coup().result.coup == 1


def test_confirm_extra_card_policy_continue_settles_and_opens_next_coup():
    e = engine(closing="confirm", on_error="continue")
    deal(e, NATURAL)
    step = e.deal("9D")
    assert kinds(step) == ["extra_card"]
    assert step.result.coup_id == "1-1"
    assert step.record.role is Role.COUP and step.record.coup == 2 and step.record.side is P
    assert step.snapshot.coup == 2 and not step.snapshot.held


def test_confirm_extra_card_policy_continue_after_the_last_hand():
    e = engine(closing="confirm", on_error="continue")
    deal(e, NATURAL)
    e.cut_card()
    step = e.deal("9D")                                  # settles the last hand; the card is too late
    assert kinds(step) == ["extra_card", "after_last_hand"]
    assert step.result.last_hand and step.record.role is Role.EXTRA and e.shoe_state().shoe_over


def test_confirm_extra_card_policy_void():
    e = engine(closing="confirm", on_error="void")
    deal(e, NATURAL)
    step = e.deal("9D")
    assert kinds(step) == ["extra_card", "coup_voided"]
    assert step.snapshot.voided and not step.snapshot.settled and step.result is None
    voided = only_alert(step, AlertKind.COUP_VOIDED)
    assert "1-1-1" in voided.evidence["reason"]
    assert e.deal("AS").snapshot.coup == 2


def test_missing_card_on_close_hold():
    e = engine(closing="confirm")
    deal(e, "2H 3S 2S")
    step = e.close_coup(t=3.0)
    alert = only_alert(step, AlertKind.MISSING_CARD)
    assert alert.severity is Severity.ERROR
    assert alert.evidence["due"] == "banco" and alert.evidence["cards"] == 3
    assert step.snapshot.held and not step.snapshot.complete
    steps = deal(e, "3D 9C")                          # the missing cards arrive: still held
    assert steps[-1].snapshot.complete and steps[-1].result is None
    assert e.resolve().result is None                 # confirm: the dealer closes again
    assert e.close_coup().result.cards == 5


def test_missing_card_policy_continue_refuses_the_close():
    e = engine(closing="confirm", on_error="continue")
    deal(e, "2H 3S 2S")
    step = e.close_coup()
    assert kinds(step) == ["missing_card"] and not step.snapshot.held and not step.snapshot.voided
    deal(e, "3D 9C")
    assert e.close_coup().result.cards == 5


def test_missing_card_policy_void():
    e = engine(closing="confirm", on_error="void")
    deal(e, "2H 3S 2S")
    step = e.close_coup()
    assert kinds(step) == ["missing_card", "coup_voided"] and step.snapshot.voided
    assert e.deal("AS").snapshot.coup == 2


def test_missing_card_in_auto_mode_on_explicit_close():
    e = engine()
    deal(e, "2H 3S")
    assert kinds(e.close_coup()) == ["missing_card"]
    assert e.close_coup().alerts[0].evidence["due"] == "punto"


# ----------------------------------------------------------------- dealing errors


def test_wrong_side_hold_then_resolve():
    e = engine()
    step = e.deal("2H", side="banco")
    alert = only_alert(step, AlertKind.WRONG_SIDE)
    assert alert.evidence == {"card": "2H", "seq": 1, "index": 0, "expected": "punto", "reported": "banco"}
    assert step.record.side is P and step.record.reported_side is B  # the tableau places the card
    assert step.snapshot.held
    steps = deal(e, "3S 2S 3D 9C", side=None)
    assert steps[-1].snapshot.complete and steps[-1].result is None  # held: not settled
    assert e.deal(parse_card("KD")).alerts[0].kind is AlertKind.EXTRA_CARD  # nothing due while held
    step = e.resolve("croupier moved it")
    assert step.result.cards == 5 and step.result.coup == 1
    assert e.deal("AS").snapshot.coup == 2


def test_right_side_raises_nothing_and_continue_policy_settles():
    e = engine(on_error="continue")
    steps = [e.deal(c, side=s) for c, s in zip(FIVE.split(), [P, "banco", "Punto", B, P], strict=True)]
    assert kinds(steps) == []
    step = engine(on_error="continue").deal("2H", side=B)
    assert kinds(step) == ["wrong_side"] and not step.snapshot.held
    with pytest.raises(ValueError, match="side"):
        engine().deal("2H", side="left")


def test_out_of_order_gap_and_step_back():
    e = engine(on_error="continue")
    assert kinds(deal(e, "2H", counter=1) + deal(e, "3S", counter=2)) == []
    step = e.deal("2S", counter=5)
    alert = only_alert(step, AlertKind.OUT_OF_ORDER)
    assert alert.evidence["problem"] == "gap" and alert.evidence["expected"] == 3
    assert alert.evidence["difference"] == 2 and alert.evidence["previous"] == 2
    assert "2 card(s)" in alert.message
    step = e.deal("3D", counter=5)
    alert = only_alert(step, AlertKind.OUT_OF_ORDER)
    assert alert.evidence["problem"] == "step_back" and alert.evidence["difference"] == -1
    assert kinds(e.deal("9C", counter=6)) == []       # back in sequence
    assert step.record.counter == 5
    e.new_shoe()
    assert kinds(e.deal("AS", counter=1)) == []       # a new shoe has a new baseline


def test_out_of_order_holds_under_hold():
    e = engine()
    e.deal("2H", counter=10)
    assert e.deal("3S", counter=12).snapshot.held


def test_impossible_card():
    e = engine(decks=4, on_error="continue")
    steps = deal(e, "AS AS AS AS")
    assert kinds(steps) == []
    step = e.deal("AS")                                # Punto 2 draws: a fifth ace of spades
    alert = only_alert(step, AlertKind.IMPOSSIBLE_CARD)
    assert alert.severity is Severity.CRITICAL
    assert alert.evidence["seen"] == 5 and alert.evidence["shoe_holds"] == 4 and alert.evidence["card"] == "AS"
    assert step.record.side is P                       # it is on the layout all the same
    assert e.shoe_state().remaining_by_code["AS"] == 0 and e.shoe_state().remaining == 208 - 4
    held = engine(decks=4)
    deal(held, "AS AS AS AS")
    assert held.deal("AS").snapshot.held


def test_after_last_hand():
    e = engine()
    deal(e, "2H 3S")
    step = e.cut_card(t=1.0)
    assert step.snapshot.last_hand and e.shoe_state().last_hand and e.shoe_state().cut_card_out
    steps = deal(e, "2S 3D 9C")
    assert steps[-1].result.last_hand
    state = e.shoe_state()
    assert state.shoe_over and not state.last_hand
    step = e.deal("KD", t=2.0)
    alert = only_alert(step, AlertKind.AFTER_LAST_HAND)
    assert alert.evidence == {"card": "KD", "seq": 6, "last_hand": 1} and alert.coup == 1
    assert step.record.role is Role.EXTRA and e.shoe_state().discarded == 1
    assert step.snapshot.coup == 1 and step.snapshot.next_side is None
    e.new_shoe()
    assert e.deal("KD").record.role is Role.COUP and e.shoe_state().shoe == 2


# --------------------------------------------------------------------- cut card


def test_cut_card_between_coups_this_coup_last():
    e = engine()
    deal(e, NATURAL)
    e.cut_card()
    assert e.shoe_state().last_hand and not e.snapshot().last_hand  # coup 1 is over; coup 2 is last
    steps = deal(e, STAND)
    assert steps[0].snapshot.last_hand and steps[-1].result.last_hand
    assert e.shoe_state().shoe_over


def test_cut_card_one_more_mid_coup():
    e = engine(cut_card="one_more")
    deal(e, "2H 3S")
    e.cut_card()
    assert not e.shoe_state().last_hand                 # this coup, then one more
    steps = deal(e, "2S 3D 9C")
    assert not steps[-1].result.last_hand and e.shoe_state().last_hand
    steps = deal(e, STAND)
    assert steps[-1].result.last_hand and e.shoe_state().shoe_over
    assert kinds(e.deal("AS")) == ["after_last_hand"]


def test_cut_card_one_more_between_coups_and_idempotent():
    e = engine(cut_card="one_more")
    deal(e, NATURAL)
    e.cut_card()
    e.cut_card()                                        # a repeated signal changes nothing
    deal(e, STAND)
    assert not e.shoe_state().shoe_over and e.shoe_state().last_hand
    steps = deal(e, FIVE)
    assert steps[-1].result.coup == 3 and steps[-1].result.last_hand


def test_cut_card_confirm_complete_unclosed_coup_is_in_progress():
    e = engine(closing="confirm")
    deal(e, NATURAL)
    e.cut_card()
    assert e.snapshot().last_hand
    assert e.close_coup().result.last_hand and e.shoe_state().shoe_over


# ------------------------------------------------------------------------- burn


def test_burn_none():
    assert engine().deal("7D").record.role is Role.COUP


def test_burn_fixed():
    e = engine(burn="fixed", burn_count=3)
    assert e.snapshot().burn_due == 3 and e.snapshot().next_side is None
    steps = deal(e, "7D 8D 9D")
    assert [s.record.role for s in steps] == [Role.BURN] * 3
    assert [s.snapshot.burn_due for s in steps] == [2, 1, 0]
    assert steps[-1].snapshot.next_side is P and steps[-1].record.coup == 0
    step = e.deal("2H")
    assert step.record.role is Role.COUP and step.record.seq == 4 and step.snapshot.coup == 1
    state = e.shoe_state()
    assert (state.burned, state.dealt, state.remaining) == (3, 1, 412)


@pytest.mark.parametrize("first,more", [("7D", 7), ("KD", 10), ("TC", 10), ("AS", 1), ("9H", 9)])
def test_burn_first_card_value(first, more):
    e = engine(burn="first_card_value")
    assert e.shoe_state().burn_due == 1
    step = e.deal(first)
    assert step.record.role is Role.BURN and e.shoe_state().burn_card == parse_card(first)
    assert step.snapshot.burn_due == more
    steps = deal(e, " ".join(ALL_CODES[20:20 + more]))
    assert all(s.record.role is Role.BURN for s in steps)
    assert e.shoe_state().burned == 1 + more and e.shoe_state().burn_due == 0
    assert e.deal("2H").record.role is Role.COUP


def test_burn_card_wrong_side_and_new_shoe_burns_again():
    e = engine(burn="fixed", burn_count=1, on_error="continue")
    step = e.deal("7D", side="punto")
    assert only_alert(step, AlertKind.WRONG_SIDE).evidence["expected"] == "burn"
    e.deal("2H")
    e.new_shoe()
    assert e.deal("3H").record.role is Role.BURN


# -------------------------------------------------------------------- push back


def test_push_back_last_card_of_open_coup():
    e = engine()
    deal(e, "2H 3S 2S", counter=None)
    before = e.shoe_state()
    step = e.push_back(t=4.0)
    alert = only_alert(step, AlertKind.CARD_PUSHED_BACK)
    assert alert.severity is Severity.WARNING
    assert alert.evidence["taken_back"] == "2S" and alert.evidence["taken_back_from"] == "punto"
    assert step.snapshot.punto == (parse_card("2H"),) and step.snapshot.next_side is P
    after = e.shoe_state()
    assert after.dealt == before.dealt - 1 and after.remaining_by_code["2S"] == 8
    step = e.deal("5S")
    assert step.record.index == 2 and step.record.seq == 3 and step.snapshot.punto_total == 7


def test_push_back_keeps_the_counter_sequence():
    e = engine()
    deal(e, "2H", counter=1)
    e.deal("3S", counter=2)
    e.push_back("3S", counter=2)
    assert kinds(e.deal("3S", counter=2)) == []


def test_push_back_of_another_card_is_refused():
    e = engine()
    deal(e, "2H 3S")
    step = e.push_back("9D")
    alert = only_alert(step, AlertKind.CARD_PUSHED_BACK)
    assert alert.severity is Severity.ERROR and alert.evidence["taken_back"] is None
    assert alert.evidence["last_card"] == "3S"
    assert step.snapshot.held and len(step.snapshot.banco) == 1
    assert e.push_back("3S").alerts[0].evidence["taken_back"] == "3S"  # the right card still can be
    assert e.push_back().alerts[0].evidence["taken_back"] is None        # nothing left to take back


def test_push_back_withdraws_a_settled_result():
    e = engine(on_error="continue")
    steps = deal(e, NATURAL)
    assert steps[-1].result.revision == 0
    step = e.push_back()
    alert = only_alert(step, AlertKind.CARD_PUSHED_BACK)
    assert alert.severity is Severity.ERROR and alert.evidence["result_withdrawn"] is True
    assert not step.snapshot.settled and step.snapshot.next_side is B and step.snapshot.coup == 1
    step = e.deal("2S")                                  # another fourth card: 8+K is still a natural
    assert step.snapshot.coup == 1 and step.snapshot.banco_total == 4
    assert step.result.revision == 1 and step.result.coup_id == "1-1" and step.result.natural


def test_push_back_withdrawn_result_is_held_and_resettled_with_a_revision():
    e = engine()
    deal(e, NATURAL)
    assert e.push_back().snapshot.held
    step = e.deal("3S")
    assert step.result is None and step.snapshot.complete
    assert e.resolve().result.revision == 1


def test_push_back_burn_card():
    e = engine(burn="first_card_value")
    e.deal("3D")
    e.deal("4D")
    assert e.shoe_state().burn_due == 2
    e.push_back()
    assert e.shoe_state().burn_due == 3 and e.shoe_state().burned == 1
    e.push_back()                                        # nothing to take back: error, no coup held
    e2 = engine(burn="first_card_value")
    e2.deal("3D")
    assert kinds(e2.push_back("3D")) == ["card_pushed_back"]
    assert e2.shoe_state().burn_due == 1 and e2.shoe_state().burn_card is None


def test_push_back_extra_card():
    e = engine(closing="confirm")
    deal(e, NATURAL + " 9D")
    step = e.push_back("9D")
    assert step.alerts[0].evidence["taken_back_from"] == "extra" and e.shoe_state().discarded == 0


# ------------------------------------------------------------------- supervisor


def test_void_coup_in_progress_and_settled():
    e = engine()
    deal(e, "2H 3S")
    step = e.void_coup("misdeal", t=8.0)
    alert = only_alert(step, AlertKind.COUP_VOIDED)
    assert alert.severity is Severity.INFO and alert.evidence["reason"] == "misdeal"
    assert alert.evidence["result_withdrawn"] is False
    assert step.snapshot.voided and step.snapshot.next_side is None
    with pytest.raises(EngineError, match="already void"):
        e.void_coup()
    assert e.deal("AS").snapshot.coup == 2
    e2 = engine()
    deal(e2, NATURAL)
    assert e2.void_coup("late").alerts[0].evidence["result_withdrawn"] is True
    with pytest.raises(EngineError):
        engine().void_coup()


def test_a_person_s_action_names_them_last_in_its_alerts():
    e = engine()
    deal(e, "2H 3S")
    voided = only_alert(e.void_coup("misdeal", by="sam"), AlertKind.COUP_VOIDED).evidence
    assert list(voided)[-1] == "user" and voided["user"] == "sam"
    e = engine()
    deal(e, "2H 3S")
    assert "user" not in only_alert(e.void_coup("misdeal"), AlertKind.COUP_VOIDED).evidence   # nobody named
    e = engine(on_error="void")
    deal(e, "2H 3S 2S 3D 9C")
    step = e.correct_card(0, "7H", by="ann")           # the fifth card has no place: void by the policy
    assert kinds(step) == ["card_corrected", "extra_card", "coup_voided"]
    assert [a.evidence.get("user") for a in step.alerts] == ["ann", None, "ann"]
    e = engine()
    deal(e, "2H", side="banco")                         # wrong side: held
    assert only_alert(e.resolve("moved", by=None), AlertKind.COUP_RESOLVED).evidence["user"] is None


def test_resolve_requires_a_held_coup():
    with pytest.raises(EngineError, match="held"):
        engine().resolve()


def test_correct_card_in_open_coup():
    e = engine()
    deal(e, "2H 3S 2S 3D")                              # Punto 4, Banco 6: Punto to draw
    step = e.correct_card(0, "7H", "camera misread", t=6.0)
    alert = only_alert(step, AlertKind.CARD_CORRECTED)
    assert alert.evidence["original"] == "2H" and alert.evidence["corrected"] == "7H"
    assert alert.evidence["index"] == 0 and alert.evidence["reason"] == "camera misread"
    assert alert.evidence["before"]["punto"] == ["2H", "2S"]
    assert step.result.natural and step.result.punto_total == 9  # 7+2: now a natural, settled
    state = e.shoe_state()
    assert state.remaining_by_code["2H"] == 8 and state.remaining_by_code["7H"] == 7


def test_correct_card_surplus_becomes_extra_and_resettles_with_revision():
    e = engine()
    steps = deal(e, FIVE)
    assert steps[-1].result.cards == 5
    step = e.correct_card(0, "7H")                      # 7+2 = 9: the fifth card has no place
    assert kinds(step) == ["card_corrected", "extra_card"]
    assert step.snapshot.held and step.result is None and len(step.snapshot.punto) == 2
    assert e.shoe_state().discarded == 1 and e.shoe_state().dealt == 4
    r = e.resolve().result
    assert r.revision == 1 and r.natural and r.cards == 4


def test_correct_card_reopens_a_settled_coup():
    e = engine()
    deal(e, NATURAL)
    step = e.correct_card(0, "2D")                      # Punto 2+0 = 2: now draws
    assert step.result is None and step.snapshot.next_side is P and not step.snapshot.settled
    steps = deal(e, "5C TD")                            # Punto 7; Banco 5 draws on a 5 (-> 5)
    assert steps[0].result is None and steps[0].snapshot.next_side is B
    r = steps[1].result
    assert (r.coup, r.revision, r.punto_total, r.banco_total, r.cards) == (1, 1, 7, 5, 6)


def test_correct_card_refusals():
    e = engine()
    with pytest.raises(EngineError):
        e.correct_card(0, "AS")
    deal(e, "2H 3S")
    with pytest.raises(EngineError, match="index"):
        e.correct_card(2, "AS")
    with pytest.raises(EngineError, match="already"):
        e.correct_card(0, "2H")
    with pytest.raises(CardCodeError):
        e.correct_card(0, "XX")
    e.void_coup()
    with pytest.raises(EngineError):
        e.correct_card(0, "AS")


def test_correct_card_to_an_impossible_card():
    e = engine(decks=4, on_error="continue")
    deal(e, "AS AS AS AS 2H")                          # four aces: P 2 draws 2; B 2 draws
    step = e.correct_card(4, "AS")
    alert = only_alert(step, AlertKind.IMPOSSIBLE_CARD)
    assert alert.evidence["source"] == "correction" and alert.evidence["seen"] == 5


# -------------------------------------------------------------------- new shoe


def test_new_shoe_resets_everything():
    e = engine(burn="fixed", burn_count=2)
    deal(e, "7D 8D " + NATURAL + " 2H 3S")
    e.cut_card()
    step = e.new_shoe(t=20.0)
    alert = only_alert(step, AlertKind.MISSING_CARD)       # the coup in progress is void
    assert alert.id == "1-2-1" and kinds(step) == ["missing_card", "coup_voided"]
    state = e.shoe_state()
    assert (state.shoe, state.dealt, state.burned, state.coups, state.cut_card_out) == (2, 0, 0, 0, False)
    assert state.burn_due == 2 and state.remaining == 416 and not state.last_hand
    assert step.snapshot.coup == 1 and step.snapshot.shoe == 2
    deal(e, "7D 8D 2H", side=None, counter=None)
    assert kinds(e.deal("3S", side="punto")) == ["wrong_side"]
    assert e.snapshot().held
    with pytest.raises(EngineError, match="held"):
        e.new_shoe()
    e.void_coup()
    assert e.new_shoe(4).snapshot.shoe == 3 and e.shoe_state().decks == 4
    with pytest.raises(ValueError, match="decks"):
        e.new_shoe(5)


def test_new_shoe_settles_a_complete_unclosed_coup():
    e = engine(closing="confirm")
    deal(e, NATURAL)
    step = e.new_shoe()
    assert step.result.coup_id == "1-1" and step.alerts == ()


def test_alert_ids_are_deterministic_and_per_shoe():
    e = engine(on_error="continue")
    ids = [a.id for s in deal(e, "2H 3S", side="banco") for a in s.alerts]
    assert ids == ["1-1-1"]                              # the second card is on banco: right side
    deal(e, "2S 3D 9C")
    ids += [a.id for a in e.deal("KD", side="banco").alerts]
    assert ids == ["1-1-1", "1-2-2"]


# ------------------------------------------------------------------ rules, records


@pytest.mark.parametrize("kwargs,field", [
    ({"decks": 5}, "decks"),
    ({"decks": "8"}, "decks"),
    ({"closing": "manual"}, "closing"),
    ({"cut_card": "never"}, "cut_card"),
    ({"burn": "all"}, "burn"),
    ({"burn": "fixed"}, "burn_count"),
    ({"burn": "fixed", "burn_count": 53}, "burn_count"),
    ({"burn_count": 2}, "burn_count"),
    ({"burn": "fixed", "burn_count": 2.0}, "burn_count"),
    ({"on_error": "panic"}, "on_error"),
])
def test_table_rules_validation_names_the_field(kwargs, field):
    with pytest.raises(ValueError, match=field):
        TableRules(**kwargs)


def test_table_rules_accept_strings_and_are_frozen():
    rules = TableRules(decks=6, closing="confirm", cut_card="one_more", burn="fixed", burn_count=3,
                       on_error="void")
    assert rules.to_dict() == {"decks": 6, "closing": "confirm", "cut_card": "one_more", "burn": "fixed",
                               "burn_count": 3, "on_error": "void"}
    assert TableRules(**rules.to_dict()) == rules
    with pytest.raises(dataclasses.FrozenInstanceError):
        rules.decks = 8  # type: ignore[misc]
    with pytest.raises(TypeError):
        DealingEngine({"decks": 8})


def _plain(obj) -> bool:
    if obj is None or type(obj) in (str, int, float, bool):
        return True
    if type(obj) is list:
        return all(_plain(v) for v in obj)
    if type(obj) is dict:
        return all(type(k) is str and _plain(v) for k, v in obj.items())
    return False


OUTPUT_TYPES = (CardRecord, Step, CoupSnapshot, CoupResult, Alert, ShoeState)


@pytest.mark.parametrize("cls", OUTPUT_TYPES, ids=lambda c: c.__name__)
def test_output_types_are_frozen_slotted_dataclasses(cls):
    assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen
    assert cls.__slots__ == tuple(f.name for f in dataclasses.fields(cls))


def test_outputs_to_dict_are_plain_json_in_field_order():
    e = engine(closing="confirm")
    steps = deal(e, NATURAL + " 9D")
    steps.append(e.resolve())
    steps.append(e.close_coup())
    objs = [*steps, e.snapshot(), e.shoe_state()]
    for obj in objs:
        d = obj.to_dict()
        assert _plain(d), d
        assert list(d) == [f.name for f in dataclasses.fields(obj)]
        assert json.loads(json.dumps(d)) == d
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(obj, dataclasses.fields(obj)[0].name, None)
    d = steps[3].to_dict()
    assert d["record"]["card"] == "3S" and d["snapshot"]["next_side"] is None
    assert d["alerts"] == [] and d["result"] is None
    extra = steps[4].to_dict()["alerts"][0]
    assert list(extra) == ["id", "kind", "severity", "shoe", "coup", "message", "evidence", "t"]
    assert extra["kind"] == "extra_card" and extra["evidence"]["card"] == "9D"
    assert steps[-1].to_dict()["result"]["punto"] == ["8H", "KH"]


@pytest.mark.parametrize("cls", OUTPUT_TYPES, ids=lambda c: c.__name__)
def test_make_builds_the_same_frozen_object_as_the_constructor(cls):
    values = tuple(f"v{i}" for i in range(len(dataclasses.fields(cls))))
    made = cls.make(*values)
    assert type(made) is cls and made == cls(*values) and not hasattr(made, "__dict__")
    assert [getattr(made, f.name) for f in dataclasses.fields(cls)] == list(values)
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(made, dataclasses.fields(cls)[0].name, "x")


def test_same_inputs_same_outputs():
    def session():
        e = engine(closing="confirm", burn="fixed", burn_count=1)
        out = [s.to_dict() for s in deal(e, "7D " + FIVE, t=1.5)]
        out.append(e.deal("9S", side="banco", counter=3, t=2.0).to_dict())
        out.append(e.resolve("ok", t=3.0).to_dict())
        out.append(e.close_coup(t=4.0).to_dict())
        out.append(e.shoe_state().to_dict())
        return json.dumps(out)
    assert session() == session()


def test_new_shoe_on_an_untouched_shoe_keeps_its_number():
    from shoe_daemon.game.engine import DealingEngine

    engine = DealingEngine()
    engine.new_shoe()  # the shoe's own "new shoe" button at power-up
    assert engine.shoe_state().shoe == 1
    engine.deal("9H")
    engine.new_shoe()
    assert engine.shoe_state().shoe == 2
