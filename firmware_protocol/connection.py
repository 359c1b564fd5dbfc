"""The ShoeLink v1 link state machines, sans-I/O (PROTOCOL.md sections 8-11).

Both sides are pure objects driven by bytes and timestamps; nothing here reads
a clock, sleeps or starts a thread. The pattern is h11's:

    conn.receive_data(data, now)          # bytes read from the port
    while (event := conn.next_event()) is not NEED_DATA:
        ...                               # typed messages and link events
    port.write(conn.tick(now))            # protocol replies + timers
    port.write(conn.send(SetLights(Lights.PUNTO), now))

``now`` is seconds as a float on whatever clock the caller uses for both
calls (the daemon passes ``time.time()`` so shoe timestamps map to wall-clock
time; tests pass a fake clock). Call ``tick`` after every ``receive_data`` and
at least every 100 ms.

HostConnection is the daemon's side: handshake, sequence tracking, gap
detection -> resend requests, duplicate suppression, in-order exactly-once
delivery of events, cumulative ACKs, keep-alives, link timeout, re-handshake
after a reconnect that fetches what was missed, clock sync and the dealer
lights. ShoeConnection is the shoe's side (the emulator uses it; it is also a
readable model for firmware): ring of recent events, resends, heartbeats,
status and clock-sync replies.
"""

from __future__ import annotations

import collections
import dataclasses
from dataclasses import dataclass
from enum import StrEnum

from firmware_protocol.codec import DecodeError, Decoder, ErrorKind, encode_frame
from firmware_protocol.messages import (
    CAPABILITIES_ALL,
    FLAG_RETRANSMIT,
    PROTOCOL_VERSION,
    SEQ_MOD,
    TIME_MOD,
    Ack,
    Button,
    ButtonPressed,
    CardDrawn,
    CardPushedBack,
    CardUnreadable,
    ClockSync,
    ClockSyncReply,
    CutCard,
    Fault,
    FaultCode,
    Heartbeat,
    HostHello,
    Lights,
    Message,
    ResendGone,
    ResendRequest,
    SetLights,
    ShoeFlags,
    ShoeHello,
    ShoeState,
    ShoeStateCode,
    Status,
    StatusRequest,
    Tamper,
    TamperKind,
    is_host_to_shoe,
    is_sequenced,
    is_shoe_to_host,
)

# -- timing defaults (PROTOCOL.md section 10) ---------------------------------------------
HEARTBEAT_INTERVAL = 1.0     # shoe -> host HEARTBEAT period
KEEPALIVE_INTERVAL = 1.0     # host -> shoe: an ACK at least this often while the link is up
LINK_TIMEOUT_BEATS = 3       # link down after this many heartbeat periods without a valid frame
HELLO_INTERVAL = 0.5         # host repeats HOST_HELLO while handshaking
RESEND_TIMEOUT = 0.5         # host repeats a RESEND_REQUEST for a seq still missing after this long
RESEND_RETRIES = 10          # ... and gives the seq up as lost after this many requests
CLOCK_SYNC_INTERVAL = 60.0   # host re-syncs the shoe clock this often
IDLE_GAP = 0.010             # a sender idle this long precedes its next frame with a 0x00
RING_SIZE = 64               # events the reference shoe keeps for resends
MAX_RESEND_COUNT = 64        # events asked for in one RESEND_REQUEST


def seq_diff(a: int, b: int) -> int:
    """Signed distance a - b in sequence space (-32768 .. 32767)."""
    d = (a - b) % SEQ_MOD
    return d - SEQ_MOD if d >= SEQ_MOD // 2 else d


def time_diff(a: int, b: int) -> int:
    """Signed distance a - b between two 32-bit shoe millisecond counters."""
    d = (a - b) % TIME_MOD
    return d - TIME_MOD if d >= TIME_MOD // 2 else d


class _NeedData:
    def __repr__(self) -> str:
        return "NEED_DATA"


NEED_DATA = _NeedData()


class LinkState(StrEnum):
    DOWN = "down"                # no port (never opened, or lost)
    HANDSHAKING = "handshaking"  # port open, HOST_HELLO sent, waiting for SHOE_HELLO
    UP = "up"


# -- events the connections produce besides messages -----------------------------------

@dataclass(frozen=True, slots=True)
class LinkUp:
    info: ShoeHello
    resumed: bool        # same shoe session as before: delivery continues where it stopped
    missed: int          # events the host is fetching from the ring after this handshake


