"""Card sources: everything that turns the outside world into timestamped Events.

Shoe drivers are registered by name, like python-can's interfaces: ``protocol``
(our framed protocol, see firmware_protocol/PROTOCOL.md) and ``text`` (one card
code per line, for the plain readers many tables already have). Third parties add
drivers with ``register_driver`` or the ``shoe_daemon.drivers`` entry-point group
(docs/drivers.md); ``[shoe] driver`` is checked against this registry when the
configuration loads. A name registered in code wins over a built-in, a built-in
over an entry point.
"""

from __future__ import annotations

import difflib
from importlib import import_module
from importlib.metadata import entry_points

from shoe_daemon.sources.base import DriverSettings, ShoeDriver

ENTRY_POINT_GROUP = "shoe_daemon.drivers"
_BUILTIN = {
    "protocol": "shoe_daemon.sources.protocol_driver:ProtocolDriver",
    "text": "shoe_daemon.sources.text_driver:TextLineDriver",
}
BUILTIN_DRIVERS = tuple(_BUILTIN)
_registered: dict[str, type[ShoeDriver]] = {}


class UnknownDriver(KeyError):
    """No driver of that name: the message names the known ones."""

    def __str__(self) -> str:   # KeyError would quote the message
        return str(self.args[0])


class DriverLoadError(ImportError):
    """A driver's entry point is there but does not give a usable driver class."""


def register_driver(name: str, cls: type[ShoeDriver]) -> None:
    """Make ``cls`` the driver called ``name`` in this process (``[shoe] driver = name``)."""
    _check(name, cls)
    _registered[name] = cls


def driver_names() -> list[str]:
    names = set(_BUILTIN) | set(_registered)
    names |= {ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)}
    return sorted(names)


def get_driver(name: str) -> type[ShoeDriver]:
    """The driver class registered under ``name``.

    Raises UnknownDriver (a KeyError) naming the known drivers, or DriverLoadError when an
    installed entry point cannot be imported or is not a ShoeDriver.
    """
    if name in _registered:
        return _registered[name]
    target = _BUILTIN.get(name)
    if target is not None:
        module_name, _, attr = target.partition(":")
        return getattr(import_module(module_name), attr)
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name == name:
            try:
                cls = ep.load()
            except Exception as exc:  # a broken plug-in: say which and why
                raise DriverLoadError(f"shoe driver {name!r} ({ep.value}) cannot be loaded: "
                                      f"{type(exc).__name__}: {exc}") from exc
            try:
                _check(name, cls)
            except TypeError as exc:
                raise DriverLoadError(f"shoe driver {name!r} ({ep.value}): {exc}") from None
            return cls
    known = driver_names()
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise UnknownDriver(f"unknown shoe driver {name!r}; known: {', '.join(known)}{hint}")


def _check(name: str, cls: object) -> None:
    if not (isinstance(cls, type) and issubclass(cls, ShoeDriver)):
        raise TypeError(f"{cls!r} is not a ShoeDriver subclass")
    settings = getattr(cls, "Settings", None)
    if not (isinstance(settings, type) and issubclass(settings, DriverSettings)):
        raise TypeError(f"{cls.__name__}.Settings must be a DriverSettings subclass")


__all__ = ["BUILTIN_DRIVERS", "ENTRY_POINT_GROUP", "DriverLoadError", "DriverSettings", "ShoeDriver",
           "UnknownDriver", "driver_names", "get_driver", "register_driver"]
