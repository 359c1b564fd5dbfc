"""Build firmware_protocol/vectors.json, the test vectors of ShoeLink v1.

    python -m firmware_protocol.vectors            # rewrite vectors.json
    python -m firmware_protocol.vectors --check    # exit 1 if the file is stale

Two sections:

``frames``: valid messages. ``hex`` is the exact wire encoding (COBS + the
0x00 delimiter, no leading delimiter); an encoder must produce it from
``message`` and a decoder must turn it back into ``message``.

``streams``: byte streams for a fresh decoder, and the exact list of
``results`` it must produce, in order: a message dict, or ``{"error": KIND}``.
The expectations are written down by hand here (what the spec says must
happen), except those marked ``"expected_from": "reference"`` (random noise,
where only agreement between implementations matters).
"""

from __future__ import annotations

import json
import random
import struct
import sys
from pathlib import Path

from firmware_protocol import cobs
from firmware_protocol.codec import DecodeError, Decoder, encode_frame, encode_raw
from firmware_protocol.crc import CHECK, INIT, POLY, REFIN, REFOUT, XOROUT, crc32
from firmware_protocol.messages import (
    HEADER,
    MAX_ENCODED,
    MAX_FRAME,
    PROTOCOL_VERSION,
    Ack,
    Button,
    ButtonPressed,
    CardDrawn,
    CardPushedBack,
    CardUnreadable,
    ClockSync,
    ClockSyncReply,
    CutCard,
    Fault,
    FaultCode,
    Heartbeat,
    HostHello,
    Lights,
    ResendGone,
    ResendRequest,
    SetLights,
    ShoeFlags,
    ShoeHello,
    ShoeState,
    ShoeStateCode,
    Status,
    StatusRequest,
    Tamper,
    TamperKind,
    UnreadableReason,
    to_dict,
)

PATH = Path(__file__).with_name("vectors.json")

# The worked example of PROTOCOL.md section 4.
WORKED_EXAMPLE = CardDrawn("TH", 42, 97, seq=1234, time_ms=5000)

HELLO = ShoeHello(
    1, 0x1A2B3C4D, 1230, 64, 17, 1000, 2, 5, 11, 0x0FFF, "ACME DS-8", "SN-000123",
    seq=1234, time_ms=86_400_000,
)


