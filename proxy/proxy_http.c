/* SPDX-License-Identifier: Apache-2.0 */
/* proxy_http.c - strict HTTP/1.x request-head parser and validator
 *
 * Every byte a client sends before the proxy decides anything passes through
 * proxy_http_parse(): the request line must be exactly METHOD SP target SP
 * HTTP/1.0|HTTP/1.1, every line ends in CRLF, header names are RFC 9110
 * tokens followed directly by ':', values hold no control bytes, the whole
 * head is valid UTF-8, and body framing is unambiguous (no CL with TE, no
 * differing CLs, TE exactly "chunked"). These are the reference's checks
 * (docs/proxy.md); anything else is a 400 before policy evaluation.
 *
 * The parser is pure: no allocation, no I/O, results are offsets into the
 * caller's buffer. Body bytes are framed later by libhttp-parser, which the
 * connection code feeds with the already validated head.
 */
#include "config.h"

#include <string.h>
#include <strings.h>

#include "common/pv_text.h"
#include "proxy/proxy_int.h"

/* ---------------------------------------------------------------------------
 * Character classes
 * ------------------------------------------------------------------------- */

static bool is_tchar(unsigned char c)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
        return true;
    }
    return c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

static bool is_token(const char *s, size_t len)
{
    if (len == 0) {
        return false;
    }
    for (size_t i = 0; i < len; i++) {
        if (!is_tchar((unsigned char)s[i])) {
            return false;
        }
    }
    return true;
}

static unsigned char lower(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') ? (unsigned char)(c + 32) : c;
}

bool proxy_http_name_is(const char *name, size_t len, const char *lit)
{
    size_t n = strlen(lit);

    if (len != n) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (lower((unsigned char)name[i]) != (unsigned char)lit[i]) {
            return false;
        }
    }
    return true;
}

/* ---------------------------------------------------------------------------
 * Head boundary
 * ------------------------------------------------------------------------- */

enum proxy_head_status proxy_http_head_end(const char *buf, size_t len, size_t *head_len)
{
    size_t lim = len < PROXY_MAX_HEAD ? len : PROXY_MAX_HEAD;
    const char *p = buf;
    const char *end = buf + lim;

    while (p + 4 <= end) {
        const char *cr = memchr(p, '\r', (size_t)(end - p));

        if (cr == NULL || cr + 4 > end) {
            break;
        }
        if (cr[1] == '\n' && cr[2] == '\r' && cr[3] == '\n') {
            *head_len = (size_t)(cr + 4 - buf);
            return PROXY_HEAD_OK;
        }
        p = cr + 1;
    }
    return len >= PROXY_MAX_HEAD ? PROXY_HEAD_TOOBIG : PROXY_HEAD_INCOMPLETE;
}

/* ---------------------------------------------------------------------------
 * Head parser
 * ------------------------------------------------------------------------- */

struct cursor {
    const char *buf;
    size_t len;
    size_t pos;
};

/* The next line, without its CRLF. A lone CR or LF anywhere is an error. */
static bool next_line(struct cursor *c, size_t *start, size_t *llen)
{
    size_t i = c->pos;

    while (i < c->len) {
        char ch = c->buf[i];

        if (ch == '\n') {
            return false; /* bare LF */
        }
        if (ch == '\r') {
            if (i + 1 >= c->len || c->buf[i + 1] != '\n') {
                return false; /* bare CR */
            }
            *start = c->pos;
            *llen = i - c->pos;
            c->pos = i + 2;
            return true;
        }
        i++;
    }
    return false;
}

static struct proxy_span span(size_t off, size_t len)
{
    struct proxy_span s = {(uint32_t)off, (uint32_t)len};
    return s;
}

static enum proxy_head_status bad(const char **why, const char *msg)
{
    *why = msg;
    return PROXY_HEAD_BAD;
}

static enum proxy_head_status parse_request_line(const char *buf, size_t off, size_t len,
                                                 struct proxy_request *req, const char **why)
{
    const char *l = buf + off;
    const char *sp1 = memchr(l, ' ', len);
    const char *sp2;
    size_t tlen;
    size_t vlen;