@dataclass(frozen=True, slots=True)
class LinkDown:
    reason: str          # "timeout", "closed", "shoe_restarted", "unsupported_version", or the port's error


@dataclass(frozen=True, slots=True)
class ResendRequested:
    first_seq: int
    count: int
    attempt: int         # 1 for the first request of this range


@dataclass(frozen=True, slots=True)
class EventsLost:
    """Events that will never arrive (cards among them must come from the camera)."""

    first_seq: int
    count: int
    reason: str          # "gone" (not in ring), "retries", "not_in_ring", "shoe_restarted"


@dataclass(frozen=True, slots=True)
class ClockSynced:
    offset_ms: float     # shoe_ms - host_ms
    rtt_ms: float


@dataclass(frozen=True, slots=True)
class HostLinkChanged:
    """Shoe side: the host started or stopped talking (no valid host frame for host_timeout)."""

    present: bool


@dataclass
class HostStats:
    frames: int = 0
    events: int = 0
    duplicates: int = 0
    decode_errors: int = 0
    resend_requests: int = 0
    events_lost: int = 0
    link_ups: int = 0
    link_downs: int = 0


# -- the host's side -----------------------------------------------------------------------------

@dataclass
class _Miss:
    last_request: float
    attempts: int


class _Lost:
    """Placeholder in the reorder buffer for a seq given up as lost."""

    __slots__ = ("reason",)

    def __init__(self, reason: str):
        self.reason = reason


