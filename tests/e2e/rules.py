"""Checks of what the daemon published, against the rules and against the emulator's ground truth.

The tableau here is written out again from the Punto Banco rules on purpose: it shares no code
with ``shoe_daemon.game``, so a bug there cannot hide itself in these tests.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from tests.support.mosquitto import Received

# --------------------------------------------------------------------------- the rules


def value(code: str) -> int:
    rank = code[0]
    if rank == "A":
        return 1
    if rank in "TJQK":
        return 0
    return int(rank)


def total(cards: Sequence[str]) -> int:
    return sum(value(c) for c in cards) % 10


def banco_draws(banco_total: int, punto_third: int | None) -> bool:
    """Does Banco draw a third card? (``punto_third``: the value of Punto's third card, or None)."""
    if punto_third is None:
        return banco_total <= 5
    return {
        0: True, 1: True, 2: True,
        3: punto_third != 8,
        4: 2 <= punto_third <= 7,
        5: 4 <= punto_third <= 7,
        6: punto_third in (6, 7),
        7: False,
    }.get(banco_total, False)


def next_side(punto: Sequence[str], banco: Sequence[str]) -> str | None:
    """Who gets the next card of a coup, or None when the coup is complete."""
    n = len(punto) + len(banco)
    if n < 4:
        return "punto" if n % 2 == 0 else "banco"
    pt, bt = total(punto[:2]), total(banco[:2])
    if pt >= 8 or bt >= 8:
        return None                                   # a natural: nobody draws
    if len(punto) == 2 and len(banco) == 2:
        if pt <= 5:
            return "punto"
        return "banco" if banco_draws(bt, None) else None
    if len(punto) == 3 and len(banco) == 2:
        return "banco" if banco_draws(bt, value(punto[2])) else None
    return None


@dataclass(frozen=True)
class Expected:
    punto: list[str]
    banco: list[str]

    @property
    def punto_total(self) -> int:
        return total(self.punto)

    @property
    def banco_total(self) -> int:
        return total(self.banco)

    @property
    def winner(self) -> str:
        pt, bt = self.punto_total, self.banco_total
        return "punto" if pt > bt else "banco" if bt > pt else "tie"

    @property
    def natural(self) -> bool:
        return len(self.punto) + len(self.banco) == 4 and max(self.punto_total, self.banco_total) >= 8


def deal_coup(cards: Iterable[str]) -> tuple[Expected, int]:
    """Deal one coup from the front of ``cards``: (the coup, cards used)."""
    punto: list[str] = []
    banco: list[str] = []
    it = iter(cards)
    while (side := next_side(punto, banco)) is not None:
        (punto if side == "punto" else banco).append(next(it))
    return Expected(punto, banco), len(punto) + len(banco)


# --------------------------------------------------------------------------- ground truth


def coups_from_dealt(dealt) -> dict[tuple[int, int], Expected]:
    """The emulator's coups by (shoe, coup number in the shoe), from ``shoe.dealt`` (DealtCard with
    side and a session-wide coup number), checked against the tableau: the dealer must have dealt
    each coup exactly as the rules say."""
    by_coup: dict[tuple[int, int], list] = {}
    for d in dealt:
        if d.coup is not None:
            assert d.readable and d.mistake is None, f"the e2e tests deal clean coups, not {d}"
            by_coup.setdefault((d.shoe, d.coup), []).append(d)
    first_of_shoe: dict[int, int] = {}
    for shoe, coup in sorted(by_coup):
        first_of_shoe.setdefault(shoe, coup)
    out = {}
    for (shoe, coup), cards in sorted(by_coup.items()):
        expected, used = deal_coup([d.card for d in cards])
        assert used == len(cards), f"coup {coup}: the emulator dealt {len(cards)} cards, the tableau wants {used}"
        for d, side in zip(cards, _sides(expected), strict=True):
            assert d.side == side, f"coup {coup}: the emulator put {d.card} to {d.side}, the tableau to {side}"
        out[(shoe, coup - first_of_shoe[shoe] + 1)] = expected
    return out


def _sides(coup: Expected) -> list[str]:
    """Dealing order of a coup's sides."""
    order = ["punto", "banco", "punto", "banco"]
    if len(coup.punto) == 3:
        order.append("punto")
    if len(coup.banco) == 3:
        order.append("banco")
    return order


# --------------------------------------------------------------------------- the message stream


def payload(m: Received) -> dict:
    return json.loads(m.payload)


def live_stream(messages: Iterable[Received], prefix: str) -> list[tuple[str, dict]]:
    """The daemon's publications as the subscriber first got them: (topic suffix, payload).

    Messages delivered because of a subscription (retain flag set) are the broker's state, not the
    stream, and are left out. ``seq`` must be strictly increasing over first arrivals; a message
    whose ``seq`` is not above the highest seen must be a duplicate (at-least-once delivery, or a
    retained topic republished after a reconnect), byte for byte the same as the first copy. And no
    ``seq`` may be missing: every message the daemon published arrived.
    """
    first: dict[int, bytes] = {}
    out: list[tuple[str, dict]] = []
    highest = 0
    for m in messages:
        if m.retain or not m.topic.startswith(prefix + "/"):
            continue
        suffix = m.topic[len(prefix) + 1:]
        body = payload(m)
        if "seq" not in body:
            assert suffix == "status", f"{m.topic} without seq: {body}"
            continue
        seq = body["seq"]
        if seq > highest:
            first[seq] = m.payload
            highest = seq
            out.append((suffix, body))
        else:
            assert seq in first, f"{m.topic} seq {seq} arrived after seq {highest} and was never seen: out of order"
            assert first[seq] == m.payload, f"seq {seq} arrived twice with different payloads"
    seqs = sorted(first)
    if seqs:
        missing = sorted(set(range(seqs[0], seqs[-1] + 1)) - set(seqs))
        assert not missing, f"messages lost: seq {missing[:20]} (of {len(missing)}) never arrived"
    return out


def statuses(messages: Iterable[Received], prefix: str) -> list[str]:
    return [payload(m)["state"] for m in messages if m.topic == f"{prefix}/status" and not m.retain]


def n_results(messages: Iterable[Received], prefix: str) -> int:
    """How many coup/result messages came (a re-settled coup's counts again)."""
    return sum(1 for m in messages if m.topic == f"{prefix}/coup/result")


def check_cards(stream: list[tuple[str, dict]]) -> list[dict]:
    """Every coup/card against the tableau: its side, both totals after it, the next side.
    Returns the card messages in order."""
    cards = [body for suffix, body in stream if suffix == "coup/card"]
    hands: dict[tuple[int, int], tuple[list[str], list[str]]] = {}
    for body in cards:
        if body["role"] != "coup":
            assert body["role"] == "burn", f"unexpected card role: {body}"
            continue
        punto, banco = hands.setdefault((body["shoe"], body["coup"]), ([], []))
        side = next_side(punto, banco)
        assert body["side"] == side, f"coup {body['coup']}: {body['card']} went to {body['side']}, due to {side}"
        (punto if side == "punto" else banco).append(body["card"])
        assert (body["punto_total"], body["banco_total"]) == (total(punto), total(banco)), (
            f"coup {body['coup']} after {body['card']}: announced Punto {body['punto_total']} Banco "
            f"{body['banco_total']}, the cards {punto} {banco} make {total(punto)} {total(banco)}")
        assert body["next_side"] == next_side(punto, banco), f"coup {body['coup']}: next side {body}"
    return cards


def check_results(stream: list[tuple[str, dict]], truth: dict[int, Expected]) -> list[dict]:
    """Every coup/result against the ground truth coup of the same shoe and number (one result per
    coup)."""
    results = [body for suffix, body in stream if suffix == "coup/result"]
    numbers = [r["coup_id"] for r in results]
    assert len(numbers) == len(set(numbers)), f"a coup settled twice: {numbers}"
    for r in results:
        assert r["coup_id"] == f"{r['shoe']}-{r['coup']}"
        exp = truth[(r["shoe"], r["coup"])]
        got = (r["punto"], r["banco"], r["punto_total"], r["banco_total"], r["winner"], r["natural"])
        want = (exp.punto, exp.banco, exp.punto_total, exp.banco_total, exp.winner, exp.natural)
        assert got == want, f"coup {r['coup']}: published {got}, the rules give {want}"
        assert r["punto_pair"] == (exp.punto[0][0] == exp.punto[1][0])
        assert r["banco_pair"] == (exp.banco[0][0] == exp.banco[1][0])
        assert r["natural_total"] == (max(exp.punto_total, exp.banco_total) if exp.natural else None)
    return results


def card_list(cards: Iterable[dict]) -> list[tuple[int, str]]:
    """(shoe counter, card code) of card messages or journal events."""
    return [(c["counter"], c["card"]) for c in cards]


def dealt_list(dealt) -> list[tuple[int, str]]:
    return [(d.counter, d.card) for d in dealt]