def _frames() -> list[tuple[str, str, object]]:
    return [
        ("card_drawn_worked_example", "The worked example of PROTOCOL.md 4.3", WORKED_EXAMPLE),
        ("card_drawn_ace_spades_first", "lowest card byte 0x01, first event after boot", CardDrawn("AS", 1, 100, seq=1, time_ms=0)),
        ("card_drawn_king_clubs_max", "highest card byte 0x3D, u16/u32 maxima", CardDrawn("KC", 65535, 0, seq=65535, time_ms=0xFFFFFFFF)),
        ("card_drawn_seq_zero", "seq 0 is an ordinary value after the wrap", CardDrawn("9D", 300, 88, seq=0, time_ms=4_294_967)),
        ("card_drawn_retransmit", "a resend: flag RETRANSMIT, same seq and time as the original", CardDrawn("5H", 17, 91, seq=77, time_ms=123_456, flags=0x01)),
        ("card_unreadable", "a card left but could not be read", CardUnreadable(43, UnreadableReason.NO_READ, seq=1235, time_ms=6100)),
        ("card_unreadable_ambiguous", "", CardUnreadable(7, UnreadableReason.AMBIGUOUS, seq=9, time_ms=1)),
        ("card_pushed_back", "", CardPushedBack("QD", 44, seq=1237, time_ms=9000)),
        ("card_pushed_back_unknown", "card byte 0x00: the shoe did not see which card", CardPushedBack(None, 44, seq=1238, time_ms=9100)),
        ("cut_card", "", CutCard(400, seq=2000, time_ms=3_600_000)),
        ("shoe_inserted", "", ShoeState(ShoeStateCode.INSERTED, seq=2, time_ms=10)),
        ("shoe_removed", "", ShoeState(ShoeStateCode.REMOVED, seq=3, time_ms=20)),
        ("shoe_empty", "", ShoeState(ShoeStateCode.EMPTY, seq=4, time_ms=30)),
        ("tamper_lid_opened", "", Tamper(TamperKind.LID_OPENED, seq=5, time_ms=40)),
        ("tamper_optics_covered", "", Tamper(TamperKind.OPTICS_COVERED, seq=6, time_ms=50)),
        ("button_coup_confirm", "", ButtonPressed(Button.COUP_CONFIRM, seq=7, time_ms=60)),
        ("button_burn", "", ButtonPressed(Button.BURN, seq=8, time_ms=70)),
        ("button_new_shoe", "", ButtonPressed(Button.NEW_SHOE, seq=9, time_ms=80)),
        ("fault_raised", "", Fault(FaultCode.CARD_JAM, True, 2, seq=10, time_ms=90)),
        ("fault_cleared_vendor", "vendor fault codes are 0x8000-0xFFFF", Fault(0x8001, False, 0xBEEF, seq=11, time_ms=100)),
        ("shoe_hello", "handshake reply; header seq = last assigned event seq", HELLO),
        ("heartbeat", "", Heartbeat(86_400, 4_000_123, 12, 3, Lights.BANCO,
                                    int(ShoeFlags.SHOE_PRESENT | ShoeFlags.HOST_LINK | ShoeFlags.CLOCK_SYNCED), 2,
                                    seq=1234, time_ms=86_400_500)),
        ("heartbeat_status_reserved_bit", "status is a plain integer in JSON; reserved bit 7 set is ignored, not an error",
         Heartbeat(60, 10, 0, 0, Lights.OFF, 0x80 | int(ShoeFlags.SHOE_PRESENT | ShoeFlags.HOST_LINK), 0,
                   seq=10, time_ms=60_000)),
        ("shoe_hello_version_2", "any version >= 1 decodes; a host that does not speak it reports unsupported_version",
         ShoeHello(2, 0x0BADF00D, 0, 64, 0, 1000, 3, 0, 0, 0, "ACME DS-9", "SN-2", seq=0, time_ms=5)),
        ("status", "", Status(int(ShoeFlags.SHOE_PRESENT | ShoeFlags.CUT_CARD_SEEN), Lights.COUP_COMPLETE, 401, 400, 0,
                              1230, 64, seq=2001, time_ms=3_600_100)),
        ("clock_sync_reply", "", ClockSyncReply(1_764_460_800_123, 4_000_000_000, seq=5, time_ms=4_000_000_002)),
        ("resend_gone", "", ResendGone(100, 3, seq=400, time_ms=500)),
        ("host_hello", "", HostHello(1, 1, seq=0, time_ms=1000)),
        ("ack", "", Ack(1234, seq=1, time_ms=1010)),
        ("ack_wrap", "", Ack(65535, seq=65535, time_ms=0)),
        ("resend_request", "", ResendRequest(1236, 2, seq=2, time_ms=1020)),
        ("resend_request_max", "", ResendRequest(65500, 64, seq=3, time_ms=1030)),
        ("set_lights_punto", "", SetLights(Lights.PUNTO, False, seq=4, time_ms=1040)),
        ("set_lights_error_blink", "", SetLights(Lights.ERROR_STOP, True, seq=5, time_ms=1050)),
        ("set_lights_off", "", SetLights(Lights.OFF, False, seq=6, time_ms=1060)),
        ("status_request", "empty payload", StatusRequest(seq=7, time_ms=1070)),
        ("clock_sync", "host Unix time in ms", ClockSync(1_764_460_800_000, seq=8, time_ms=1080)),
    ]


def _raw(type_id: int, payload: bytes, seq: int = 1, time_ms: int = 1000, flags: int = 0) -> bytes:
    """A hand-built raw frame with a correct CRC (for frames no encoder would make)."""
    body = HEADER.pack(type_id, flags, seq, time_ms) + payload
    return body + struct.pack("<I", crc32(body))


def _wire(raw: bytes) -> bytes:
    return cobs.encode(raw) + b"\x00"


def _flip_raw_bit(raw: bytes, index: int, bit: int) -> bytes:
    b = bytearray(raw)
    b[index] ^= 1 << bit
    return bytes(b)


def _patched(raw: bytes, offset: int, value: int) -> bytes:
    """``raw`` with one byte changed and the CRC made good again (a well-formed frame, bad field)."""
    body = bytearray(raw[:-4])
    body[offset] = value
    return bytes(body) + struct.pack("<I", crc32(bytes(body)))


def _err(kind: str) -> dict:
    return {"error": kind}


