"""The emulated dealing shoe: a deterministic dealer speaking ShoeLink v1 on a pty.

- ``EmulatedShoe``: the virtual device (pty + thread) the daemon, its demo and the
  tests open like a real shoe (``shoe-daemon emulate`` runs one from the CLI).
- ``ShoeSimulator``: the same shoe without I/O (step it with your own clock).
- ``DealerScript`` / ``ScenarioScript``: what the dealer does; ``Faults``: what goes wrong.
"""

from shoe_daemon.emulator.dealer import (
    DealerScript,
    DealtCard,
    Disconnect,
    Faults,
    Mistake,
    Noise,
    Pause,
    ScenarioScript,
    stacked_scenario,
)
from shoe_daemon.emulator.shoe import EmulatedShoe
from shoe_daemon.emulator.simulator import FaultRecord, ShoeSimulator, StepResult

__all__ = [
    "EmulatedShoe", "ShoeSimulator", "StepResult", "FaultRecord", "DealerScript", "ScenarioScript", "DealtCard",
    "Mistake", "Faults", "Pause", "Disconnect", "Noise", "stacked_scenario",
]
