/* SPDX-License-Identifier: Apache-2.0 */
/* proxy_ws.c - WebSocket frames, handshake checks and message classification
 *
 * Pure code for the WebSocket session of proxy_wsconn.c: the frame parser
 * reads one frame at a time from a contiguous buffer and says what it is
 * (a control frame, a data frame, the end of a text message, or the close
 * code a violation earns); it reassembles client text messages so that each
 * can be decided whole before any of its bytes goes upstream, and checks
 * UTF-8 across fragments with a small state machine. No extension is ever
 * negotiated, so RSV bits are always an error. The handshake helpers check
 * an RFC 6455 opening request and the upstream's 101 (the accept value is
 * SHA-1 and base64 through OpenSSL). The GraphQL-over-WebSocket classifier
 * reads one client message with jansson. docs/proxy.md#websocket.
 */
#include "config.h"

#include <jansson.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "proxy/proxy_ws.h"

static const char ws_guid[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/* ===========================================================================
 * UTF-8
 * ========================================================================= */

/* Feed one byte to the UTF-8 state of 'p'; false on an invalid byte. */
static bool utf8_step(struct proxy_ws_parser *p, unsigned char b)
{
    if (p->utf8_need > 0) {
        if (b < p->utf8_lo || b > p->utf8_hi) {
            return false;
        }
        p->utf8_need--;
        p->utf8_lo = 0x80;
        p->utf8_hi = 0xBF;
        return true;
    }
    p->utf8_lo = 0x80;
    p->utf8_hi = 0xBF;
    if (b < 0x80) {
        return true;
    }
    if (b >= 0xC2 && b <= 0xDF) {
        p->utf8_need = 1;
    } else if (b >= 0xE0 && b <= 0xEF) {
        p->utf8_need = 2;
        if (b == 0xE0) {
            p->utf8_lo = 0xA0; /* no overlong three-byte forms */
        } else if (b == 0xED) {
            p->utf8_hi = 0x9F; /* no surrogates */
        }
    } else if (b >= 0xF0 && b <= 0xF4) {
        p->utf8_need = 3;
        if (b == 0xF0) {
            p->utf8_lo = 0x90; /* no overlong four-byte forms */
        } else if (b == 0xF4) {
            p->utf8_hi = 0x8F; /* nothing above U+10FFFF */
        }
    } else {
        return false;
    }
    return true;
}

bool proxy_ws_utf8_valid(const unsigned char *s, size_t n)
{
    struct proxy_ws_parser p;

    memset(&p, 0, sizeof(p));
    for (size_t i = 0; i < n; i++) {
        if (!utf8_step(&p, s[i])) {
            return false;
        }
    }
    return p.utf8_need == 0;
}

bool proxy_ws_close_code_valid(unsigned code)
{
    return (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014) ||
           (code >= 3000 && code <= 4999);
}

/* ===========================================================================
 * Frames
 * ========================================================================= */

void proxy_ws_parser_init(struct proxy_ws_parser *p, enum proxy_ws_side side, bool hold_text)
{
    memset(p, 0, sizeof(*p));
    p->side = side;
    p->hold_text = hold_text;
    p->max_message = PROXY_WS_MAX_MESSAGE;
}

void proxy_ws_parser_clear(struct proxy_ws_parser *p)
{
    free(p->msg);
    p->msg = NULL;
    p->msg_cap = 0;
}

static enum proxy_ws_kind fail(struct proxy_ws_event *ev, uint16_t code, const char *why)
{
    ev->kind = PROXY_WS_ERROR;
    ev->code = code;
    ev->why = why;
    return PROXY_WS_ERROR;
}

static bool opcode_known(unsigned op)
{
    return op == PROXY_WS_OP_CONT || op == PROXY_WS_OP_TEXT || op == PROXY_WS_OP_BINARY ||
           op == PROXY_WS_OP_CLOSE || op == PROXY_WS_OP_PING || op == PROXY_WS_OP_PONG;
}

/* The payload length and the head length of the frame at 'buf': MORE when
 * the head is incomplete, ERROR for a non-minimal or oversized encoding. */
static enum proxy_ws_kind read_length(const unsigned char *buf, size_t len, bool masked,
                                      uint64_t *plen, size_t *hl, struct proxy_ws_event *ev)
{
    unsigned l7 = buf[1] & 0x7Fu;
    size_t ext = l7 == 126 ? 2 : l7 == 127 ? 8 : 0;

    *hl = 2 + ext + (masked ? 4 : 0);
    if (len < *hl) {
        return PROXY_WS_MORE;
    }
    if (ext == 0) {
        *plen = l7;
        return PROXY_WS_FRAGMENT;
    }
    *plen = 0;
    for (size_t i = 0; i < ext; i++) {
        *plen = (*plen << 8) | buf[2 + i];
    }
    if (ext == 8 && (buf[2] & 0x80u) != 0) {
        return fail(ev, PROXY_WS_CLOSE_PROTOCOL, "64-bit payload length with the top bit set");
    }
    if ((ext == 2 && *plen < 126) || (ext == 8 && *plen < 65536)) {
        return fail(ev, PROXY_WS_CLOSE_PROTOCOL, "payload length not minimally encoded");
    }
    return PROXY_WS_FRAGMENT;
}

/* A close frame's payload (already unmasked in p->ctl). */
static enum proxy_ws_kind check_close(struct proxy_ws_event *ev, const unsigned char *pl, size_t n)
{
    unsigned code;

    ev->code = 0;
    if (n == 0) {
        return PROXY_WS_CONTROL;
    }
    if (n == 1) {
        return fail(ev, PROXY_WS_CLOSE_PROTOCOL, "close frame with a one-byte payload");
    }
    code = (unsigned)pl[0] << 8 | pl[1];
    if (!proxy_ws_close_code_valid(code)) {
        return fail(ev, PROXY_WS_CLOSE_PROTOCOL, "close frame with an invalid status code");
    }
    if (!proxy_ws_utf8_valid(pl + 2, n - 2)) {
        return fail(ev, PROXY_WS_CLOSE_BAD_DATA, "close reason is not valid UTF-8");
    }
    ev->code = (uint16_t)code;
    return PROXY_WS_CONTROL;
}

/* Grow the reassembly buffer to hold 'need' bytes (need <= max_message). */
static bool msg_reserve(struct proxy_ws_parser *p, size_t need)
{
    size_t cap = p->msg_cap != 0 ? p->msg_cap : 256;
    unsigned char *m;

    /* allocated even for an empty message: the event's payload is never NULL */
    if (need <= p->msg_cap && p->msg != NULL) {
        return true;
    }
    while (cap < need) {
        cap *= 2;
    }
    if (cap > p->max_message) {
        cap = p->max_message; /* need <= max_message: the caller checked */
    }
    if (cap < need || cap == 0) {
        cap = need > 0 ? need : 1;
    }
    m = pv_realloc(p->msg, cap);
    if (m == NULL) {
        return false;
    }
    p->msg = m;
    p->msg_cap = cap;
    return true;
}

/* The payload of a text frame: validate UTF-8 (unmasking on the fly) and,
 * with hold_text, append it to the message. */
static enum proxy_ws_kind text_payload(struct proxy_ws_parser *p, const unsigned char *pl, size_t n,
                                       const unsigned char *key, struct proxy_ws_event *ev)
{
    unsigned char *dst = NULL;

    if (p->hold_text) {
        if (!msg_reserve(p, (size_t)p->msg_len + n)) {
            return fail(ev, PROXY_WS_CLOSE_INTERNAL, "out of memory");
        }
        dst = p->msg + p->msg_len;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char b = key != NULL ? (unsigned char)(pl[i] ^ key[i & 3u]) : pl[i];
        if (b < 0x80 && p->utf8_need == 0) {
            /* ASCII outside a sequence: the common case, no state to change */
            if (dst != NULL) {
                dst[i] = b;
            }
            continue;
        }
        if (!utf8_step(p, b)) {
            return fail(ev, PROXY_WS_CLOSE_BAD_DATA, "text message is not valid UTF-8");
        }
        if (dst != NULL) {
            dst[i] = b;
        }
    }
    return PROXY_WS_FRAGMENT;
}

/* long: the frame header checks of RFC 6455 section 5.2 in wire order; each refusal names its rule
 */
enum proxy_ws_kind proxy_ws_parse(struct proxy_ws_parser *p, const unsigned char *buf, size_t len,
                                  struct proxy_ws_event *ev)
{
    unsigned op;
    bool fin;
    bool masked;
    bool text;
    uint64_t plen = 0;
    size_t hl = 0;
    const unsigned char *key;
    const unsigned char *pl;
    enum proxy_ws_kind k;

    memset(ev, 0, sizeof(*ev));
    ev->kind = PROXY_WS_MORE;
    if (len < 2) {
        return PROXY_WS_MORE;
    }
    fin = (buf[0] & 0x80u) != 0;
    op = buf[0] & 0x0Fu;
    masked = (buf[1] & 0x80u) != 0;
    ev->opcode = (uint8_t)op;
    ev->fin = fin;
    if (p->closed) {
        return fail(ev, PROXY_WS_CLOSE_PROTOCOL, "frame after a close frame");
    }
    if ((buf[0] & 0x70u) != 0) {
        return fail(ev, PROXY_WS_CLOSE_PROTOCOL, "reserved bits set without an extension");
    }
    if (!opcode_known(op)) {
        return fail(ev, PROXY_WS_CLOSE_PROTOCOL, "reserved opcode");
    }
    if (p->side == PROXY_WS_FROM_CLIENT && !masked) {
        return fail(ev, PROXY_WS_CLOSE_PROTOCOL, "client frame is not masked");
    }
    if (p->side == PROXY_WS_FROM_SERVER && masked) {
        return fail(ev, PROXY_WS_CLOSE_PROTOCOL, "server frame is masked");
    }
    if ((op & 0x8u) != 0) {
        if (!fin) {
            return fail(ev, PROXY_WS_CLOSE_PROTOCOL, "fragmented control frame");
        }
        if ((buf[1] & 0x7Fu) > PROXY_WS_MAX_CONTROL) {
            return fail(ev, PROXY_WS_CLOSE_PROTOCOL, "control frame longer than 125 bytes");
        }
    } else if (op == PROXY_WS_OP_CONT && p->msg_op == 0) {
        return fail(ev, PROXY_WS_CLOSE_PROTOCOL, "continuation frame without a message");
    } else if (op != PROXY_WS_OP_CONT && p->msg_op != 0) {
        return fail(ev, PROXY_WS_CLOSE_PROTOCOL, "new data frame inside a fragmented message");
    }
    k = read_length(buf, len, masked, &plen, &hl, ev);
    if (k != PROXY_WS_FRAGMENT) {
        return k;
    }
    if ((op & 0x8u) == 0 &&
        (plen > p->max_message ||
         (op == PROXY_WS_OP_CONT ? p->msg_len : 0) + plen > (uint64_t)p->max_message)) {
        return fail(ev, PROXY_WS_CLOSE_TOO_BIG, "message larger than the limit");
    }
    if ((uint64_t)(len - hl) < plen) {
        ev->need = hl + (size_t)plen; /* at most 14 + max_message */
        return PROXY_WS_MORE;
    }
    key = masked ? buf + hl - 4 : NULL;
    pl = buf + hl;
    ev->frame_len = hl + (size_t)plen;

    if ((op & 0x8u) != 0) {
        for (size_t i = 0; i < (size_t)plen; i++) {
            p->ctl[i] = key != NULL ? (unsigned char)(pl[i] ^ key[i & 3u]) : pl[i];
        }
        ev->payload = p->ctl;
        ev->payload_len = (size_t)plen;
        ev->kind = PROXY_WS_CONTROL;
        if (op == PROXY_WS_OP_CLOSE) {
            k = check_close(ev, p->ctl, (size_t)plen);
            p->closed = k == PROXY_WS_CONTROL;
            return k;
        }
        return PROXY_WS_CONTROL;
    }

    text = op == PROXY_WS_OP_TEXT || (op == PROXY_WS_OP_CONT && p->msg_op == PROXY_WS_OP_TEXT);
    ev->text = text;
    if (op != PROXY_WS_OP_CONT) {
        /* a new message */
        p->msg_len = 0;
        p->utf8_need = 0;
    }
    if (text) {
        k = text_payload(p, pl, (size_t)plen, key, ev);
        if (k == PROXY_WS_ERROR) {
            return k;
        }
    }
    p->msg_len += plen;
    if (!fin) {
        if (op != PROXY_WS_OP_CONT) {
            p->msg_op = (uint8_t)op;
        }
        ev->kind = PROXY_WS_FRAGMENT;
        return PROXY_WS_FRAGMENT;
    }
    p->msg_op = 0;
    if (!text) {
        p->msg_len = 0;
        ev->kind = PROXY_WS_FRAGMENT;
        return PROXY_WS_FRAGMENT;
    }
    if (p->utf8_need != 0) {
        return fail(ev, PROXY_WS_CLOSE_BAD_DATA, "text message ends inside a UTF-8 sequence");
    }
    ev->kind = PROXY_WS_TEXT;
    ev->payload = p->hold_text ? p->msg : NULL;
    ev->payload_len = (size_t)p->msg_len;
    p->msg_len = 0;
    return PROXY_WS_TEXT;
}

bool proxy_ws_mask_key(struct proxy_ws_keys *k, unsigned char out[4])
{
    if (!k->filled || k->used + 4 > sizeof(k->pool)) {
        if (RAND_bytes(k->pool, (int)sizeof(k->pool)) != 1) {
            return false;
        }
        k->used = 0;
        k->filled = true;
    }
    memcpy(out, k->pool + k->used, 4);
    OPENSSL_cleanse(k->pool + k->used, 4);
    k->used += 4;
    return true;
}

size_t proxy_ws_frame_head(unsigned char *out, uint8_t opcode, uint64_t len,
                           const unsigned char *mask)
{
    size_t n = 2;

    out[0] = (unsigned char)(0x80u | (opcode & 0x0Fu));
    if (len < 126) {
        out[1] = (unsigned char)len;
    } else if (len < 65536) {
        out[1] = 126;
        out[2] = (unsigned char)(len >> 8);
        out[3] = (unsigned char)len;
        n = 4;
    } else {
        out[1] = 127;
        for (size_t i = 0; i < 8; i++) {
            out[2 + i] = (unsigned char)(len >> (56 - 8 * i));
        }
        n = 10;
    }
    if (mask != NULL) {
        out[1] |= 0x80u;
        memcpy(out + n, mask, 4);
        n += 4;
    }
    return n;
}

void proxy_ws_mask(unsigned char *buf, size_t n, const unsigned char mask[4], size_t off)
{
    for (size_t i = 0; i < n; i++) {
        buf[i] ^= mask[(off + i) & 3u];
    }
}

size_t proxy_ws_close_frame(unsigned char *out, uint16_t code, const char *reason,
                            const unsigned char *mask)
{
    unsigned char pl[PROXY_WS_MAX_CONTROL];
    size_t rl = reason != NULL ? strlen(reason) : 0;
    size_t hl;

    if (rl > PROXY_WS_MAX_CONTROL - 2) {
        rl = PROXY_WS_MAX_CONTROL - 2;
        /* never cut inside a UTF-8 sequence */
        while (rl > 0 && ((unsigned char)reason[rl] & 0xC0u) == 0x80u) {
            rl--;
        }
    }
    pl[0] = (unsigned char)(code >> 8);
    pl[1] = (unsigned char)code;
    if (rl > 0) {
        memcpy(pl + 2, reason, rl);
    }
    hl = proxy_ws_frame_head(out, PROXY_WS_OP_CLOSE, rl + 2, mask);
    memcpy(out + hl, pl, rl + 2);
    if (mask != NULL) {
        proxy_ws_mask(out + hl, rl + 2, mask, 0);
    }
    return hl + rl + 2;
}

/* ===========================================================================
 * Handshake
 * ========================================================================= */

/* Does the comma-separated list [v, v+n) hold the token 'tok'
 * (case-insensitive, optional whitespace around elements)? */
static bool list_has(const char *v, size_t n, const char *tok)
{
    size_t tl = strlen(tok);
    size_t i = 0;

    while (i < n) {
        size_t s;
        size_t e;
        while (i < n && (v[i] == ' ' || v[i] == '\t' || v[i] == ',')) {
            i++;
        }
        s = i;
        while (i < n && v[i] != ',') {
            i++;
        }
        e = i;
        while (e > s && (v[e - 1] == ' ' || v[e - 1] == '\t')) {
            e--;
        }
        if (e - s == tl && strncasecmp(v + s, tok, tl) == 0) {
            return true;
        }
    }
    return false;
}

static bool value_is(const char *v, size_t n, const char *lit)
{
    return n == strlen(lit) && strncasecmp(v, lit, n) == 0;
}

bool proxy_ws_is_upgrade(const struct proxy_request *r, const char *head)
{
    for (size_t i = 0; i < r->nhdr; i++) {
        const struct proxy_header *f = &r->hdr[i];
        if (proxy_http_name_is(head + f->name.off, f->name.len, "upgrade") &&
            list_has(head + f->value.off, f->value.len, "websocket")) {
            return true;
        }
    }
    return false;
}

/* 16 bytes in base64: 22 alphabet characters and "==". */
static bool key_valid(const char *k, size_t n)
{
    static const char alpha[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

    if (n != 24 || k[22] != '=' || k[23] != '=') {
        return false;
    }
    for (size_t i = 0; i < 22; i++) {
        if (k[i] == '\0' || strchr(alpha, k[i]) == NULL) {
            return false;
        }
    }
    /* the last character carries 2 bits of data: the other 4 must be 0 */
    return strchr("AQgw", k[21]) != NULL;
}

static const char *check_upgrade(const struct proxy_request *r, const char *head, char key[25])
{
    size_t nup = 0;
    size_t nkey = 0;
    size_t nver = 0;
    bool conn = false;
    bool ver = false;

    key[0] = '\0';
    if (r->method.len != 3 || memcmp(head + r->method.off, "GET", 3) != 0) {
        return "a WebSocket upgrade must be a GET";
    }
    if (r->version_minor != 1) {
        return "a WebSocket upgrade must be HTTP/1.1";
    }
    if (r->framing != PROXY_BODY_NONE) {
        return "a WebSocket upgrade carries no body";
    }
    for (size_t i = 0; i < r->nhdr; i++) {
        const struct proxy_header *f = &r->hdr[i];
        const char *n = head + f->name.off;
        const char *v = head + f->value.off;
        if (proxy_http_name_is(n, f->name.len, "upgrade")) {
            nup++;
            if (!value_is(v, f->value.len, "websocket")) {
                return "Upgrade must be exactly websocket";
            }
        } else if (proxy_http_name_is(n, f->name.len, "connection")) {
            conn = conn || list_has(v, f->value.len, "upgrade");
        } else if (proxy_http_name_is(n, f->name.len, "sec-websocket-key")) {
            nkey++;
            if (!key_valid(v, f->value.len)) {
                return "Sec-WebSocket-Key is not 16 base64-encoded bytes";
            }
            memcpy(key, v, 24);
            key[24] = '\0';
        } else if (proxy_http_name_is(n, f->name.len, "sec-websocket-version")) {
            nver++;
            ver = value_is(v, f->value.len, "13");
        }
    }
    if (nup != 1) {
        return "exactly one Upgrade field is required";
    }
    if (!conn) {
        return "Connection must name upgrade";
    }
    if (nkey != 1) {
        key[0] = '\0';
        return "exactly one Sec-WebSocket-Key is required";
    }
    if (nver != 1 || !ver) {
        key[0] = '\0';
        return "Sec-WebSocket-Version must be 13";
    }
    return NULL;
}

const char *proxy_ws_check_upgrade(const struct proxy_request *r, const char *head, char key[25])
{
    const char *why = check_upgrade(r, head, key);

    if (why != NULL) {
        key[0] = '\0';
    }
    return why;
}

bool proxy_ws_accept_for(const char *key, char out[29])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    char in[24 + sizeof(ws_guid)];
    size_t kl = strlen(key);

    if (kl != 24) {
        return false;
    }
    memcpy(in, key, 24);
    memcpy(in + 24, ws_guid, sizeof(ws_guid) - 1);
    if (EVP_Digest(in, 24 + sizeof(ws_guid) - 1, md, &mdlen, EVP_sha1(), NULL) != 1 ||
        mdlen != 20) {
        return false;
    }
    return EVP_EncodeBlock((unsigned char *)out, md, 20) == 28;
}

const char *proxy_ws_check_101(const char *head, size_t len, const char *accept, bool *extension)
{
    const char *p = memchr(head, '\n', len);
    const char *end = head + len;
    bool up = false;
    bool conn = false;
    size_t nacc = 0;
    bool acc_ok = false;

    *extension = false;
    if (p == NULL) {
        return "malformed 101 response";
    }
    p++;
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        const char *le = eol != NULL ? eol : end;
        const char *colon;
        const char *v;
        const char *ve;
        if (le > p && le[-1] == '\r') {
            le--;
        }
        if (le == p) {
            break; /* the empty line */
        }
        colon = memchr(p, ':', (size_t)(le - p));
        if (colon == NULL) {
            return "malformed 101 response";
        }
        v = colon + 1;
        ve = le;
        while (v < ve && (*v == ' ' || *v == '\t')) {
            v++;
        }
        while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t')) {
            ve--;
        }
        if (proxy_http_name_is(p, (size_t)(colon - p), "upgrade")) {
            up = value_is(v, (size_t)(ve - v), "websocket");
        } else if (proxy_http_name_is(p, (size_t)(colon - p), "connection")) {
            conn = conn || list_has(v, (size_t)(ve - v), "upgrade");
        } else if (proxy_http_name_is(p, (size_t)(colon - p), "sec-websocket-accept")) {
            nacc++;
            acc_ok = (size_t)(ve - v) == strlen(accept) && memcmp(v, accept, strlen(accept)) == 0;
        } else if (proxy_http_name_is(p, (size_t)(colon - p), "sec-websocket-extensions")) {
            *extension = true;
        }
        if (eol == NULL) {
            break;
        }
        p = eol + 1;
    }
    if (*extension) {
        return "the upstream chose a WebSocket extension the proxy did not offer";
    }
    if (!up) {
        return "101 without Upgrade: websocket";
    }
    if (!conn) {
        return "101 without Connection: upgrade";
    }
    if (nacc != 1 || !acc_ok) {
        return "101 with a wrong Sec-WebSocket-Accept";
    }
    return NULL;
}

