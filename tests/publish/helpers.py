"""Helpers of the publisher tests: what a subscriber got, and in-order delivery from many threads."""

from __future__ import annotations

import json
import threading

PREFIX = "baccarat/T1"


def seqs(messages, suffix="coup/card") -> list[int]:
    return [json.loads(m.payload)["seq"] for m in messages if m.topic == f"{PREFIX}/{suffix}"]


def states(messages) -> list[str]:
    return [json.loads(m.payload)["state"] for m in messages if m.topic == f"{PREFIX}/status"]


def check_each_threads_order(pub, sub, threads: int = 4, each: int = 100) -> None:
    """``threads`` threads each publish ``each`` numbered messages on their own topic ``t/<n>`` at
    once; every publish is taken and ``sub`` (subscribed to ``t/#``) gets every topic whole and in
    its thread's order."""
    taken: list[list[bool]] = [[] for _ in range(threads)]

    def worker(n):
        for i in range(each):
            taken[n].append(pub.publish(f"t/{n}", json.dumps({"seq": i})))

    workers = [threading.Thread(target=worker, args=(n,)) for n in range(threads)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    assert taken == [[True] * each] * threads
    sub.wait_for(lambda ms: len(ms) >= threads * each)
    for n in range(threads):
        assert [json.loads(m.payload)["seq"] for m in sub.on_topic(f"{PREFIX}/t/{n}")] == list(range(each))
