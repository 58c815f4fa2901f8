/* SPDX-License-Identifier: Apache-2.0 */
/* model_rpc_scan.c - the JSON-RPC reader's fast path: no tree
 *
 * Building a jansson tree costs several times a whole policy decision
 * (docs/proxy.md#rpc "Cost"), so a body is first read by this scanner: it
 * validates the JSON text exactly as jansson does with
 * JSON_REJECT_DUPLICATES (grammar, strict UTF-8, escapes and surrogate
 * pairs, no \u0000, integers that fit 64 bits, finite reals, nothing after
 * the text) and checks the messages by the rules of model_rpc.c, copying
 * only the few strings policy reads. What it would have to decode to
 * judge - an escape in a member name, in `jsonrpc`, `method`, a tool name
 * or a string id, an object of more than 32 members - it hands back
 * (SCAN_FALLBACK) to the tree reader in model_rpc.c, which decides those.
 * tests/fuzz/fuzz_rpc.c holds the two readers to the same answers.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/pv_text.h"
#include "model/model_rpc.h"
#include "model/model_rpc_int.h"

#define MAX_KEYS 32

enum jtype { J_NONE, J_OBJECT, J_ARRAY, J_STRING, J_INT, J_REAL, J_BOOL, J_NULL };

struct span {
    enum jtype t;
    const char *s; /* the value's text (a string: its contents, without quotes) */
    size_t n;
    bool esc; /* a string with a backslash */
    long long iv;
};

struct scan {
    const unsigned char *p, *end;
    int depth;
    int status; /* SCAN_OK until a refusal or a fallback */
    const char *why;
};

static int stop(struct scan *s, int status, const char *why)
{
    if (s->status == SCAN_OK) {
        s->status = status;
        s->why = why;
    }
    return 0;
}

static void ws(struct scan *s)
{
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r')) {
        s->p++;
    }
}

static bool hex4(const unsigned char *p, const unsigned char *end, unsigned *out)
{
    unsigned v = 0;

    if (end - p < 4) {
        return false;
    }
    for (int i = 0; i < 4; i++) {
        int h = pv_hexval(p[i]);
        if (h < 0) {
            return false;
        }
        v = v << 4 | (unsigned)h;
    }
    *out = v;
    return true;
}

/* One UTF-8 sequence at s->p (strict: no overlong form, no surrogate, at
 * most U+10FFFF); advances. */
static bool utf8(struct scan *s)
{
    const unsigned char *p = s->p;
    unsigned c = *p;
    size_t n;
    unsigned v;

    if (c < 0x80) {
        s->p++;
        return true;
    }
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
        v = c & 0x1Fu;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        v = c & 0x0Fu;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        v = c & 0x07u;
    } else {
        return false;
    }
    if ((size_t)(s->end - p) < n) {
        return false;
    }
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xC0u) != 0x80u) {
            return false;
        }
        v = v << 6 | (p[i] & 0x3Fu);
    }
    if ((n == 3 && v < 0x800) || (n == 4 && v < 0x10000) || v > 0x10FFFF ||
        (v >= 0xD800 && v <= 0xDFFF)) {
        return false;
    }
    s->p += n;
    return true;
}

static int string(struct scan *s, struct span *v)
{
    s->p++; /* the opening quote */
    v->t = J_STRING;
    v->s = (const char *)s->p;
    v->esc = false;
    while (s->p < s->end) {
        unsigned char c = *s->p;
        /* printable ASCII, the common case, without a call */
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
            s->p++;
            continue;
        }
        if (c == '"') {
            v->n = (size_t)((const char *)s->p - v->s);
            s->p++;
            return 1;
        }
        if (c < 0x20) {
            return stop(s, SCAN_REFUSED, "invalid JSON: control character in a string");
        }
        if (c == '\\') {
            unsigned u;
            v->esc = true;
            if (s->end - s->p < 2) {
                break;
            }
            c = s->p[1];
            if (c == 'u') {
                if (!hex4(s->p + 2, s->end, &u) || u == 0 || (u >= 0xDC00 && u <= 0xDFFF)) {
                    return stop(s, SCAN_REFUSED, "invalid JSON: invalid \\u escape");
                }
                s->p += 6;
                if (u >= 0xD800 && u <= 0xDBFF) {
                    unsigned lo;
                    if (s->end - s->p < 2 || s->p[0] != '\\' || s->p[1] != 'u' ||
                        !hex4(s->p + 2, s->end, &lo) || lo < 0xDC00 || lo > 0xDFFF) {
                        return stop(s, SCAN_REFUSED, "invalid JSON: lone surrogate");
                    }
                    s->p += 6;
                }
                continue;
            }
            if (strchr("\"\\/bfnrt", c) == NULL || c == '\0') {
                return stop(s, SCAN_REFUSED, "invalid JSON: invalid escape");
            }
            s->p += 2;
            continue;
        }
        if (!utf8(s)) {
            return stop(s, SCAN_REFUSED, "invalid JSON: invalid UTF-8");
        }
    }
    return stop(s, SCAN_REFUSED, "invalid JSON: unterminated string");
}

