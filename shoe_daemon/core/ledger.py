"""The ledger: bets, their settlement, and what the journal keeps to recall a coup.

Bets come from the dealer's console as one ``bets`` event per coup (replacing
any earlier one), checked against the table's limits (the limits in force are
journaled with the bets, so a replay checks the same ones). When a coup
settles (or is voided), its recall record is made here: the result, the cards
in dealing order with who read each one, the coup's alerts and the
settlement of its bets. The journal stores it (``RecordCoup``).
"""

from __future__ import annotations

from typing import Any

from shoe_daemon.core.errors import Rejected
from shoe_daemon.core.outputs import RecordCoup
from shoe_daemon.game.coup import side_at
from shoe_daemon.game.settle import TableLimits, format_amount, parse_bets, settle, to_decimal

KEPT_SETTLEMENTS = 200  # bets and settlements kept in memory (the journal's recall keeps them all)
RECALL_COUPS = 4        # coups whose cards and alerts are kept for their recall entry


def _trim(d: dict, n: int) -> None:
    while len(d) > n:
        del d[next(iter(d))]


def card_source(source: str, confidence: Any = None) -> dict:
    """One entry of coup/current's ``card_sources``: who produced the card (and the camera's confidence)."""
    entry: dict[str, Any] = {"source": source}
    if isinstance(confidence, int | float) and not isinstance(confidence, bool):
        entry["confidence"] = confidence
    return entry


class Ledger:
    def __init__(self, limits: TableLimits | None = None):
        self.limits = limits                     # BETS are checked against these
        self.bets: dict[str, dict] = {}          # coup id -> the bets accepted for it
        self.settlements: dict[str, dict] = {}   # coup id -> its settlement (the last KEPT_SETTLEMENTS)
        self._recall: dict[str, dict] = {}       # coup id -> its cards and alerts (the last RECALL_COUPS)
        self._sources: dict[str, list[dict]] = {}  # coup id -> each card's source, dealing order

    # -- bets ------------------------------------------------------------------------------------
    def place(self, coup_id: str, bets_data: list, limits_data: dict | None, *, by: Any, t: float,
              reason: str) -> None:
        """Accept the bets of every box for ``coup_id``, or raise (BetError, BetLimitError, Rejected)."""
        bets = parse_bets(bets_data)
        if isinstance(limits_data, dict):
            try:
                limits = TableLimits.from_config(limits_data)
            except ValueError as exc:
                raise Rejected(f"the journaled limits do not parse: {exc}") from None
        else:
            limits = self.limits
        if limits is not None:
            limits.check(bets)
        self.bets[coup_id] = {"coup_id": coup_id, "bets": [b.to_dict() for b in bets],
                              "by": by, "t": t, "reason": reason}
        _trim(self.bets, KEPT_SETTLEMENTS)

    def _settle(self, coup_id: str, result: dict | None) -> dict | None:
        """Settle the bets of ``coup_id`` (None when it has none); ``result`` None: the coup is void."""
        placed = self.bets.get(coup_id)
        if placed is None:
            return None
        bets = parse_bets(placed["bets"])
        head = {"coup_id": coup_id, "placed": {k: placed[k] for k in ("by", "t", "reason")}}
        if result is None:  # a void coup: every stake goes back
            staked = format_amount(sum((b.amount for b in bets), to_decimal(0)))
            body = {"status": "void", "revision": None, "winner": None,
                    "bets": [{**b.to_dict(), "outcome": "void", "won": "0", "returned": b.to_dict()["amount"],
                              "net": "0"} for b in bets],
                    "totals": {"staked": staked, "won": "0", "returned": staked, "net": "0"}}
        else:
            body = {"status": "settled", "revision": result["revision"], **settle(bets, result["winner"]).to_dict()}
        self.settlements[coup_id] = settlement = {**head, **body}
        _trim(self.settlements, KEPT_SETTLEMENTS)
        return settlement

    # -- the coup's record -----------------------------------------------------------------------
    def note(self, shoe: int, coup: int, what: str, item: dict) -> None:
        """Keep a card record or an alert with its coup, for the coup's recall entry."""
        key = f"{shoe}-{coup}"
        log = self._recall.get(key)
        if log is None:
            log = self._recall[key] = {"cards": [], "alerts": []}
            _trim(self._recall, RECALL_COUPS)
        log[what].append(item)

    def note_source(self, coup_id: str, index: int, source: str, confidence: Any = None) -> None:
        """Who read the card at ``index``; it replaces whatever a push-back left from there on."""
        sources = self._sources.setdefault(coup_id, [])
        sources[index:] = [card_source(source, confidence)]
        _trim(self._sources, RECALL_COUPS)

    def corrected(self, coup_id: str, index: int, source: str) -> None:
        """The card at ``index`` was corrected: it is the corrector's now."""
        sources = self._sources.get(coup_id, [])
        if index < len(sources):
            sources[index] = card_source(source)

    def sources_by_side(self, snap: dict) -> dict:
        """Each card's source, parallel to the snapshot's ``punto`` and ``banco``."""
        by_side: dict[str, list[dict]] = {"punto": [], "banco": []}
        sources = self._sources.get(snap["coup_id"], [])
        # After a push-back, entries past the coup's cards are stale.
        n_punto = len(snap["punto"])
        for index, entry in enumerate(sources[:n_punto + len(snap["banco"])]):
            by_side[side_at(index, n_punto).value].append(entry)
        return by_side

    def _recall_of(self, coup_id: str) -> dict:
        log = self._recall.get(coup_id, {"cards": [], "alerts": []})
        return {"dealt": list(log["cards"]), "sources": sorted({c["source"] for c in log["cards"]}),
                "alerts": list(log["alerts"])}

    def coup_record(self, result: dict) -> RecordCoup:
        """The journal's recall entry of a settled coup: the result, its cards with their sources,
        its alerts and the settlement of its bets."""
        record = {**result, **self._recall_of(result["coup_id"])}
        settlement = self._settle(result["coup_id"], result)
        if settlement is not None:
            record["settlement"] = settlement
        return RecordCoup(result["coup_id"], result["shoe"], result["coup"], record)

    def void_record(self, alert: dict) -> RecordCoup:
        """A void coup is recalled too (a settled one that is voided loses its result)."""
        coup_id = f"{alert['shoe']}-{alert['coup']}"
        ev = alert.get("evidence") or {}
        record = {"coup_id": coup_id, "shoe": alert["shoe"], "coup": alert["coup"], "voided": True,
                  "reason": ev.get("reason", ""), "result_withdrawn": ev.get("result_withdrawn", False),
                  **{k: ev.get(k) for k in ("punto", "banco", "punto_total", "banco_total")},
                  **self._recall_of(coup_id)}
        settlement = self._settle(coup_id, None)
        if settlement is not None:
            record["settlement"] = settlement
        return RecordCoup(coup_id, alert["shoe"], alert["coup"], record)