class HostConnection:
    """The daemon's end of the link.

    ``resume=(boot_id, seq)`` continues a session the journal remembers: after
    the handshake, events after ``seq`` are fetched if the shoe has not rebooted.
    Without it the first handshake fetches what the shoe has not seen acknowledged.
    """

    def __init__(
        self,
        *,
        resume: tuple[int, int] | None = None,
        hello_interval: float = HELLO_INTERVAL,
        keepalive_interval: float = KEEPALIVE_INTERVAL,
        link_timeout: float | None = None,
        resend_timeout: float = RESEND_TIMEOUT,
        resend_retries: int = RESEND_RETRIES,
        clock_sync_interval: float | None = CLOCK_SYNC_INTERVAL,
    ):
        self.hello_interval = hello_interval
        self.keepalive_interval = keepalive_interval
        self._link_timeout = link_timeout
        self.resend_timeout = resend_timeout
        self.resend_retries = resend_retries
        self.clock_sync_interval = clock_sync_interval

        self.state = LinkState.DOWN
        self.info: ShoeHello | None = None
        self.stats = HostStats()
        self._decoder = Decoder()
        self._events: collections.deque = collections.deque()
        self._out: list[bytes] = []
        self._tx_seq = 0
        self._last_tx = float("-inf")
        self._last_rx = 0.0
        self._last_hello_tx = float("-inf")
        self._last_ack_tx = float("-inf")
        self._ack_due = False
        self._withholding = False           # withhold_acks(): acknowledge nothing new
        self._ack_ceiling: int | None = None  # ... and so ACK at most this seq

        self._boot_id: int | None = resume[0] if resume else None
        self._delivered: int | None = resume[1] % SEQ_MOD if resume else None  # last seq delivered
        self._highest: int | None = self._delivered                              # highest seq known to exist
        self._pending: dict[int, object] = {}   # out-of-order: seq -> Message | DecodeError | _Lost
        self._misses: dict[int, _Miss] = {}

        self._lights: tuple[Lights, bool] | None = None
        self._lights_due = False
        self._last_lights_tx = float("-inf")
        self._sync_due_at: float | None = None
        self._sync_sent: tuple[int, float] | None = None   # (host_time_ms sent, now)
        self._anchor: tuple[int, float] | None = None     # (shoe time_ms, host seconds)
        self._anchor_synced = False

    # -- properties ----------------------------------------------------------------------------
    @property
    def link_timeout(self) -> float:
        if self._link_timeout is not None:
            return self._link_timeout
        beat = (self.info.heartbeat_ms / 1000.0) if self.info else HEARTBEAT_INTERVAL
        return LINK_TIMEOUT_BEATS * beat

    @property
    def configured_link_timeout(self) -> float | None:
        """The link timeout given to the constructor; None: derived from the shoe's heartbeat."""
        return self._link_timeout

    @property
    def last_seq(self) -> int | None:
        """The last event seq delivered in order (what the host acknowledges)."""
        return self._delivered

    @property
    def boot_id(self) -> int | None:
        return self._boot_id

    def withhold_acks(self) -> None:
        """Acknowledge nothing delivered from now on: a host that cannot store events (its journal
        is unavailable) but keeps the link for the lights. ACK frames still go out, carrying the
        point this session started from (section 9.5), so the shoe keeps every event after it in its
        ring and a later session fetches them. Not undone: that later session is a new connection."""
        self._withholding = True
        if self.state is LinkState.UP:
            self._ack_ceiling = self._delivered

    @property
    def missing(self) -> list[int]:
        """Seqs known to exist that have not arrived yet, oldest first."""
        if self._delivered is None or self._highest is None:
            return []
        n = seq_diff(self._highest, self._delivered)
        return [s for s in ((self._delivered + i) % SEQ_MOD for i in range(1, n + 1)) if s not in self._pending]

    @property
    def in_sync(self) -> bool:
        """Up, and every event the shoe announced has been delivered."""
        return self.state is LinkState.UP and self._highest == self._delivered

    # -- port events ---------------------------------------------------------------------------
    def connection_made(self, now: float) -> None:
        """The port was (re)opened: start the handshake."""
        self._decoder.reset()
        self.state = LinkState.HANDSHAKING
        self._last_rx = now
        self._last_hello_tx = float("-inf")

    def connection_lost(self, now: float, reason: str = "closed") -> None:
        """The port failed or was closed."""
        self._go_down(reason)
        self.state = LinkState.DOWN
        self._decoder.reset()

    def _go_down(self, reason: str) -> None:
        if self.state is LinkState.UP:
            self.stats.link_downs += 1
            self._events.append(LinkDown(reason))
        self._misses.clear()      # requests restart after the next handshake
        self._sync_sent = None
        if self.state is not LinkState.DOWN:
            self.state = LinkState.HANDSHAKING

    # -- input -----------------------------------------------------------------------------------
    def receive_data(self, data: bytes, now: float) -> None:
        if self.state is LinkState.DOWN:
            self.connection_made(now)
        for item in self._decoder.feed(data):
            if isinstance(item, DecodeError):
                self._on_decode_error(item, now)
            else:
                self._on_message(item, now)

    def next_event(self):
        """The next event, or NEED_DATA."""
        return self._events.popleft() if self._events else NEED_DATA

    def events(self) -> list:
        """Every pending event (drains the queue)."""
        out = list(self._events)
        self._events.clear()
        return out

    def _on_decode_error(self, err: DecodeError, now: float) -> None:
        self.stats.decode_errors += 1
        if err.seq is not None and err.msg_type is not None and is_sequenced(err.msg_type):
            # A good CRC on an event we cannot interpret: the seq is used up. Deliver the
            # error in its place so the stream stays complete and the seq is acknowledged.
            self._last_rx = now
            if self.state is LinkState.UP:
                self._accept_event(err.seq, err)
                return
        self._events.append(err)

    def _on_message(self, msg: Message, now: float) -> None:
        self.stats.frames += 1
        if not is_shoe_to_host(msg.TYPE):
            self.stats.decode_errors += 1
            self._events.append(DecodeError(ErrorKind.WRONG_DIRECTION, f"{msg.TYPE.name} sent to the host",
                                            msg_type=msg.TYPE, seq=msg.seq))
            return
        self._last_rx = now
        if self._anchor is None or (not self._anchor_synced and not msg.retransmit):
            self._anchor = (msg.time_ms, now)
        if isinstance(msg, ShoeHello):
            self._on_hello(msg, now)
            return
        if self.state is not LinkState.UP:
            return  # before the handshake seqs mean nothing: the hello tells what to fetch
        if msg.sequenced:
            self._accept_event(msg.seq, msg)
            return
        self._note_highest(msg.seq)
        if isinstance(msg, Heartbeat | Status):
            if self._lights is not None and msg.lights != self._lights[0]:
                self._lights_due = True
            self._events.append(msg)
        elif isinstance(msg, ClockSyncReply):
            self._on_clock_reply(msg, now)
        elif isinstance(msg, ResendGone):
            for i in range(msg.count):
                s = (msg.first_seq + i) % SEQ_MOD
                if self._is_ahead(s) and s not in self._pending:
                    self._note_highest(s)
                    self._pending[s] = _Lost("gone")
                    self._misses.pop(s, None)
            self._flush()
        else:  # pragma: no cover - every shoe->host type is handled above
            self._events.append(msg)

    def _on_hello(self, hello: ShoeHello, now: float) -> None:
        if hello.version != PROTOCOL_VERSION:
            self._go_down("unsupported_version")
            self._events.append(DecodeError(ErrorKind.BAD_FIELD, f"shoe speaks protocol {hello.version}",
                                            msg_type=hello.TYPE, seq=hello.seq))
            return
        restarted = self._boot_id is not None and hello.boot_id != self._boot_id
        if self.state is LinkState.UP and not restarted:
            self.info = hello
            self._note_highest(hello.seq)
            return
        if restarted:
            self._go_down("shoe_restarted")
            # Whatever the old session still owed us is gone with the shoe's RAM.
            if self._delivered is not None and self._highest is not None:
                owed = seq_diff(self._highest, self._delivered)
                if owed > 0:
                    self._emit_lost((self._delivered + 1) % SEQ_MOD, owed, "shoe_restarted")
            self._pending.clear()
            self._misses.clear()
            self._delivered = None
            self._anchor = (hello.time_ms, now)
            self._anchor_synced = False
        resumed = self._delivered is not None and not restarted
        start = self._delivered if resumed else hello.last_acked
        if seq_diff(hello.seq, start) < 0:
            start = hello.seq  # we claim more than the shoe ever sent: trust the shoe
        self._boot_id = hello.boot_id
        self._delivered = start
        self._highest = start
        self.info = hello
        self.state = LinkState.UP
        self._last_rx = now
        self.stats.link_ups += 1
        # Events older than the ring's oldest cannot be fetched.
        held_from = hello.oldest_seq
        unfetchable = seq_diff(held_from, (start + 1) % SEQ_MOD)
        missed = seq_diff(hello.seq, start)
        self._events.append(LinkUp(hello, resumed, missed))
        if 0 < unfetchable <= missed:
            self._emit_lost((start + 1) % SEQ_MOD, unfetchable, "not_in_ring")
            self._delivered = self._highest = (start + unfetchable) % SEQ_MOD
        self._note_highest(hello.seq)
        if self._withholding:
            self._ack_ceiling = self._delivered   # what this session starts from is acknowledged already
        self._ack_due = True
        self._lights_due = self._lights is not None
        self._sync_due_at = now if self.clock_sync_interval is not None else None

    def _on_clock_reply(self, reply: ClockSyncReply, now: float) -> None:
        if self._sync_sent is None or reply.host_time_ms != self._sync_sent[0]:
            return  # a late or foreign reply
        t0 = self._sync_sent[1]
        self._sync_sent = None
        shoe_processing = time_diff(reply.time_ms, reply.shoe_rx_ms) / 1000.0
        rtt = max(0.0, (now - t0) - shoe_processing)
        host_at_reply = (t0 + now) / 2.0 + shoe_processing / 2.0
        self._anchor = (reply.time_ms, host_at_reply)
        self._anchor_synced = True
        offset_ms = reply.time_ms - host_at_reply * 1000.0
        self._events.append(ClockSynced(offset_ms, rtt * 1000.0))

    def host_time(self, time_ms: int) -> float | None:
        """The host-clock time (seconds) of a shoe timestamp (after a clock sync, else an estimate)."""
        if self._anchor is None:
            return None
        shoe_ref, host_ref = self._anchor
        return host_ref + time_diff(time_ms, shoe_ref) / 1000.0

    # -- sequence tracking ------------------------------------------------------------------------
    def _is_ahead(self, seq: int) -> bool:
        return self._delivered is not None and seq_diff(seq, self._delivered) > 0

    def _note_highest(self, seq: int) -> None:
        if self._highest is None or seq_diff(seq, self._highest) > 0:
            self._highest = seq

    def _accept_event(self, seq: int, item) -> None:
        if not self._is_ahead(seq) or seq in self._pending:
            self.stats.duplicates += 1
            return
        self._note_highest(seq)
        self._misses.pop(seq, None)
        self._pending[seq] = item
        self._flush()

    def _flush(self) -> None:
        """Deliver everything now in order after the last delivered seq."""
        lost_first, lost_count, lost_reason = None, 0, ""
        while self._delivered is not None:
            nxt = (self._delivered + 1) % SEQ_MOD
            item = self._pending.pop(nxt, None)
            if item is None:
                break
            self._delivered = nxt
            self._ack_due = True
            if isinstance(item, _Lost):
                if lost_first is None:
                    lost_first, lost_reason = nxt, item.reason
                lost_count += 1
                continue
            if lost_first is not None:
                self._emit_lost(lost_first, lost_count, lost_reason)
                lost_first, lost_count = None, 0
            self.stats.events += 1
            self._events.append(item)
        if lost_first is not None:
            self._emit_lost(lost_first, lost_count, lost_reason)

    def _emit_lost(self, first: int, count: int, reason: str) -> None:
        self.stats.events_lost += count
        self._events.append(EventsLost(first, count, reason))

    # -- output ------------------------------------------------------------------------------------
    def _frame(self, msg: Message, now: float) -> bytes:
        msg = dataclasses.replace(msg, seq=self._tx_seq, time_ms=int(now * 1000) % TIME_MOD, flags=0)
        self._tx_seq = (self._tx_seq + 1) % SEQ_MOD
        data = encode_frame(msg, leading_delimiter=now - self._last_tx >= IDLE_GAP)
        self._last_tx = now
        return data

    def send(self, message: Message, now: float) -> bytes:
        """Encode an application message (SetLights, StatusRequest, ClockSync, ...)."""
        if isinstance(message, SetLights):
            self._lights = (message.lights, message.blink)
            self._lights_due = False
            self._last_lights_tx = now
        elif isinstance(message, ClockSync):
            self._sync_sent = (message.host_time_ms, now)
        return self._frame(message, now)

    def set_lights(self, lights: Lights, now: float, blink: bool = False) -> bytes:
        """Ask for these dealer lights; they are re-sent until the shoe reports them."""
        return self.send(SetLights(lights, blink), now)

    def request_status(self, now: float) -> bytes:
        return self.send(StatusRequest(), now)

    def sync_clock(self, now: float) -> bytes:
        return self.send(ClockSync(int(now * 1000)), now)

    def tick(self, now: float) -> bytes:
        """Timers and protocol replies: bytes to write now (often b'')."""
        out = self._out
        self._out = []
        if self.state is LinkState.HANDSHAKING:
            if now - self._last_hello_tx >= self.hello_interval:
                self._last_hello_tx = now
                out.append(self._frame(HostHello(), now))
        elif self.state is LinkState.UP:
            if now - self._last_rx > self.link_timeout:
                self._go_down("timeout")
                self._last_hello_tx = now
                out.append(self._frame(HostHello(), now))
            else:
                self._tick_resends(now, out)
                if self._ack_due or now - self._last_ack_tx >= self.keepalive_interval:
                    self._ack_due = False
                    self._last_ack_tx = now
                    out.append(self._frame(Ack(self._delivered if not self._withholding else self._ack_ceiling), now))
                if self._lights_due and self._lights is not None and now - self._last_lights_tx >= 0.2:
                    self._lights_due = False
                    self._last_lights_tx = now
                    out.append(self._frame(SetLights(*self._lights), now))
                if self._sync_due_at is not None and now >= self._sync_due_at and self._sync_sent is None:
                    self._sync_due_at = now + self.clock_sync_interval
                    out.append(self.sync_clock(now))
                elif self._sync_sent is not None and now - self._sync_sent[1] > 2 * self.link_timeout:
                    self._sync_sent = None  # lost reply: retry at the next interval
        return b"".join(out)

    def _tick_resends(self, now: float, out: list[bytes]) -> None:
        if self._delivered is None or self._highest is None:
            return
        gap = seq_diff(self._highest, self._delivered)
        ring = self.info.ring_size if self.info else 255
        if gap > ring:
            # Older than anything the shoe can still hold: lost without asking.
            for i in range(1, gap - ring + 1):
                s = (self._delivered + i) % SEQ_MOD
                if s not in self._pending:
                    self._pending[s] = _Lost("not_in_ring")
                    self._misses.pop(s, None)
            self._flush()
        run_first, run_count, run_attempt = None, 0, 0
        runs: list[tuple[int, int, int]] = []
        gave_up = False
        for s in self.missing:
            miss = self._misses.get(s)
            due = miss is None or now - miss.last_request >= self.resend_timeout
            if due and miss is not None and miss.attempts >= self.resend_retries:
                self._pending[s] = _Lost("retries")
                del self._misses[s]
                gave_up = True
                due = False
            if due:
                attempt = 1 if miss is None else miss.attempts + 1
                self._misses[s] = _Miss(now, attempt)
                if run_first is not None and (run_first + run_count) % SEQ_MOD == s and run_count < MAX_RESEND_COUNT:
                    run_count += 1
                    run_attempt = max(run_attempt, attempt)
                    continue
                if run_first is not None:
                    runs.append((run_first, run_count, run_attempt))
                run_first, run_count, run_attempt = s, 1, attempt
            elif run_first is not None:
                runs.append((run_first, run_count, run_attempt))
                run_first = None
        if run_first is not None:
            runs.append((run_first, run_count, run_attempt))
        for first, count, attempt in runs:
            self.stats.resend_requests += 1
            self._events.append(ResendRequested(first, count, attempt))
            out.append(self._frame(ResendRequest(first, count), now))
        if gave_up:
            self._flush()


