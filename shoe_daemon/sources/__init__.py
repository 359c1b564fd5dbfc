"""Card sources: everything that turns the outside world into timestamped Events.

Shoe drivers are registered by name, like python-can's interfaces: ``protocol``
(our framed protocol, see firmware_protocol/PROTOCOL.md) and ``text`` (one card
code per line, for the plain readers many tables already have). Third parties add
drivers with ``register_driver`` or the ``shoe_daemon.drivers`` entry-point group.
"""

from __future__ import annotations

from importlib.metadata import entry_points

from shoe_daemon.sources.base import ShoeDriver

_BUILTIN = {
    "protocol": "shoe_daemon.sources.protocol_driver:ProtocolDriver",
    "text": "shoe_daemon.sources.text_driver:TextLineDriver",
}
_registered: dict[str, type[ShoeDriver]] = {}


def register_driver(name: str, cls: type[ShoeDriver]) -> None:
    _registered[name] = cls


def driver_names() -> list[str]:
    names = set(_BUILTIN) | set(_registered)
    names |= {ep.name for ep in entry_points(group="shoe_daemon.drivers")}
    return sorted(names)


def get_driver(name: str) -> type[ShoeDriver]:
    """The driver class registered under ``name``; KeyError names the known ones."""
    if name in _registered:
        return _registered[name]
    target = _BUILTIN.get(name)
    if target is None:
        for ep in entry_points(group="shoe_daemon.drivers"):
            if ep.name == name:
                return ep.load()
        raise KeyError(f"unknown shoe driver {name!r}; known: {', '.join(driver_names())}")
    module_name, _, attr = target.partition(":")
    module = __import__(module_name, fromlist=[attr])
    return getattr(module, attr)
