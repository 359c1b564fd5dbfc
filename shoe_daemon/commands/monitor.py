"""`shoe-daemon monitor`: a live terminal view of a table, over MQTT, from any broker."""

from __future__ import annotations

import argparse
import os
import queue
import signal
import sys
import threading
import time

from shoe_daemon.commands.argtypes import positive_int

HELP = "live terminal view of a table subscribed over MQTT (coup, result, shoe, alerts)"

EPILOG = """\
On a terminal the view is redrawn on every message. When stdout is not a
terminal (a pipe, a log file) or with --plain it prints one line per event:
cards, results, status changes, alerts, and the retained state when it arrives.

--protocol auto (the default) tries MQTT 5 and falls back to 3.1.1 when the
broker does not speak 5 (the daemon's embedded broker speaks 3.1.1 only).
The password may also come from the environment variable SHOE_DAEMON__MQTT__PASSWORD.

Exit status: 0 done (--once, --coups N, or Ctrl-C is 130), 1 the broker could
not be reached within --timeout or refused the credentials, 2 bad arguments.
"""

EXIT_BROKER = 1
QUIET_AFTER_RETAINED = 0.3   # s without a message after SUBACK: the retained state is in
ONCE_MAX_WAIT = 3.0          # s after SUBACK at most, for --once


def configure(parser: argparse.ArgumentParser) -> None:
    parser.epilog = EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("--broker", required=True, metavar="HOST[:PORT]",
                        help="the MQTT broker (port 1883, or 8883 with --tls-ca, unless given)")
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--table", metavar="ID", help="the table id: topics under baccarat/ID")
    which.add_argument("--prefix", metavar="P", help="the table's topic prefix, e.g. casino1/baccarat/T3")
    parser.add_argument("--username", metavar="USER")
    parser.add_argument("--password", metavar="PASS", default=os.environ.get("SHOE_DAEMON__MQTT__PASSWORD"))
    parser.add_argument("--tls-ca", metavar="PEM", help="CA bundle: enables TLS")
    parser.add_argument("--tls-cert", metavar="PEM", help="client certificate")
    parser.add_argument("--tls-key", metavar="PEM", help="client key")
    parser.add_argument("--tls-insecure", action="store_true", help="do not check the broker's host name")
    parser.add_argument("--protocol", choices=["auto", "5", "3.1.1"], default="auto")
    parser.add_argument("--coups", type=positive_int(), metavar="N", help="exit after N coup results")
    parser.add_argument("--once", action="store_true", help="print the retained state and exit")
    parser.add_argument("--plain", action="store_true", help="one line per event even on a terminal")
    parser.add_argument("--note", action="append", default=[], metavar="TEXT",
                        help="a line kept under the redrawn view (repeatable), e.g. where the console is")
    parser.add_argument("--ready-file", metavar="PATH",
                        help="create PATH once subscribed (for a script that waits for the view, e.g. the demo)")
    parser.add_argument("--timeout", type=float, default=10.0, metavar="S",
                        help="with --once: give up when not subscribed after S seconds (default 10)")


def parse_broker(text: str, *, tls: bool = False) -> tuple[str, int]:
    """``host``, ``host:port``, ``[v6addr]:port`` -> (host, port)."""
    default = 8883 if tls else 1883
    text = text.strip()
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
    elif text.count(":") == 1:
        host, port = text.split(":")
    else:
        host, port = text, ""
    if not host:
        raise ValueError(f"no host in {text!r}")
    if not port:
        return host, default
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"bad port in {text!r}")
    return host, int(port)


