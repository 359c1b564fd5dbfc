"""The C99 reference codec: built with gcc, checked against vectors.json and the Python side."""

from __future__ import annotations

import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from protocol_helpers import VECTORS, results, to_line

from firmware_protocol.codec import DecodeError, Decoder, encode_frame
from firmware_protocol.messages import (
    MESSAGE_CLASSES,
    Button,
    CardPushedBack,
    Lights,
    ShoeStateCode,
    TamperKind,
    UnreadableReason,
    to_dict,
)
from shoe_daemon.game.cards import ALL_CODES

C_DIR = Path(__file__).resolve().parents[2] / "firmware_protocol" / "c"
CFLAGS = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2"]


def _build(tmp: Path, extra: list[str]) -> Path:
    exe = tmp / "shoelink_driver"
    cmd = ["gcc", *CFLAGS, *extra, "-o", str(exe), str(C_DIR / "shoelink.c"), str(C_DIR / "shoelink_driver.c")]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""  # not even a note
    return exe


@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    if shutil.which("gcc") is None:
        pytest.fail("gcc is needed for the C reference tests (scripts/system-deps.sh installs it)")
    tmp = tmp_path_factory.mktemp("shoelink-c")
    exe = _build(tmp, [])

    def run(lines: list[str]) -> list[str]:
        proc = subprocess.run([str(exe)], input="\n".join(lines) + "\n", capture_output=True, text=True,
                              timeout=60)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.splitlines()

    return run


def _decode_blocks(out: list[str]) -> list[list[str]]:
    blocks, cur = [], []
    for line in out:
        if line == "END":
            blocks.append(cur)
            cur = []
        else:
            cur.append(line)
    return blocks