    if (sp1 == NULL) {
        return bad(why, "malformed request line");
    }
    if (!is_token(l, (size_t)(sp1 - l))) {
        return bad(why, "method is not a token");
    }
    sp2 = memchr(sp1 + 1, ' ', len - (size_t)(sp1 + 1 - l));
    if (sp2 == NULL) {
        return bad(why, "malformed request line");
    }
    tlen = (size_t)(sp2 - (sp1 + 1));
    if (tlen == 0) {
        return bad(why, "empty request-target");
    }
    for (size_t i = 0; i < tlen; i++) {
        unsigned char c = (unsigned char)sp1[1 + i];
        if (c <= 0x20 || c == 0x7F) {
            return bad(why, "invalid byte in request-target");
        }
    }
    vlen = len - (size_t)(sp2 + 1 - l);
    if (vlen != 8 || memcmp(sp2 + 1, "HTTP/1.", 7) != 0 || (sp2[8] != '0' && sp2[8] != '1')) {
        return bad(why, "unsupported HTTP version");
    }
    req->method = span(off, (size_t)(sp1 - l));
    req->target = span(off + (size_t)(sp1 + 1 - l), tlen);
    req->version_minor = (uint8_t)(sp2[8] - '0');
    return PROXY_HEAD_OK;
}

/* Split one field line into a trimmed name/value pair. */
static enum proxy_head_status parse_field(const char *buf, size_t off, size_t len,
                                          struct proxy_header *h, const char **why)
{
    const char *l = buf + off;
    const char *colon;
    size_t vs;
    size_t ve;

    if (l[0] == ' ' || l[0] == '\t') {
        return bad(why, "obsolete line folding");
    }
    colon = memchr(l, ':', len);
    if (colon == NULL) {
        return bad(why, "header field without ':'");
    }
    if (!is_token(l, (size_t)(colon - l))) {
        return bad(why, "invalid header field name");
    }
    vs = (size_t)(colon + 1 - l);
    ve = len;
    while (vs < ve && (l[vs] == ' ' || l[vs] == '\t')) {
        vs++;
    }
    while (ve > vs && (l[ve - 1] == ' ' || l[ve - 1] == '\t')) {
        ve--;
    }
    for (size_t i = vs; i < ve; i++) {
        unsigned char c = (unsigned char)l[i];
        if (c != '\t' && (c < 0x20 || c == 0x7F)) {
            return bad(why, "invalid byte in header field value");
        }
    }
    h->name = span(off, (size_t)(colon - l));
    h->value = span(off + vs, ve - vs);
    h->hop = false;
    return PROXY_HEAD_OK;
}

/* Calls 'fn' on each comma-separated element (trimmed, empty ones skipped). */
static bool for_each_element(const char *v, size_t len,
                             bool (*fn)(const char *e, size_t elen, void *arg), void *arg)
{
    size_t i = 0;

    while (i <= len) {
        size_t j = i;
        size_t s;
        size_t e;

        while (j < len && v[j] != ',') {
            j++;
        }
        s = i;
        e = j;
        while (s < e && (v[s] == ' ' || v[s] == '\t')) {
            s++;
        }
        while (e > s && (v[e - 1] == ' ' || v[e - 1] == '\t')) {
            e--;
        }
        if (e > s && !fn(v + s, e - s, arg)) {
            return false;
        }
        i = j + 1;
    }
    return true;
}

struct conn_scan {
    struct proxy_request *req;
    const char *why;
};

static bool connection_token(const char *e, size_t elen, void *arg)
{
    struct conn_scan *cs = arg;

    if (!is_token(e, elen)) {
        cs->why = "Connection option is not a token";
        return false;
    }
    if (proxy_http_name_is(e, elen, "host") || proxy_http_name_is(e, elen, "content-length") ||
        proxy_http_name_is(e, elen, "transfer-encoding")) {
        cs->why = "Connection nominates a framing or routing field";
        return false;
    }
    if (proxy_http_name_is(e, elen, "close")) {
        cs->req->conn_close = true;
    } else if (proxy_http_name_is(e, elen, "keep-alive")) {
        cs->req->conn_keep_alive = true;
    }
    return true;
}

struct te_scan {
    unsigned count;
    bool chunked;
};

