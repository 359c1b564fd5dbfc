"""The driver registry: built-ins, register_driver, the shoe_daemon.drivers entry points, and
what a broken plug-in looks like when the configuration names it."""

from __future__ import annotations

import sys

import pytest

from shoe_daemon.config import ConfigError, validate_config
from shoe_daemon.core.events import Event, Kind
from shoe_daemon.sources import (
    DriverLoadError,
    UnknownDriver,
    _registered,
    driver_names,
    get_driver,
    register_driver,
)
from shoe_daemon.sources.base import DriverSettings, ShoeDriver
from shoe_daemon.sources.protocol_driver import ProtocolDriver
from shoe_daemon.sources.text_driver import TextLineDriver


@pytest.fixture
def site(tmp_path, monkeypatch):
    """A directory on sys.path with an installed distribution's metadata declaring these entry points."""
    dist = tmp_path / "vendor_drivers-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: vendor-drivers\nVersion: 1.0\n")
    (tmp_path / "vendor_drivers.py").write_text(
        "from shoe_daemon.sources.base import ShoeDriver\n"
        "class Good(ShoeDriver):\n"
        "    def feed(self, data, now):\n"
        "        return [], data\n"
        "def not_a_driver():\n"
        "    pass\n")
    (dist / "entry_points.txt").write_text(
        "[shoe_daemon.drivers]\n"
        "vendor = vendor_drivers:Good\n"
        "missing = no_such_module_here:Driver\n"
        "notadriver = vendor_drivers:not_a_driver\n"
        "text = vendor_drivers:Good\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    sys.modules.pop("vendor_drivers", None)


def test_built_ins_and_the_order_of_precedence(site):
    assert get_driver("protocol") is ProtocolDriver
    assert get_driver("text") is TextLineDriver                    # a built-in wins over an entry point
    assert {"vendor", "missing", "notadriver", "protocol", "text"} <= set(driver_names())
    vendor = get_driver("vendor")
    assert issubclass(vendor, ShoeDriver) and vendor.__module__ == "vendor_drivers"
    assert vendor().feed(b"x", 0.0) == ([], b"x")                   # default settings: no keys
    assert isinstance(vendor().settings, DriverSettings)

    class Mine(TextLineDriver):
        pass

    register_driver("text", Mine)                                   # registered in code wins over all
    try:
        assert get_driver("text") is Mine
    finally:
        _registered.pop("text", None)
    assert get_driver("text") is TextLineDriver


def test_unknown_and_broken_drivers_say_why(site):
    with pytest.raises(UnknownDriver) as info:
        get_driver("vendr")
    assert str(info.value).startswith("unknown shoe driver 'vendr'; known: missing, notadriver, protocol, text, vendor")
    assert str(info.value).endswith("(did you mean 'vendor'?)")
    assert isinstance(info.value, KeyError)
    with pytest.raises(DriverLoadError, match=r"'missing' \(no_such_module_here:Driver\) cannot be loaded: "
                                              r"ModuleNotFoundError"):
        get_driver("missing")
    with pytest.raises(DriverLoadError, match=r"'notadriver' .*is not a ShoeDriver subclass"):
        get_driver("notadriver")
    with pytest.raises(ConfigError) as info:
        validate_config({"shoe": {"driver": "missing"}})
    assert info.value.key == "shoe.driver" and "cannot be loaded: ModuleNotFoundError" in str(info.value)
    assert validate_config({"shoe": {"driver": "vendor"}}).shoe.driver == "vendor"


def test_register_driver_checks_what_it_is_given():
    with pytest.raises(TypeError, match="not a ShoeDriver subclass"):
        register_driver("bad", object)                              # type: ignore[arg-type]

    class NoModel(ShoeDriver):
        Settings = dict                                             # type: ignore[assignment]

        def feed(self, data, now):
            return [], b""

    with pytest.raises(TypeError, match="Settings must be a DriverSettings subclass"):
        register_driver("bad", NoModel)
    assert "bad" not in driver_names()


def test_every_driver_resumes_and_the_default_is_a_no_op():
    text = TextLineDriver()
    assert text.resume([]) is None
    protocol = ProtocolDriver()
    before = protocol.conn
    protocol.resume([])                                             # nothing journaled: the same session
    assert protocol.conn is before
    protocol.resume([Event(1.0, Kind.CARD, "shoe", {"card": "9H", "boot": 7, "lseq": 41})])
    assert protocol.conn is not before and protocol.conn.boot_id == 7 and protocol.conn.last_seq == 41
    assert protocol.conn.configured_link_timeout == 3.0             # the settings' default carried over
