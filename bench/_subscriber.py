"""The throughput bench's subscriber, in a process of its own.

In the bench's process a paho subscriber shared the GIL with the emulated shoe and cost more CPU
a card than the daemon itself (1.3 ms: MQTT 5 properties decoded per message), so the figure measured
the bench. Here it has its own interpreter and speaks MQTT 3.1.1 (no properties to decode); it
subscribes like a display (``<prefix>/#``, QoS 1) and writes one line to stdout per event the bench
waits for, stamped with ``time.perf_counter()`` (CLOCK_MONOTONIC: the same clock in every process):

    subscribed                    -- SUBACK received
    state T                       -- the first coup/current (the daemon's publisher is up)
    linkup T                      -- the first ``sources`` message saying a shoe link is up
    card T COUNTER                -- a live coup/card, with the shoe's card counter
    result T N                    -- a live coup/result; N = live messages received so far

Run: ``python -m bench._subscriber PORT PREFIX`` (the bench starts it; it ends when stdin closes).
"""

from __future__ import annotations

import json
import sys
import threading
import time

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion


def main(argv: list[str]) -> int:
    port, prefix = int(argv[0]), argv[1]
    out = sys.stdout
    lock = threading.Lock()
    count = 0
    seen_state = seen_link = False

    def say(line: str) -> None:
        with lock:
            out.write(line + "\n")
            out.flush()

    def on_connect(client, userdata, flags, reason_code, properties) -> None:
        client.subscribe(f"{prefix}/#", qos=1)

    def on_subscribe(client, userdata, mid, reason_codes, properties) -> None:
        say("subscribed")

    def on_message(client, userdata, message) -> None:
        nonlocal count, seen_state, seen_link
        now = time.perf_counter()
        topic = message.topic
        if not seen_state and topic.endswith("/coup/current"):
            seen_state = True
            say(f"state {now}")
        if not seen_link and topic.endswith("/sources") and b'"link":"up"' in message.payload:
            seen_link = True
            say(f"linkup {now}")
        if message.retain:
            return
        count += 1
        if topic.endswith("/coup/card"):
            say(f"card {now} {json.loads(message.payload)['counter']}")
        elif topic.endswith("/coup/result"):
            say(f"result {now} {count}")

    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"bench-sub-{port}", protocol=mqtt.MQTTv311)
    client.on_connect = on_connect
    client.on_subscribe = on_subscribe
    client.on_message = on_message
    client.connect("127.0.0.1", port)
    client.loop_start()
    try:
        sys.stdin.read()          # until the bench closes our stdin
    finally:
        client.disconnect()
        client.loop_stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
