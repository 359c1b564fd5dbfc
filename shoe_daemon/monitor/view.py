"""The monitor's model of one table, fed by MQTT messages, drawn two ways.

``TableView.apply(suffix, payload, retained)`` updates the state and returns the
plain lines for that message (line mode: one line per event, what pipes and the
tests read). ``TableView.screen()`` draws the whole table for a terminal (plain
ANSI escape codes, no curses). Every payload field is optional: the view shows
what it gets and never fails on a payload it does not understand.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

from shoe_daemon.publish import topics

RESET = "\x1b[0m"
BOLD = "\x1b[1m"
DIM = "\x1b[2m"
RED = "\x1b[31m"
GREEN = "\x1b[32m"
YELLOW = "\x1b[33m"
BLUE = "\x1b[34m"
CLEAR = "\x1b[H\x1b[2J"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _pad(text: str, width: int) -> str:
    """Left-justify by visible width (escape codes take no room)."""
    return text + " " * max(0, width - len(_ANSI.sub("", text)))

SUITS = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}
SIDE_COLOR = {"punto": BLUE, "banco": RED, "tie": GREEN}
SIDE_LETTER = {"punto": "P", "banco": "B", "tie": "T"}


def _get(d: Any, key: str, default: Any = None) -> Any:
    return d.get(key, default) if isinstance(d, dict) else default


def _cards(codes: Any) -> list[str]:
    if not isinstance(codes, list):
        return []
    out = []
    for c in codes:
        if isinstance(c, dict):   # tolerate {"card": "5H", ...}
            c = c.get("card") or c.get("code")
        if c is not None:
            out.append(str(c))
    return out


def _source_tag(entry: Any) -> str:
    """``[camera 99.8%]`` or ``[api]`` for a card that did not come from the shoe; "" for the shoe's."""
    source = _get(entry, "source")
    if not source or source == "shoe":
        return ""
    conf = _get(entry, "confidence")
    return f"[{source} {conf * 100:.1f}%]" if isinstance(conf, (int, float)) else f"[{source}]"


def _side_sources(d: dict, side: str) -> list[Any]:
    """The entries of ``card_sources`` for ``side`` (coup/current), one per card."""
    entries = _get(d.get("card_sources"), side)
    return entries if isinstance(entries, list) else []


def _num(value: Any) -> str:
    return "?" if value is None else str(value)


def _next(d: dict) -> Any:
    """The side that gets the next card (``next``; the core also spells it ``next_side``)."""
    return d.get("next", d.get("next_side"))


SHOWN_ALERTS = 6   # active alerts drawn on the screen; the rest are counted


