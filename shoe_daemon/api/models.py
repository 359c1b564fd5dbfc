"""Request and response models of the HTTP API (they make the OpenAPI schema).

Requests are strict: ``extra="forbid"`` (a misspelt field is a 422, never ignored) and
``strict=True`` (``"index": false`` or ``"seat": "1"`` is a 422, never card 0 or box 1). A pattern
here is the whole rule: what it matches, the code takes (``"0"`` is not an amount).
Responses carry the core's payloads: the documented fields are typed, and further
fields (the same as on MQTT, docs/mqtt.md) are allowed. Amounts are strings.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from shoe_daemon.game.cards import CardCodeError, parse_card

# A positive decimal: at most 12 significant integer digits and 6 decimals, not zero (the code
# refuses a zero stake; the schema says so). No look-ahead: pydantic's regex engine has none.
AMOUNT_PATTERN = (r"^(?:0*[1-9][0-9]{0,11}(?:\.[0-9]{1,6})?"
                  r"|0+\.(?:[1-9][0-9]{0,5}|0[1-9][0-9]{0,4}|00[1-9][0-9]{0,3}|000[1-9][0-9]{0,2}|0000[1-9][0-9]?|00000[1-9]))$")
COUP_ID_PATTERN = r"^[0-9]{1,9}-[0-9]{1,9}$"
CARD_PATTERN = r"^(?:10|[2-9TJQKAtjqka])[SHDCshdc]$"


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


# --------------------------------------------------------------------------- errors


class ErrorDetail(BaseModel):
    loc: str = Field(description="where: body.bets.0.amount, query.limit, ...")
    message: str


class ErrorInfo(BaseModel):
    status: int
    code: str = Field(description="unauthorized, forbidden, not_found, invalid_request, rejected, conflict, ...")
    message: str = Field(description="one sentence for a person")
    details: list[ErrorDetail] | None = None
    journal_seq: int | None = Field(None, description="the journaled event the core rejected (rejected only)")
    alert: dict[str, Any] | None = Field(None, description="the core's action_rejected alert (rejected only)")
    violations: list[dict[str, Any]] | None = Field(None, description="every broken table limit (bets only)")


class Error(BaseModel):
    error: ErrorInfo


# --------------------------------------------------------------------------- writes


class Write(_Request):
    reason: str = Field(min_length=1, max_length=500,
                        description="why: goes into the journal and the audit log (required on every write)")

    @field_validator("reason")
    @classmethod
    def _reason(cls, v: str) -> str:
        v = v.strip()
        if not v:
            raise ValueError("reason must not be blank: say why")
        return v


def _card(v: str) -> str:
    try:
        return parse_card(v).code
    except CardCodeError as exc:
        raise ValueError(f"{exc} (a card code is rank A 2-9 T J Q K + suit S H D C, e.g. TH)") from None


class ManualCard(Write):
    card: str = Field(pattern=CARD_PATTERN, description="the card as read by a person, e.g. TH, 9S, 10D")

    _check_card = field_validator("card")(classmethod(lambda cls, v: _card(v)))


class CoupAction(Write):
    coup_id: str | None = Field(None, pattern=COUP_ID_PATTERN,
                                description="the coup the supervisor means (default: the current one); "
                                            "a coup that is no longer current is refused with 409")


class CorrectCard(CoupAction):
    index: int = Field(ge=0, le=5, description="0-based position in the coup's dealing order (P1 B1 P2 B2 P3 B3)")
    card: str = Field(pattern=CARD_PATTERN, description="the right card, e.g. KH")

    _check_card = field_validator("card")(classmethod(lambda cls, v: _card(v)))


class NewShoe(Write):
    decks: Literal[4, 6, 8] | None = Field(None, description="default: the table's [table] decks")


class BetIn(_Request):
    seat: int = Field(ge=1, le=7, description="box 1-7")
    kind: Literal["punto", "banco", "tie"]
    amount: str = Field(pattern=AMOUNT_PATTERN, max_length=40,
                        description='a positive decimal as a string, e.g. "25" or "12.50" (not "0")')


class PlaceBets(Write):
    coup_id: str | None = Field(None, pattern=COUP_ID_PATTERN,
                                description="the coup the bets are for (default: the coup bets are open for)")
    bets: list[BetIn] = Field(max_length=21, description="every bet of every box; replaces earlier bets of the coup")


# --------------------------------------------------------------------------- responses


class Health(BaseModel):
    status: Literal["ok"]


class Whoami(BaseModel):
    user: str = Field(description="the token's user ([[api.tokens]] user)")
    role: Literal["dealer", "supervisor", "pit", "technician"]


class Ready(BaseModel):
    ready: bool
    reasons: list[str] = Field(description="why not ready (empty when ready)")
    checks: dict[str, bool] = Field(description="journal, shoe, broker, core")


class Alert(_Open):
    id: str
    kind: str
    severity: Literal["info", "warning", "error", "critical"]
    shoe: int
    coup: int
    message: str
    evidence: dict[str, Any] = {}
    t: float
    source: str | None = None
    acknowledged: dict[str, Any] | None = None
    cleared: dict[str, Any] | None = None


class Alerts(BaseModel):
    active: list[Alert]
    past: list[Alert] = Field(description="cleared alerts, oldest first (the last 200)")


class CardSource(_Open):
    """Who read one card; a camera card also has ``confidence`` (0-1), as in coup/current."""

    source: str = Field(description="shoe, camera, api, ...")


class CardSources(_Open):
    punto: list[CardSource]
    banco: list[CardSource]


class Coup(_Open):
    """The coup/current payload (docs/mqtt.md) plus the coup that bets are open for."""

    shoe: int
    coup: int
    coup_id: str
    punto: list[str]
    banco: list[str]
    punto_total: int
    banco_total: int
    next_side: str | None
    complete: bool
    settled: bool
    held: bool
    voided: bool
    last_hand: bool
    announce: str | None = None
    card_sources: CardSources | None = Field(None, description="who read each card, parallel to punto and banco")
    bets_open_for: str | None = Field(None, description="the coup a POST /bets goes to (null: the shoe is over)")


class Shoe(_Open):
    """The shoe payload (docs/mqtt.md) plus the composition dealt."""

    shoe: int
    decks: int
    cards: int
    dealt: int
    burned: int
    discarded: int
    remaining: int
    coups: int
    cut_card_out: bool
    last_hand: bool
    shoe_over: bool
    remaining_by_value: list[int]
    remaining_by_code: dict[str, int]
    dealt_by_value: list[int]
    dealt_by_code: dict[str, int]


class CoupRecall(_Open):
    """A coup as the journal keeps it: the result (or the void), every card with its source,
    its alerts, and the settlement of its bets."""

    coup_id: str
    shoe: int
    coup: int
    recorded: float = Field(description="when the daemon recorded it (epoch seconds)")
    voided: bool = False
    winner: str | None = None
    punto: list[str] | None = None
    banco: list[str] | None = None
    dealt: list[dict[str, Any]] = Field([], description="the card records, in order, each with its source")
    sources: list[str] = []
    alerts: list[dict[str, Any]] = []
    settlement: dict[str, Any] | None = None


class CoupList(BaseModel):
    coups: list[CoupRecall] = Field(description="oldest first")


class JournalEvent(BaseModel):
    seq: int
    t: float
    kind: str
    source: str
    data: dict[str, Any]


class JournalPage(BaseModel):
    events: list[JournalEvent]
    last_seq: int = Field(description="the newest seq in the journal")
    next_after: int | None = Field(description="pass as ?after= for the next page (null: nothing more yet)")


class Message(BaseModel):
    topic: str = Field(description="relative to the MQTT prefix, e.g. coup/card")
    retain: bool
    payload: dict[str, Any]


class WriteResult(BaseModel):
    journal_seq: int = Field(description="the journaled event")
    event: JournalEvent
    alerts: list[dict[str, Any]] = Field(description="alert events (raised, cleared, acknowledged) it produced")
    messages: list[Message] = Field(description="everything the core published for it")
    coup: dict[str, Any] | None = Field(description="the coup/current payload afterwards")


class BetOut(BaseModel):
    seat: int
    kind: str
    amount: str


class BetsResult(BaseModel):
    journal_seq: int
    coup_id: str
    bets: list[BetOut]
    totals: dict[str, str] = Field(description="per kind: all boxes together")
    limits: dict[str, Any]


class SettledBet(BetOut):
    outcome: Literal["win", "lose", "push", "void"] | None = None
    won: str | None = None
    returned: str | None = None
    net: str | None = None


class Settlement(_Open):
    coup_id: str
    status: Literal["open", "settled", "void"] = Field(
        description="open: bets placed, the coup is not settled yet; settled: payouts final (a correction may "
                    "re-settle it, revision + 1); void: every stake is returned")
    revision: int | None = None
    winner: str | None = None
    placed: dict[str, Any] | None = None
    bets: list[SettledBet]
    totals: dict[str, str] | None = None


class ReloadResult(BaseModel):
    journal_seq: int
    path: str
    applied: list[str] = Field(description="settings now in force")
    restart_needed: list[str] = Field(description="settings that differ from the running ones and need a restart")


class AuditEntries(BaseModel):
    path: str
    entries: list[dict[str, Any]] = Field(description="oldest first")


class Status(BaseModel):
    table_id: str
    version: str
    uptime_s: float
    ready: bool
    events_processed: int
    lights: str
    active_alerts: int
    sources: dict[str, dict[str, Any]] = Field(description="each card source and its link, from the core")
    shoe_port: dict[str, Any] | None = Field(description="the serial port: connected, reconnects, bytes_in, last_error")
    broker: dict[str, Any] | None = Field(description="the MQTT publisher's figures")
    camera: dict[str, Any] | None = Field(None, description="the overhead camera when enabled: connected, frames, "
                                          "fps, cards decided (ok / unsure), recognition ms p50/p95, last_error")
    journal: dict[str, Any]
    api: dict[str, Any]
