/*
 * shoelink.h - ShoeLink v1 reference codec for dealing-shoe firmware.
 *
 * Specification: firmware_protocol/PROTOCOL.md. Test vectors: vectors.json.
 *
 * Portable C99: no malloc, no global state, fixed-size buffers, depends only
 * on <stdint.h>, <stddef.h> and <string.h>. Every function is re-entrant;
 * a decoder or ring object belongs to one thread (or one ISR) at a time.
 *
 * Sending (shoe side):
 *
 *     sl_msg m;
 *     uint8_t wire[SL_MAX_WIRE];
 *     sl_msg_init(&m, SL_CARD_DRAWN);
 *     m.seq = ++last_seq;              // sequenced types only, see sl_is_sequenced()
 *     m.time_ms = millis();
 *     m.u.card_drawn.card = sl_card_byte('T', 'H');
 *     m.u.card_drawn.counter = 42;
 *     m.u.card_drawn.quality = 97;
 *     sl_ring_put(&ring, &m);          // keep it for RESEND_REQUEST
 *     int n = sl_encode(&m, wire, sizeof wire);   // COBS + trailing 0x00
 *     if (n > 0) uart_write(wire, (size_t)n);
 *
 * Receiving (either side), one byte at a time, e.g. from the UART ISR's FIFO:
 *
 *     static sl_decoder dec;           // sl_decoder_init(&dec) once
 *     sl_msg in;
 *     int r = sl_decoder_feed(&dec, byte, &in);
 *     if (r == SL_OK_MESSAGE && in.type >= 0x80u) handle(&in);   // a host->shoe command
 *     else if (r != SL_OK_NONE) rx_errors++;  // SL_ERR_* (checks 2-8) or WRONG_DIRECTION:
 *                                             // the count HEARTBEAT reports (PROTOCOL.md 6)
 *     // r == SL_OK_NONE: nothing complete yet (empty frames are not errors)
 *
 * Return codes: SL_OK_NONE (0), SL_OK_MESSAGE (1), or a negative SL_ERR_*.
 * Multi-byte fields are little-endian on the wire; the structs hold host values.
 */
#ifndef SHOELINK_H
#define SHOELINK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SL_PROTOCOL_VERSION 1u
#define SL_HEADER_LEN 8u    /* type u8, flags u8, seq u16, time_ms u32 */
#define SL_CRC_LEN 4u       /* CRC-32/ISO-HDLC, little-endian, over header + payload */
#define SL_MIN_FRAME 12u    /* header + CRC */
#define SL_MAX_FRAME 64u    /* raw frame: header + payload + CRC */
#define SL_MAX_PAYLOAD 52u
#define SL_MAX_ENCODED 65u  /* COBS-stuffed frame, without delimiter */
#define SL_MAX_WIRE 66u     /* stuffed frame + 0x00 delimiter */
#define SL_FLAG_RETRANSMIT 0x01u

#ifndef SL_RING_SIZE
#define SL_RING_SIZE 64u    /* events kept for resends (a power of two, <= 128); reported in SHOE_HELLO */
#endif

/* Message types. 0x01-0x3F shoe->host sequenced events, 0x40-0x7F shoe->host
 * unsequenced, 0x80-0xBF host->shoe, 0xC0-0xFF reserved. */
enum sl_type {
    SL_CARD_DRAWN = 0x01,
    SL_CARD_UNREADABLE = 0x02,
    SL_CARD_PUSHED_BACK = 0x03,
    SL_CUT_CARD = 0x04,
    SL_SHOE_STATE = 0x05,
    SL_TAMPER = 0x06,
    SL_BUTTON = 0x07,
    SL_FAULT = 0x08,
    SL_SHOE_HELLO = 0x40,
    SL_HEARTBEAT = 0x41,
    SL_STATUS = 0x42,
    SL_CLOCK_SYNC_REPLY = 0x43,
    SL_RESEND_GONE = 0x44,
    SL_HOST_HELLO = 0x80,
    SL_ACK = 0x81,
    SL_RESEND_REQUEST = 0x82,
    SL_SET_LIGHTS = 0x83,
    SL_STATUS_REQUEST = 0x84,
    SL_CLOCK_SYNC = 0x85
};

