"""Property tests over random cards and random shoes, against a reference written here.

``reference_coups`` below is a deliberately plain transcription of the seeds'
rules (seed 001): it does not use shoe_daemon.game.tableau or coup, so the
engine is checked against an independent implementation.
"""

from __future__ import annotations

import json
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from shoe_daemon.game.cards import ALL_CODES, parse_card
from shoe_daemon.game.engine import DealingEngine, EngineError, Role, TableRules

VALUE = {"A": 1, "2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7, "8": 8, "9": 9,
         "T": 0, "J": 0, "Q": 0, "K": 0}


def reference_coup(codes: list[str]):
    """Deal one coup from the front of codes. Returns (punto, banco, used) or None if too few cards."""
    deck = iter(codes)
    try:
        punto = [next(deck)]
        banco = [next(deck)]
        punto.append(next(deck))
        banco.append(next(deck))

        def total(hand):
            return sum(VALUE[c[0]] for c in hand) % 10

        pt, bt = total(punto), total(banco)
        if pt in (8, 9) or bt in (8, 9):
            pass                                   # a natural: nobody draws
        elif pt <= 5:                              # Punto draws on 0-5
            third = next(deck)
            punto.append(third)
            v = VALUE[third[0]]
            if bt <= 2:
                draw = True
            elif bt == 3:
                draw = v != 8
            elif bt == 4:
                draw = 2 <= v <= 7
            elif bt == 5:
                draw = 4 <= v <= 7
            elif bt == 6:
                draw = v in (6, 7)
            else:
                draw = False
            if draw:
                banco.append(next(deck))
        elif bt <= 5:                              # Punto stood on 6-7: Banco draws on 0-5
            banco.append(next(deck))
    except StopIteration:
        return None
    return punto, banco, len(punto) + len(banco)


def reference_coups(codes: list[str]) -> tuple[list[dict], int]:
    """Every complete coup of codes, in order; and how many cards they used."""
    out, i = [], 0
    while True:
        got = reference_coup(codes[i:])
        if got is None:
            return out, i
        punto, banco, used = got
        pt = sum(VALUE[c[0]] for c in punto) % 10
        bt = sum(VALUE[c[0]] for c in banco) % 10
        two_p = sum(VALUE[c[0]] for c in punto[:2]) % 10
        two_b = sum(VALUE[c[0]] for c in banco[:2]) % 10
        natural = two_p >= 8 or two_b >= 8
        out.append({
            "punto": punto, "banco": banco, "punto_total": pt, "banco_total": bt,
            "winner": "punto" if pt > bt else "banco" if bt > pt else "tie",
            "natural": natural, "natural_total": max(two_p, two_b) if natural else None,
            "punto_pair": punto[0][0] == punto[1][0], "banco_pair": banco[0][0] == banco[1][0],
            "cards": used,
        })
        i += used


def engine_coups(codes: list[str], decks: int = 8):
    """Deal codes through the engine; returns (results as dicts, steps)."""
    engine = DealingEngine(TableRules(decks=decks, on_error="continue"))
    steps = [engine.deal(c) for c in codes]
    return [s.result.to_dict() for s in steps if s.result is not None], steps, engine


cards_lists = st.lists(st.sampled_from(ALL_CODES), max_size=60)


@settings(max_examples=300, deadline=None)
@given(cards_lists)
def test_engine_agrees_with_the_reference(codes):
    results, steps, _ = engine_coups(codes)
    expected, _used = reference_coups(codes)
    keys = list(expected[0]) if expected else []
    assert [{k: r[k] for k in keys} for r in results] == expected


@settings(max_examples=300, deadline=None)
@given(cards_lists)
def test_invariants_after_every_card(codes):
    _, steps, engine = engine_coups(codes)
    layouts = {}
    for step, code in zip(steps, codes, strict=True):
        snap, rec = step.snapshot, step.record
        assert rec.card.code == code and rec.role is Role.COUP
        assert len(snap.punto) <= 3 and len(snap.banco) <= 3
        assert snap.punto_total == sum(c.value for c in snap.punto) % 10
        assert snap.banco_total == sum(c.value for c in snap.banco) % 10
        # the first four cards alternate P B P B
        assert len(snap.banco) <= len(snap.punto) <= len(snap.banco) + 1 or len(snap.punto) + len(snap.banco) > 4
        assert (snap.next_side is None) == snap.complete
        if step.result is not None:
            r = step.result
            assert 2 <= len(r.punto) <= 3 and 2 <= len(r.banco) <= 3 and r.cards == len(r.punto) + len(r.banco)
            assert r.punto_pair == (r.punto[0].rank == r.punto[1].rank)
            assert r.banco_pair == (r.banco[0].rank == r.banco[1].rank)
        layouts[snap.coup] = snap
    # every card used exactly once, in order: the coups' cards in dealing order are the input
    dealt = []
    for n in sorted(layouts):
        s = layouts[n]
        p, b = [c.code for c in s.punto], [c.code for c in s.banco]
        order = []
        for i in range(2):
            order += p[i:i + 1] + b[i:i + 1]
        dealt += order + p[2:] + b[2:]
    assert dealt == list(codes)
    assert engine.shoe_state().dealt == len(codes)


