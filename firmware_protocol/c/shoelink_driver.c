/*
 * shoelink_driver.c - test driver for the ShoeLink v1 reference codec.
 *
 * Reads commands on stdin, one per line, and answers on stdout:
 *
 *   C <hex>          CRC-32 of the bytes            -> "CRC 0xCBF43926"
 *   B <hex>          COBS-encode                    -> "COBS <hex>"
 *   D <hex>          feed the bytes to a fresh decoder; one line per result, then "END"
 *                    (a message line as below, or "ERROR <KIND>")
 *   E <message line> encode                         -> "WIRE <hex>" (COBS + 0x00) or "ERROR ARG"
 *   R                ring self-test                 -> "RING OK" or "RING FAIL <step>"
 *
 * Message line: NAME seq=N time=N flags=N then the payload fields in the order of
 * PROTOCOL.md section 7, e.g.
 *   CARD_DRAWN seq=1234 time=5000 flags=0 card=TH counter=42 quality=97
 * Cards are written as codes ("--" for unknown), text fields as the hex of their
 * characters ("-" when empty), everything else as decimal.
 *
 * Build: gcc -std=c99 -Wall -Wextra -Werror -pedantic shoelink.c shoelink_driver.c
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shoelink.h"

#define LINE_MAX_CHARS (1u << 17)

static char line[LINE_MAX_CHARS];
static uint8_t bytes[LINE_MAX_CHARS / 2];

static const struct { uint8_t type; const char *name; } NAMES[] = {
    {SL_CARD_DRAWN, "CARD_DRAWN"}, {SL_CARD_UNREADABLE, "CARD_UNREADABLE"},
    {SL_CARD_PUSHED_BACK, "CARD_PUSHED_BACK"}, {SL_CUT_CARD, "CUT_CARD"}, {SL_SHOE_STATE, "SHOE_STATE"},
    {SL_TAMPER, "TAMPER"}, {SL_BUTTON, "BUTTON"}, {SL_FAULT, "FAULT"}, {SL_SHOE_HELLO, "SHOE_HELLO"},
    {SL_HEARTBEAT, "HEARTBEAT"}, {SL_STATUS, "STATUS"}, {SL_CLOCK_SYNC_REPLY, "CLOCK_SYNC_REPLY"},
    {SL_RESEND_GONE, "RESEND_GONE"}, {SL_HOST_HELLO, "HOST_HELLO"}, {SL_ACK, "ACK"},
    {SL_RESEND_REQUEST, "RESEND_REQUEST"}, {SL_SET_LIGHTS, "SET_LIGHTS"},
    {SL_STATUS_REQUEST, "STATUS_REQUEST"}, {SL_CLOCK_SYNC, "CLOCK_SYNC"}
};
#define N_NAMES (sizeof NAMES / sizeof NAMES[0])

static const char *ERRORS[] = {"", "OVERSIZE", "COBS", "TOO_SHORT", "BAD_CRC", "UNKNOWN_TYPE",
                               "BAD_LENGTH", "BAD_FIELD", "ARG"};

static int hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static size_t parse_hex(const char *s, uint8_t *out, size_t cap)
{
    size_t n = 0;
    while (s[0] && s[1] && hexval(s[0]) >= 0 && hexval(s[1]) >= 0 && n < cap) {
        out[n++] = (uint8_t)(hexval(s[0]) * 16 + hexval(s[1]));
        s += 2;
    }
    return n;
}

static void print_hex(const uint8_t *p, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) {
        printf("%02x", p[i]);
    }
}

static void print_card(const char *key, uint8_t card)
{
    char r, s;
    if (sl_card_chars(card, &r, &s)) {
        printf(" %s=%c%c", key, r, s);
    } else {
        printf(" %s=--", key);
    }
}

static void print_text(const char *key, const char *t)
{
    size_t n = 0;
    while (n < 16 && t[n]) {
        n++;
    }
    printf(" %s=", key);
    if (n == 0) {
        printf("-");
    } else {
        print_hex((const uint8_t *)t, n);
    }
}

static const char *type_name(uint8_t type)
{
    size_t i;
    for (i = 0; i < N_NAMES; i++) {
        if (NAMES[i].type == type) return NAMES[i].name;
    }
    return NULL;
}

static void print_msg(const sl_msg *m)
{
    printf("%s seq=%u time=%lu flags=%u", type_name(m->type), (unsigned)m->seq, (unsigned long)m->time_ms,
           (unsigned)m->flags);
    switch (m->type) {
    case SL_CARD_DRAWN:
        print_card("card", m->u.card_drawn.card);
        printf(" counter=%u quality=%u", (unsigned)m->u.card_drawn.counter, (unsigned)m->u.card_drawn.quality);
        break;
    case SL_CARD_UNREADABLE:
        printf(" counter=%u reason=%u", (unsigned)m->u.card_unreadable.counter,
               (unsigned)m->u.card_unreadable.reason);
        break;
    case SL_CARD_PUSHED_BACK:
        print_card("card", m->u.card_pushed_back.card);
        printf(" counter=%u", (unsigned)m->u.card_pushed_back.counter);
        break;
    case SL_CUT_CARD: printf(" counter=%u", (unsigned)m->u.cut_card.counter); break;
    case SL_SHOE_STATE: printf(" state=%u", (unsigned)m->u.shoe_state.state); break;
    case SL_TAMPER: printf(" what=%u", (unsigned)m->u.tamper.what); break;
    case SL_BUTTON: printf(" button=%u", (unsigned)m->u.button.button); break;
    case SL_FAULT:
        printf(" code=%u active=%u detail=%u", (unsigned)m->u.fault.code, (unsigned)m->u.fault.active,
               (unsigned)m->u.fault.detail);
        break;
    case SL_SHOE_HELLO: {
        const sl_shoe_hello *h = &m->u.shoe_hello;
        printf(" version=%u boot_id=%lu last_acked=%u ring_size=%u ring_count=%u heartbeat_ms=%u"
               " fw_major=%u fw_minor=%u fw_patch=%u capabilities=%lu",
               (unsigned)h->version, (unsigned long)h->boot_id, (unsigned)h->last_acked, (unsigned)h->ring_size,
               (unsigned)h->ring_count, (unsigned)h->heartbeat_ms, (unsigned)h->fw_major, (unsigned)h->fw_minor,
               (unsigned)h->fw_patch, (unsigned long)h->capabilities);
        print_text("model", h->model);
        print_text("serial", h->serial);
        break;
    }
    case SL_HEARTBEAT: {
        const sl_heartbeat *h = &m->u.heartbeat;
        printf(" uptime_s=%lu cards_read=%lu cards_unreadable=%lu rx_errors=%lu lights=%u status=%u unacked=%u",
               (unsigned long)h->uptime_s, (unsigned long)h->cards_read, (unsigned long)h->cards_unreadable,
               (unsigned long)h->rx_errors, (unsigned)h->lights, (unsigned)h->status, (unsigned)h->unacked);
        break;
    }
    case SL_STATUS: {
        const sl_status *s = &m->u.status;
        printf(" status=%u lights=%u card_counter=%u cut_card_at=%u fault_code=%u last_acked=%u ring_count=%u",
               (unsigned)s->status, (unsigned)s->lights, (unsigned)s->card_counter, (unsigned)s->cut_card_at,
               (unsigned)s->fault_code, (unsigned)s->last_acked, (unsigned)s->ring_count);
        break;
    }
    case SL_CLOCK_SYNC_REPLY:
        printf(" host_time_ms=%llu shoe_rx_ms=%lu", (unsigned long long)m->u.clock_sync_reply.host_time_ms,
               (unsigned long)m->u.clock_sync_reply.shoe_rx_ms);
        break;
    case SL_RESEND_GONE:
        printf(" first_seq=%u count=%u", (unsigned)m->u.resend_gone.first_seq, (unsigned)m->u.resend_gone.count);
        break;
    case SL_HOST_HELLO:
        printf(" min_version=%u max_version=%u", (unsigned)m->u.host_hello.min_version,
               (unsigned)m->u.host_hello.max_version);
        break;
    case SL_ACK: printf(" ack_seq=%u", (unsigned)m->u.ack.ack_seq); break;
    case SL_RESEND_REQUEST:
        printf(" first_seq=%u count=%u", (unsigned)m->u.resend_request.first_seq,
               (unsigned)m->u.resend_request.count);
        break;
    case SL_SET_LIGHTS:
        printf(" lights=%u blink=%u", (unsigned)m->u.set_lights.lights, (unsigned)m->u.set_lights.blink);
        break;
    case SL_CLOCK_SYNC:
        printf(" host_time_ms=%llu", (unsigned long long)m->u.clock_sync.host_time_ms);
        break;
    default: break;
    }
    printf("\n");
}

/* ---- message line parsing (for E) ---- */