static int number(struct scan *s, struct span *v)
{
    const unsigned char *b = s->p;
    bool neg = false;
    bool real = false;
    unsigned long long acc = 0;
    bool over = false;

    if (*s->p == '-') {
        neg = true;
        s->p++;
    }
    if (s->p >= s->end || *s->p < '0' || *s->p > '9') {
        return stop(s, SCAN_REFUSED, "invalid JSON: invalid number");
    }
    if (*s->p == '0') {
        s->p++;
    } else {
        while (s->p < s->end && *s->p >= '0' && *s->p <= '9') {
            unsigned d = (unsigned)(*s->p - '0');
            over = over || acc > (ULLONG_MAX - d) / 10;
            acc = acc * 10 + d;
            s->p++;
        }
    }
    if (s->p < s->end && *s->p == '.') {
        real = true;
        s->p++;
        if (s->p >= s->end || *s->p < '0' || *s->p > '9') {
            return stop(s, SCAN_REFUSED, "invalid JSON: invalid number");
        }
        while (s->p < s->end && *s->p >= '0' && *s->p <= '9') {
            s->p++;
        }
    }
    if (s->p < s->end && (*s->p == 'e' || *s->p == 'E')) {
        real = true;
        s->p++;
        if (s->p < s->end && (*s->p == '+' || *s->p == '-')) {
            s->p++;
        }
        if (s->p >= s->end || *s->p < '0' || *s->p > '9') {
            return stop(s, SCAN_REFUSED, "invalid JSON: invalid number");
        }
        while (s->p < s->end && *s->p >= '0' && *s->p <= '9') {
            s->p++;
        }
    }
    v->s = (const char *)b;
    v->n = (size_t)(s->p - b);
    if (!real) {
        /* jansson refuses an integer outside long long */
        if (over || acc > (unsigned long long)LLONG_MAX + (neg ? 1u : 0u)) {
            return stop(s, SCAN_REFUSED, "invalid JSON: too big integer");
        }
        v->t = J_INT;
        v->iv = neg ? (acc == (unsigned long long)LLONG_MAX + 1u ? LLONG_MIN : -(long long)acc)
                    : (long long)acc;
        return 1;
    }
    /* jansson refuses a real that overflows a double */
    {
        char buf[64];
        double d;
        if (v->n >= sizeof(buf)) {
            return stop(s, SCAN_FALLBACK, NULL);
        }
        memcpy(buf, b, v->n);
        buf[v->n] = '\0';
        errno = 0;
        d = strtod(buf, NULL);
        if (errno == ERANGE && (d > 1.0 || d < -1.0)) {
            return stop(s, SCAN_REFUSED, "invalid JSON: real number overflow");
        }
    }
    v->t = J_REAL;
    return 1;
}

static int value(struct scan *s, struct span *v);

static int literal(struct scan *s, const char *word, enum jtype t, struct span *v)
{
    size_t n = strlen(word);

    if ((size_t)(s->end - s->p) < n || memcmp(s->p, word, n) != 0) {
        return stop(s, SCAN_REFUSED, "invalid JSON: invalid token");
    }
    v->t = t;
    v->s = (const char *)s->p;
    v->n = n;
    s->p += n;
    return 1;
}

/* One member-name list of an object, for the duplicate check. */
struct keys {
    struct span k[MAX_KEYS];
    size_t n;
};

static int key_add(struct scan *s, struct keys *ks, const struct span *k)
{
    if (k->esc || ks->n == MAX_KEYS) {
        return stop(s, SCAN_FALLBACK, NULL); /* decoding needed: the tree reader decides */
    }
    for (size_t i = 0; i < ks->n; i++) {
        if (ks->k[i].n == k->n && memcmp(ks->k[i].s, k->s, k->n) == 0) {
            return stop(s, SCAN_REFUSED, "invalid JSON: duplicate object key");
        }
    }
    ks->k[ks->n++] = *k;
    return 1;
}