def _streams() -> list[dict]:
    w = WORKED_EXAMPLE
    ww = encode_frame(w)
    m = to_dict(w)
    c2 = CardDrawn("2C", 43, 95, seq=1235, time_ms=6000)
    w2 = encode_frame(c2)
    raw = encode_raw(w)
    rng = random.Random(20251130)
    noise_nonzero = bytes(rng.randrange(1, 256) for _ in range(300))
    noise_random = bytes(rng.randrange(0, 256) for _ in range(400))
    pad64 = _raw(0x01, bytes([0x1A]) + struct.pack("<H", 42) + bytes([97]) + bytes(range(1, 49)), seq=50)
    pad65 = _raw(0x01, bytes([0x1A]) + struct.pack("<H", 42) + bytes([97]) + bytes(range(1, 50)), seq=51)
    pad70 = _raw(0x01, bytes([0x1A]) + struct.pack("<H", 42) + bytes([97]) + bytes(range(1, 55)), seq=52)
    assert len(pad64) == MAX_FRAME and len(cobs.encode(pad64)) == MAX_ENCODED
    streams = [
        ("empty", "no bytes at all", b"", []),
        ("zero_length_frames", "delimiters only: empty frames are ignored silently", b"\x00\x00\x00", []),
        ("leading_delimiter", "a 0x00 before a frame (sent after an idle line) changes nothing", b"\x00" + ww, [m]),
        ("two_frames", "back to back", ww + w2, [m, to_dict(c2)]),
        ("seq_wrap", "65535 -> 0 -> 1", b"".join(encode_frame(CardDrawn("AH", 10 + i, 99, seq=s, time_ms=100 * i))
                                                 for i, s in enumerate((65535, 0, 1))),
         [to_dict(CardDrawn("AH", 10 + i, 99, seq=s, time_ms=100 * i)) for i, s in enumerate((65535, 0, 1))]),
        ("time_wrap", "time_ms wraps from 0xFFFFFFFF to 0", encode_frame(CardDrawn("3S", 1, 90, seq=1, time_ms=0xFFFFFFFF))
         + encode_frame(CardDrawn("4S", 2, 90, seq=2, time_ms=0)),
         [to_dict(CardDrawn("3S", 1, 90, seq=1, time_ms=0xFFFFFFFF)), to_dict(CardDrawn("4S", 2, 90, seq=2, time_ms=0))]),
        ("reserved_flag_bits", "reserved header flag bits are ignored (and reported as received)",
         _wire(_raw(0x01, bytes([0x1A, 42, 0, 97]), seq=1234, time_ms=5000, flags=0x80)),
         [dict(m, flags=0x80)]),
        ("bad_crc_last_byte", "one bit of the CRC flipped", _wire(_flip_raw_bit(raw, len(raw) - 1, 7)), [_err("BAD_CRC")]),
        ("bad_crc_card_bit", "one bit of the card byte flipped (TH would become 9H): the CRC catches it",
         _wire(_flip_raw_bit(raw, 8, 4)), [_err("BAD_CRC")]),
        ("bad_crc_then_good", "a damaged frame costs only itself", _wire(_flip_raw_bit(raw, 9, 0)) + w2,
         [_err("BAD_CRC"), to_dict(c2)]),
        ("truncated_cobs", "the first 9 stuffed bytes, then a delimiter: the last code byte overruns",
         ww[:9] + b"\x00", [_err("COBS")]),
        ("truncated_short", "the first 8 stuffed bytes decode to 7 bytes: shorter than header + CRC",
         ww[:8] + b"\x00", [_err("TOO_SHORT")]),
        ("truncated_then_good", "a frame cut by an unplug, then the next frame", ww[:12] + b"\x00" + w2,
         [_err("COBS"), to_dict(c2)]),
        ("too_short_empty_raw", "0x01 decodes to zero bytes", b"\x01\x00", [_err("TOO_SHORT")]),
        ("too_short_eleven", "11 raw bytes (one short of header + CRC)", _wire(raw[:11]), [_err("TOO_SHORT")]),
        ("cobs_overrun", "code byte 0x05 with only two bytes after it", bytes.fromhex("0511220000"), [_err("COBS")]),
        ("oversize_noise", "300 non-zero noise bytes: dropped as one over-long frame, then in step again",
         noise_nonzero + b"\x00" + ww, [_err("OVERSIZE"), m]),
        ("max_size_frame", "a 64-byte raw frame (65 stuffed) is accepted; payload bytes past the v1 fields are ignored",
         _wire(pad64), [to_dict(CardDrawn("TH", 42, 97, seq=50, time_ms=1000))]),
        ("oversize_by_one", "a 65-byte raw frame (66 stuffed) with a good CRC is still OVERSIZE", _wire(pad65),
         [_err("OVERSIZE")]),
        ("oversize_valid_crc", "70 raw bytes with a good CRC", _wire(pad70) + ww, [_err("OVERSIZE"), m]),
        ("unknown_type_event", "type 0x3F (sequenced range, not in v1), good CRC",
         _wire(_raw(0x3F, b"\x01\x02", seq=99)), [_err("UNKNOWN_TYPE")]),
        ("unknown_type_control", "type 0x7F, good CRC", _wire(_raw(0x7F, b"")), [_err("UNKNOWN_TYPE")]),
        ("unknown_type_reserved", "type 0xC0 (reserved range), good CRC", _wire(_raw(0xC0, b"")), [_err("UNKNOWN_TYPE")]),
        ("unknown_type_zero", "type 0x00, good CRC", _wire(_raw(0x00, b"\x1a\x2a\x00\x61")), [_err("UNKNOWN_TYPE")]),
        ("bad_length", "CARD_DRAWN with a 3-byte payload", _wire(_raw(0x01, bytes([0x1A, 42, 0]))), [_err("BAD_LENGTH")]),
        ("bad_length_hello", "SHOE_HELLO cut to 49 payload bytes", _wire(_raw(0x40, encode_raw(HELLO)[8:-5])),
         [_err("BAD_LENGTH")]),
        ("extra_payload_ignored", "two bytes beyond CARD_DRAWN's payload: a later minor version's field",
         _wire(_raw(0x01, bytes([0x1A, 42, 0, 97, 0xAA, 0x00]), seq=1234, time_ms=5000)), [m]),
        ("bad_field_rank_zero", "card byte 0x10 (rank 0)", _wire(_raw(0x01, bytes([0x10, 1, 0, 90]))), [_err("BAD_FIELD")]),
        ("bad_field_rank_14", "card byte 0x0E", _wire(_raw(0x01, bytes([0x0E, 1, 0, 90]))), [_err("BAD_FIELD")]),
        ("bad_field_suit_4", "card byte 0x41", _wire(_raw(0x01, bytes([0x41, 1, 0, 90]))), [_err("BAD_FIELD")]),
        ("bad_field_unknown_card_drawn", "card byte 0x00 is only allowed in CARD_PUSHED_BACK",
         _wire(_raw(0x01, bytes([0x00, 1, 0, 90]))), [_err("BAD_FIELD")]),
        ("bad_field_quality", "quality 101", _wire(_raw(0x01, bytes([0x1A, 1, 0, 101]))), [_err("BAD_FIELD")]),
        ("bad_field_counter_zero", "card counter 0", _wire(_raw(0x01, bytes([0x1A, 0, 0, 90]))), [_err("BAD_FIELD")]),
        ("bad_field_button", "button 4", _wire(_raw(0x07, b"\x04")), [_err("BAD_FIELD")]),
        ("bad_field_shoe_state", "shoe state 0", _wire(_raw(0x05, b"\x00")), [_err("BAD_FIELD")]),
        ("bad_field_lights", "lights 5", _wire(_raw(0x83, b"\x05\x00")), [_err("BAD_FIELD")]),
        ("bad_field_resend_count", "RESEND_REQUEST count 0", _wire(_raw(0x82, b"\x01\x00\x00")), [_err("BAD_FIELD")]),
        ("bad_field_fault_code", "FAULT code 0", _wire(_raw(0x08, b"\x00\x00\x01\x00\x00")), [_err("BAD_FIELD")]),
        ("bad_field_fault_active_2", "FAULT active must be 0 or 1", _wire(_raw(0x08, b"\x03\x00\x02\x00\x00")),
         [_err("BAD_FIELD")]),
        ("bad_field_blink_2", "SET_LIGHTS blink must be 0 or 1", _wire(_raw(0x83, b"\x01\x02")), [_err("BAD_FIELD")]),
        ("bad_field_hello_version_zero", "SHOE_HELLO version 0", _wire(_patched(encode_raw(HELLO), 8, 0)),
         [_err("BAD_FIELD")]),
        ("bad_field_hello_ring_count", "SHOE_HELLO ring_count 65 > ring_size 64",
         _wire(_patched(encode_raw(HELLO), 16, 65)), [_err("BAD_FIELD")]),
        ("bad_field_hello_ring_size_zero", "SHOE_HELLO ring_size 0 (ring_count 0)",
         _wire(_patched(_patched(encode_raw(HELLO), 16, 0), 15, 0)), [_err("BAD_FIELD")]),
        ("bad_field_host_hello_versions", "HOST_HELLO max_version 1 < min_version 2",
         _wire(_raw(0x80, b"\x02\x01")), [_err("BAD_FIELD")]),
        ("bad_field_host_hello_min_zero", "HOST_HELLO min_version 0", _wire(_raw(0x80, b"\x00\x01")),
         [_err("BAD_FIELD")]),
        ("bad_field_hello_model", "SHOE_HELLO model with a byte after its NUL padding",
         _wire(encode_raw(HELLO)[:8 + 18 + 12] + b"X" + encode_raw(HELLO)[8 + 18 + 13:-4]
               + struct.pack("<I", crc32(encode_raw(HELLO)[:8 + 18 + 12] + b"X" + encode_raw(HELLO)[8 + 18 + 13:-4]))),
         [_err("BAD_FIELD")]),
        ("garbage_between_frames", "garbage ended by its own delimiter", ww + bytes.fromhex("deadbeef00") + w2,
         [m, _err("COBS"), to_dict(c2)]),
        ("garbage_glued_to_frame", "garbage with no delimiter before a frame spoils that frame only",
         ww + bytes.fromhex("deadbeef") + w2 + ww, [m, _err("COBS"), m]),
        ("garbage_ending_in_zero", "noise that happens to end in 0x00, then a good frame", bytes.fromhex("03fe0700") + ww,
         [_err("TOO_SHORT"), m]),
        ("partial_trailing_frame", "a frame still arriving produces nothing yet", ww + w2[:10], [m]),
    ]
    out = [
        {"name": n, "description": d, "hex": data.hex(), "results": r}
        for n, d, data, r in streams
    ]
    # Random noise (zeros included), then a good frame: the exact error list is whatever the
    # reference decoder says; every implementation must agree with it.
    ref = [to_dict(x) if not isinstance(x, DecodeError) else _err(x.kind.value) for x in
           Decoder().feed(noise_random + b"\x00" + ww)]
    out.append({"name": "noise_flood_random", "description": "400 random bytes, then a delimiter and a good frame",
                "hex": (noise_random + b"\x00" + ww).hex(), "results": ref, "expected_from": "reference"})
    return out