static bool te_coding(const char *e, size_t elen, void *arg)
{
    struct te_scan *ts = arg;

    ts->count++;
    ts->chunked = proxy_http_name_is(e, elen, "chunked");
    return true;
}

struct nominate {
    const char *buf;
    struct proxy_request *req;
};

static bool nominate_token(const char *e, size_t elen, void *arg)
{
    struct nominate *nm = arg;

    for (size_t i = 0; i < nm->req->nhdr; i++) {
        struct proxy_header *h = &nm->req->hdr[i];
        if (h->name.len == elen && strncasecmp(nm->buf + h->name.off, e, elen) == 0) {
            h->hop = true;
        }
    }
    return true;
}

static const char *const hop_names[] = {
    "connection", "proxy-connection", "keep-alive", "proxy-authorization", "proxy-authenticate",
    "te",         "upgrade",
};

/* Framing and routing fields: Content-Length, Transfer-Encoding, Host. */
static enum proxy_head_status check_fields(const char *buf, struct proxy_request *req,
                                           const char **why)
{
    bool have_cl = false;
    struct te_scan te = {0, false};
    bool have_te = false;

    req->host = -1;
    for (size_t i = 0; i < req->nhdr; i++) {
        struct proxy_header *h = &req->hdr[i];
        const char *n = buf + h->name.off;
        const char *v = buf + h->value.off;

        if (proxy_http_name_is(n, h->name.len, "content-length")) {
            uint64_t cl;
            if (!pv_ok(pv_parse_u64(v, h->value.len, UINT64_C(1) << 62, &cl))) {
                return bad(why, "invalid Content-Length");
            }
            if (have_cl && cl != req->content_length) {
                return bad(why, "conflicting Content-Length fields");
            }
            have_cl = true;
            req->content_length = cl;
        } else if (proxy_http_name_is(n, h->name.len, "transfer-encoding")) {
            have_te = true;
            if (h->value.len == 0) {
                te.count++;
                te.chunked = false;
            }
            (void)for_each_element(v, h->value.len, te_coding, &te);
        } else if (proxy_http_name_is(n, h->name.len, "host")) {
            if (req->host >= 0) {
                return bad(why, "duplicate Host field");
            }
            req->host = (int)i;
        } else if (proxy_http_name_is(n, h->name.len, "connection")) {
            struct conn_scan cs = {req, NULL};
            if (!for_each_element(v, h->value.len, connection_token, &cs)) {
                return bad(why, cs.why);
            }
        } else if (proxy_http_name_is(n, h->name.len, "upgrade")) {
            req->upgrade = true;
        }
        for (size_t k = 0; k < PV_ARRAY_LEN(hop_names); k++) {
            if (proxy_http_name_is(n, h->name.len, hop_names[k])) {
                h->hop = true;
            }
        }
    }
    if (have_te && have_cl) {
        return bad(why, "both Content-Length and Transfer-Encoding");
    }
    if (have_te && req->version_minor == 0) {
        /* RFC 9112 §6.1: an HTTP/1.0 message with Transfer-Encoding has faulty framing */
        return bad(why, "Transfer-Encoding in an HTTP/1.0 request");
    }
    if (have_te && (te.count != 1 || !te.chunked)) {
        return bad(why, "Transfer-Encoding must be exactly chunked");
    }
    req->framing = have_te ? PROXY_BODY_CHUNKED : have_cl ? PROXY_BODY_LENGTH : PROXY_BODY_NONE;
    for (size_t i = 0; i < req->nhdr; i++) {
        const struct proxy_header *h = &req->hdr[i];
        if (proxy_http_name_is(buf + h->name.off, h->name.len, "connection")) {
            struct nominate nm = {buf, req};
            (void)for_each_element(buf + h->value.off, h->value.len, nominate_token, &nm);
        }
    }
    return PROXY_HEAD_OK;
}