# -- the shoe's side --------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class OutFrame:
    """One frame the shoe is about to write; ``kind`` is "event", "retransmit" or "control"."""

    kind: str
    data: bytes
    message: Message


@dataclass
class ShoeCounters:
    cards_read: int = 0
    cards_unreadable: int = 0
    rx_errors: int = 0
    card_counter: int = 0
    cut_card_at: int = 0
    overwritten_unacked: int = 0
    resends: int = 0


@dataclass
class ShoeIdentity:
    model: str = "EMU-SHOE"
    serial: str = "EMU0000001"
    firmware: tuple[int, int, int] = (1, 0, 0)
    capabilities: int = int(CAPABILITIES_ALL)


class ShoeConnection:
    """The shoe's end of the link (used by the emulator; a model for firmware).

    Every sequenced message sent goes into a ring of the last ``ring_size``
    events; the host's cumulative ACK marks them delivered, RESEND_REQUEST
    sends them again (flag RETRANSMIT, same seq and time) or RESEND_GONE.
    HOST_HELLO, STATUS_REQUEST and CLOCK_SYNC are answered automatically;
    heartbeats go out every ``heartbeat_interval`` from ``tick``.
    """

    def __init__(
        self,
        *,
        now: float,
        boot_id: int,
        identity: ShoeIdentity | None = None,
        ring_size: int = RING_SIZE,
        heartbeat_interval: float = HEARTBEAT_INTERVAL,
        host_timeout: float = LINK_TIMEOUT_BEATS * KEEPALIVE_INTERVAL,
        first_seq: int = 1,
        clock_start_ms: int = 0,
        ring_overflow_fault: bool = True,
    ):
        self.identity = identity or ShoeIdentity()
        self.ring_overflow_fault = ring_overflow_fault   # raise/clear FAULT RING_OVERFLOW (section 9.1)
        self._outage_lost = 0                            # events overwritten unacked in this outage
        self.boot_id = boot_id % (1 << 32)
        self.ring_size = ring_size
        self.heartbeat_interval = heartbeat_interval
        self.host_timeout = host_timeout
        self._t0 = now
        self._clock_start_ms = clock_start_ms
        self.last_seq = (first_seq - 1) % SEQ_MOD
        self.last_acked = self.last_seq
        self._ring: collections.deque[Message] = collections.deque(maxlen=ring_size)
        self.counters = ShoeCounters()
        self.lights = Lights.OFF
        self.blink = False
        self.status_flags = ShoeFlags(0)
        self.fault_code = 0
        self._decoder = Decoder()
        self._events: collections.deque = collections.deque()
        self._out: list[OutFrame] = []
        self._last_tx = float("-inf")
        self._last_heartbeat = float("-inf")
        self._last_host_rx: float | None = None
        self._host_present = False
        self.host_epoch_offset_ms: int | None = None

    # -- clock and state ---------------------------------------------------------------------------
    def time_ms(self, now: float) -> int:
        return (self._clock_start_ms + int(round((now - self._t0) * 1000))) % TIME_MOD

    def uptime_s(self, now: float) -> int:
        return max(0, int(now - self._t0))

    @property
    def unacked(self) -> int:
        return seq_diff(self.last_seq, self.last_acked)

    @property
    def last_heartbeat(self) -> float:
        """When ``tick`` last sent a heartbeat (-inf: never); the next is due ``heartbeat_interval`` later."""
        return self._last_heartbeat

    @property
    def ring(self) -> list[Message]:
        return list(self._ring)

    def host_present(self, now: float) -> bool:
        return self._last_host_rx is not None and now - self._last_host_rx <= self.host_timeout

    def flags(self, now: float) -> int:
        f = self.status_flags
        if self.host_present(now):
            f |= ShoeFlags.HOST_LINK
        if self.fault_code:
            f |= ShoeFlags.FAULT_ACTIVE
        if self.counters.cut_card_at:
            f |= ShoeFlags.CUT_CARD_SEEN
        if self.host_epoch_offset_ms is not None:
            f |= ShoeFlags.CLOCK_SYNCED
        return int(f)

    def _track(self, msg: Message) -> None:
        c = self.counters
        if isinstance(msg, CardDrawn):
            c.cards_read += 1
            c.card_counter = msg.counter
        elif isinstance(msg, CardUnreadable):
            c.cards_unreadable += 1
            c.card_counter = msg.counter
        elif isinstance(msg, CardPushedBack):
            c.card_counter = max(0, msg.counter - 1)
        elif isinstance(msg, CutCard):
            c.cut_card_at = msg.counter
        elif isinstance(msg, ShoeState):
            if msg.state == ShoeStateCode.INSERTED:
                self.status_flags = (self.status_flags | ShoeFlags.SHOE_PRESENT) & ~ShoeFlags.EMPTY
                c.card_counter = c.cut_card_at = 0
            elif msg.state == ShoeStateCode.REMOVED:
                self.status_flags &= ~(ShoeFlags.SHOE_PRESENT | ShoeFlags.EMPTY)
            else:
                self.status_flags |= ShoeFlags.EMPTY
        elif isinstance(msg, ButtonPressed) and msg.button == Button.NEW_SHOE:
            c.card_counter = c.cut_card_at = 0
            self.status_flags &= ~ShoeFlags.EMPTY
        elif isinstance(msg, Tamper):
            if msg.what == TamperKind.LID_OPENED:
                self.status_flags |= ShoeFlags.LID_OPEN
            elif msg.what == TamperKind.LID_CLOSED:
                self.status_flags &= ~ShoeFlags.LID_OPEN
        elif isinstance(msg, Fault):
            if msg.active:
                self.fault_code = msg.code
            elif msg.code == self.fault_code:
                self.fault_code = 0

    # -- output ---------------------------------------------------------------------------------------
    def _wire(self, msg: Message, now: float) -> bytes:
        data = encode_frame(msg, leading_delimiter=now - self._last_tx >= IDLE_GAP)
        self._last_tx = now
        return data

    def send_frame(self, message: Message, now: float) -> OutFrame:
        """Stamp, record and encode one message; sequenced ones get the next seq and enter the ring."""
        message.validate()
        if is_sequenced(message.TYPE):
            self.last_seq = (self.last_seq + 1) % SEQ_MOD
            stamped = dataclasses.replace(message, seq=self.last_seq, time_ms=self.time_ms(now), flags=0)
            overwrote = len(self._ring) == self._ring.maxlen and seq_diff(self._ring[0].seq, self.last_acked) > 0
            self._ring.append(stamped)
            self._track(stamped)
            frame = OutFrame("event", self._wire(stamped, now), stamped)
            if overwrote:
                self.counters.overwritten_unacked += 1
                self._outage_lost += 1
                if self._outage_lost == 1 and self.ring_overflow_fault:
                    # PROTOCOL.md 9.1: one RING_OVERFLOW per outage, after the event that overwrote.
                    self._out.append(self.send_frame(Fault(FaultCode.RING_OVERFLOW, True, 1), now))
            return frame
        stamped = dataclasses.replace(message, seq=self.last_seq, time_ms=self.time_ms(now), flags=0)
        return OutFrame("control", self._wire(stamped, now), stamped)

    def send(self, message: Message, now: float) -> bytes:
        return self.send_frame(message, now).data

    def hello(self, now: float) -> ShoeHello:
        ident = self.identity
        return ShoeHello(
            PROTOCOL_VERSION, self.boot_id, self.last_acked, self.ring_size, len(self._ring),
            max(1, min(0xFFFF, int(round(self.heartbeat_interval * 1000)))),
            *ident.firmware, ident.capabilities, ident.model, ident.serial,
        )

    def send_hello(self, now: float) -> bytes:
        """An unsolicited SHOE_HELLO (after power-up or when the link comes back)."""
        return self.send(self.hello(now), now)

    def heartbeat(self, now: float) -> Heartbeat:
        c = self.counters
        return Heartbeat(
            self.uptime_s(now) % (1 << 32), c.cards_read % (1 << 32), c.cards_unreadable % (1 << 32),
            c.rx_errors % (1 << 32), self.lights, self.flags(now), min(255, max(0, self.unacked)),
        )

    def status(self, now: float) -> Status:
        c = self.counters
        return Status(self.flags(now), self.lights, c.card_counter, c.cut_card_at, self.fault_code,
                      self.last_acked, len(self._ring))

    def tick_frames(self, now: float) -> list[OutFrame]:
        """Like tick, but one OutFrame per frame (the emulator injects faults per frame)."""
        out = self._out
        self._out = []
        present = self.host_present(now)
        if present != self._host_present:
            self._host_present = present
            self._events.append(HostLinkChanged(present))
        if now - self._last_heartbeat >= self.heartbeat_interval:
            self._last_heartbeat = now
            out.append(self.send_frame(self.heartbeat(now), now))
        return out

    def tick(self, now: float) -> bytes:
        return b"".join(f.data for f in self.tick_frames(now))

    # -- input -----------------------------------------------------------------------------------------
    def receive_data(self, data: bytes, now: float) -> None:
        for item in self._decoder.feed(data):
            if isinstance(item, DecodeError):
                self.counters.rx_errors += 1
                self._events.append(item)
                continue
            if not is_host_to_shoe(item.TYPE):
                self.counters.rx_errors += 1
                self._events.append(DecodeError(ErrorKind.WRONG_DIRECTION, f"{item.TYPE.name} sent to the shoe",
                                                msg_type=item.TYPE, seq=item.seq))
                continue
            self._last_host_rx = now
            self._on_message(item, now)
            self._events.append(item)

    def next_event(self):
        return self._events.popleft() if self._events else NEED_DATA

    def events(self) -> list:
        out = list(self._events)
        self._events.clear()
        return out

    def _on_message(self, msg: Message, now: float) -> None:
        if isinstance(msg, HostHello):
            self._out.append(self.send_frame(self.hello(now), now))
        elif isinstance(msg, Ack):
            # Only move forward, and never past what was sent.
            if 0 < seq_diff(msg.ack_seq, self.last_acked) <= seq_diff(self.last_seq, self.last_acked):
                self.last_acked = msg.ack_seq
                if self._outage_lost and self.unacked < self.ring_size:
                    # The host is back and has room again: the outage ends, with what it cost
                    # (the clear itself overwrites nothing unacknowledged).
                    lost, self._outage_lost = self._outage_lost, 0
                    if self.ring_overflow_fault:
                        self._out.append(self.send_frame(Fault(FaultCode.RING_OVERFLOW, False, min(lost, 0xFFFF)), now))
        elif isinstance(msg, ResendRequest):
            self._resend(msg.first_seq, msg.count, now)
        elif isinstance(msg, SetLights):
            self.lights, self.blink = Lights(msg.lights), msg.blink
        elif isinstance(msg, StatusRequest):
            self._out.append(self.send_frame(self.status(now), now))
        elif isinstance(msg, ClockSync):
            rx = self.time_ms(now)
            self.host_epoch_offset_ms = msg.host_time_ms - rx
            self._out.append(self.send_frame(ClockSyncReply(msg.host_time_ms, rx), now))

    def _find(self, seq: int) -> Message | None:
        if not self._ring:
            return None
        i = seq_diff(seq, self._ring[0].seq)
        if 0 <= i < len(self._ring):
            return self._ring[i]
        return None

    def _resend(self, first: int, count: int, now: float) -> None:
        gone_first, gone_count = None, 0
        for i in range(count):
            s = (first + i) % SEQ_MOD
            if seq_diff(s, self.last_seq) > 0:
                break  # never sent: nothing to resend
            msg = self._find(s)
            if msg is None:
                if gone_first is None:
                    gone_first = s
                gone_count += 1
                continue
            if gone_first is not None:
                self._out.append(self.send_frame(ResendGone(gone_first, gone_count), now))
                gone_first, gone_count = None, 0
            again = dataclasses.replace(msg, flags=msg.flags | FLAG_RETRANSMIT)
            self.counters.resends += 1
            self._out.append(OutFrame("retransmit", self._wire(again, now), again))
        if gone_first is not None:
            self._out.append(self.send_frame(ResendGone(gone_first, gone_count), now))


__all__ = [
    "NEED_DATA", "LinkState", "LinkUp", "LinkDown", "ResendRequested", "EventsLost", "ClockSynced",
    "HostLinkChanged", "HostStats", "HostConnection", "ShoeConnection", "ShoeIdentity", "ShoeCounters",
    "OutFrame", "seq_diff", "time_diff",
]
