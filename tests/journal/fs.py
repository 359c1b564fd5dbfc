"""Small real file systems for the disk-full and read-only tests: a tmpfs mounted by the test.

Needs root with CAP_SYS_ADMIN (CI and the table PC's installer run as root); elsewhere the tests
that use it are skipped with the reason, and the drills (bench/drills.py) print "skipped". Nothing
of the machine's own mounts is touched: the tmpfs is mounted on a directory under the test's (or
drill's) temporary directory and unmounted after.
"""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path


class CannotMount(OSError):
    """No tmpfs can be mounted here (not root, no CAP_SYS_ADMIN, no mount(8)): the reason."""


@contextlib.contextmanager
def mounted_tmpfs(path: Path, size: str = "8m") -> Iterator[Path]:
    """A tmpfs of ``size`` on ``path`` (created) while the block runs; CannotMount if impossible
    (the drills, bench/drills.py, say "skipped" then)."""
    path.mkdir(parents=True, exist_ok=True)
    try:
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(path)],
                           capture_output=True, text=True, timeout=30)  # fmt: skip
    except OSError as exc:
        raise CannotMount(f"cannot run mount(8): {exc}") from None
    if r.returncode != 0:
        raise CannotMount(f"cannot mount a tmpfs here (needs root with CAP_SYS_ADMIN): {r.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True, timeout=30)


@contextlib.contextmanager
def tmpfs(path: Path, size: str = "8m") -> Iterator[Path]:
    """mounted_tmpfs for a test: skipped, with the reason, where no tmpfs can be mounted."""
    import pytest

    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(mounted_tmpfs(path, size))
        except CannotMount as exc:
            pytest.skip(str(exc))
        yield path


def remount(path: Path, *, readonly: bool) -> None:
    subprocess.run(["mount", "-o", f"remount,{'ro' if readonly else 'rw'}", str(path)], check=True,
                   capture_output=True, timeout=30)  # fmt: skip


def fill(path: Path) -> Path:
    """Fill the file system at ``path`` to the last byte; returns the filler (delete it to free)."""
    filler = path / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o644)
    block = b"\0" * 65536
    try:
        for size in (65536, 4096, 512, 1):
            chunk = block[:size]
            while True:
                try:
                    os.write(fd, chunk)
                except OSError as exc:
                    if exc.errno != errno.ENOSPC:
                        raise
                    break
    finally:
        os.close(fd)
    return filler
