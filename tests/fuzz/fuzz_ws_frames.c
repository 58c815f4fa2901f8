/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_ws_frames.c - libFuzzer target: the proxy's WebSocket frame parser
 *
 * The first byte picks the side (client frames must be masked, server ones
 * not), the message limit (small, so that 1009 is reachable) and how the
 * rest is revealed (as bytes arrive from a socket); the rest is a stream of
 * frames. The stream is parsed the way proxy_wsconn.c does: one frame at a
 * time from the start of what has arrived. Checked: the events do not
 * depend on how bytes arrive; MORE never consumes and names a length above
 * what is there; an error is final, explains itself and carries 1002, 1007,
 * 1009 or 1011; a reassembled text message is valid UTF-8 within the limit,
 * and re-framed by the proxy's writer (fresh mask) it parses back to the
 * same message; control payloads are at most 125 bytes. Every text message
 * is also given to the GraphQL-over-WebSocket classifier.
 *   ./tests/fuzz/fuzz_ws_frames -max_total_time=120 CORPUS_DIR
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "proxy/proxy_ws.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_EVENTS 4096

struct trace {
    size_t n;
    uint32_t h; /* a hash of the events: kind, opcode, lengths, payloads, codes */
};

static void mix(struct trace *t, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        t->h = (t->h ^ b[i]) * 16777619u;
    }
}

static void check_text(const struct proxy_ws_event *ev, size_t limit)
{
    unsigned char key[4] = {0x11, 0x22, 0x33, 0x44};
    unsigned char *f;
    size_t hl;
    struct proxy_ws_parser p;
    struct proxy_ws_event e2;
    struct proxy_ws_gql g;

    if (ev->payload_len > limit || !proxy_ws_utf8_valid(ev->payload, ev->payload_len)) {
        abort();
    }
    f = malloc(PROXY_WS_MAX_HEAD + ev->payload_len + 1);
    if (f == NULL) {
        abort();
    }
    hl = proxy_ws_frame_head(f, PROXY_WS_OP_TEXT, ev->payload_len, key);
    if (ev->payload_len > 0) {
        memcpy(f + hl, ev->payload, ev->payload_len);
    }
    proxy_ws_mask(f + hl, ev->payload_len, key, 0);
    proxy_ws_parser_init(&p, PROXY_WS_FROM_CLIENT, true);
    p.max_message = limit;
    if (proxy_ws_parse(&p, f, hl + ev->payload_len, &e2) != PROXY_WS_TEXT ||
        e2.payload_len != ev->payload_len ||
        (ev->payload_len > 0 && memcmp(e2.payload, ev->payload, ev->payload_len) != 0)) {
        abort(); /* what the proxy forwards reads back as the decided message */
    }
    proxy_ws_parser_clear(&p);
    free(f);
    if (proxy_ws_gql_classify((const char *)ev->payload, ev->payload_len, &g)) {
        if (g.kind == PROXY_WS_GQL_INVALID && g.why == NULL) {
            abort();
        }
        proxy_ws_gql_clear(&g);
    }
}

/* Parse 'data' revealing 'step' more bytes whenever the parser wants more. */
static void run(const uint8_t *data, size_t size, enum proxy_ws_side side, size_t limit,
                size_t step, struct trace *t)
{
    struct proxy_ws_parser p;
    size_t off = 0;
    size_t avail = step < size ? step : size;

    proxy_ws_parser_init(&p, side, true);
    p.max_message = limit;
    t->n = 0;
    t->h = 2166136261u;
    while (off < size && t->n < MAX_EVENTS) {
        struct proxy_ws_event ev;
        enum proxy_ws_kind k = proxy_ws_parse(&p, data + off, avail - off, &ev);
        if (k != ev.kind) {
            abort();
        }
        if (k == PROXY_WS_MORE) {
            if (ev.need != 0 && ev.need <= avail - off) {
                abort(); /* it had what it said it needed */
            }
            if (avail == size) {
                break; /* the stream ends inside a frame */
            }
            avail = avail + step < size ? avail + step : size;
            continue;
        }
        t->n++;
        mix(t, &k, sizeof(k));
        if (k == PROXY_WS_ERROR) {
            if (ev.why == NULL ||
                (ev.code != 1002 && ev.code != 1007 && ev.code != 1009 && ev.code != 1011)) {
                abort();
            }
            mix(t, &ev.code, sizeof(ev.code));
            break;
        }
        if (ev.frame_len == 0 || ev.frame_len > avail - off) {
            abort();
        }
        mix(t, &ev.opcode, sizeof(ev.opcode));
        mix(t, &ev.frame_len, sizeof(ev.frame_len));
        if (k == PROXY_WS_CONTROL) {
            if (ev.payload_len > PROXY_WS_MAX_CONTROL) {
                abort();
            }
            mix(t, ev.payload, ev.payload_len);
        }
        if (k == PROXY_WS_TEXT) {
            check_text(&ev, limit);
            mix(t, ev.payload, ev.payload_len);
        }
        off += ev.frame_len;
    }
    proxy_ws_parser_clear(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct trace a;
    struct trace b;
    enum proxy_ws_side side;
    size_t limit;
    size_t step;

    if (size == 0) {
        return 0;
    }
    side = (data[0] & 1u) != 0 ? PROXY_WS_FROM_SERVER : PROXY_WS_FROM_CLIENT;
    limit = (data[0] & 2u) != 0 ? 64 : PROXY_WS_MAX_MESSAGE;
    step = (size_t)(data[0] >> 2) % 13 + 1;
    data++;
    size--;
    run(data, size, side, limit, size ? size : 1, &a);
    run(data, size, side, limit, step, &b);
    if (a.n != b.n || a.h != b.h) {
        abort(); /* the events do not depend on how bytes arrive */
    }
    return 0;
}
