"""The emulated shoe without I/O: dealer script + ShoeConnection + link faults.

``ShoeSimulator.step(now)`` returns the bytes the shoe writes at ``now`` and
whether it wants the cable unplugged; ``receive_data`` takes the host's bytes.
EmulatedShoe drives it from a pty in a thread; tests and benches can drive it
with a simulated clock and an in-memory line.

Pace: with ``pace > 0`` the dealer waits ``pace`` seconds after every card and
every coup confirmation and never waits for the host (a real dealer). With
``pace == 0`` the dealer goes as fast as the link allows: the next event is
produced while fewer than ``window`` events are unacknowledged (so nothing is
lost while the cable is out; the ring holds them).
"""

from __future__ import annotations

import collections
import random
import threading
from dataclasses import dataclass

from firmware_protocol.connection import OutFrame, ShoeConnection, ShoeIdentity
from firmware_protocol.messages import (
    Button,
    ButtonPressed,
    CardDrawn,
    CardPushedBack,
    CardUnreadable,
    Message,
    SetLights,
)
from shoe_daemon.emulator.dealer import (
    Action,
    DealerScript,
    Disconnect,
    Faults,
    Noise,
    Pause,
    ScenarioScript,
    fault_rng,
)

DEFAULT_WINDOW = 16


@dataclass(frozen=True)
class StepResult:
    data: bytes
    disconnect: float | None = None   # unplug now, for this many seconds


@dataclass(frozen=True)
class FaultRecord:
    """What the link faults did, in order (first transmissions of events only are deterministic)."""

    seq: int
    kind: str        # "noise", "corrupt", "drop", "disconnect"
    first: bool      # on the first transmission of an event (else a resend or a control frame)


def _paced(action: Action) -> bool:
    return isinstance(action, CardDrawn | CardUnreadable | CardPushedBack) or (
        isinstance(action, ButtonPressed) and action.button == Button.COUP_CONFIRM
    )


