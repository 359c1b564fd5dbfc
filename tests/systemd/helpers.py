"""Helpers for the service tests: a notify socket like systemd's, and MemoryDenyWriteExecute.

``NotifyListener`` binds an AF_UNIX datagram socket (what systemd puts in $NOTIFY_SOCKET), reads
every datagram with the sender's credentials (SO_PASSCRED, as systemd does to enforce
NotifyAccess=main) and keeps them, timestamped, in arrival order.

``mdwe_argv(argv)`` runs a command under the kernel's W^X lock (prctl PR_SET_MDWE,
PR_MDWE_REFUSE_EXEC_GAIN: Linux 6.3+), the same restriction systemd's MemoryDenyWriteExecute=
applies with seccomp: no mapping may be writable and executable, nor become executable.

``sandbox_argv(argv)`` runs a command the way the unit confines the daemon's memory and system
calls: the W^X lock above, and a seccomp filter made from the unit's SystemCallFilter= lines
(groups expanded by ``systemd-analyze syscall-filter``; SystemCallErrorNumber=EPERM for the rest),
as systemd would install it. The filter needs libseccomp's Python binding (Debian:
python3-seccomp, built for the same Python 3.11 ABI); without it only the W^X lock applies.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

PR_SET_MDWE = 65
PR_GET_MDWE = 66
PR_MDWE_REFUSE_EXEC_GAIN = 1

# Run by a fresh interpreter: lock W^X, then exec the real command (same pid, lock inherited).
_MDWE_WRAPPER = """\
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
if libc.prctl(65, 1, 0, 0, 0) != 0:
    sys.exit("PR_SET_MDWE failed: " + os.strerror(ctypes.get_errno()))
os.execv(sys.argv[1], sys.argv[1:])
"""


def mdwe_supported() -> bool:
    """Whether this kernel has PR_SET_MDWE (tried in a child: the lock cannot be undone)."""
    code = "import ctypes,sys; l=ctypes.CDLL(None); sys.exit(0 if l.prctl(65, 1, 0, 0, 0) == 0 else 1)"
    return subprocess.run([sys.executable, "-c", code], timeout=30).returncode == 0


def mdwe_argv(argv: list[str]) -> list[str]:
    """``argv`` run under PR_SET_MDWE; argv[0] must be a path (it is exec'd directly)."""
    return [sys.executable, "-c", _MDWE_WRAPPER, *argv]


# Debian's python3-seccomp lives here; same ABI (3.11) as the venv's interpreter.
SECCOMP_PATHS = ("/usr/lib/python3/dist-packages",)

_SANDBOX_WRAPPER = """\
import ctypes, errno, json, os, sys
spec = json.loads(sys.argv[1])
if spec["mdwe"]:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(65, 1, 0, 0, 0) != 0:
        sys.exit("PR_SET_MDWE failed: " + os.strerror(ctypes.get_errno()))
if spec["allow"] is not None:
    sys.path.extend(spec["paths"])
    import seccomp
    f = seccomp.SyscallFilter(defaction=seccomp.ERRNO(spec["errno"]))
    for name in spec["allow"]:
        try:
            f.add_rule(seccomp.ALLOW, name)
        except (ValueError, RuntimeError, OSError):
            pass  # a name this libseccomp does not know (newer than it)
    f.load()
os.execv(sys.argv[2], sys.argv[2:])
"""


def seccomp_available() -> bool:
    code = f"import sys; sys.path.extend({list(SECCOMP_PATHS)!r}); import seccomp"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=30).returncode == 0


def syscall_groups() -> dict[str, list[str]]:
    """``systemd-analyze syscall-filter``: group name -> members (syscalls and @groups)."""
    out = subprocess.run(["systemd-analyze", "syscall-filter"], capture_output=True, text=True,
                         timeout=30, check=True).stdout
    groups: dict[str, list[str]] = {}
    current = None
    for line in out.splitlines():
        if line.startswith("@"):
            current = line.strip()
            groups[current] = []
        elif current and line.strip() and not line.strip().startswith("#"):
            groups[current].append(line.strip())
    return groups