/* An object; each member's name and value go to 'member' when given
 * (else they are only validated). */
static int object(struct scan *s, struct span *v,
                  int (*member)(struct scan *, void *, const struct span *, const struct span *),
                  void *arg)
{
    struct keys ks;

    ks.n = 0;
    v->t = J_OBJECT;
    v->s = (const char *)s->p;
    if (++s->depth > MODEL_RPC_MAX_DEPTH) {
        return stop(s, SCAN_REFUSED, "JSON nested deeper than 64 levels");
    }
    s->p++;
    ws(s);
    if (s->p < s->end && *s->p == '}') {
        s->p++;
        s->depth--;
        v->n = (size_t)((const char *)s->p - v->s);
        return 1;
    }
    for (;;) {
        struct span k;
        struct span x;
        ws(s);
        if (s->p >= s->end || *s->p != '"') {
            return stop(s, SCAN_REFUSED, "invalid JSON: string or '}' expected");
        }
        if (!string(s, &k) || !key_add(s, &ks, &k)) {
            return 0;
        }
        ws(s);
        if (s->p >= s->end || *s->p != ':') {
            return stop(s, SCAN_REFUSED, "invalid JSON: ':' expected");
        }
        s->p++;
        ws(s);
        memset(&x, 0, sizeof(x));
        if (!value(s, &x) || (member != NULL && !member(s, arg, &k, &x))) {
            return 0;
        }
        ws(s);
        if (s->p < s->end && *s->p == ',') {
            s->p++;
            continue;
        }
        if (s->p < s->end && *s->p == '}') {
            s->p++;
            s->depth--;
            v->n = (size_t)((const char *)s->p - v->s);
            return 1;
        }
        return stop(s, SCAN_REFUSED, "invalid JSON: ',' or '}' expected");
    }
}

/* An array; each element goes to 'element' when given. */
static int array(struct scan *s, struct span *v,
                 int (*element)(struct scan *, void *, size_t, const struct span *), void *arg)
{
    size_t i = 0;

    v->t = J_ARRAY;
    v->s = (const char *)s->p;
    if (++s->depth > MODEL_RPC_MAX_DEPTH) {
        return stop(s, SCAN_REFUSED, "JSON nested deeper than 64 levels");
    }
    s->p++;
    ws(s);
    if (s->p < s->end && *s->p == ']') {
        s->p++;
        s->depth--;
        v->n = 0;
        return 1;
    }
    for (;; i++) {
        struct span x;
        ws(s);
        memset(&x, 0, sizeof(x));
        if (!value(s, &x) || (element != NULL && !element(s, arg, i, &x))) {
            return 0;
        }
        ws(s);
        if (s->p < s->end && *s->p == ',') {
            s->p++;
            continue;
        }
        if (s->p < s->end && *s->p == ']') {
            s->p++;
            s->depth--;
            v->n = i + 1; /* an array's n: its length */
            return 1;
        }
        return stop(s, SCAN_REFUSED, "invalid JSON: ',' or ']' expected");
    }
}

static int value(struct scan *s, struct span *v)
{
    if (s->p >= s->end) {
        return stop(s, SCAN_REFUSED, "invalid JSON: unexpected end of input");
    }
    switch (*s->p) {
    case '{':
        return object(s, v, NULL, NULL);
    case '[':
        return array(s, v, NULL, NULL);
    case '"':
        return string(s, v);
    case 't':
        return literal(s, "true", J_BOOL, v);
    case 'f':
        return literal(s, "false", J_BOOL, v);
    case 'n':
        return literal(s, "null", J_NULL, v);
    default:
        return number(s, v);
    }
}

/* ---------------------------------------------------------------------------
 * Messages
 * ------------------------------------------------------------------------- */

struct msg {
    struct span jsonrpc, id, method, params, result, error;
    struct span name, arguments; /* params.name, params.arguments */
    struct span code, message;   /* error.code, error.message */
    bool has_jsonrpc, has_id, has_method, has_params, has_result, has_error;
    bool has_name, has_arguments, has_code, has_message;
    bool name_variant;   /* params has "Name", "NAME", ... beside or instead of "name" */
    const char *unknown; /* the first unknown member ("" none) */
    size_t unknown_len;
};

