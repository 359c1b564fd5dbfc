"""``UNSET``: a value the data does not hold, distinct from a null (``None``) it holds.

The events' payloads read a field the data leaves out as ``UNSET``; the engine's supervisor
actions take ``by=UNSET`` when no person is named. It lives here, below both, so that the
engine needs nothing from the core.
"""

from __future__ import annotations

from typing import Any

__all__ = ["UNSET"]


class _Unset:
    """A field the data does not hold (distinct from a null the data holds)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "UNSET"

    def __bool__(self) -> bool:
        return False


UNSET: Any = _Unset()
