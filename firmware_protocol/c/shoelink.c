/*
 * shoelink.c - ShoeLink v1 reference codec (see shoelink.h and PROTOCOL.md).
 */
#include "shoelink.h"

#include <string.h>

/* ---- CRC-32/ISO-HDLC, nibble table (64 bytes of flash, ~2 table lookups per byte) ---- */

static const uint32_t crc_nibble[16] = {
    0x00000000u, 0x1DB71064u, 0x3B6E20C8u, 0x26D930ACu, 0x76DC4190u, 0x6B6B51F4u, 0x4DB26158u, 0x5005713Cu,
    0xEDB88320u, 0xF00F9344u, 0xD6D6A3E8u, 0xCB61B38Cu, 0x9B64C2B0u, 0x86D3D2D4u, 0xA00AE278u, 0xBDBDF21Cu
};

uint32_t sl_crc32(const uint8_t *data, size_t len)
{
    uint32_t crc = 0xFFFFFFFFu;
    size_t i;
    for (i = 0; i < len; i++) {
        crc ^= data[i];
        crc = (crc >> 4) ^ crc_nibble[crc & 0x0Fu];
        crc = (crc >> 4) ^ crc_nibble[crc & 0x0Fu];
    }
    return crc ^ 0xFFFFFFFFu;
}

/* ---- COBS ---- */

size_t sl_cobs_encode(const uint8_t *in, size_t len, uint8_t *out)
{
    size_t o = 1, code_at = 0, i;
    uint8_t code = 1;
    for (i = 0; i < len; i++) {
        if (in[i] == 0) {
            out[code_at] = code;
            code_at = o++;
            code = 1;
        } else {
            out[o++] = in[i];
            code++;
            if (code == 0xFF) {
                out[code_at] = code;
                code_at = o++;
                code = 1;
            }
        }
    }
    out[code_at] = code;
    return o;
}

int sl_cobs_decode(const uint8_t *in, size_t len, uint8_t *out, size_t out_cap)
{
    size_t i = 0, o = 0, end;
    while (i < len) {
        uint8_t code = in[i];
        if (code == 0) {
            return SL_ERR_COBS;
        }
        end = i + code;
        if (end > len) {
            return SL_ERR_COBS;
        }
        for (i = i + 1; i < end; i++) {
            if (o >= out_cap) {
                return SL_ERR_ARG;
            }
            out[o++] = in[i];
        }
        if (code != 0xFF && i < len) {
            if (o >= out_cap) {
                return SL_ERR_ARG;
            }
            out[o++] = 0;
        }
    }
    return (int)o;
}

/* ---- little-endian helpers ---- */

static void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); p[2] = (uint8_t)(v >> 16); p[3] = (uint8_t)(v >> 24);
}
static void put64(uint8_t *p, uint64_t v) { put32(p, (uint32_t)v); put32(p + 4, (uint32_t)(v >> 32)); }
static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static uint64_t get64(const uint8_t *p) { return (uint64_t)get32(p) | ((uint64_t)get32(p + 4) << 32); }

/* ---- types, cards, validation ---- */

int sl_is_sequenced(uint8_t type) { return type >= 0x01u && type <= 0x3Fu; }

int sl_payload_len(uint8_t type)
{
    switch (type) {
    case SL_CARD_DRAWN: return 4;
    case SL_CARD_UNREADABLE: return 3;
    case SL_CARD_PUSHED_BACK: return 3;
    case SL_CUT_CARD: return 2;
    case SL_SHOE_STATE: return 1;
    case SL_TAMPER: return 1;
    case SL_BUTTON: return 1;
    case SL_FAULT: return 5;
    case SL_SHOE_HELLO: return 50;
    case SL_HEARTBEAT: return 19;
    case SL_STATUS: return 11;
    case SL_CLOCK_SYNC_REPLY: return 12;
    case SL_RESEND_GONE: return 3;
    case SL_HOST_HELLO: return 2;
    case SL_ACK: return 2;
    case SL_RESEND_REQUEST: return 3;
    case SL_SET_LIGHTS: return 2;
    case SL_STATUS_REQUEST: return 0;
    case SL_CLOCK_SYNC: return 8;
    default: return -1;
    }
}