/* ===========================================================================
 * GraphQL over WebSocket
 * ========================================================================= */

static const char *const gql_control[] = {
    "connection_init", "connection_ack", "ping", "pong", "complete", "stop", "connection_terminate",
};

void proxy_ws_gql_clear(struct proxy_ws_gql *g)
{
    free(g->query);
    free(g->operation_name);
    free(g->persisted_id);
    memset(g, 0, sizeof(*g));
}

static bool dup_json_string(const json_t *s, char **out)
{
    *out = pv_strndup(json_string_value(s), json_string_length(s));
    return *out != NULL;
}

static bool gql_invalid(struct proxy_ws_gql *out, const char *why)
{
    proxy_ws_gql_clear(out);
    out->kind = PROXY_WS_GQL_INVALID;
    out->why = why;
    return true;
}

/* Does SHA-256 of [s, s+n) written in hex equal 'hex' (any case)? */
static bool sha256_hex_is(const char *s, size_t n, const char *hex)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    static const char digits[] = "0123456789abcdef";

    if (strlen(hex) != 64 || EVP_Digest(s, n, md, &mdlen, EVP_sha256(), NULL) != 1 || mdlen != 32) {
        return false;
    }
    for (size_t i = 0; i < 64; i++) {
        char h = hex[i] >= 'A' && hex[i] <= 'F' ? (char)(hex[i] + ('a' - 'A')) : hex[i];
        if (h != digits[(i & 1u) != 0 ? md[i / 2] & 15u : md[i / 2] >> 4]) {
            return false;
        }
    }
    return true;
}