enum sl_result {
    SL_OK_NONE = 0,          /* decoder: no frame completed by this byte */
    SL_OK_MESSAGE = 1,       /* decoder: *out holds a valid message */
    SL_ERR_OVERSIZE = -1,    /* more than SL_MAX_ENCODED bytes before the delimiter */
    SL_ERR_COBS = -2,        /* a COBS code byte runs past the end of the frame */
    SL_ERR_TOO_SHORT = -3,   /* fewer than SL_MIN_FRAME bytes after un-stuffing */
    SL_ERR_BAD_CRC = -4,
    SL_ERR_UNKNOWN_TYPE = -5,/* good CRC, type not in v1 (out->type and out->seq are set) */
    SL_ERR_BAD_LENGTH = -6,  /* good CRC, payload shorter than the type needs (type, seq set) */
    SL_ERR_BAD_FIELD = -7,   /* good CRC, a field out of range (type, seq set) */
    SL_ERR_ARG = -8          /* encoder: bad argument, buffer too small or field out of range */
};

/* Enumerations (values on the wire). */
enum sl_unreadable_reason { SL_UNREAD_UNKNOWN = 0, SL_UNREAD_NO_READ = 1, SL_UNREAD_AMBIGUOUS = 2,
                            SL_UNREAD_TOO_FAST = 3, SL_UNREAD_SENSOR_FAULT = 4 };
enum sl_shoe_state { SL_SHOE_INSERTED = 1, SL_SHOE_REMOVED = 2, SL_SHOE_EMPTY = 3 };
enum sl_tamper { SL_TAMPER_LID_OPENED = 1, SL_TAMPER_LID_CLOSED = 2, SL_TAMPER_ENCLOSURE_OPENED = 3,
                 SL_TAMPER_MAGNETIC_FIELD = 4, SL_TAMPER_OPTICS_COVERED = 5 };
enum sl_button { SL_BUTTON_COUP_CONFIRM = 1, SL_BUTTON_BURN = 2, SL_BUTTON_NEW_SHOE = 3 };
enum sl_lights { SL_LIGHTS_OFF = 0, SL_LIGHTS_PUNTO = 1, SL_LIGHTS_BANCO = 2, SL_LIGHTS_COUP_COMPLETE = 3,
                 SL_LIGHTS_ERROR_STOP = 4 };

/* Payloads. Card bytes are (suit << 4) | rank: rank A=1 .. T=10 J=11 Q=12 K=13,
 * suit S=0 H=1 D=2 C=3; 0x00 = unknown (CARD_PUSHED_BACK only). */
typedef struct { uint8_t card; uint16_t counter; uint8_t quality; } sl_card_drawn;
typedef struct { uint16_t counter; uint8_t reason; } sl_card_unreadable;
typedef struct { uint8_t card; uint16_t counter; } sl_card_pushed_back;
typedef struct { uint16_t counter; } sl_cut_card;
typedef struct { uint8_t state; } sl_shoe_state_msg;
typedef struct { uint8_t what; } sl_tamper_msg;
typedef struct { uint8_t button; } sl_button_msg;
typedef struct { uint16_t code; uint8_t active; uint16_t detail; } sl_fault;
typedef struct {
    uint8_t version; uint32_t boot_id; uint16_t last_acked; uint8_t ring_size; uint8_t ring_count;
    uint16_t heartbeat_ms; uint8_t fw_major, fw_minor, fw_patch; uint32_t capabilities;
    char model[16]; char serial[16];   /* printable ASCII, NUL-padded, not NUL-terminated if 16 long */
} sl_shoe_hello;
typedef struct {
    uint32_t uptime_s, cards_read, cards_unreadable, rx_errors; uint8_t lights, status, unacked;
} sl_heartbeat;
typedef struct {
    uint8_t status, lights; uint16_t card_counter, cut_card_at, fault_code, last_acked; uint8_t ring_count;
} sl_status;
typedef struct { uint64_t host_time_ms; uint32_t shoe_rx_ms; } sl_clock_sync_reply;
typedef struct { uint16_t first_seq; uint8_t count; } sl_range;   /* RESEND_GONE, RESEND_REQUEST */
typedef struct { uint8_t min_version, max_version; } sl_host_hello;
typedef struct { uint16_t ack_seq; } sl_ack;
typedef struct { uint8_t lights, blink; } sl_set_lights;
typedef struct { uint64_t host_time_ms; } sl_clock_sync;