static const char RANKS[] = "A23456789TJQK";
static const char SUITS[] = "SHDC";

uint8_t sl_card_byte(char rank, char suit)
{
    int r, s;
    for (r = 0; r < 13; r++) {
        if (RANKS[r] == rank) {
            break;
        }
    }
    for (s = 0; s < 4; s++) {
        if (SUITS[s] == suit) {
            break;
        }
    }
    if (r == 13 || s == 4) {
        return 0;
    }
    return (uint8_t)((s << 4) | (r + 1));
}

static int card_ok(uint8_t card)
{
    uint8_t rank = (uint8_t)(card & 0x0Fu), suit = (uint8_t)(card >> 4);
    return rank >= 1u && rank <= 13u && suit <= 3u;
}

int sl_card_chars(uint8_t card, char *rank, char *suit)
{
    if (!card_ok(card)) {
        return 0;
    }
    *rank = RANKS[(card & 0x0Fu) - 1u];
    *suit = SUITS[card >> 4];
    return 1;
}

static int text_ok(const char *t)
{
    size_t i = 0;
    while (i < 16 && t[i] != '\0') {
        unsigned char c = (unsigned char)t[i];
        if (c < 0x20u || c > 0x7Eu) {
            return 0;
        }
        i++;
    }
    for (; i < 16; i++) {
        if (t[i] != '\0') {
            return 0;
        }
    }
    return 1;
}

void sl_msg_init(sl_msg *m, uint8_t type)
{
    memset(m, 0, sizeof *m);
    m->type = type;
}

#define CHECK(cond) do { if (!(cond)) { return SL_ERR_BAD_FIELD; } } while (0)

int sl_validate(const sl_msg *m)
{
    switch (m->type) {
    case SL_CARD_DRAWN:
        CHECK(card_ok(m->u.card_drawn.card));
        CHECK(m->u.card_drawn.counter >= 1u);
        CHECK(m->u.card_drawn.quality <= 100u);
        break;
    case SL_CARD_UNREADABLE:
        CHECK(m->u.card_unreadable.counter >= 1u);
        CHECK(m->u.card_unreadable.reason <= SL_UNREAD_SENSOR_FAULT);
        break;
    case SL_CARD_PUSHED_BACK:
        CHECK(m->u.card_pushed_back.card == 0u || card_ok(m->u.card_pushed_back.card));
        CHECK(m->u.card_pushed_back.counter >= 1u);
        break;
    case SL_CUT_CARD:
        break;
    case SL_SHOE_STATE:
        CHECK(m->u.shoe_state.state >= SL_SHOE_INSERTED && m->u.shoe_state.state <= SL_SHOE_EMPTY);
        break;
    case SL_TAMPER:
        CHECK(m->u.tamper.what >= SL_TAMPER_LID_OPENED && m->u.tamper.what <= SL_TAMPER_OPTICS_COVERED);
        break;
    case SL_BUTTON:
        CHECK(m->u.button.button >= SL_BUTTON_COUP_CONFIRM && m->u.button.button <= SL_BUTTON_NEW_SHOE);
        break;
    case SL_FAULT:
        CHECK(m->u.fault.code != 0u);
        CHECK(m->u.fault.active <= 1u);
        break;
    case SL_SHOE_HELLO:
        CHECK(m->u.shoe_hello.version >= 1u);
        CHECK(m->u.shoe_hello.ring_size >= 1u);
        CHECK(m->u.shoe_hello.ring_count <= m->u.shoe_hello.ring_size);
        CHECK(m->u.shoe_hello.heartbeat_ms >= 1u);
        CHECK(text_ok(m->u.shoe_hello.model));
        CHECK(text_ok(m->u.shoe_hello.serial));
        break;
    case SL_HEARTBEAT:
        CHECK(m->u.heartbeat.lights <= SL_LIGHTS_ERROR_STOP);
        break;
    case SL_STATUS:
        CHECK(m->u.status.lights <= SL_LIGHTS_ERROR_STOP);
        break;
    case SL_CLOCK_SYNC_REPLY:
        break;
    case SL_RESEND_GONE:
        CHECK(m->u.resend_gone.count >= 1u);
        break;
    case SL_HOST_HELLO:
        CHECK(m->u.host_hello.min_version >= 1u);
        CHECK(m->u.host_hello.min_version <= m->u.host_hello.max_version);
        break;
    case SL_ACK:
        break;
    case SL_RESEND_REQUEST:
        CHECK(m->u.resend_request.count >= 1u);
        break;
    case SL_SET_LIGHTS:
        CHECK(m->u.set_lights.lights <= SL_LIGHTS_ERROR_STOP);
        CHECK(m->u.set_lights.blink <= 1u);
        break;
    case SL_STATUS_REQUEST:
    case SL_CLOCK_SYNC:
        break;
    default:
        return SL_ERR_UNKNOWN_TYPE;
    }
    return SL_OK_MESSAGE;
}