@settings(max_examples=25, deadline=None)
@given(st.integers(min_value=0, max_value=2**32), st.sampled_from([4, 6, 8]))
def test_whole_shoes(seed, decks):
    codes = list(ALL_CODES) * decks
    random.Random(seed).shuffle(codes)
    engine = DealingEngine(TableRules(decks=decks))
    i = 0
    results = []
    while len(codes) - i >= 6:
        while True:
            step = engine.deal(codes[i])
            i += 1
            assert step.alerts == ()
            if step.result is not None:
                results.append(step.result.to_dict())
                break
    expected, used = reference_coups(codes[:i])
    assert used == i
    assert [{k: r[k] for k in expected[0]} for r in results] == expected
    state = engine.shoe_state()
    left = codes[i:]
    assert state.remaining == len(left) and state.dealt == i
    assert dict(state.remaining_by_code) == {c: left.count(c) for c in ALL_CODES}
    assert list(state.remaining_by_value) == [sum(1 for c in left if VALUE[c[0]] == v) for v in range(10)]


# -------------------------------------------------------------- replay of random sessions

rules_st = st.builds(
    TableRules,
    decks=st.sampled_from([4, 8]),
    closing=st.sampled_from(["auto", "confirm"]),
    cut_card=st.sampled_from(["this_coup_last", "one_more"]),
    burn=st.sampled_from(["none", "first_card_value"]),
    on_error=st.sampled_from(["hold", "void", "continue"]),
)
card_st = st.sampled_from(ALL_CODES[:8] + ALL_CODES[36:44])   # few identities: impossible cards happen
_op_kinds = {
    "deal": st.tuples(st.just("deal"), card_st, st.none(), st.none()),
    "deal_checked": st.tuples(st.just("deal"), card_st, st.sampled_from([None, "punto", "banco"]),
                              st.sampled_from([None, "next", "skip", "back"])),
    "close": st.tuples(st.just("close")),
    "other": st.tuples(st.sampled_from(["cut", "resolve", "void", "new_shoe"])),
    "push_back": st.tuples(st.just("push_back"), st.one_of(st.none(), card_st)),
    "correct": st.tuples(st.just("correct"), st.integers(0, 5), card_st),
}
# Mostly plain cards, so that coups complete between the disturbances.
op_st = st.sampled_from(["deal"] * 14 + ["deal_checked", "close", "close", "other", "push_back", "correct"]
                        ).flatmap(_op_kinds.__getitem__)


def run_session(rules, ops):
    engine = DealingEngine(rules)
    out = []
    counter = 0
    impossible = False
    for t, op in enumerate(ops):
        try:
            if op[0] == "deal":
                counter += {None: 0, "next": 1, "skip": 2, "back": -1}[op[3]]
                step = engine.deal(op[1], side=op[2], counter=counter if op[3] is not None else None, t=t)
            elif op[0] == "close":
                step = engine.close_coup(t=t)
            elif op[0] == "cut":
                step = engine.cut_card(t=t)
            elif op[0] == "resolve":
                step = engine.resolve("ok", t=t)
            elif op[0] == "void":
                step = engine.void_coup("test", t=t)
            elif op[0] == "new_shoe":
                step = engine.new_shoe(t=t)
            elif op[0] == "push_back":
                step = engine.push_back(op[1], t=t)
            else:
                step = engine.correct_card(op[1], op[2], "test", t=t)
        except EngineError as exc:
            out.append({"refused": str(exc)})
            continue
        out.append(step.to_dict())
        state = engine.shoe_state()
        # bookkeeping that must hold whatever happened
        assert state.remaining == sum(state.remaining_by_code.values()) == sum(state.remaining_by_value)
        impossible = impossible or any(a["kind"] == "impossible_card" for a in out[-1]["alerts"])
        total = state.dealt + state.burned + state.discarded + state.remaining
        assert total >= state.cards and (impossible or total == state.cards)
        if op[0] == "new_shoe":
            impossible = False
        snap = step.snapshot
        assert len(snap.punto) <= 3 and len(snap.banco) <= 3
        assert snap.punto_total == sum(c.value for c in snap.punto) % 10
        assert not (snap.settled and snap.voided) and not (snap.settled and snap.held)
    out.append(engine.snapshot().to_dict())
    out.append(engine.shoe_state().to_dict())
    return json.dumps(out)


@settings(max_examples=150, deadline=None)
@given(rules_st, st.lists(op_st, min_size=20, max_size=80))
def test_replaying_the_inputs_gives_the_same_outputs(rules, ops):
    first = run_session(rules, ops)
    assert run_session(rules, ops) == first


def test_reference_self_check():
    # The reference itself, on the seeds' example and a natural.
    coups, used = reference_coups("2H 8H 2S 8S 7C 9D 8C 2S KH 3S".split())
    assert [c["banco_total"] for c in coups] == [5, 5] and used == 10
    assert coups[1]["natural"] and coups[1]["natural_total"] == 8
    assert parse_card("9D").value == 9
