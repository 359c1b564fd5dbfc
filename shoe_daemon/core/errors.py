"""What can go wrong around the core, split as h11 splits it.

* :class:`Rejected` -- the outside world handed the table something the game refuses: a card code
  that is no card, a supervisor's action on a coup that has moved on, bets above the limits. These
  are daily events at a table: the core turns them into an alert (``action_rejected``, or a fault)
  and goes on, changing nothing.
* :class:`CoreMisuse` -- our own code used the core wrongly (an event whose data does not fit its
  kind, a handler given the wrong type). That is a bug: the core never catches it, so it fails
  loudly in the tests instead of becoming an "info" alert at the table.

The game's own refusals (``EngineError``, ``CardCodeError``, ``BetError``, ``BetLimitError``) are
rejections too: :data:`REJECTIONS` lists every exception the core may turn into an alert.
"""

from __future__ import annotations

from shoe_daemon.game.cards import CardCodeError
from shoe_daemon.game.engine import EngineError
from shoe_daemon.game.settle import BetError, BetLimitError


class CoreError(Exception):
    """Base of the core's own errors."""


class Rejected(CoreError):
    """An input or action from outside the core that the game refuses (nothing changed)."""


class CoreMisuse(CoreError):
    """A bug in the code around the core: never caught by the core."""


class NotJournaled(CoreError):
    """The journal refused a batch (the journal's exception is ``__cause__``): ``handled`` went
    through the pipeline before it; ``pending`` (in order, as given) were neither journaled nor
    handled, so nothing was published for them and they can be fed again."""

    def __init__(self, handled: list, pending: list):
        self.handled = handled
        self.pending = pending
        super().__init__(f"the journal refused {len(pending)} event(s); {len(handled)} went through before")


class EventError(CoreMisuse, ValueError):
    """An event whose envelope or data does not fit its kind (raised when it is journaled)."""


# Everything the core turns into an alert; anything else propagates.
REJECTIONS: tuple[type[Exception], ...] = (Rejected, EngineError, CardCodeError, BetError, BetLimitError)
