"""canonical_json / parse_json: orjson's speed, json's bytes and values (replays must match)."""

import json
import random
import struct

import pytest

from shoe_daemon.core import outputs
from shoe_daemon.core.outputs import canonical_json, parse_json


def reference(obj) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def floats(n: int, seed: int) -> list[float]:
    rnd = random.Random(seed)
    out = [1e-5, 2.5e-07, 1e-4, 0.0001234, 1e16, 1e22, 5e-324, -0.0, 0.1, 1 / 3, 1712345678.123456]
    while len(out) < n:
        kind = rnd.random()
        if kind < 0.4:
            x = rnd.uniform(-1, 1) * 10 ** rnd.randint(-30, 30)
        elif kind < 0.7:
            x = struct.unpack("d", struct.pack("Q", rnd.getrandbits(64)))[0]
        else:
            x = round(rnd.uniform(-1, 1), rnd.randint(0, 12)) * 10 ** rnd.randint(-8, 18)
        if x == x and abs(x) != float("inf"):
            out.append(x)
    return out


def test_floats_strings_and_keys_are_written_as_json_writes_them():
    for x in floats(20000, seed=1):
        assert canonical_json(x) == reference(x), repr(x)
    text = "".join(chr(i) for i in range(0x80)) + "\u00e9\u2028\u2029\ufeff\U0010ffff e- 0.0000"
    doc = {"b": [text, {text: 1.5e-9}], "a": {"z": None, "é": True, "Z": 2**63 + 1}, "t": (1, 2)}
    assert canonical_json(doc) == reference(doc)
    assert canonical_json({10: "int keys", 9: 2}) == reference({10: "int keys", 9: 2})


def test_the_same_bytes_without_orjson(monkeypatch):
    doc = {"p": floats(200, seed=2), "s": "x\n\"y\"", "n": [2**70, -(2**64)]}
    fast = canonical_json(doc)
    monkeypatch.setattr(outputs, "_orjson", None)
    assert canonical_json(doc) == fast == reference(doc)


@pytest.mark.parametrize("text", [
    '{"n":18446744073709551616}', '{"n":-995650539832574066465}', '{"n":9223372036854775807}',
    '{"x":NaN,"y":Infinity,"z":-Infinity}', '{"x":1e400}', '{"s":"\\ud800"}', '{"a":1,"a":2}',
    '{"t":1712345678.1234567,"f":-0.0,"i":-0,"e":1e-07}',
])
def test_parse_json_gives_json_values(text):
    got, want = parse_json(text), json.loads(text)
    assert repr(got) == repr(want)
    assert parse_json(text.encode()) == got or repr(parse_json(text.encode())) == repr(want)