static int params_member(struct scan *s, void *arg, const struct span *k, const struct span *v)
{
    struct msg *m = arg;

    (void)s;
    if (k->n == 4 && memcmp(k->s, "name", 4) == 0) {
        m->name = *v;
        m->has_name = true;
    } else if (k->n == 4 && strncasecmp(k->s, "name", 4) == 0) {
        m->name_variant = true;
    } else if (k->n == 9 && memcmp(k->s, "arguments", 9) == 0) {
        m->arguments = *v;
        m->has_arguments = true;
    }
    return 1;
}

static int error_member(struct scan *s, void *arg, const struct span *k, const struct span *v)
{
    struct msg *m = arg;

    (void)s;
    if (k->n == 4 && memcmp(k->s, "code", 4) == 0) {
        m->code = *v;
        m->has_code = true;
    } else if (k->n == 7 && memcmp(k->s, "message", 7) == 0) {
        m->message = *v;
        m->has_message = true;
    }
    return 1;
}

static int msg_member(struct scan *s, void *arg, const struct span *k, const struct span *v)
{
    struct msg *m = arg;
    static const struct {
        const char *name;
        size_t off, has;
    } slots[] = {
        {"jsonrpc", offsetof(struct msg, jsonrpc), offsetof(struct msg, has_jsonrpc)},
        {"id", offsetof(struct msg, id), offsetof(struct msg, has_id)},
        {"method", offsetof(struct msg, method), offsetof(struct msg, has_method)},
        {"params", offsetof(struct msg, params), offsetof(struct msg, has_params)},
        {"result", offsetof(struct msg, result), offsetof(struct msg, has_result)},
        {"error", offsetof(struct msg, error), offsetof(struct msg, has_error)},
    };

    (void)s;
    for (size_t i = 0; i < sizeof(slots) / sizeof(slots[0]); i++) {
        if (strlen(slots[i].name) == k->n && memcmp(slots[i].name, k->s, k->n) == 0) {
            memcpy((char *)m + slots[i].off, v, sizeof(*v));
            *((bool *)((char *)m + slots[i].has)) = true;
            return 1;
        }
    }
    if (m->unknown == NULL) {
        m->unknown = k->s;
        m->unknown_len = k->n;
    }
    return 1;
}

/* The fast reader's state over one body. */
struct fast {
    struct scan sc;
    const struct model_rpc_scan_opts *o;
    struct model_rpc_calls *out;
    char *arena; /* decoded names (owned by out->storage) */
    size_t used, cap;
    char *err;
    size_t errlen;
    size_t item; /* 1-based batch position, 0 outside a batch */
};

static int refuse(struct fast *f, const char *what)
{
    if (f->errlen > 0) {
        if (f->item > 0) {
            snprintf(f->err, f->errlen, "batch item %zu: %s", f->item, what);
        } else {
            snprintf(f->err, f->errlen, "%s", what);
        }
    }
    return stop(&f->sc, SCAN_REFUSED, NULL);
}

/* Copy string 'v' (no escape) into the arena, NUL-terminated. */
static const char *keep(struct fast *f, const struct span *v)
{
    char *d = f->arena + f->used;

    if (f->used + v->n + 1 > f->cap) {
        return NULL; /* cannot happen: the arena is twice the body */
    }
    memcpy(d, v->s, v->n);
    d[v->n] = '\0';
    f->used += v->n + 1;
    return d;
}

static int take_id(struct fast *f, const struct span *id, struct model_rpc_call *c)
{
    if (id->t == J_INT) {
        snprintf(c->id, sizeof(c->id), "%lld", id->iv);
        return 1;
    }
    if (id->t != J_STRING) {
        return refuse(f, "'id' must be a string or an integer");
    }
    if (id->esc) {
        return stop(&f->sc, SCAN_FALLBACK, NULL);
    }
    if (id->n + 2 > MODEL_RPC_MAX_ID) {
        return refuse(f, "'id' longer than 128 bytes");
    }
    c->id[0] = '"';
    memcpy(c->id + 1, id->s, id->n);
    c->id[id->n + 1] = '"';
    c->id[id->n + 2] = '\0';
    return 1;
}