class ShoeSimulator:
    def __init__(
        self,
        *,
        decks: int = 8,
        seed: object = 0,
        pace: float = 0.0,
        faults: Faults | None = None,
        stack: list[str] | None = None,
        cut: int | None = None,
        coups: int | None = None,
        shoes: int | None = 1,
        burn: bool = True,
        scenario: list[Action] | None = None,
        heartbeat: float = 1.0,
        window: int = DEFAULT_WINDOW,
        ring_size: int = 64,
        boot_id: int | None = None,
        identity: ShoeIdentity | None = None,
        first_seq: int = 1,
        clock_start_ms: int = 0,
        now: float = 0.0,
    ):
        self.seed = seed
        self.pace = pace
        self.faults = faults or Faults()
        self.window = window
        if scenario is not None:
            self.script = ScenarioScript(scenario)
        else:
            self.script = DealerScript(decks=decks, seed=seed, shoes=shoes, coups=coups, cut=cut, burn=burn,
                                       stack=stack, faults=self.faults)
        if boot_id is None:
            boot_id = random.SystemRandom().getrandbits(32)
        self.conn = ShoeConnection(now=now, boot_id=boot_id, identity=identity, ring_size=ring_size,
                                   heartbeat_interval=heartbeat, first_seq=first_seq,
                                   clock_start_ms=clock_start_ms)
        self._link_rng = {name: fault_rng(seed, name) for name in Faults.LINK}
        self._other_rng = {name: fault_rng(seed, name + ":other") for name in Faults.LINK}
        self._injected: collections.deque[Action] = collections.deque()
        self._lock = threading.Lock()
        self._next_time = now
        self.done = False
        self.sent_events: list[Message] = []
        self.fault_log: list[FaultRecord] = []
        self.lights_log: list[tuple[float, SetLights]] = []
        self.host_events: list = []

    # -- ground truth ------------------------------------------------------------------------------
    @property
    def dealt(self):
        return self.script.dealt

    @property
    def mistakes(self):
        return self.script.mistakes

    # -- control ---------------------------------------------------------------------------------------
    def inject(self, *actions: Action) -> None:
        """Queue actions to run before the rest of the script (thread-safe)."""
        with self._lock:
            self._injected.extend(actions)
            self.done = False

    def connected(self, now: float) -> None:
        """The cable is (back) in: announce ourselves like a USB device that just enumerated."""
        self._pending_hello = True

    _pending_hello = False

    # -- I/O-free driving ------------------------------------------------------------------------
    def receive_data(self, data: bytes, now: float) -> None:
        self.conn.receive_data(data, now)
        for event in self.conn.events():
            if isinstance(event, SetLights):
                self.lights_log.append((now, event))
            self.host_events.append(event)
            if len(self.host_events) > 10_000:
                del self.host_events[:5_000]

    def _next_action(self) -> Action | None:
        with self._lock:
            if self._injected:
                return self._injected.popleft()
        try:
            return next(self.script)
        except StopIteration:
            return None

    def step(self, now: float) -> StepResult:
        out: list[bytes] = []
        disconnect: float | None = None
        if self._pending_hello:
            self._pending_hello = False
            out.append(self._apply_faults(self.conn.send_frame(self.conn.hello(now), now), now))
        for frame in self.conn.tick_frames(now):
            out.append(self._apply_faults(frame, now))
        while not self.done and now >= self._next_time:
            if self.pace <= 0 and self.conn.unacked >= self.window:
                break
            action = self._next_action()
            if action is None:
                self.done = True
                break
            if isinstance(action, Pause):
                self._next_time = now + action.seconds
                break
            if isinstance(action, Disconnect):
                disconnect = action.seconds
                break
            if isinstance(action, Noise):
                out.append(action.data)
                continue
            frame = self.conn.send_frame(action, now)
            if frame.kind == "event":
                self.sent_events.append(frame.message)
            out.append(self._apply_faults(frame, now))
            if frame.kind == "event" and self._link_rng["disconnect"].random() < self.faults.disconnect:
                self.fault_log.append(FaultRecord(frame.message.seq, "disconnect", True))
                disconnect = self.faults.disconnect_time
                if self.pace > 0 and _paced(action):
                    self._next_time = now + self.pace
                break
            if self.pace > 0 and _paced(action):
                self._next_time = now + self.pace
                break
        return StepResult(b"".join(out), disconnect)

    def next_deadline(self) -> float:
        """The latest time the next step() should run."""
        hb = self.conn.last_heartbeat + self.conn.heartbeat_interval
        if self.done or (self.pace <= 0 and self.conn.unacked >= self.window):
            return hb   # nothing to send until the host acknowledges: wait for its bytes, do not spin
        return min(hb, self._next_time)

    def _apply_faults(self, frame: OutFrame, now: float) -> bytes:
        f = self.faults
        if not f.any_link():
            return frame.data
        first = frame.kind == "event"
        rng = self._link_rng if first else self._other_rng
        data = frame.data
        seq = frame.message.seq
        # Each fault draws from its own stream on every frame, fired or not.
        noise = rng["noise"].random() < f.noise
        noise_bytes = bytes(rng["noise"].randrange(256) for _ in range(rng["noise"].randint(1, 24)))
        corrupt = rng["corrupt"].random() < f.corrupt
        flips = [(rng["corrupt"].randrange(1 << 16), rng["corrupt"].randrange(8))
                 for _ in range(rng["corrupt"].randint(1, 3))]
        drop = rng["drop"].random() < f.drop
        if drop:
            self.fault_log.append(FaultRecord(seq, "drop", first))
            return b""
        if corrupt:
            self.fault_log.append(FaultRecord(seq, "corrupt", first))
            b = bytearray(data)
            for pos, bit in flips:
                b[pos % len(b)] ^= 1 << bit
            data = bytes(b)
        if noise:
            self.fault_log.append(FaultRecord(seq, "noise", first))
            data = noise_bytes + data
        return data