#define MAX_TOKENS 32
static char *keys[MAX_TOKENS];
static char *vals[MAX_TOKENS];
static int ntok;

static const char *val(const char *key)
{
    int i;
    for (i = 0; i < ntok; i++) {
        if (strcmp(keys[i], key) == 0) return vals[i];
    }
    return "0";
}

static unsigned long long num(const char *key) { return strtoull(val(key), NULL, 10); }

static uint8_t card(const char *key)
{
    const char *v = val(key);
    if (strlen(v) != 2) return 0;
    return sl_card_byte(v[0], v[1]);
}

static void text(const char *key, char *out)
{
    const char *v = val(key);
    memset(out, 0, 16);
    if (strcmp(v, "-") != 0) {
        (void)parse_hex(v, (uint8_t *)out, 16);
    }
}

static int encode_line(char *s)
{
    char *name = strtok(s, " \t\r\n");
    char *tok;
    sl_msg m;
    size_t i;
    int found = 0, n;
    uint8_t wire[SL_MAX_WIRE];
    if (!name) return SL_ERR_ARG;
    for (i = 0; i < N_NAMES; i++) {
        if (strcmp(NAMES[i].name, name) == 0) {
            sl_msg_init(&m, NAMES[i].type);
            found = 1;
        }
    }
    if (!found) return SL_ERR_ARG;
    ntok = 0;
    while ((tok = strtok(NULL, " \t\r\n")) != NULL && ntok < MAX_TOKENS) {
        char *eq = strchr(tok, '=');
        if (!eq) return SL_ERR_ARG;
        *eq = '\0';
        keys[ntok] = tok;
        vals[ntok] = eq + 1;
        ntok++;
    }
    m.seq = (uint16_t)num("seq");
    m.time_ms = (uint32_t)num("time");
    m.flags = (uint8_t)num("flags");
    switch (m.type) {
    case SL_CARD_DRAWN:
        m.u.card_drawn.card = card("card");
        m.u.card_drawn.counter = (uint16_t)num("counter");
        m.u.card_drawn.quality = (uint8_t)num("quality");
        break;
    case SL_CARD_UNREADABLE:
        m.u.card_unreadable.counter = (uint16_t)num("counter");
        m.u.card_unreadable.reason = (uint8_t)num("reason");
        break;
    case SL_CARD_PUSHED_BACK:
        m.u.card_pushed_back.card = card("card");
        m.u.card_pushed_back.counter = (uint16_t)num("counter");
        break;
    case SL_CUT_CARD: m.u.cut_card.counter = (uint16_t)num("counter"); break;
    case SL_SHOE_STATE: m.u.shoe_state.state = (uint8_t)num("state"); break;
    case SL_TAMPER: m.u.tamper.what = (uint8_t)num("what"); break;
    case SL_BUTTON: m.u.button.button = (uint8_t)num("button"); break;
    case SL_FAULT:
        m.u.fault.code = (uint16_t)num("code");
        m.u.fault.active = (uint8_t)num("active");
        m.u.fault.detail = (uint16_t)num("detail");
        break;
    case SL_SHOE_HELLO: {
        sl_shoe_hello *h = &m.u.shoe_hello;
        h->version = (uint8_t)num("version");
        h->boot_id = (uint32_t)num("boot_id");
        h->last_acked = (uint16_t)num("last_acked");
        h->ring_size = (uint8_t)num("ring_size");
        h->ring_count = (uint8_t)num("ring_count");
        h->heartbeat_ms = (uint16_t)num("heartbeat_ms");
        h->fw_major = (uint8_t)num("fw_major");
        h->fw_minor = (uint8_t)num("fw_minor");
        h->fw_patch = (uint8_t)num("fw_patch");
        h->capabilities = (uint32_t)num("capabilities");
        text("model", h->model);
        text("serial", h->serial);
        break;
    }
    case SL_HEARTBEAT: {
        sl_heartbeat *h = &m.u.heartbeat;
        h->uptime_s = (uint32_t)num("uptime_s");
        h->cards_read = (uint32_t)num("cards_read");
        h->cards_unreadable = (uint32_t)num("cards_unreadable");
        h->rx_errors = (uint32_t)num("rx_errors");
        h->lights = (uint8_t)num("lights");
        h->status = (uint8_t)num("status");
        h->unacked = (uint8_t)num("unacked");
        break;
    }
    case SL_STATUS: {
        sl_status *st = &m.u.status;
        st->status = (uint8_t)num("status");
        st->lights = (uint8_t)num("lights");
        st->card_counter = (uint16_t)num("card_counter");
        st->cut_card_at = (uint16_t)num("cut_card_at");
        st->fault_code = (uint16_t)num("fault_code");
        st->last_acked = (uint16_t)num("last_acked");
        st->ring_count = (uint8_t)num("ring_count");
        break;
    }
    case SL_CLOCK_SYNC_REPLY:
        m.u.clock_sync_reply.host_time_ms = (uint64_t)num("host_time_ms");
        m.u.clock_sync_reply.shoe_rx_ms = (uint32_t)num("shoe_rx_ms");
        break;
    case SL_RESEND_GONE:
        m.u.resend_gone.first_seq = (uint16_t)num("first_seq");
        m.u.resend_gone.count = (uint8_t)num("count");
        break;
    case SL_HOST_HELLO:
        m.u.host_hello.min_version = (uint8_t)num("min_version");
        m.u.host_hello.max_version = (uint8_t)num("max_version");
        break;
    case SL_ACK: m.u.ack.ack_seq = (uint16_t)num("ack_seq"); break;
    case SL_RESEND_REQUEST:
        m.u.resend_request.first_seq = (uint16_t)num("first_seq");
        m.u.resend_request.count = (uint8_t)num("count");
        break;
    case SL_SET_LIGHTS:
        m.u.set_lights.lights = (uint8_t)num("lights");
        m.u.set_lights.blink = (uint8_t)num("blink");
        break;
    case SL_CLOCK_SYNC: m.u.clock_sync.host_time_ms = (uint64_t)num("host_time_ms"); break;
    default: break;
    }
    n = sl_encode(&m, wire, sizeof wire);
    if (n < 0) return n;
    printf("WIRE ");
    print_hex(wire, (size_t)n);
    printf("\n");
    return 0;
}