def unit_syscall_allow_list(unit: Path) -> tuple[list[str], str]:
    """The system calls the unit's SystemCallFilter= lines allow, and its SystemCallErrorNumber=."""
    groups = syscall_groups()

    def expand(item: str) -> set[str]:
        if not item.startswith("@"):
            return {item}
        return set().union(*(expand(member) for member in groups[item]))

    allow: set[str] | None = None
    errno_name = "EPERM"
    for line in unit.read_text().splitlines():
        key, _, value = line.strip().partition("=")
        if key == "SystemCallErrorNumber":
            errno_name = value.strip()
        if key != "SystemCallFilter" or not value.strip():
            continue
        deny = value.startswith("~")
        names = set().union(*(expand(item) for item in value.lstrip("~").split()))
        if deny:
            assert allow is not None, "a deny list first: not what this helper models"
            allow -= names
        else:
            allow = (allow or expand("@default")) | names
    assert allow is not None, f"no SystemCallFilter= in {unit}"
    return sorted(allow), errno_name


def sandbox_argv(argv: list[str], unit: Path) -> tuple[list[str], str]:
    """``argv`` under the unit's W^X lock and system call filter; and a line saying what applies."""
    import errno

    mdwe = mdwe_supported()
    allow = None
    errno_name = "EPERM"
    if seccomp_available():
        allow, errno_name = unit_syscall_allow_list(unit)
    spec = {"mdwe": mdwe, "allow": allow, "errno": getattr(errno, errno_name), "paths": list(SECCOMP_PATHS)}
    what = []
    what.append("MemoryDenyWriteExecute (PR_SET_MDWE)" if mdwe else "no W^X lock (kernel < 6.3)")
    what.append(f"SystemCallFilter ({len(allow)} calls allowed, others {errno_name})" if allow is not None
                else "no system call filter (apt-get install python3-seccomp)")
    return [sys.executable, "-c", _SANDBOX_WRAPPER, json.dumps(spec), *argv], "; ".join(what)


@dataclass(frozen=True)
class Notification:
    t: float          # time.monotonic() on arrival
    pid: int          # the sender's pid (SCM_CREDENTIALS)
    fields: tuple[tuple[str, str], ...]

    def get(self, key: str) -> str | None:
        for k, v in self.fields:
            if k == key:
                return v
        return None

    def has(self, key: str, value: str | None = None) -> bool:
        got = self.get(key)
        return got is not None and (value is None or got == value)


class NotifyListener:
    def __init__(self) -> None:
        # AF_UNIX paths are limited to 107 bytes: a short directory of our own.
        self.dir = tempfile.mkdtemp(prefix="sdn-")
        self.path = os.path.join(self.dir, "notify")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.path)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        self.sock.settimeout(0.1)
        self.received: list[Notification] = []
        self.raw: list[bytes] = []
        self._cond = threading.Condition()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="notify-listener", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        ucred = struct.Struct("iII")
        while not self._stop.is_set():
            try:
                data, ancdata, _flags, _addr = self.sock.recvmsg(4096, socket.CMSG_SPACE(ucred.size))
            except TimeoutError:
                continue
            except OSError:
                return
            now = time.monotonic()
            pid = -1
            for level, kind, cdata in ancdata:
                if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
                    pid = ucred.unpack(cdata[: ucred.size])[0]
            fields = tuple(tuple(line.split("=", 1)) for line in data.decode().split("\n") if "=" in line)
            with self._cond:
                self.raw.append(data)
                self.received.append(Notification(now, pid, fields))  # type: ignore[arg-type]
                self._cond.notify_all()

    def snapshot(self) -> list[Notification]:
        with self._cond:
            return list(self.received)

    def wait_for(self, predicate, timeout: float = 10.0, what: str = "condition"):
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                value = predicate(list(self.received))
                if value:
                    return value
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    got = "\n".join(repr(m) for m in self.raw[-15:])
                    raise TimeoutError(f"{what}: not within {timeout} s; last datagrams:\n{got}")
                self._cond.wait(min(remaining, 0.1))

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2.0)
        self.sock.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> NotifyListener:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