/* ---- encoding ---- */

static void pack_payload(const sl_msg *m, uint8_t *p)
{
    switch (m->type) {
    case SL_CARD_DRAWN:
        p[0] = m->u.card_drawn.card; put16(p + 1, m->u.card_drawn.counter); p[3] = m->u.card_drawn.quality;
        break;
    case SL_CARD_UNREADABLE:
        put16(p, m->u.card_unreadable.counter); p[2] = m->u.card_unreadable.reason;
        break;
    case SL_CARD_PUSHED_BACK:
        p[0] = m->u.card_pushed_back.card; put16(p + 1, m->u.card_pushed_back.counter);
        break;
    case SL_CUT_CARD:
        put16(p, m->u.cut_card.counter);
        break;
    case SL_SHOE_STATE: p[0] = m->u.shoe_state.state; break;
    case SL_TAMPER: p[0] = m->u.tamper.what; break;
    case SL_BUTTON: p[0] = m->u.button.button; break;
    case SL_FAULT:
        put16(p, m->u.fault.code); p[2] = m->u.fault.active; put16(p + 3, m->u.fault.detail);
        break;
    case SL_SHOE_HELLO: {
        const sl_shoe_hello *h = &m->u.shoe_hello;
        p[0] = h->version; put32(p + 1, h->boot_id); put16(p + 5, h->last_acked); p[7] = h->ring_size;
        p[8] = h->ring_count; put16(p + 9, h->heartbeat_ms); p[11] = h->fw_major; p[12] = h->fw_minor;
        p[13] = h->fw_patch; put32(p + 14, h->capabilities); memcpy(p + 18, h->model, 16);
        memcpy(p + 34, h->serial, 16);
        break;
    }
    case SL_HEARTBEAT: {
        const sl_heartbeat *h = &m->u.heartbeat;
        put32(p, h->uptime_s); put32(p + 4, h->cards_read); put32(p + 8, h->cards_unreadable);
        put32(p + 12, h->rx_errors); p[16] = h->lights; p[17] = h->status; p[18] = h->unacked;
        break;
    }
    case SL_STATUS: {
        const sl_status *s = &m->u.status;
        p[0] = s->status; p[1] = s->lights; put16(p + 2, s->card_counter); put16(p + 4, s->cut_card_at);
        put16(p + 6, s->fault_code); put16(p + 8, s->last_acked); p[10] = s->ring_count;
        break;
    }
    case SL_CLOCK_SYNC_REPLY:
        put64(p, m->u.clock_sync_reply.host_time_ms); put32(p + 8, m->u.clock_sync_reply.shoe_rx_ms);
        break;
    case SL_RESEND_GONE:
        put16(p, m->u.resend_gone.first_seq); p[2] = m->u.resend_gone.count;
        break;
    case SL_HOST_HELLO:
        p[0] = m->u.host_hello.min_version; p[1] = m->u.host_hello.max_version;
        break;
    case SL_ACK: put16(p, m->u.ack.ack_seq); break;
    case SL_RESEND_REQUEST:
        put16(p, m->u.resend_request.first_seq); p[2] = m->u.resend_request.count;
        break;
    case SL_SET_LIGHTS:
        p[0] = m->u.set_lights.lights; p[1] = m->u.set_lights.blink;
        break;
    case SL_CLOCK_SYNC: put64(p, m->u.clock_sync.host_time_ms); break;
    default: break;
    }
}