/* ---- ring self-test ---- */

static int ring_test(void)
{
    static sl_ring ring;
    sl_msg m;
    unsigned i;
    const sl_msg *f;
    sl_ring_init(&ring);
    if (sl_ring_find(&ring, 0) != NULL) return 1;
    /* 100 events across the seq wrap: 65500 .. 65535, 0 .. 63 */
    for (i = 0; i < 100; i++) {
        sl_msg_init(&m, SL_CARD_DRAWN);
        m.seq = (uint16_t)(65500u + i);
        m.u.card_drawn.card = 0x1A;
        m.u.card_drawn.counter = (uint16_t)(i + 1u);
        m.u.card_drawn.quality = 90;
        sl_ring_put(&ring, &m);
    }
    if (ring.count != SL_RING_SIZE) return 2;
    if (sl_ring_find(&ring, (uint16_t)(65500u + 100u - SL_RING_SIZE - 1u)) != NULL) return 3;
    for (i = 100u - SL_RING_SIZE; i < 100u; i++) {
        f = sl_ring_find(&ring, (uint16_t)(65500u + i));
        if (f == NULL || f->seq != (uint16_t)(65500u + i) || f->u.card_drawn.counter != i + 1u) return 4;
    }
    if (sl_ring_find(&ring, (uint16_t)(65500u + 100u)) != NULL) return 5;
    return 0;
}