enum proxy_head_status proxy_http_parse(const char *buf, size_t len, struct proxy_request *req,
                                        const char **why)
{
    struct cursor c = {buf, len, 0};
    size_t off;
    size_t llen;
    enum proxy_head_status st;

    memset(req, 0, sizeof(*req));
    req->host = -1;
    *why = "";
    if (len > PROXY_MAX_HEAD) {
        *why = "request head too large";
        return PROXY_HEAD_TOOBIG;
    }
    if (len < 4 || memcmp(buf + len - 4, "\r\n\r\n", 4) != 0) {
        return bad(why, "incomplete request head");
    }
    if (!pv_utf8_valid((const unsigned char *)buf, len)) {
        return bad(why, "request head is not valid UTF-8");
    }
    if (!next_line(&c, &off, &llen) || llen == 0) {
        return bad(why, "malformed request line");
    }
    st = parse_request_line(buf, off, llen, req, why);
    if (st != PROXY_HEAD_OK) {
        return st;
    }
    for (;;) {
        if (!next_line(&c, &off, &llen)) {
            return bad(why, "bare CR or LF in request head");
        }
        if (llen == 0) {
            break;
        }
        if (req->nhdr == PROXY_MAX_HEADERS) {
            *why = "too many header fields";
            return PROXY_HEAD_TOOBIG;
        }
        st = parse_field(buf, off, llen, &req->hdr[req->nhdr], why);
        if (st != PROXY_HEAD_OK) {
            return st;
        }
        req->nhdr++;
    }
    if (c.pos != len) {
        return bad(why, "bytes after the request head");
    }
    return check_fields(buf, req, why);
}

/* ---------------------------------------------------------------------------
 * Response heads
 * ------------------------------------------------------------------------- */

struct resp_scan {
    struct proxy_response *r;
    bool cl;
    bool te;
    unsigned te_count;
    bool te_chunked;
};

enum proxy_head_status proxy_http_response_head(const char *buf, size_t len, size_t *head_len,
                                                struct proxy_response *r, const char **why)
{
    size_t end = 0;
    struct cursor c;
    size_t off;
    size_t llen;
    struct resp_scan rs;

    memset(r, 0, sizeof(*r));
    *why = "";
    /* the end of the head, refusing a bare CR or LF before it */
    for (size_t i = 0; i < len && end == 0; i++) {
        if (buf[i] == '\n' && (i == 0 || buf[i - 1] != '\r')) {
            return bad(why, "bare LF in response head");
        }
        if (buf[i] == '\r' && i + 1 < len && buf[i + 1] != '\n') {
            return bad(why, "bare CR in response head");
        }
        if (i >= 3 && memcmp(buf + i - 3, "\r\n\r\n", 4) == 0) {
            end = i + 1;
        }
    }
    if (end == 0) {
        if (len >= PROXY_MAX_RESP_HEAD) {
            *why = "response head too large";
            return PROXY_HEAD_TOOBIG;
        }
        return PROXY_HEAD_INCOMPLETE;
    }
    c.buf = buf;
    c.len = end;
    c.pos = 0;
    if (!next_line(&c, &off, &llen) || llen < 12 || memcmp(buf, "HTTP/1.", 7) != 0 ||
        (buf[7] != '0' && buf[7] != '1') || buf[8] != ' ' || buf[9] < '1' || buf[9] > '5' ||
        buf[10] < '0' || buf[10] > '9' || buf[11] < '0' || buf[11] > '9' ||
        (llen > 12 && buf[12] != ' ')) {
        return bad(why, "malformed status line");
    }
    for (size_t i = 13; i < llen; i++) {
        unsigned char ch = (unsigned char)buf[i];
        if (ch != '\t' && (ch < 0x20 || ch == 0x7F)) {
            return bad(why, "control byte in reason phrase");
        }
    }
    r->status = (unsigned)((buf[9] - '0') * 100 + (buf[10] - '0') * 10 + (buf[11] - '0'));
    memset(&rs, 0, sizeof(rs));
    rs.r = r;
    for (;;) {
        struct proxy_header h;
        enum proxy_head_status st;
        const char *n;
        const char *v;

        if (!next_line(&c, &off, &llen)) {
            return bad(why, "bare CR or LF in response head");
        }
        if (llen == 0) {
            break;
        }
        st = parse_field(buf, off, llen, &h, why);
        if (st != PROXY_HEAD_OK) {
            return st;
        }
        n = buf + h.name.off;
        v = buf + h.value.off;
        if (proxy_http_name_is(n, h.name.len, "content-length")) {
            uint64_t cl;
            if (!pv_ok(pv_parse_u64(v, h.value.len, UINT64_C(1) << 62, &cl)) ||
                (rs.cl && cl != r->content_length)) {
                return bad(why, "invalid or conflicting Content-Length in response");
            }
            rs.cl = true;
            r->content_length = cl;
        } else if (proxy_http_name_is(n, h.name.len, "content-type")) {
            static const char sse[] = "text/event-stream";
            size_t k = sizeof(sse) - 1;
            /* the media type, then the end, a parameter or white space */
            r->event_stream = h.value.len >= k && strncasecmp(v, sse, k) == 0 &&
                              (h.value.len == k || v[k] == ';' || v[k] == ' ' || v[k] == '\t');
        } else if (proxy_http_name_is(n, h.name.len, "transfer-encoding")) {
            struct te_scan te = {0, false};
            rs.te = true;
            if (h.value.len == 0) {
                te.count++;
            }
            (void)for_each_element(v, h.value.len, te_coding, &te);
            rs.te_count += te.count;
            rs.te_chunked = te.chunked;
        }
    }
    if (rs.te && (rs.cl || rs.te_count != 1 || !rs.te_chunked)) {
        return bad(why, "response Transfer-Encoding must be exactly chunked, without "
                        "Content-Length");
    }
    r->framing = rs.te ? PROXY_BODY_CHUNKED : rs.cl ? PROXY_BODY_LENGTH : PROXY_BODY_NONE;
    *head_len = end;
    return PROXY_HEAD_OK;
}

