"""The optional extras a command needs, checked before anything starts.

A missing extra is one line naming it (``pip install 'shoe-daemon[broker]'``) and exit status 2,
not a traceback in the broker's or the API's thread followed by endless retries. The modules
are imported for real (not just looked up): an installed but broken package counts as missing.
"""

from __future__ import annotations

import importlib

EXIT_MISSING = 2

# extra (pyproject's [project.optional-dependencies]) -> (what it is for, modules it provides)
EXTRAS: dict[str, tuple[str, tuple[str, ...]]] = {
    "broker": ("the embedded MQTT broker", ("amqtt",)),
    "api": ("the HTTP API and the browser display", ("fastapi", "uvicorn", "prometheus_client", "websockets")),
    "camera": ("the camera", ("cv2",)),
}


def missing(extras: list[str]) -> list[tuple[str, str]]:
    """(extra, first problem) for each of ``extras`` whose modules do not import."""
    out = []
    for extra in extras:
        for module in EXTRAS[extra][1]:
            try:
                importlib.import_module(module)
            except ImportError as exc:
                out.append((extra, str(exc) or f"No module named {module!r}"))
                break
    return out


def message(command: str, problems: list[tuple[str, str]]) -> str:
    """One line: what needs which extra, and the pip command that installs them all."""
    needs = "; ".join(f"{EXTRAS[extra][0]} needs the '{extra}' extra ({why})" for extra, why in problems)
    names = ",".join(extra for extra, _ in problems)
    return f"shoe-daemon {command}: {needs}: pip install 'shoe-daemon[{names}]'"


def require(command: str, extras: list[str], stream=None) -> bool:
    """True when every extra imports; else prints :func:`message` on ``stream`` (stderr) and returns False."""
    import sys

    problems = missing(extras)
    if problems:
        print(message(command, problems), file=stream or sys.stderr, flush=True)
    return not problems


def for_config(config) -> list[str]:
    """The extras a daemon with ``config`` uses: no [mqtt] host = the embedded broker, [api], [camera]."""
    needed = []
    if config.mqtt.host is None:
        needed.append("broker")
    if config.api.enabled:
        needed.append("api")
    if config.camera.enabled:
        needed.append("camera")
    return needed