int main(void)
{
    while (fgets(line, sizeof line, stdin)) {
        char cmd = line[0];
        char *arg = line[1] ? line + 2 : line + 1;
        size_t n;
        if (cmd == 'C') {
            n = parse_hex(arg, bytes, sizeof bytes);
            printf("CRC 0x%08lX\n", (unsigned long)sl_crc32(bytes, n));
        } else if (cmd == 'B') {
            static uint8_t enc[LINE_MAX_CHARS / 2 + LINE_MAX_CHARS / 254 + 2];
            n = parse_hex(arg, bytes, sizeof bytes);
            n = sl_cobs_encode(bytes, n, enc);
            printf("COBS ");
            print_hex(enc, n);
            printf("\n");
        } else if (cmd == 'D') {
            sl_decoder dec;
            sl_msg m;
            size_t i;
            n = parse_hex(arg, bytes, sizeof bytes);
            sl_decoder_init(&dec);
            for (i = 0; i < n; i++) {
                int r = sl_decoder_feed(&dec, bytes[i], &m);
                if (r == SL_OK_MESSAGE) {
                    print_msg(&m);
                } else if (r < 0) {
                    printf("ERROR %s\n", ERRORS[-r]);
                }
            }
            printf("END\n");
        } else if (cmd == 'E') {
            int r = encode_line(arg);
            if (r < 0) printf("ERROR %s\n", ERRORS[-r]);
        } else if (cmd == 'R') {
            int r = ring_test();
            if (r == 0) printf("RING OK\n"); else printf("RING FAIL %d\n", r);
        }
        fflush(stdout);
    }
    return 0;
}