def build() -> dict:
    frames = [
        {"name": n, "description": d, "hex": encode_frame(msg).hex(), "message": to_dict(msg)}
        for n, d, msg in _frames()
    ]
    return {
        "protocol": "ShoeLink",
        "version": PROTOCOL_VERSION,
        "notes": __doc__.strip().splitlines()[2:],
        "crc": {
            "name": "CRC-32/ISO-HDLC", "width": 32, "poly": f"0x{POLY:08X}", "init": f"0x{INIT:08X}",
            "refin": REFIN, "refout": REFOUT, "xorout": f"0x{XOROUT:08X}", "check": f"0x{CHECK:08X}",
            "vectors": [
                {"ascii": "123456789", "crc": f"0x{crc32(b'123456789'):08X}"},
                {"hex": "", "crc": f"0x{crc32(b''):08X}"},
                {"hex": encode_raw(WORKED_EXAMPLE)[:-4].hex(), "crc": f"0x{crc32(encode_raw(WORKED_EXAMPLE)[:-4]):08X}"},
            ],
        },
        "cobs": [
            {"raw": raw.hex(), "encoded": cobs.encode(raw).hex()}
            for raw in (b"", b"\x00", b"\x00\x00", b"\x11\x22\x00\x33", b"\x11\x00\x00\x00",
                        bytes(range(1, 255)), bytes(range(1, 256)) + b"\x00" + b"\x05")
        ],
        "frames": frames,
        "streams": _streams(),
    }


def render() -> str:
    return json.dumps(build(), indent=1) + "\n"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    text = render()
    if "--check" in argv:
        current = PATH.read_text() if PATH.exists() else ""
        if current != text:
            print(f"{PATH} is stale: run python -m firmware_protocol.vectors", file=sys.stderr)
            return 1
        return 0
    PATH.write_text(text)
    print(f"wrote {PATH}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
