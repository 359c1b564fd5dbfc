"""ShoeLink v1 frames: CRC, COBS, the vectors, and the decoder's guarantees."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from protocol_helpers import VECTORS, random_splits, results

from firmware_protocol import cobs, vectors
from firmware_protocol.codec import MAX_ENCODED, DecodeError, Decoder, ErrorKind, encode_frame, encode_raw
from firmware_protocol.crc import CHECK, crc32, crc32_reference
from firmware_protocol.messages import (
    MESSAGE_CLASSES,
    CardDrawn,
    FieldError,
    Lights,
    SetLights,
    from_dict,
    to_dict,
)

ROOT = Path(__file__).resolve().parents[2]


def test_crc_parameters_and_check_value():
    assert crc32(b"123456789") == CHECK == 0xCBF43926
    assert crc32_reference(b"123456789") == CHECK
    rng = random.Random(1)
    for n in (0, 1, 7, 64, 300):
        data = bytes(rng.randrange(256) for _ in range(n))
        assert crc32(data) == crc32_reference(data)
    for v in VECTORS["crc"]["vectors"]:
        data = v["ascii"].encode() if "ascii" in v else bytes.fromhex(v["hex"])
        assert f"0x{crc32(data):08X}" == v["crc"]


def test_cobs_vectors_and_round_trip():
    for v in VECTORS["cobs"]:
        raw, enc = bytes.fromhex(v["raw"]), bytes.fromhex(v["encoded"])
        assert cobs.encode(raw) == enc
        assert cobs.decode(enc) == raw
    # The textbook examples (Cheshire & Baker; Wikipedia).
    assert cobs.encode(b"\x00") == b"\x01\x01"
    assert cobs.encode(b"\x11\x22\x00\x33") == b"\x03\x11\x22\x02\x33"
    rng = random.Random(2)
    for n in range(0, 600, 7):
        data = bytes(rng.choice((0, 1, 255, rng.randrange(256))) for _ in range(n))
        enc = cobs.encode(data)
        assert 0 not in enc and len(enc) <= n + n // 254 + 1
        assert cobs.decode(enc) == data
    with pytest.raises(cobs.CobsError):
        cobs.decode(b"\x05\x11\x22")


@pytest.mark.parametrize("vector", VECTORS["frames"], ids=lambda v: v["name"])
def test_frame_vectors(vector):
    wire = bytes.fromhex(vector["hex"])
    msg = from_dict(vector["message"])
    assert encode_frame(msg) == wire
    assert results(wire) == [vector["message"]]
    assert to_dict(msg) == vector["message"]


@pytest.mark.parametrize("vector", VECTORS["streams"], ids=lambda v: v["name"])
def test_stream_vectors(vector):
    data = bytes.fromhex(vector["hex"])
    assert results(data) == vector["results"]
    # Any split of the stream gives the same results.
    rng = random.Random(vector["name"])
    for _ in range(5):
        dec = Decoder()
        got = []
        for chunk in random_splits(data, rng, max_chunk=9):
            got += results(chunk, dec)
        assert got == vector["results"]
    dec = Decoder()
    assert [r for i in range(len(data)) for r in results(data[i:i + 1], dec)] == vector["results"]


def test_every_message_type_has_a_vector():
    names = {v["message"]["type"] for v in VECTORS["frames"]}
    assert names == {cls.TYPE.name for cls in MESSAGE_CLASSES.values()}


def test_vectors_file_is_current():
    assert vectors.main(["--check"]) == 0


def test_worked_example_matches_the_spec():
    wire = encode_frame(vectors.WORKED_EXAMPLE)
    assert wire.hex() == "020105d204881301031a2a056147b95b0100"
    spec = (ROOT / "firmware_protocol" / "PROTOCOL.md").read_text()
    spaced = " ".join(f"{b:02X}" for b in wire)
    assert spaced in spec, "PROTOCOL.md must show the worked example's wire bytes"
    assert f"{len(wire)} bytes" in spec


def test_card_frame_size():
    # A card frame is 16 raw bytes, 17 stuffed, 18 on the wire with its delimiter.
    assert len(encode_raw(CardDrawn("KC", 400, 99, seq=1, time_ms=1))) == 16
    assert len(encode_frame(CardDrawn("KC", 400, 99, seq=1, time_ms=1))) == 18


def test_all_cards_round_trip():
    from shoe_daemon.game.cards import ALL_CODES

    seen = set()
    for i, code in enumerate(ALL_CODES):
        msg = CardDrawn(code, i + 1, 50, seq=i)
        assert results(encode_frame(msg)) == [to_dict(msg)]
        seen.add(encode_raw(msg)[8])
    assert len(seen) == 52


def test_encoder_rejects_bad_fields():
    for bad in (CardDrawn("XX", 1, 50), CardDrawn("TH", 0, 50), CardDrawn("TH", 1, 101),
                CardDrawn("TH", 1, 50, seq=70000), CardDrawn("TH", 1, 50, time_ms=-1)):
        with pytest.raises(FieldError):
            encode_frame(bad)
    with pytest.raises(FieldError):
        encode_frame(SetLights(7))


def test_decoder_memory_is_bounded_and_resyncs():
    dec = Decoder()
    good = encode_frame(CardDrawn("AS", 1, 90, seq=5))
    out = []
    for _ in range(1000):
        out += dec.feed(b"\x55" * 997)
        assert dec.buffered <= MAX_ENCODED
    out += dec.feed(b"\x00" + good)
    assert [type(x) for x in out] == [DecodeError, CardDrawn]
    assert out[0].kind is ErrorKind.OVERSIZE and out[0].size == 997_000


def test_protocol_md_lists_every_type_and_error():
    spec = (ROOT / "firmware_protocol" / "PROTOCOL.md").read_text()
    for cls in MESSAGE_CLASSES.values():
        assert re.search(rf"0x{cls.TYPE:02X}\b.*{cls.TYPE.name}|{cls.TYPE.name}.*0x{cls.TYPE:02X}\b", spec), cls
    for kind in ErrorKind:
        assert kind.value in spec
    for light in Lights:
        assert light.name in spec
