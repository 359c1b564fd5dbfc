"""The scoreboard: the last coups, the shoe's roads and statistics, and the live odds.

After every settled coup the table publishes the history (the last coups, across
shoes), the roads and statistics of this shoe, and the exact odds of the cards
left in it; when those odds favour the player beyond the configured edge, an
``odds_advantage`` alert tells the pit (one per bet while it lasts). A coup that
is re-settled replaces its earlier result; one that is withdrawn (voided after
settling) leaves the history and the roads.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

from shoe_daemon.core.alerts import ODDS_ADVANTAGE, AlertBook
from shoe_daemon.core.outputs import Outbox
from shoe_daemon.core.presenter import Presenter
from shoe_daemon.game.odds import NotEnoughCardsError, analyze
from shoe_daemon.game.roads import Roads

HISTORY = 20          # coups kept in the retained `history` topic


class Scoreboard:
    def __init__(self, presenter: Presenter, alerts: AlertBook, *, odds_alert_edge: float = 0.0):
        self._presenter = presenter
        self._alerts = alerts
        # Player advantage (fraction of the stake) beyond which live odds alert the pit.
        self.odds_alert_edge = odds_alert_edge
        self.history: deque[dict] = deque(maxlen=HISTORY)
        self.shoe_results: dict[str, dict] = {}   # this shoe's latest result per coup id
        self.roads = Roads()

    def new_shoe(self, carried_history: dict | None) -> None:
        if isinstance(carried_history, dict) and isinstance(carried_history.get("coups"), list):
            # The last coups run across shoes: a replay that starts at this shoe takes them as
            # they were last published.
            self.history = deque((dict(c) for c in carried_history["coups"]), maxlen=HISTORY)
            self._presenter.carry("history", carried_history)
        self.shoe_results.clear()
        self.roads = Roads()

    def settled(self, out: Outbox, t: float, result: dict) -> None:
        """A coup's result (a re-settled coup, ``revision`` > 0, replaces its earlier one)."""
        for i, old in enumerate(self.history):
            if old["coup_id"] == result["coup_id"]:
                self.history[i] = result
                break
        else:
            self.history.append(result)
        self._presenter.result(out, t, result)
        self.publish_history(out, t)

    def update_roads(self, out: Outbox, t: float, result: dict, shoe: int) -> None:
        revised = result["coup_id"] in self.shoe_results
        self.shoe_results[result["coup_id"]] = result
        if revised:  # rebuild: a correction may change any later cell
            self.roads = Roads(self.shoe_results[k] for k in sorted(
                self.shoe_results, key=lambda cid: self.shoe_results[cid]["coup"]))
        else:
            self.roads.add(result["winner"], result["banco_pair"], result["punto_pair"], result["natural"])
        self.publish_roads(out, t, shoe)

    def withdraw(self, out: Outbox, t: float, coup_id: str, shoe: int) -> None:
        """A settled coup was voided (or its last card pushed back): it leaves the history and the roads."""
        kept = [r for r in self.history if r["coup_id"] != coup_id]
        self.history.clear()
        self.history.extend(kept)
        self.shoe_results.pop(coup_id, None)
        self.roads = Roads(sorted(self.shoe_results.values(), key=lambda r: r["coup"]))
        self.publish_history(out, t)
        self.publish_roads(out, t, shoe)

    def publish_history(self, out: Outbox, t: float) -> None:
        self._presenter.history(out, t, list(self.history))

    def publish_roads(self, out: Outbox, t: float, shoe: int) -> None:
        roads = self.roads.to_dict()
        stats = roads.pop("stats", None) or self.roads.stats()
        self._presenter.roads(out, t, shoe, roads, stats)

    def publish_odds(self, out: Outbox, t: float, shoe_state, raise_alert: Callable[..., dict]) -> None:
        """The exact odds of what is left in the shoe; ``raise_alert(kind, severity, message, evidence,
        key=...)`` raises the advantage alert."""
        body: dict[str, Any] = {"shoe": shoe_state.shoe, "after_coup": shoe_state.coups}
        try:
            odds = analyze(list(shoe_state.remaining_by_value))
        except NotEnoughCardsError as exc:
            body.update({"available": False, "reason": str(exc)})
            self._presenter.odds(out, t, body)
            return
        analysis = odds.to_dict()
        body.update({"available": True, **analysis})
        self._presenter.odds(out, t, body)
        edges = analysis["house_edge"]
        for bet in ("banco", "punto", "tie"):
            advantage = -edges[bet]
            key = f"odds:{bet}"
            if advantage > self.odds_alert_edge and not self._alerts.has_key(key):
                raise_alert(ODDS_ADVANTAGE, "warning",
                            f"the remaining shoe favours the player on {bet}: "
                            f"expectation +{advantage:.4%} of the stake",
                            {"bet": bet, "player_advantage": advantage, "threshold": self.odds_alert_edge,
                             "remaining": shoe_state.remaining, "composition": list(shoe_state.remaining_by_value)},
                            key=key)