class _Session:
    """One paho client for the monitor; callbacks only put events on a queue."""

    def __init__(self, config, prefix: str, events: queue.Queue) -> None:
        import uuid

        import paho.mqtt.client as mqtt
        from paho.mqtt.enums import CallbackAPIVersion

        from shoe_daemon.publish.mqtt import configure_client, paho_protocol

        self.prefix = prefix
        self.events = events
        self.v5 = config.protocol == "5"
        self.client = mqtt.Client(
            CallbackAPIVersion.VERSION2,
            client_id=f"shoe-monitor-{uuid.uuid4().hex[:10]}",
            protocol=paho_protocol(config),
        )
        configure_client(self.client, config)
        self.client.reconnect_delay_set(0.5, 10)
        self.client.on_connect = self._on_connect
        self.client.on_connect_fail = self._on_connect_fail
        self.client.on_disconnect = self._on_disconnect
        self.client.on_subscribe = self._on_subscribe
        self.client.on_message = self._on_message
        self.client.connect_async(config.host, config.port, 30)
        self.client.loop_start()

    def close(self) -> None:
        try:
            self.client.disconnect()
        finally:
            self.client.loop_stop()

    def _on_connect(self, client, userdata, flags, reason_code, properties):
        if reason_code.is_failure:
            self.events.put(("refused", reason_code))
            return
        self.events.put(("connected", None))
        client.subscribe(f"{self.prefix}/#", qos=1)

    def _on_connect_fail(self, client, userdata):
        self.events.put(("unreachable", None))

    def _on_disconnect(self, client, userdata, flags, reason_code, properties):
        self.events.put(("disconnected", reason_code))

    def _on_subscribe(self, client, userdata, mid, reason_codes, properties):
        self.events.put(("subscribed", reason_codes))

    def _on_message(self, client, userdata, message):
        self.events.put(("message", (message.topic, bytes(message.payload), bool(message.retain))))


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def run(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from shoe_daemon.config import MqttConfig
    from shoe_daemon.monitor.view import CLEAR, TableView
    from shoe_daemon.publish import topics
    from shoe_daemon.publish.mqtt import RC_BAD_CREDENTIALS, RC_NOT_AUTHORIZED, RC_UNSUPPORTED_PROTOCOL

    try:
        host, port = parse_broker(args.broker, tls=bool(args.tls_ca))
        prefix = topics.normalize_prefix(args.prefix, args.table or "")
        protocol = "5" if args.protocol == "auto" else args.protocol
        config = MqttConfig(
            host=host, port=port, protocol=protocol, username=args.username, password=args.password,
            tls_ca=args.tls_ca, tls_cert=args.tls_cert, tls_key=args.tls_key, tls_insecure=args.tls_insecure,
        )
    except (ValueError, ValidationError) as exc:
        print(f"shoe-daemon monitor: {exc}", file=sys.stderr)
        return 2

    interactive = sys.stdout.isatty() and not args.plain
    view = TableView(prefix, broker=f"{host}:{port}", color=interactive, notes=args.note)
    out = sys.stdout

    def emit(lines: list[str]) -> None:
        if interactive:
            return
        for line in lines:
            out.write(line + "\n")
        out.flush()

    def redraw() -> None:
        if interactive:
            out.write(CLEAR + view.screen() + "\n")
            out.flush()

    if threading.current_thread() is threading.main_thread():
        # SIGTERM (the demo stopping its view, a service manager) ends the view as Ctrl-C does.
        signal.signal(signal.SIGTERM, _interrupt)
    events: queue.Queue = queue.Queue()
    try:
        session = _Session(config, prefix, events)
    except ValueError as exc:   # TLS files
        print(f"shoe-daemon monitor: {exc}", file=sys.stderr)
        return 2
    started = time.monotonic()
    subscribed_at: float | None = None
    last_message = time.monotonic()
    fell_back = False
    redraw()
    try:
        while True:
            now = time.monotonic()
            if args.once:
                if subscribed_at is None and now - started > args.timeout:
                    print(f"shoe-daemon monitor: no subscription on {host}:{port} within {args.timeout:g} s",
                          file=sys.stderr)
                    return EXIT_BROKER
                if subscribed_at is not None and (
                    now - last_message >= QUIET_AFTER_RETAINED or now - subscribed_at >= ONCE_MAX_WAIT
                ):
                    if interactive:
                        out.write(view.screen() + "\n")
                        out.flush()
                    return 0
            try:
                kind, data = events.get(timeout=0.05)
            except queue.Empty:
                continue
            if kind == "message":
                topic, payload, retained = data
                last_message = time.monotonic()
                suffix = topics.split(prefix, topic)
                if suffix is None:
                    continue
                emit(view.apply(suffix, payload, retained))
                if not args.once:
                    redraw()
                if args.coups and suffix == topics.COUP_RESULT and view.results_seen >= args.coups:
                    return 0
            elif kind == "subscribed":
                subscribed_at = last_message = time.monotonic()
                emit([f"monitor: subscribed to {prefix}/# on {host}:{port} (MQTT {config.protocol})"])
                redraw()
                if args.ready_file:
                    open(args.ready_file, "a").close()
            elif kind == "connected":
                emit(view.broker_event("connected", f"{host}:{port}"))
                redraw()
            elif kind == "refused":
                code = getattr(data, "value", None)
                if code == RC_UNSUPPORTED_PROTOCOL and config.protocol == "5" and args.protocol == "auto" \
                        and not fell_back:
                    fell_back = True
                    session.close()
                    config = config.model_copy(update={"protocol": "3.1.1"})
                    emit(["broker: no MQTT 5, using 3.1.1"])
                    session = _Session(config, prefix, events)
                    continue
                print(f"shoe-daemon monitor: {host}:{port} refused the connection: {data} (reason code {code})",
                      file=sys.stderr)
                if code in (RC_BAD_CREDENTIALS, RC_NOT_AUTHORIZED, RC_UNSUPPORTED_PROTOCOL) or args.once:
                    return EXIT_BROKER
            elif kind == "unreachable":
                if view.broker_state != "unreachable":
                    emit(view.broker_event("unreachable", f"{host}:{port}, retrying"))
                    redraw()
            elif kind == "disconnected":
                if view.broker_state == "connected":
                    emit(view.broker_event("disconnected", f"{data}, retrying"))
                    redraw()
    finally:
        session.close()