/* A message without `method`: a client's response (docs/semantics.md#rpc-read). */
static int response(struct fast *f, struct msg *m0, struct model_rpc_call *c)
{
    struct msg m = *m0;
    struct scan sub = f->sc;
    struct span tmp;

    if (!m.has_result && !m.has_error) {
        return refuse(f, "a message with neither method nor result/error");
    }
    if (m.has_result && m.has_error) {
        return refuse(f, "a response with both result and error");
    }
    if (m.has_params) {
        return refuse(f, "a response with params");
    }
    if (!m.has_id) {
        return refuse(f, "a response without an id");
    }
    if (m.has_error) {
        if (m.error.t != J_OBJECT) {
            return refuse(f, "a response error must be an object with an integer code and a "
                             "string message");
        }
        sub.p = (const unsigned char *)m.error.s;
        sub.end = sub.p + m.error.n;
        sub.depth = 0;
        if (!object(&sub, &tmp, error_member, &m)) {
            return stop(&f->sc, sub.status, sub.why);
        }
        if (!m.has_code || m.code.t != J_INT || !m.has_message || m.message.t != J_STRING) {
            return refuse(f, "a response error must be an object with an integer code and a "
                             "string message");
        }
    }
    if (!f->o->mcp) {
        return refuse(f, "JSON-RPC response frames are not permitted from client to server");
    }
    c->kind = MODEL_RPC_RESPONSE;
    c->method = MODEL_RPC_M_RESPONSE;
    return take_id(f, &m.id, c);
}

static int message(struct fast *f, const struct span *whole, struct model_rpc_call *c)
{
    struct msg m;
    struct scan sub;
    struct span tmp;
    char what[100];

    memset(c, 0, sizeof(*c));
    memset(&m, 0, sizeof(m));
    if (whole->t != J_OBJECT) {
        return refuse(f, "a message must be a JSON object");
    }
    /* read the object's members again, now into their slots (validated once) */
    sub = f->sc;
    sub.p = (const unsigned char *)whole->s;
    sub.end = (const unsigned char *)whole->s + whole->n;
    sub.depth = 0;
    if (!object(&sub, &tmp, msg_member, &m)) {
        return stop(&f->sc, sub.status, sub.why);
    }
    if (m.unknown != NULL) {
        snprintf(what, sizeof(what), "unknown member '%.*s'",
                 (int)(m.unknown_len > 64 ? 64 : m.unknown_len), m.unknown);
        return refuse(f, what);
    }
    if (!m.has_jsonrpc || m.jsonrpc.t != J_STRING || m.jsonrpc.esc || m.jsonrpc.n != 3 ||
        memcmp(m.jsonrpc.s, "2.0", 3) != 0) {
        if (m.has_jsonrpc && m.jsonrpc.t == J_STRING && m.jsonrpc.esc) {
            return stop(&f->sc, SCAN_FALLBACK, NULL);
        }
        return refuse(f, "'jsonrpc' must be the string \"2.0\"");
    }
    if (!m.has_method) {
        return response(f, &m, c);
    }
    if (m.has_result || m.has_error) {
        return refuse(f, "a message with both method and result/error");
    }
    if (m.method.t != J_STRING) {
        return refuse(f, "'method' must be a string");
    }
    if (m.method.esc) {
        return stop(&f->sc, SCAN_FALLBACK, NULL);
    }
    c->method = keep(f, &m.method);
    if (c->method == NULL || !model_rpc_name_ok(c->method, m.method.n)) {
        return refuse(f, "'method' is empty, longer than 256 bytes, or holds a control or format "
                         "character");
    }
    if (strncmp(c->method, "rpc.", 4) == 0) {
        return refuse(f, "method names beginning 'rpc.' are reserved");
    }
    if (m.has_params && m.params.t != J_OBJECT && (f->o->mcp || m.params.t != J_ARRAY)) {
        return refuse(f, f->o->mcp ? "'params' must be an object"
                                   : "'params' must be an object or an array");
    }
    c->kind = m.has_id ? MODEL_RPC_REQUEST : MODEL_RPC_NOTIFICATION;
    if (m.has_id && !take_id(f, &m.id, c)) {
        return 0;
    }
    if (!f->o->mcp || strcmp(c->method, "tools/call") != 0) {
        return 1;
    }
    if (m.has_params) {
        sub.p = (const unsigned char *)m.params.s;
        sub.end = sub.p + m.params.n;
        sub.depth = 0;
        if (!object(&sub, &tmp, params_member, &m)) {
            return stop(&f->sc, sub.status, sub.why);
        }
    }
    if (m.name_variant) {
        return refuse(
            f,
            "tools/call params holds a member named name in other letter case (a server that folds "
            "case would read its tool from it)");
    }
    if (!m.has_name || m.name.t != J_STRING) {
        return refuse(f, "tools/call without a string params.name");
    }
    if (m.name.esc) {
        return stop(&f->sc, SCAN_FALLBACK, NULL);
    }
    c->tool = keep(f, &m.name);
    if (c->tool == NULL || !model_rpc_name_ok(c->tool, m.name.n)) {
        return refuse(f, "tools/call params.name is empty, longer than 256 bytes, or holds a "
                         "control or format character");
    }
    if (f->o->strict && !model_rpc_tool_name_strict(c->tool, m.name.n)) {
        return refuse(f, "MCP tool name must match ^[A-Za-z0-9_.-]{1,128}$ when strict_tool_names "
                         "is enabled");
    }
    if (m.has_arguments && m.arguments.t != J_OBJECT) {
        return refuse(f, "tools/call params.arguments must be an object");
    }
    return 1;
}