int sl_encode_raw(const sl_msg *m, uint8_t *out, size_t cap)
{
    int plen = sl_payload_len(m->type);
    size_t n;
    uint32_t crc;
    if (plen < 0 || sl_validate(m) != SL_OK_MESSAGE) {
        return SL_ERR_ARG;
    }
    n = SL_HEADER_LEN + (size_t)plen;
    if (cap < n + SL_CRC_LEN) {
        return SL_ERR_ARG;
    }
    out[0] = m->type;
    out[1] = m->flags;
    put16(out + 2, m->seq);
    put32(out + 4, m->time_ms);
    pack_payload(m, out + SL_HEADER_LEN);
    crc = sl_crc32(out, n);
    put32(out + n, crc);
    return (int)(n + SL_CRC_LEN);
}

int sl_encode(const sl_msg *m, uint8_t *out, size_t cap)
{
    uint8_t raw[SL_MAX_FRAME];
    int n = sl_encode_raw(m, raw, sizeof raw);
    size_t e;
    if (n < 0) {
        return n;
    }
    if (cap < (size_t)n + 2u) { /* one COBS byte (frames are < 254 bytes) + delimiter */
        return SL_ERR_ARG;
    }
    e = sl_cobs_encode(raw, (size_t)n, out);
    out[e] = 0;
    return (int)(e + 1u);
}

/* ---- decoding ---- */

static void unpack_payload(const uint8_t *p, sl_msg *m)
{
    switch (m->type) {
    case SL_CARD_DRAWN:
        m->u.card_drawn.card = p[0]; m->u.card_drawn.counter = get16(p + 1); m->u.card_drawn.quality = p[3];
        break;
    case SL_CARD_UNREADABLE:
        m->u.card_unreadable.counter = get16(p); m->u.card_unreadable.reason = p[2];
        break;
    case SL_CARD_PUSHED_BACK:
        m->u.card_pushed_back.card = p[0]; m->u.card_pushed_back.counter = get16(p + 1);
        break;
    case SL_CUT_CARD: m->u.cut_card.counter = get16(p); break;
    case SL_SHOE_STATE: m->u.shoe_state.state = p[0]; break;
    case SL_TAMPER: m->u.tamper.what = p[0]; break;
    case SL_BUTTON: m->u.button.button = p[0]; break;
    case SL_FAULT:
        m->u.fault.code = get16(p); m->u.fault.active = p[2]; m->u.fault.detail = get16(p + 3);
        break;
    case SL_SHOE_HELLO: {
        sl_shoe_hello *h = &m->u.shoe_hello;
        h->version = p[0]; h->boot_id = get32(p + 1); h->last_acked = get16(p + 5); h->ring_size = p[7];
        h->ring_count = p[8]; h->heartbeat_ms = get16(p + 9); h->fw_major = p[11]; h->fw_minor = p[12];
        h->fw_patch = p[13]; h->capabilities = get32(p + 14); memcpy(h->model, p + 18, 16);
        memcpy(h->serial, p + 34, 16);
        break;
    }
    case SL_HEARTBEAT: {
        sl_heartbeat *h = &m->u.heartbeat;
        h->uptime_s = get32(p); h->cards_read = get32(p + 4); h->cards_unreadable = get32(p + 8);
        h->rx_errors = get32(p + 12); h->lights = p[16]; h->status = p[17]; h->unacked = p[18];
        break;
    }
    case SL_STATUS: {
        sl_status *s = &m->u.status;
        s->status = p[0]; s->lights = p[1]; s->card_counter = get16(p + 2); s->cut_card_at = get16(p + 4);
        s->fault_code = get16(p + 6); s->last_acked = get16(p + 8); s->ring_count = p[10];
        break;
    }
    case SL_CLOCK_SYNC_REPLY:
        m->u.clock_sync_reply.host_time_ms = get64(p); m->u.clock_sync_reply.shoe_rx_ms = get32(p + 8);
        break;
    case SL_RESEND_GONE:
        m->u.resend_gone.first_seq = get16(p); m->u.resend_gone.count = p[2];
        break;
    case SL_HOST_HELLO:
        m->u.host_hello.min_version = p[0]; m->u.host_hello.max_version = p[1];
        break;
    case SL_ACK: m->u.ack.ack_seq = get16(p); break;
    case SL_RESEND_REQUEST:
        m->u.resend_request.first_seq = get16(p); m->u.resend_request.count = p[2];
        break;
    case SL_SET_LIGHTS:
        m->u.set_lights.lights = p[0]; m->u.set_lights.blink = p[1];
        break;
    case SL_CLOCK_SYNC: m->u.clock_sync.host_time_ms = get64(p); break;
    default: break;
    }
}