static bool span_ok(struct proxy_span s, size_t len)
{
    return s.off <= len && s.len <= len - s.off;
}

bool proxy_request_validate(const struct proxy_request *req, const char *buf, size_t len)
{
    if (req == NULL || buf == NULL || len > PROXY_MAX_HEAD || req->nhdr > PROXY_MAX_HEADERS ||
        !span_ok(req->method, len) || !span_ok(req->target, len) ||
        !is_token(buf + req->method.off, req->method.len) || req->target.len == 0 ||
        req->version_minor > 1 || req->host >= (int)req->nhdr || req->host < -1) {
        return false;
    }
    for (size_t i = 0; i < req->target.len; i++) {
        unsigned char c = (unsigned char)buf[req->target.off + i];
        if (c <= 0x20 || c == 0x7F) {
            return false;
        }
    }
    for (size_t i = 0; i < req->nhdr; i++) {
        const struct proxy_header *h = &req->hdr[i];
        if (!span_ok(h->name, len) || !span_ok(h->value, len) ||
            !is_token(buf + h->name.off, h->name.len)) {
            return false;
        }
        for (size_t k = 0; k < h->value.len; k++) {
            unsigned char c = (unsigned char)buf[h->value.off + k];
            if (c == '\r' || c == '\n' || c == 0 || c == 0x7F) {
                return false;
            }
        }
    }
    if (req->host >= 0 && !proxy_http_name_is(buf + req->hdr[req->host].name.off,
                                              req->hdr[req->host].name.len, "host")) {
        return false;
    }
    return req->framing == PROXY_BODY_LENGTH || req->content_length == 0;
}

/* ---------------------------------------------------------------------------
 * Targets and authorities
 * ------------------------------------------------------------------------- */

static pv_result parse_port(const char *s, size_t len, uint16_t *port)
{
    uint64_t v;

    PV_GUARD(pv_parse_u64(s, len, 65535, &v));
    PV_ENSURE(v >= 1, PV_ERR_NUMBER);
    *port = (uint16_t)v;
    return PV_RESULT_OK;
}

pv_result proxy_http_parse_authority(const char *t, size_t len, bool port_optional,
                                     struct proxy_span *host, bool *bracketed, uint16_t *port)
{
    size_t hend;
    size_t pstart;