class TableView:
    def __init__(self, prefix: str, *, broker: str = "", color: bool = False, notes: list[str] | None = None) -> None:
        self.prefix = prefix
        self.notes = list(notes or [])    # lines kept under the screen (the demo's URLs and tokens)
        self.broker = broker
        self.color = color
        self.broker_state = "connecting"
        self.status: dict | None = None
        self.current: dict | None = None
        self.last_card: dict | None = None
        self.last_result: dict | None = None
        self.history: Any = None
        self.shoe: dict | None = None
        self.alerts: list[dict] = []
        self.last_alert_event: dict | None = None
        self.sources: Any = None
        self.roads: dict | None = None
        self.results_seen = 0
        self.updated: float | None = None
        self._alert_ids: tuple = ()
        self._sources_line: str | None = None
        self._shoe_key: tuple | None = None

    # -- colour helpers ----------------------------------------------------------------
    def _c(self, text: str, *codes: str) -> str:
        if not self.color or not codes:
            return text
        return "".join(codes) + text + RESET

    def _card(self, code: str) -> str:
        if not self.color or len(code) != 2:
            return code
        rank, suit = code[0], code[1]
        rank = "10" if rank == "T" else rank
        sym = SUITS.get(suit, suit)
        return self._c(rank + sym, RED if suit in "HD" else BOLD)

    # -- feeding ------------------------------------------------------------------------
    def broker_event(self, state: str, detail: str = "") -> list[str]:
        self.broker_state = state
        return [f"broker: {state}" + (f" ({detail})" if detail else "")]

    def apply(self, suffix: str, payload: bytes, retained: bool = False) -> list[str]:
        self.updated = time.time()
        try:
            doc = json.loads(payload) if payload else None
        except (ValueError, UnicodeDecodeError):
            return [f"{suffix}: unreadable payload ({len(payload)} bytes)"]
        handler = {
            topics.STATUS: self._status,
            topics.COUP_CURRENT: self._coup_current,
            topics.COUP_CARD: self._coup_card,
            topics.COUP_RESULT: self._coup_result,
            topics.HISTORY: self._history,
            topics.SHOE: self._shoe,
            topics.ALERTS_ACTIVE: self._alerts_active,
            topics.ALERTS_EVENT: self._alerts_event,
            topics.SOURCES: self._sources,
            topics.ROADS: self._roads,
        }.get(suffix)
        if handler is None:
            return []
        return handler(doc, retained)

    def _status(self, doc: Any, retained: bool) -> list[str]:
        self.status = doc if isinstance(doc, dict) else {"state": str(doc)}
        extra = []
        if _get(doc, "table_id") is not None:
            extra.append(f"table {doc['table_id']}")
        if _get(doc, "version") is not None:
            extra.append(f"v{doc['version']}")
        return [f"status: {_get(self.status, 'state', '?')}" + (f" ({', '.join(extra)})" if extra else "")]

    def _coup_current(self, doc: Any, retained: bool) -> list[str]:
        if not isinstance(doc, dict):
            self.current = None
            return ["coup: none"] if retained else []
        self.current = doc
        # Republished after every card: in line mode only the snapshot a late joiner gets.
        return [self.current_line()] if retained else []

    def _hand(self, d: dict, side: str, *, styled: bool = False) -> list[str]:
        """A side's cards, each with its source tag unless the shoe read it."""
        sources = _side_sources(d, side)
        out = []
        for i, code in enumerate(_cards(d.get(side))):
            tag = _source_tag(sources[i]) if i < len(sources) else ""
            if styled:
                code, tag = self._card(code), self._c(tag, YELLOW) if tag else ""
            out.append(code + tag)
        return out

    def current_line(self) -> str:
        d = self.current or {}
        punto, banco = self._hand(d, "punto"), self._hand(d, "banco")
        nxt = _next(d)
        state = "complete" if d.get("complete") else (f"next: {nxt}" if nxt else "waiting")
        if d.get("voided"):
            state = "voided"
        head = f"coup {_num(d.get('coup'))}"
        if d.get("shoe") is not None:
            head += f" (shoe {d['shoe']})"
        line = (
            f"{head} now: punto {' '.join(punto) or '-'} ({_num(d.get('punto_total'))})"
            f" | banco {' '.join(banco) or '-'} ({_num(d.get('banco_total'))}) | {state}"
        )
        if d.get("last_hand"):
            line += " | last hand"
        return line

    def _coup_card(self, doc: Any, retained: bool) -> list[str]:
        if not isinstance(doc, dict):
            return []
        self.last_card = doc
        cur = self.current if isinstance(self.current, dict) else {}
        if cur.get("coup") != doc.get("coup") or cur.get("complete"):
            cur = {"coup": doc.get("coup"), "shoe": cur.get("shoe"), "punto": [], "banco": []}
        side = doc.get("side")
        card = doc.get("card")
        role = doc.get("role")
        if role not in (None, "coup") and side is None:
            # A burn card or an extra card: in no hand.
            line = f"coup {_num(doc.get('coup'))} {role} card: {card or '?'}"
            return [line + (f" [{doc['source']}]" if doc.get("source") else "")]
        if side in ("punto", "banco") and card is not None:
            cur = dict(cur)
            hand = _cards(cur.get(side))
            sources = (_side_sources(cur, side) + [{}] * len(hand))[:len(hand)]
            entry = {k: doc[k] for k in ("source", "confidence") if doc.get(k) is not None}
            known = cur.get("card_sources")
            cur["card_sources"] = {**(known if isinstance(known, dict) else {}), side: sources + [entry]}
            cur[side] = hand + [str(card)]
        nxt = _next(doc)
        cur["punto_total"] = doc.get("punto_total", cur.get("punto_total"))
        cur["banco_total"] = doc.get("banco_total", cur.get("banco_total"))
        cur["next"] = nxt
        cur["complete"] = False
        self.current = cur
        line = (
            f"coup {_num(doc.get('coup'))} card: {side or '?'} {card or '?'}"
            f" -> punto {_num(doc.get('punto_total'))} banco {_num(doc.get('banco_total'))}"
            f" | {'next: ' + nxt if nxt else 'no more cards'}"
        )
        if doc.get("source"):
            line += f" [{doc['source']}]"
        return [line]

    def _coup_result(self, doc: Any, retained: bool) -> list[str]:
        if not isinstance(doc, dict):
            return []
        self.last_result = doc
        self.results_seen += 1
        if isinstance(self.current, dict) and self.current.get("coup") == doc.get("coup"):
            self.current = dict(self.current, complete=True, next=None)
        return [self.result_line(doc)]

    def result_line(self, d: dict, *, styled: bool = False) -> str:
        winner = d.get("winner")
        pt, bt = d.get("punto_total"), d.get("banco_total")
        if winner == "tie":
            head = f"tie {_num(pt)} to {_num(bt)}"
        elif winner == "punto":
            head = f"punto wins {_num(pt)} to {_num(bt)}"
        elif winner == "banco":
            head = f"banco wins {_num(bt)} to {_num(pt)}"
        else:
            head = f"{winner or '?'}: punto {_num(pt)} banco {_num(bt)}"
        if styled:
            head = self._c(head, BOLD, SIDE_COLOR.get(winner, ""))
        parts = [f"coup {_num(d.get('coup'))} result: {head}"]
        punto, banco = _cards(d.get("punto")), _cards(d.get("banco"))
        if punto or banco:
            parts.append(f"punto {' '.join(punto) or '-'}")
            parts.append(f"banco {' '.join(banco) or '-'}")
        if d.get("natural"):
            nt = d.get("natural_total")
            parts.append(f"natural {nt}" if nt is not None else "natural")
        pairs = [s for s in ("punto", "banco") if d.get(f"{s}_pair")]
        if pairs:
            parts.append(" and ".join(pairs) + (" pairs" if len(pairs) > 1 else " pair"))
        return " | ".join(parts)

    def _history(self, doc: Any, retained: bool) -> list[str]:
        self.history = doc
        return [f"history: {self.history_text() or 'empty'}"] if retained else []

    def history_items(self) -> list[Any]:
        doc = self.history
        if isinstance(doc, dict):
            for key in ("coups", "history", "results", "last"):
                if isinstance(doc.get(key), list):
                    return doc[key]
            return []
        return doc if isinstance(doc, list) else []

    def history_text(self, *, styled: bool = False) -> str:
        out = []
        for item in self.history_items():
            winner = item.get("winner") if isinstance(item, dict) else item
            letter = SIDE_LETTER.get(winner, "?") if isinstance(winner, str) else "?"
            out.append(self._c(letter, SIDE_COLOR.get(winner, "")) if styled else letter)
        return " ".join(out)

    def _shoe(self, doc: Any, retained: bool) -> list[str]:
        if not isinstance(doc, dict):
            return []
        self.shoe = doc
        key = (doc.get("decks"), doc.get("cut_card_out"), doc.get("last_hand"))
        changed = key != self._shoe_key
        self._shoe_key = key
        # dealt/remaining change with every card: in line mode, print the snapshot and real changes.
        return [self.shoe_line()] if (retained or changed) else []

    def shoe_line(self) -> str:
        d = self.shoe or {}
        parts = []
        if d.get("decks") is not None:
            parts.append(f"{d['decks']} decks")
        if d.get("dealt") is not None:
            parts.append(f"{d['dealt']} dealt")
        if d.get("remaining") is not None:
            parts.append(f"{d['remaining']} left")
        if d.get("cut_card_out"):
            parts.append("cut card out")
        if d.get("last_hand"):
            parts.append("last hand")
        return "shoe: " + (", ".join(parts) or "?")

    def _alerts_active(self, doc: Any, retained: bool) -> list[str]:
        alerts = _get(doc, "alerts", doc if isinstance(doc, list) else [])
        self.alerts = [a for a in alerts if isinstance(a, dict)] if isinstance(alerts, list) else []
        ids = tuple(str(a.get("id", a.get("kind", ""))) for a in self.alerts)
        changed = ids != self._alert_ids
        self._alert_ids = ids
        if not (retained or changed):
            return []
        if not self.alerts:
            return ["alerts: none active"]
        return [f"alerts: {len(self.alerts)} active: " + "; ".join(self.alert_text(a) for a in self.alerts)]

    @staticmethod
    def alert_text(a: dict) -> str:
        sev = a.get("severity")
        text = a.get("message") or a.get("kind") or a.get("id") or "?"
        return (f"[{sev}] " if sev else "") + str(text)

    def _alerts_event(self, doc: Any, retained: bool) -> list[str]:
        if not isinstance(doc, dict):
            return []
        self.last_alert_event = doc
        what = doc.get("action") or doc.get("event") or doc.get("state")
        alert = doc.get("alert") if isinstance(doc.get("alert"), dict) else doc
        return ["alert: " + (f"{what}: " if what else "") + self.alert_text(alert)]

    def _sources(self, doc: Any, retained: bool) -> list[str]:
        self.sources = doc
        line = "sources: " + self.sources_text()
        if line == self._sources_line and not retained:
            return []
        self._sources_line = line
        return [line]

    def sources_text(self) -> str:
        doc = self.sources
        items = _get(doc, "sources", doc)
        parts = []
        if isinstance(items, dict):
            items = [dict(v, name=k) if isinstance(v, dict) else {"name": k, "state": v} for k, v in items.items()
                     if k not in ("schema", "seq", "table_id", "type")]
        if isinstance(items, list):
            for s in items:
                if isinstance(s, dict):
                    name = s.get("name") or s.get("id") or s.get("kind") or "?"
                    state = s.get("state") or s.get("link") or ("up" if s.get("connected") else "down"
                                                                if "connected" in s else "?")
                    parts.append(f"{name} {state}")
        return ", ".join(parts) or "?"

    def _roads(self, doc: Any, retained: bool) -> list[str]:
        if isinstance(doc, dict):
            self.roads = doc
        return []

    def big_road_lines(self, width: int = 78) -> list[str]:
        """The Big Road as a 6-row grid: B / P, lower case when ties sit on the cell."""
        big = _get(self.roads, "big_road")
        cells = _get(big, "cells") or []
        if not cells:
            return []
        rows = int(_get(big, "rows", 6) or 6)
        cols = max(c.get("col", 0) for c in cells) + 1
        first = max(0, cols - (width - 9))  # the newest columns when the road is wide
        grid = [[" "] * (cols - first) for _ in range(rows)]
        for cell in cells:
            col, row = cell.get("col", 0) - first, cell.get("row", 0)
            if 0 <= col < cols - first and 0 <= row < rows:
                mark = "B" if cell.get("winner") == "banco" else "P"
                if cell.get("ties"):
                    mark = mark.lower()
                grid[row][col] = self._c(mark, BOLD, SIDE_COLOR["banco" if mark in "Bb" else "punto"])
        return ["Big Road " + "".join(grid[0])] + ["         " + "".join(r) for r in grid[1:]]

    # -- the terminal screen ----------------------------------------------------------------
    def screen(self, width: int = 80) -> str:
        c = self._c
        state = _get(self.status, "state", "unknown")
        state_txt = c(str(state).upper(), BOLD, GREEN if state == "online" else RED)
        version = _get(self.status, "version")
        lines = [
            c(f"{self.prefix}", BOLD) + f"  daemon {state_txt}" + (f" v{version}" if version else "")
            + f"  broker {self.broker} {self.broker_state}",
            "─" * min(width, 78),
        ]
        cur = self.current if isinstance(self.current, dict) else None
        if cur:
            head = f"Coup {_num(cur.get('coup'))}"
            if cur.get("shoe") is not None:
                head += f"   shoe {cur['shoe']}"
            lines.append(c(head, BOLD))
            for side in ("punto", "banco"):
                cards = " ".join(self._hand(cur, side, styled=True)) or "-"
                total = _num(cur.get(f"{side}_total"))
                lines.append(f"  {c(side.upper().ljust(6), BOLD, SIDE_COLOR[side])}  {_pad(cards, 24)}  {c(total, BOLD)}")
            nxt = _next(cur)
            if cur.get("voided"):
                lines.append("  " + c("voided", BOLD, YELLOW))
            elif cur.get("complete"):
                lines.append("  complete")
            else:
                lines.append(f"  next: {c(nxt, BOLD, SIDE_COLOR.get(nxt, '')) if nxt else '-'}")
            awaiting = cur.get("awaiting") if isinstance(cur.get("awaiting"), dict) else {}
            if awaiting.get("unreadable"):
                lines.append("  " + c("waiting for a person: the shoe could not read a card; "
                                      "enter it at the console", BOLD, YELLOW))
            if cur.get("held"):
                lines.append("  " + c("held: a supervisor resolves it at the console", BOLD, RED))
        else:
            lines.append("No coup yet")
        lines.append("")
        if self.last_result:
            lines.append("Result   " + self.result_line(self.last_result, styled=True))
        hist = self.history_text(styled=True)
        if hist:
            lines.append("Last     " + hist)
        lines.extend(self.big_road_lines(min(width, 78)))
        if self.shoe:
            shoe = self.shoe_line()[len("shoe: "):]
            if self.shoe.get("last_hand"):
                shoe = shoe.replace(", last hand", "").replace("last hand", "") + "  " + c("LAST HAND", BOLD, YELLOW)
            lines.append("Shoe     " + shoe)
        if self.sources is not None:
            lines.append("Sources  " + self.sources_text())
        if self.alerts:
            lines.append(c(f"Alerts   {len(self.alerts)} active", BOLD, RED))
            for a in self.alerts[:SHOWN_ALERTS]:
                sev = a.get("severity")
                colour = RED if sev in ("error", "critical") else YELLOW
                lines.append("  " + c(self.alert_text(a), colour))
            if len(self.alerts) > SHOWN_ALERTS:     # the screen keeps its notes in view
                lines.append(f"  ... and {len(self.alerts) - SHOWN_ALERTS} more")
        else:
            lines.append("Alerts   none")
        if self.updated:
            lines.append(c(time.strftime("updated %H:%M:%S", time.localtime(self.updated)), DIM))
        if self.notes:
            lines.append("─" * min(width, 78))
            lines.extend(self.notes)
        return "\n".join(lines)