int sl_parse_raw(const uint8_t *raw, size_t len, sl_msg *out)
{
    size_t body;
    int plen;
    if (len < SL_MIN_FRAME) {
        return SL_ERR_TOO_SHORT;
    }
    body = len - SL_CRC_LEN;
    if (sl_crc32(raw, body) != get32(raw + body)) {
        return SL_ERR_BAD_CRC;
    }
    sl_msg_init(out, raw[0]);
    out->flags = raw[1];
    out->seq = get16(raw + 2);
    out->time_ms = get32(raw + 4);
    plen = sl_payload_len(out->type);
    if (plen < 0) {
        return SL_ERR_UNKNOWN_TYPE;
    }
    if (body - SL_HEADER_LEN < (size_t)plen) {
        return SL_ERR_BAD_LENGTH;
    }
    /* Payload bytes beyond the v1 fields belong to later minor versions: ignored. */
    unpack_payload(raw + SL_HEADER_LEN, out);
    return sl_validate(out) == SL_OK_MESSAGE ? SL_OK_MESSAGE : SL_ERR_BAD_FIELD;
}

void sl_decoder_init(sl_decoder *d)
{
    d->len = 0;
    d->overflow = 0;
}

int sl_decoder_feed(sl_decoder *d, uint8_t byte, sl_msg *out)
{
    uint8_t raw[SL_MAX_FRAME];
    int n;
    if (byte != 0) {
        if (d->overflow) {
            return SL_OK_NONE;
        }
        if (d->len >= SL_MAX_ENCODED) {
            d->overflow = 1;
            return SL_OK_NONE;
        }
        d->buf[d->len++] = byte;
        return SL_OK_NONE;
    }
    if (d->overflow) {
        d->overflow = 0;
        d->len = 0;
        return SL_ERR_OVERSIZE;
    }
    if (d->len == 0) {
        return SL_OK_NONE; /* empty frame: ignored */
    }
    n = sl_cobs_decode(d->buf, d->len, raw, sizeof raw);
    d->len = 0;
    if (n < 0) {
        return SL_ERR_COBS;
    }
    return sl_parse_raw(raw, (size_t)n, out);
}

/* ---- ring ---- */

/* slot = seq % SL_RING_SIZE stays consistent across the 65535 -> 0 wrap only for powers of two. */
typedef char sl_ring_size_must_be_a_power_of_two_up_to_128
    [((SL_RING_SIZE & (SL_RING_SIZE - 1u)) == 0u && SL_RING_SIZE <= 128u) ? 1 : -1];

void sl_ring_init(sl_ring *r)
{
    r->first_seq = 0;
    r->count = 0;
}

void sl_ring_put(sl_ring *r, const sl_msg *m)
{
    if (r->count == 0) {
        r->first_seq = m->seq;
    }
    if (r->count == SL_RING_SIZE) {
        r->first_seq = (uint16_t)(r->first_seq + 1u); /* overwrite the oldest */
        r->count--;
    }
    r->slot[(uint16_t)(m->seq % SL_RING_SIZE)] = *m;
    r->count++;
}

const sl_msg *sl_ring_find(const sl_ring *r, uint16_t seq)
{
    uint16_t offset = (uint16_t)(seq - r->first_seq);
    if (offset >= r->count) {
        return NULL;
    }
    return &r->slot[(uint16_t)(seq % SL_RING_SIZE)];
}
