"""ShoeLink v1: the dealing shoe's serial protocol (spec: PROTOCOL.md in this folder).

Layers, bottom up, all sans-I/O:

- ``crc`` / ``cobs``: CRC-32/ISO-HDLC and byte stuffing.
- ``messages``: one frozen dataclass per frame type, enums, field ranges.
- ``codec``: ``encode_frame`` and the incremental ``Decoder`` (never raises).
- ``connection``: ``HostConnection`` (the daemon) and ``ShoeConnection``
  (the shoe / emulator) link state machines.

A C99 reference codec for firmware lives in ``c/``; ``vectors.json`` holds the
test vectors both implementations pass.
"""

from firmware_protocol.codec import (
    DecodeError,
    Decoder,
    ErrorKind,
    decode_frame,
    decode_stream,
    encode_frame,
    encode_raw,
    parse_raw,
)
from firmware_protocol.connection import (
    NEED_DATA,
    ClockSynced,
    EventsLost,
    HostConnection,
    HostLinkChanged,
    LinkDown,
    LinkState,
    LinkUp,
    OutFrame,
    ResendRequested,
    ShoeConnection,
    ShoeIdentity,
    seq_diff,
    time_diff,
)
from firmware_protocol.messages import (
    MAX_ENCODED,
    MAX_FRAME,
    PROTOCOL_VERSION,
    Ack,
    Button,
    ButtonPressed,
    Capability,
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
    Message,
    MsgType,
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
    from_dict,
    to_dict,
)

VECTORS_PATH = __file__.rsplit("/", 1)[0] + "/vectors.json"

__all__ = [
    "PROTOCOL_VERSION", "MAX_FRAME", "MAX_ENCODED", "VECTORS_PATH",
    "DecodeError", "Decoder", "ErrorKind", "decode_frame", "decode_stream", "encode_frame", "encode_raw",
    "parse_raw",
    "NEED_DATA", "ClockSynced", "EventsLost", "HostConnection", "HostLinkChanged", "LinkDown", "LinkState",
    "LinkUp", "OutFrame", "ResendRequested", "ShoeConnection", "ShoeIdentity", "seq_diff", "time_diff",
    "Ack", "Button", "ButtonPressed", "Capability", "CardDrawn", "CardPushedBack", "CardUnreadable",
    "ClockSync", "ClockSyncReply", "CutCard", "Fault", "FaultCode", "Heartbeat", "HostHello", "Lights",
    "Message", "MsgType", "ResendGone", "ResendRequest", "SetLights", "ShoeFlags", "ShoeHello", "ShoeState",
    "ShoeStateCode", "Status", "StatusRequest", "Tamper", "TamperKind", "UnreadableReason", "from_dict",
    "to_dict",
]