/* The payload of subscribe/start: query and/or a persisted-query hash. */
static bool gql_operation(const json_t *payload, struct proxy_ws_gql *out)
{
    const json_t *q = json_object_get(payload, "query");
    const json_t *name = json_object_get(payload, "operationName");
    const json_t *ext = json_object_get(payload, "extensions");
    const json_t *pq = json_is_object(ext) ? json_object_get(ext, "persistedQuery") : NULL;
    const json_t *hash = json_is_object(pq) ? json_object_get(pq, "sha256Hash") : NULL;

    if (q != NULL && !json_is_string(q)) {
        return gql_invalid(out, "payload.query is not a string");
    }
    if (name != NULL && !json_is_string(name) && !json_is_null(name)) {
        return gql_invalid(out, "payload.operationName is not a string");
    }
    if (pq != NULL && !json_is_string(hash)) {
        return gql_invalid(out, "persistedQuery without a string sha256Hash");
    }
    if (q == NULL && hash == NULL) {
        return gql_invalid(out, "payload carries neither a query nor a persisted-query hash");
    }
    if (q != NULL && hash != NULL &&
        !sha256_hex_is(json_string_value(q), json_string_length(q), json_string_value(hash))) {
        return gql_invalid(out, "the query does not hash to its persisted-query sha256Hash");
    }
    out->kind = PROXY_WS_GQL_OPERATION;
    out->query_len = q != NULL ? json_string_length(q) : 0;
    if ((q != NULL && !dup_json_string(q, &out->query)) ||
        (json_is_string(name) && !dup_json_string(name, &out->operation_name)) ||
        (hash != NULL && !dup_json_string(hash, &out->persisted_id))) {
        proxy_ws_gql_clear(out);
        return false;
    }
    return true;
}