    *bracketed = false;
    *port = 0;
    PV_ENSURE(len > 0, PV_ERR_PARSE);
    if (t[0] == '[') {
        const char *rb = memchr(t, ']', len);
        PV_ENSURE(rb != NULL && rb > t + 1, PV_ERR_PARSE);
        *host = span(1, (size_t)(rb - t) - 1);
        *bracketed = true;
        hend = (size_t)(rb - t) + 1;
        if (hend == len) {
            PV_ENSURE(port_optional, PV_ERR_PARSE);
            return PV_RESULT_OK;
        }
        PV_ENSURE(t[hend] == ':', PV_ERR_PARSE);
        pstart = hend + 1;
    } else {
        const char *colon = memchr(t, ':', len);
        if (colon == NULL) {
            PV_ENSURE(port_optional, PV_ERR_PARSE);
            *host = span(0, len);
            return PV_RESULT_OK;
        }
        PV_ENSURE(colon > t, PV_ERR_PARSE);
        /* an unbracketed IPv6 literal is ambiguous: refuse it */
        PV_ENSURE(memchr(colon + 1, ':', len - (size_t)(colon + 1 - t)) == NULL, PV_ERR_PARSE);
        *host = span(0, (size_t)(colon - t));
        pstart = (size_t)(colon - t) + 1;
    }
    if (pstart == len && port_optional) {
        return PV_RESULT_OK; /* "host:" means the default port */
    }
    return parse_port(t + pstart, len - pstart, port);
}

pv_result proxy_http_parse_uri(const char *t, size_t len, struct proxy_uri *u)
{
    size_t i = 0;
    size_t astart;
    size_t aend;
    struct proxy_span h;

    memset(u, 0, sizeof(*u));
    PV_ENSURE(memchr(t, '#', len) == NULL, PV_ERR_PARSE);
    while (i < len && ((t[i] >= 'a' && t[i] <= 'z') || (t[i] >= 'A' && t[i] <= 'Z') ||
                       (i > 0 && ((t[i] >= '0' && t[i] <= '9') || t[i] == '+' || t[i] == '-' ||
                                  t[i] == '.')))) {
        i++;
    }
    PV_ENSURE(i > 0 && i + 3 <= len && memcmp(t + i, "://", 3) == 0, PV_ERR_PARSE);
    u->scheme = span(0, i);
    astart = i + 3;
    aend = astart;
    while (aend < len && t[aend] != '/' && t[aend] != '?') {
        aend++;
    }
    PV_ENSURE(memchr(t + astart, '@', aend - astart) == NULL, PV_ERR_PARSE);
    PV_GUARD(proxy_http_parse_authority(t + astart, aend - astart, true, &h, &u->host_bracketed,
                                        &u->port));
    PV_ENSURE(h.len > 0, PV_ERR_PARSE);
    u->host = span(astart + h.off, h.len);
    u->port_given = u->port != 0;
    if (!u->port_given) {
        u->port = (i == 5 && strncasecmp(t, "https", 5) == 0) ? 443 : 80;
    }
    u->rest = span(aend, len - aend);
    return PV_RESULT_OK;
}

/* ---------------------------------------------------------------------------
 * Tunnel sniffing
 * ------------------------------------------------------------------------- */

/* The longest method the sniffer waits for before deciding it is no HTTP. */
#define SNIFF_MAX_METHOD 20

static const char h2_preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

enum proxy_sniff proxy_http_sniff(const unsigned char *buf, size_t len)
{
    if (len == 0) {
        return PROXY_SNIFF_MORE;
    }
    if (buf[0] == 0x16) {
        if (len < 3) {
            return (len < 2 || buf[1] == 0x03) ? PROXY_SNIFF_MORE : PROXY_SNIFF_OTHER;
        }
        return (buf[1] == 0x03 && buf[2] <= 0x04) ? PROXY_SNIFF_TLS : PROXY_SNIFF_OTHER;
    }
    {
        size_t n = sizeof(h2_preface) - 1;
        size_t m = len < n ? len : n;
        if (memcmp(buf, h2_preface, m) == 0) {
            return len >= 8 ? PROXY_SNIFF_H2C : PROXY_SNIFF_MORE;
        }
    }
    /* any method token (methods are case-sensitive tokens, RFC 9110 §9.1:
     * "get" is a method the proxy decides like the forward path does), then
     * SP; the head validator judges the rest */
    for (size_t i = 0; i < len; i++) {
        if (buf[i] == ' ' && i > 0) {
            return PROXY_SNIFF_HTTP;
        }
        if (!is_tchar(buf[i]) || i >= SNIFF_MAX_METHOD) {
            return PROXY_SNIFF_OTHER;
        }
    }
    return PROXY_SNIFF_MORE;
}