def test_header_compiles_alone_as_c99(tmp_path):
    src = tmp_path / "only_header.c"
    src.write_text('#include "shoelink.h"\nint main(void) { sl_decoder d; sl_decoder_init(&d); return d.len; }\n')
    proc = subprocess.run(["gcc", *CFLAGS, "-c", "-I", str(C_DIR), "-o", str(tmp_path / "x.o"), str(src)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_crc_and_cobs(driver):
    out = driver(["C " + b"123456789".hex(), *("C " + v["hex"] for v in VECTORS["crc"]["vectors"][1:]),
                  *("B " + v["raw"] for v in VECTORS["cobs"])])
    assert out[0] == "CRC 0xCBF43926"
    assert out[1:3] == [f"CRC {v['crc']}" for v in VECTORS["crc"]["vectors"][1:]]
    assert out[3:] == [f"COBS {v['encoded']}" for v in VECTORS["cobs"]]


def test_frame_vectors_decode_and_encode(driver):
    frames = VECTORS["frames"]
    out = driver([f"D {v['hex']}" for v in frames] + [f"E {to_line(v['message'])}" for v in frames])
    blocks = _decode_blocks(out[: -len(frames)])
    for v, block in zip(frames, blocks, strict=True):
        assert block == [to_line(v["message"])], v["name"]
    for v, line in zip(frames, out[-len(frames):], strict=True):
        assert line == f"WIRE {v['hex']}", v["name"]


def test_stream_vectors(driver):
    streams = VECTORS["streams"]
    blocks = _decode_blocks(driver([f"D {v['hex']}" for v in streams]))
    for v, block in zip(streams, blocks, strict=True):
        assert block == [to_line(r) for r in v["results"]], v["name"]


def test_ring(driver):
    assert driver(["R"]) == ["RING OK"]


def test_encoder_refuses_bad_fields(driver):
    out = driver(["E CARD_DRAWN seq=1 time=1 flags=0 card=XX counter=1 quality=50",
                  "E CARD_DRAWN seq=1 time=1 flags=0 card=TH counter=1 quality=101",
                  "E SET_LIGHTS seq=1 time=1 flags=0 lights=9 blink=0",
                  "E NOT_A_TYPE seq=1"])
    assert out == ["ERROR ARG"] * 4


def random_message(rng: random.Random):
    cls = rng.choice(list(MESSAGE_CLASSES.values()))
    pick = {
        "card": lambda: rng.choice(ALL_CODES),
        "counter": lambda: rng.randint(1, 65535),
        "quality": lambda: rng.randint(0, 100),
        "reason": lambda: rng.choice(list(UnreadableReason)),
        "state": lambda: rng.choice(list(ShoeStateCode)),
        "what": lambda: rng.choice(list(TamperKind)),
        "button": lambda: rng.choice(list(Button)),
        "lights": lambda: rng.choice(list(Lights)),
        "active": lambda: rng.random() < 0.5,
        "blink": lambda: rng.random() < 0.5,
        "code": lambda: rng.randint(1, 65535),
        "count": lambda: rng.randint(1, 255),
        "version": lambda: rng.randint(1, 3),
        "ring_size": lambda: 64,
        "ring_count": lambda: rng.randint(0, 64),
        "heartbeat_ms": lambda: rng.randint(1, 65535),
        "min_version": lambda: 1,
        "max_version": lambda: rng.randint(1, 255),
        "model": lambda: "".join(rng.choice("ABC xyz-09.") for _ in range(rng.randint(0, 16))),
        "serial": lambda: "".join(rng.choice("SN0123456789") for _ in range(rng.randint(0, 16))),
        "host_time_ms": lambda: rng.randrange(2**64),
    }
    codes = re.findall(r"\d*[BHIQs]", cls.PAYLOAD.format.lstrip("<"))
    bits = {"B": 8, "H": 16, "I": 32, "Q": 64}
    kwargs = {}
    for name, code in zip(cls.FIELDS, codes, strict=True):
        kwargs[name] = pick[name]() if name in pick else rng.randrange(2 ** bits[code[-1]])
    if cls is CardPushedBack and rng.random() < 0.3:
        kwargs["card"] = None
    msg = cls(**kwargs, seq=rng.randrange(65536), time_ms=rng.randrange(2**32), flags=rng.choice([0, 1]))
    return msg


def test_round_trip_with_python(driver):
    rng = random.Random(7)
    msgs = [random_message(rng) for _ in range(500)]
    # Python encodes -> C decodes (one stream, with a leading delimiter now and then).
    stream = b"".join(encode_frame(m, leading_delimiter=rng.random() < 0.3) for m in msgs)
    # C encodes -> Python decodes.
    out = driver([f"D {stream.hex()}"] + [f"E {to_line(to_dict(m))}" for m in msgs])
    (block,) = _decode_blocks(out[:-len(msgs)])
    assert block == [to_line(to_dict(m)) for m in msgs]
    wires = out[-len(msgs):]
    assert all(w.startswith("WIRE ") for w in wires)
    c_stream = b"".join(bytes.fromhex(w[5:]) for w in wires)
    assert Decoder().feed(c_stream) == msgs
    assert c_stream == b"".join(encode_frame(m) for m in msgs)


def test_damaged_streams_decode_identically(driver):
    """Differential fuzzing: the same damaged bytes give the same results in C and Python."""
    rng = random.Random(11)
    streams = []
    for _ in range(300):
        data = bytearray(b"".join(encode_frame(random_message(rng)) for _ in range(rng.randint(1, 8))))
        for _ in range(rng.randint(0, 4)):
            op = rng.random()
            pos = rng.randrange(len(data) + 1)
            if op < 0.4 and data:
                data[pos % len(data)] ^= 1 << rng.randrange(8)
            elif op < 0.6:
                data[pos:pos] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 80)))
            elif op < 0.8:
                del data[pos:pos + rng.randint(1, 20)]
            else:
                data[pos:pos] = b"\x00"
        streams.append(bytes(data))
    blocks = _decode_blocks(driver([f"D {s.hex()}" for s in streams]))
    mismatches = 0
    for s, block in zip(streams, blocks, strict=True):
        expected = [to_line(r) for r in results(s)]
        if block != expected:
            mismatches += 1
    assert mismatches == 0
    # And errors were exercised, not just clean frames.
    kinds = {x.kind for s in streams for x in Decoder().feed(s) if isinstance(x, DecodeError)}
    assert len(kinds) >= 4
