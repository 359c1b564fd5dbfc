"""The core does no I/O: nothing under shoe_daemon/core/ may import the sources, the publisher, the
API, the journal, the camera's vision code or the CLI (they depend on the core, never the reverse)."""

import ast
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "shoe_daemon" / "core"
FORBIDDEN = ("sources", "publish", "api", "journal", "vision", "commands", "cli", "service", "recording",
             "web", "monitor", "emulator", "config")
# Nor anything that reads a clock or touches the outside world.
FORBIDDEN_STDLIB = ("time", "datetime", "socket", "threading", "asyncio", "subprocess", "sqlite3", "os", "random")


def imports_of(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against shoe_daemon.core
                base = "shoe_daemon.core" if node.level == 1 else "shoe_daemon"
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            # "from shoe_daemon import cli" imports the module shoe_daemon.cli
            names += [module] + [f"{module}.{alias.name}" for alias in node.names]
    return names


def offences(path: Path) -> list[str]:
    bad = []
    for name in imports_of(path):
        parts = name.split(".")
        if parts[0] == "shoe_daemon" and len(parts) > 1 and parts[1] in FORBIDDEN:
            bad.append(name)
        if parts[0] in FORBIDDEN_STDLIB:
            bad.append(name)
    return bad


def test_no_module_under_core_imports_io_or_the_cli():
    modules = sorted(CORE.glob("*.py"))
    assert len(modules) >= 9, modules  # the check looks where the core is
    found = {p.name: offences(p) for p in modules}
    assert {name: bad for name, bad in found.items() if bad} == {}


def test_the_check_catches_a_forbidden_import(tmp_path):
    for line in ("from shoe_daemon.sources.base import Lights", "import shoe_daemon.publish.mqtt",
                 "from shoe_daemon.journal import Journal", "from ..vision import zones", "import time",
                 "from shoe_daemon.commands import run", "from shoe_daemon import cli"):
        module = tmp_path / "bad.py"
        module.write_text(line + "\n")
        assert offences(module), line
    module = tmp_path / "ok.py"
    module.write_text("from shoe_daemon.game.engine import DealingEngine\nfrom shoe_daemon.core.events import Event\n")
    assert offences(module) == []
