"""systemd/install.sh, staged under a temporary root (--root): layout, idempotence, the
configuration and the udev rule never overwritten, uninstall.

--no-venv leaves out the venv (pip install of the package and its dependencies: ~25 s, and the
network or a wheel directory); the venv step was run by hand (`systemd/install.sh --root DIR`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "systemd" / "install.sh"


def install(root: Path, *args: str) -> str:
    proc = subprocess.run(["bash", str(SCRIPT), "--root", str(root), *args], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_install_is_idempotent_and_keeps_local_files(tmp_path):
    root = tmp_path / "root"
    out = install(root, "--no-venv")
    unit = root / "etc/systemd/system/shoe-daemon.service"
    rule = root / "etc/udev/rules.d/99-dealing-shoe.rules"
    conf = root / "etc/shoe-daemon/config.toml"
    assert unit.read_text() == (ROOT / "systemd/shoe-daemon.service").read_text()
    assert rule.read_text() == (ROOT / "systemd/99-dealing-shoe.rules").read_text()
    assert conf.read_text() == (ROOT / "systemd/shoe-daemon.example.toml").read_text()
    assert oct(conf.stat().st_mode & 0o777) == "0o640"
    assert {"usbserial", "cdc_acm", "videodev"} <= set((root / "etc/modules-load.d/shoe-daemon.conf").read_text().split())
    assert (root / "opt/shoe-daemon/share/doc/operations.md").exists()
    assert (root / "opt/shoe-daemon/share/shoe-daemon/shoe-daemon.example.toml").exists()
    assert (root / "var/lib/shoe-daemon").is_dir()
    assert "Next steps" in out and "systemctl enable --now shoe-daemon" in out

    # Again, unchanged: nothing moves.
    before = tree(root)
    install(root, "--no-venv")
    assert tree(root) == before

    # The operator's configuration and udev rule survive an upgrade; the unit is ours.
    conf.write_text('[table]\nid = "t7"\n')
    rule.write_text(rule.read_text().replace("CHANGE-ME", "A10KX3Q2"))
    unit.write_text("[Service]\nExecStart=/bin/false\n")
    out = install(root, "--no-venv")
    assert conf.read_text() == '[table]\nid = "t7"\n'
    assert "A10KX3Q2" in rule.read_text()
    assert unit.read_text() == (ROOT / "systemd/shoe-daemon.service").read_text()
    assert "kept /etc/shoe-daemon/config.toml" in out and "kept your /etc/udev/rules.d/99-dealing-shoe.rules" in out

    # A journal in the state directory stays through uninstall, --purge included.
    (root / "var/lib/shoe-daemon/journal.sqlite3").write_bytes(b"records")
    out = install(root, "--uninstall")
    for gone in ("etc/systemd/system/shoe-daemon.service", "etc/udev/rules.d/99-dealing-shoe.rules",
                 "etc/modules-load.d/shoe-daemon.conf", "opt/shoe-daemon"):
        assert not (root / gone).exists(), gone
    assert conf.exists()
    assert "kept the journal" in out
    install(root, "--uninstall", "--purge")
    assert not (root / "etc/shoe-daemon").exists()
    assert (root / "var/lib/shoe-daemon/journal.sqlite3").read_bytes() == b"records"


def test_another_prefix_is_written_into_the_unit(tmp_path):
    root = tmp_path / "root"
    install(root, "--no-venv", "--prefix", "/srv/shoe-daemon")
    unit = (root / "etc/systemd/system/shoe-daemon.service").read_text()
    assert "ExecStart=/srv/shoe-daemon/.venv/bin/shoe-daemon run --config /etc/shoe-daemon/config.toml" in unit
    assert "/opt/shoe-daemon" not in unit
    assert (root / "srv/shoe-daemon/share/doc/operations.md").exists()


def test_bad_options_are_refused(tmp_path):
    for args in (["--bogus"], ["--prefix", "relative/path"]):
        proc = subprocess.run(["bash", str(SCRIPT), "--root", str(tmp_path), *args], capture_output=True, text=True,
                              timeout=30)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
    assert os.listdir(tmp_path) == []


def test_shellcheck():
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        pytest.skip("shellcheck is not installed (apt-get install shellcheck)")
    proc = subprocess.run([shellcheck, str(SCRIPT)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout
