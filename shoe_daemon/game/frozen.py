"""Immutable output records: frozen, slotted dataclasses that are cheap to build.

Every object the rules engine hands out (card record, coup snapshot, coup
result, alert, shoe state, step) is declared with :func:`record`. That makes it
an ordinary ``@dataclass(frozen=True, slots=True)`` -- equality, ``repr``,
``dataclasses.fields``, :class:`dataclasses.FrozenInstanceError` on assignment --
plus two things the engine needs:

``Cls.make(*values)``
    A positional constructor for the hot path. A frozen dataclass's own
    ``__init__`` sets each field through ``object.__setattr__`` (about 120 ns a
    field in CPython 3.11: 1.4 us for a 12-field snapshot, too slow to build
    one per card at 200,000 cards/s). ``make`` fills a plain slotted twin
    class with the same slot layout and then retypes the object to ``Cls``
    (4x faster). The result *is* a ``Cls`` instance, frozen from then on. If the
    interpreter refuses the retyping (another Python), ``make`` falls back to
    the normal constructor; :func:`record` checks this once at import.

``obj.to_dict()``
    A JSON-ready dict built only when asked: keys in field order, card codes as
    strings (``"9H"``), enums as their values, tuples as lists, nested records
    through their own ``to_dict``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from enum import Enum
from typing import Any

from shoe_daemon.game.cards import Card

__all__ = ["record", "jsonable"]


_PLAIN = frozenset({bool, int, float, str, type(None)})


def jsonable(value: Any) -> Any:
    """``value`` as plain JSON data (str/int/float/bool/None/list/dict)."""
    if value.__class__ in _PLAIN:
        return value
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Card):
        return value.code
    if isinstance(value, (tuple, list)):
        return [jsonable(v) for v in value]
    if isinstance(value, Mapping):
        plain = _PLAIN  # the common case (a shoe's 52 counts per card): str keys, plain values
        return {k if k.__class__ is str else str(jsonable(k)): v if v.__class__ in plain else jsonable(v)
                for k, v in value.items()}
    to_dict = getattr(value, "to_dict", None)
    if to_dict is not None:
        return to_dict()
    if isinstance(value, (bool, int, float, str)):  # subclasses
        return value
    raise TypeError(f"{type(value).__name__} is not JSON data")


def _to_dict(self) -> dict[str, Any]:
    plain = _PLAIN
    out = {}
    for name in self.__slots__:
        value = getattr(self, name)
        out[name] = value if value.__class__ in plain else jsonable(value)
    return out


def record(cls):
    """Class decorator: frozen slotted dataclass + ``make`` + ``to_dict`` (see module doc)."""
    cls = dataclasses.dataclass(frozen=True, slots=True)(cls)
    names = tuple(f.name for f in dataclasses.fields(cls))
    if tuple(cls.__slots__) != names:  # pragma: no cover - dataclasses guarantees this today
        raise TypeError(f"{cls.__name__}: unexpected slot layout {cls.__slots__!r}")
    if "to_dict" not in cls.__dict__:
        cls.to_dict = _to_dict
    twin = type(f"_{cls.__name__}Builder", (), {"__slots__": names, "__module__": cls.__module__})
    args = ", ".join(names)
    body = "".join(f"    o.{n} = {n}\n" for n in names)
    src = f"def make({args}):\n    o = _new(_twin)\n{body}    o.__class__ = _cls\n    return o\n"
    scope: dict[str, Any] = {"_new": object.__new__, "_twin": twin, "_cls": cls}
    exec(src, scope)  # noqa: S102 - generated from the dataclass's own field names
    make = scope["make"]
    make.__qualname__ = f"{cls.__name__}.make"
    make.__doc__ = f"Build a {cls.__name__} from its fields, positionally, in declaration order."
    try:
        probe = tuple(range(len(names)))
        ok = make(*probe) == cls(*probe)
    except TypeError:  # pragma: no cover - retyping refused by this interpreter
        ok = False
    cls.make = staticmethod(make if ok else cls)
    return cls