static int element(struct scan *s, void *arg, size_t i, const struct span *v)
{
    struct fast *f = arg;

    (void)s;
    if (i >= MODEL_RPC_MAX_BATCH) {
        f->item = 0;
        return refuse(f, "a batch of more than 256 messages");
    }
    f->item = i + 1;
    if (!message(f, v, &f->out->calls[i])) {
        return 0;
    }
    f->out->ncalls = i + 1;
    return 1;
}

int model_rpc_scan_body(const char *body, size_t len, const struct model_rpc_scan_opts *o,
                        struct model_rpc_calls *out, char *err, size_t errlen)
{
    struct fast f;
    struct span top;
    size_t cap;

    memset(&f, 0, sizeof(f));
    memset(out, 0, sizeof(*out));
    f.sc.p = (const unsigned char *)body;
    f.sc.end = f.sc.p + len;
    f.o = o;
    f.out = out;
    f.err = err;
    f.errlen = errlen;
    ws(&f.sc);
    if (f.sc.p >= f.sc.end || (*f.sc.p != '{' && *f.sc.p != '[')) {
        return SCAN_FALLBACK; /* the tree reader words the refusal */
    }
    /* the whole text first: grammar, duplicates, depth, nothing after it */
    {
        struct scan whole = f.sc;
        struct span v;
        memset(&v, 0, sizeof(v));
        if (!value(&whole, &v)) {
            if (whole.status == SCAN_REFUSED && errlen > 0) {
                snprintf(err, errlen, "%s", whole.why != NULL ? whole.why : "invalid JSON");
            }
            return whole.status;
        }
        ws(&whole);
        if (whole.p != whole.end) {
            if (errlen > 0) {
                snprintf(err, errlen, "invalid JSON: end of file expected");
            }
            return SCAN_REFUSED;
        }
        top = v;
    }
    out->batch = top.t == J_ARRAY;
    cap = out->batch ? (top.n > MODEL_RPC_MAX_BATCH ? MODEL_RPC_MAX_BATCH : top.n) : 1;
    if (out->batch && top.n == 0) {
        snprintf(err, errlen, "empty batch");
        return SCAN_REFUSED;
    }
    if (out->batch && top.n > MODEL_RPC_MAX_BATCH) {
        snprintf(err, errlen, "a batch of more than 256 messages");
        return SCAN_REFUSED;
    }
    out->calls = pv_calloc(cap, sizeof(*out->calls));
    f.cap = 2 * len + 2;
    f.arena = pv_malloc(f.cap);
    if (out->calls == NULL || f.arena == NULL) {
        free(f.arena);
        model_rpc_calls_clear(out);
        return SCAN_NOMEM;
    }
    out->storage = f.arena;
    out->storage_free = free;
    if (out->batch) {
        struct span v;
        f.sc.depth = 0;
        if (!array(&f.sc, &v, element, &f)) {
            int st = f.sc.status;
            model_rpc_calls_clear(out);
            return st;
        }
    } else {
        if (!message(&f, &top, &out->calls[0])) {
            int st = f.sc.status;
            model_rpc_calls_clear(out);
            return st;
        }
        out->ncalls = 1;
    }
    return SCAN_OK;
}
