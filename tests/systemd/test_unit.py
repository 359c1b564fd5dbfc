"""The unit file and the udev rule: systemd-analyze verify, the security score, what they must say.

`systemd-analyze` comes with Debian's `systemd` package (`apt-get install systemd` where it is
missing). It runs offline on the file: no systemd needs to be running (nor PID 1 be systemd).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
UNIT = ROOT / "systemd" / "shoe-daemon.service"
FLOOR_UNIT = ROOT / "systemd" / "shoe-daemon-floor.service"     # the floor server's (docs/floor.md)
RULE = ROOT / "systemd" / "99-dealing-shoe.rules"
EXEC = "/opt/shoe-daemon/.venv/bin/shoe-daemon"
SCORE_MAX = 2.5


def analyze() -> str:
    path = shutil.which("systemd-analyze")
    if path is None:
        pytest.fail("systemd-analyze is not installed: apt-get install -y systemd (scripts/system-deps.sh)",
                    pytrace=False)
    return path


def unit_settings(text: str) -> dict[str, list[str]]:
    """Section.Key -> values, in order (a unit may repeat a key)."""
    out: dict[str, list[str]] = {}
    section = ""
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            section = line.strip("[]")
            continue
        key, _, value = line.partition("=")
        out.setdefault(f"{section}.{key.strip()}", []).append(value.strip())
    return out


SETTINGS = unit_settings(UNIT.read_text())


def one(key: str) -> str:
    values = SETTINGS.get(key)
    assert values, f"{key} is not set in {UNIT.name}"
    return values[-1]


@pytest.mark.parametrize("unit", [UNIT, FLOOR_UNIT], ids=lambda u: u.name)
def test_systemd_analyze_verify(tmp_path, unit):
    # verify insists that ExecStart's binary exists and is executable. The unit names the
    # installed /opt/shoe-daemon/.venv/bin/shoe-daemon, so the check runs on a temporary copy of
    # the unit whose ExecStart binary is this venv's shoe-daemon (same arguments); everything
    # else is the file as shipped.
    binary = ROOT / ".venv" / "bin" / "shoe-daemon"
    if not binary.exists():
        binary = Path(shutil.which("true") or "/bin/true")
    text = unit.read_text()
    assert f"ExecStart={EXEC} " in text
    copy = tmp_path / unit.name
    copy.write_text(text.replace(f"ExecStart={EXEC} ", f"ExecStart={binary} "))
    proc = subprocess.run([analyze(), "verify", str(copy)], capture_output=True, text=True, timeout=30)
    report = (proc.stdout + proc.stderr).strip()
    print(f"systemd-analyze verify (ExecStart -> {binary}): exit {proc.returncode}, output: {report or '(none)'}")
    assert proc.returncode == 0, report
    assert report == "", f"systemd-analyze verify reported problems:\n{report}"


def test_systemd_analyze_verify_catches_mistakes(tmp_path):
    """The check above is not vacuous: a misspelt key and a bad value are reported."""
    text = UNIT.read_text().replace(f"ExecStart={EXEC} ", "ExecStart=/bin/true ")
    text = text.replace("WatchdogSec=30s", "WatchdogSec=30s\nWatchdogSecs=1\nRestartSec=soon")
    copy = tmp_path / UNIT.name
    copy.write_text(text)
    proc = subprocess.run([analyze(), "verify", str(copy)], capture_output=True, text=True, timeout=30)
    report = proc.stdout + proc.stderr
    assert "WatchdogSecs" in report and "soon" in report, report


@pytest.mark.parametrize("unit", [UNIT, FLOOR_UNIT], ids=lambda u: u.name)
def test_security_score(unit):
    help_text = subprocess.run([analyze(), "--help"], capture_output=True, text=True, timeout=30).stdout
    assert "--offline" in help_text, "this systemd-analyze has no --offline (systemd >= 252 needed)"
    proc = subprocess.run([analyze(), "security", "--offline=yes", str(unit)],
                          capture_output=True, text=True, timeout=60)
    out = proc.stdout + proc.stderr
    match = re.search(r"Overall exposure level for \S+: (\d+(?:\.\d+)?) (\w+)", out)
    assert match, f"no overall exposure level in:\n{out}"
    score, verdict = float(match.group(1)), match.group(2)
    exposed = [" ".join(line.split()) for line in out.splitlines() if line.lstrip().startswith("✗")]
    print(f"systemd-analyze security --offline=yes {unit.name}: {score} {verdict}")
    print("remaining exposure:\n  " + "\n  ".join(exposed))
    assert proc.returncode == 0, out
    assert score <= SCORE_MAX, f"exposure {score} > {SCORE_MAX}:\n{out}"
    assert verdict == "OK"


def test_unit_says_what_the_issue_asks():
    assert one("Service.Type") == "notify"
    assert one("Service.ExecStart") == f"{EXEC} run --config /etc/shoe-daemon/config.toml"
    assert one("Service.Restart") == "on-failure"
    assert one("Service.WatchdogSec")
    assert set(one("Service.RestartPreventExitStatus").split()) == {"2", "3"}
    # Exit 4 (journal unavailable) is restarted, but never in a tight loop: the daemon held its
    # start for START_WAIT s first, so starts stay under StartLimitBurst= per StartLimitIntervalSec=.
    from shoe_daemon import service

    assert service.EXIT_JOURNAL_UNAVAILABLE == 4 and "4" not in one("Service.RestartPreventExitStatus").split()
    per_start = service.START_WAIT + float(one("Service.RestartSec").removesuffix("s"))
    window = 60 * float(one("Unit.StartLimitIntervalSec").removesuffix("min"))
    assert window / per_start < int(one("Unit.StartLimitBurst")), "a journal outage would end in a failed unit"
    assert one("Service.StateDirectory") == "shoe-daemon"
    assert one("Service.ConfigurationDirectory") == "shoe-daemon"
    assert one("Service.User") == "shoe-daemon"
    assert set(one("Service.SupplementaryGroups").split()) == {"dialout", "video"}
    assert one("Service.DevicePolicy") == "closed"
    allowed = {v.split()[0] for v in SETTINGS["Service.DeviceAllow"]}
    assert allowed == {"/dev/dealing-shoe", "char-ttyUSB", "char-ttyACM", "char-ttyS", "char-video4linux",
                       "char-pts"}
    assert all(v.split()[1] == "rw" for v in SETTINGS["Service.DeviceAllow"])
    # PrivateDevices= hides the serial port: never, not even "no" (someone would flip it).
    assert "Service.PrivateDevices" not in SETTINGS
    assert one("Service.ProtectSystem") == "strict"
    assert one("Service.CapabilityBoundingSet") == ""
    assert one("Service.MemoryDenyWriteExecute") == "yes"
    assert one("Service.UMask") == "0077"
    assert one("Service.RestrictAddressFamilies").split() == ["AF_UNIX", "AF_INET", "AF_INET6"]
    # The broker may be remote: no IP allow-list in the shipped unit (docs/operations.md).
    assert "Service.IPAddressDeny" not in SETTINGS
    # Logs go to the journal: the daemon logs to stderr.
    assert one("Service.StandardError") == "journal"


def test_unit_and_config_agree_on_the_journal():
    from shoe_daemon.config import load_config

    # StateDirectory=shoe-daemon is /var/lib/shoe-daemon: the default journal lives there.
    assert Path(load_config(None, {}).journal.path).parent == Path("/var/lib") / one("Service.StateDirectory")
    # The example configuration loads (it is what install.sh copies to /etc/shoe-daemon/config.toml).
    example = load_config(str(ROOT / "systemd" / "shoe-daemon.example.toml"), {})
    assert example.shoe.port == "/dev/dealing-shoe"


def rule_lines() -> list[str]:
    return [line.strip() for line in RULE.read_text().splitlines() if line.strip() and not line.lstrip().startswith("#")]


def test_udev_rule():
    lines = rule_lines()
    assert len(lines) == 1, lines
    rule = lines[0]
    pairs = re.findall(r'([A-Z_]+(?:\{[^}]+\})?)\s*(==|!=|\+=|:=|=)\s*"([^"]*)"', rule)
    # Every comma-separated item is a well-formed KEY op "value" (a typo would be ignored by udev).
    assert len(pairs) == len([part for part in rule.split(",") if part.strip()]), rule
    got = {(k, op): v for k, op, v in pairs}
    assert got[("SUBSYSTEM", "==")] == "tty"
    for attr in ("ATTRS{idVendor}", "ATTRS{idProduct}", "ATTRS{serial}"):
        assert (attr, "==") in got, f"the rule must match {attr}"
    assert got[("SYMLINK", "+=")] == "dealing-shoe"
    assert got[("GROUP", "=")] == "dialout"
    assert got[("MODE", "=")] == "0660"
    assert got[("ENV{ID_MM_DEVICE_IGNORE}", "=")] == "1"
    # The placeholders must not match a real adapter until someone puts the shoe's ids in.
    assert got[("ATTRS{idVendor}", "==")] == "0000"
    assert "udevadm info" in RULE.read_text()