typedef struct {
    uint8_t type;      /* enum sl_type */
    uint8_t flags;     /* SL_FLAG_RETRANSMIT; other bits reserved (send 0) */
    uint16_t seq;
    uint32_t time_ms;  /* sender's millisecond counter, wraps after 2^32 ms (49.7 days) */
    union {
        sl_card_drawn card_drawn;
        sl_card_unreadable card_unreadable;
        sl_card_pushed_back card_pushed_back;
        sl_cut_card cut_card;
        sl_shoe_state_msg shoe_state;
        sl_tamper_msg tamper;
        sl_button_msg button;
        sl_fault fault;
        sl_shoe_hello shoe_hello;
        sl_heartbeat heartbeat;
        sl_status status;
        sl_clock_sync_reply clock_sync_reply;
        sl_range resend_gone;
        sl_host_hello host_hello;
        sl_ack ack;
        sl_range resend_request;
        sl_set_lights set_lights;
        sl_clock_sync clock_sync;
    } u;
} sl_msg;

/* Incremental decoder: bounded (SL_MAX_ENCODED bytes), resynchronises at each 0x00. */
typedef struct {
    uint8_t buf[SL_MAX_ENCODED];
    uint8_t len;
    uint8_t overflow;  /* current frame is too long: discard until the next 0x00 */
} sl_decoder;

/* Ring of the last SL_RING_SIZE sequenced messages sent (for RESEND_REQUEST). */
typedef struct {
    sl_msg slot[SL_RING_SIZE];
    uint16_t first_seq;  /* seq of the oldest held message */
    uint16_t count;      /* messages held */
} sl_ring;

/* CRC-32/ISO-HDLC: poly 0x04C11DB7 reflected, init and xorout 0xFFFFFFFF; "123456789" -> 0xCBF43926. */
uint32_t sl_crc32(const uint8_t *data, size_t len);

/* COBS. sl_cobs_encode needs out capacity len + len/254 + 1; returns the encoded length.
 * sl_cobs_decode writes at most len bytes to out (capacity out_cap) and returns the
 * decoded length, or SL_ERR_COBS / SL_ERR_ARG. */
size_t sl_cobs_encode(const uint8_t *in, size_t len, uint8_t *out);
int sl_cobs_decode(const uint8_t *in, size_t len, uint8_t *out, size_t out_cap);

/* Type helpers. */
int sl_is_sequenced(uint8_t type);            /* 0x01-0x3F */
int sl_payload_len(uint8_t type);             /* v1 payload length, or -1 for an unknown type */
uint8_t sl_card_byte(char rank, char suit);   /* 'T','H' -> 0x1A; 0 when not a card */
int sl_card_chars(uint8_t card, char *rank, char *suit);  /* 0x1A -> 'T','H'; 0 if invalid */

void sl_msg_init(sl_msg *m, uint8_t type);   /* zero everything, set the type */
int sl_validate(const sl_msg *m);             /* SL_OK_MESSAGE or SL_ERR_BAD_FIELD / SL_ERR_UNKNOWN_TYPE */

/* Raw frame (header + payload + CRC, not stuffed): returns its length or SL_ERR_*. */
int sl_encode_raw(const sl_msg *m, uint8_t *out, size_t cap);
/* Wire bytes: COBS(raw) + 0x00. cap >= SL_MAX_WIRE always suffices. Returns the length or SL_ERR_*.
 * After an idle line (>= 10 ms) also write a single 0x00 before these bytes (PROTOCOL.md 3.2). */
int sl_encode(const sl_msg *m, uint8_t *out, size_t cap);
/* Check and parse one raw (un-stuffed) frame. SL_OK_MESSAGE or SL_ERR_*. */
int sl_parse_raw(const uint8_t *raw, size_t len, sl_msg *out);

void sl_decoder_init(sl_decoder *d);
int sl_decoder_feed(sl_decoder *d, uint8_t byte, sl_msg *out);

void sl_ring_init(sl_ring *r);
void sl_ring_put(sl_ring *r, const sl_msg *m);   /* m->seq must follow the previous one; oldest is overwritten */
const sl_msg *sl_ring_find(const sl_ring *r, uint16_t seq);  /* NULL when not held */

#ifdef __cplusplus
}
#endif

#endif /* SHOELINK_H */