bool proxy_ws_gql_classify(const char *msg, size_t len, struct proxy_ws_gql *out)
{
    json_error_t err;
    json_t *doc;
    const json_t *type;
    const char *t;
    bool ok;

    memset(out, 0, sizeof(*out));
    doc = json_loadb(msg, len, JSON_REJECT_DUPLICATES, &err);
    if (doc == NULL) {
        return gql_invalid(out, "message is not JSON");
    }
    type = json_object_get(doc, "type");
    if (!json_is_object(doc) || !json_is_string(type)) {
        json_decref(doc);
        return gql_invalid(out, "message has no string type");
    }
    t = json_string_value(type);
    for (size_t i = 0; i < sizeof(gql_control) / sizeof(gql_control[0]); i++) {
        if (strcmp(t, gql_control[i]) == 0 && strlen(t) == json_string_length(type)) {
            out->kind = PROXY_WS_GQL_CONTROL;
            out->type = gql_control[i];
            json_decref(doc);
            return true;
        }
    }
    if (strcmp(t, "subscribe") != 0 && strcmp(t, "start") != 0) {
        json_decref(doc);
        return gql_invalid(out, "unknown message type");
    }
    if (!json_is_string(json_object_get(doc, "id"))) {
        json_decref(doc);
        return gql_invalid(out, "operation message without a string id");
    }
    if (!json_is_object(json_object_get(doc, "payload"))) {
        json_decref(doc);
        return gql_invalid(out, "operation message without a payload object");
    }
    out->type = strcmp(t, "subscribe") == 0 ? "subscribe" : "start";
    if (strlen(t) != json_string_length(type)) {
        json_decref(doc);
        return gql_invalid(out, "unknown message type");
    }
    ok = gql_operation(json_object_get(doc, "payload"), out);
    json_decref(doc);
    return ok;
}
