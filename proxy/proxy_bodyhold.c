/* SPDX-License-Identifier: Apache-2.0 */
/* proxy_bodyhold.c - request bodies held for reading: GraphQL and JSON-RPC
 *
 * An enforced graphql endpoint decides a request by the operations it would
 * run (docs/semantics.md#graphql). When a decision asks for them (reason
 * graphql_no_operation), this file reads them: from the target of a GET,
 * or from the POST body, which it waits for while the connection stays in
 * the HEAD state and the bytes stay in the client's input buffer. The body
 * is read with model_gql_http_read() and left where it is: when every
 * operation is allowed, the relay forwards it unchanged (a chunked body is
 * decoded here for reading and again by the relay). A body over the
 * endpoint's graphql_max_body_bytes, malformed chunked framing, a request
 * the reader refuses and a client that leaves mid-body are refused with the
 * L7 deny (403 policy_denied) and one decision line (docs/proxy.md#graphql).
 *
 * A json-rpc or mcp endpoint's request (reason rpc_no_call) is held and read
 * the same way, into JSON-RPC calls (model_rpc_read: the POST body; an MCP
 * receive-stream GET or session DELETE without one), each decided on its
 * own (docs/semantics.md#rpc); its refusals answer JSON-RPC errors
 * (proxy_rpc.c).
 */
#include "config.h"

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "proxy/proxy_int.h"

/* The data of the canonical chunked stream proxy_chunk_feed() emits
 * ("<hex>\r\n<data>\r\n" ... "0\r\n\r\n"), collected up to 'max' bytes. */
struct dechunk {
    char *buf;
    size_t len, max;
    uint64_t left; /* data bytes left in the chunk */
    int st;        /* 0 size line, 1 data, 2 CRLF after data, 3 end */
    bool over;     /* more than 'max' data bytes */
};

static void dechunk_emit(void *arg, const char *p, size_t n)
{
    struct dechunk *d = arg;

    for (size_t i = 0; i < n; i++) {
        char ch = p[i];
        switch (d->st) {
        case 0:
            if (ch == '\n') {
                d->st = d->left > 0 ? 1 : 3;
            } else if (ch != '\r') {
                int v = ch >= 'a' ? ch - 'a' + 10 : ch - '0';
                d->left = d->left * 16 + (uint64_t)v;
            }
            break;
        case 1: {
            size_t take = (uint64_t)(n - i) < d->left ? n - i : (size_t)d->left;
            if (!d->over && d->len + take <= d->max) {
                memcpy(d->buf + d->len, p + i, take);
                d->len += take;
            } else {
                d->over = true;
            }
            d->left -= take;
            i += take - 1;
            if (d->left == 0) {
                d->st = 2;
            }
            break;
        }
        case 2:
            if (ch == '\n') {
                d->st = 0;
            }
            break;
        default:
            break;
        }
    }
}

struct proxy_gql {
    bool rpc;                   /* JSON-RPC calls, not GraphQL operations */
    bool waiting;               /* the POST body is not complete yet */
    bool chunked;               /* the body is chunked */
    bool encoded;               /* a Content-Encoding other than identity */
    bool read;                  /* 'ops' holds the request's operations */
    size_t need;                /* body bytes (Content-Length) */
    size_t max;                 /* the endpoint's body bound */
    char ctype[128];            /* Content-Type value, NUL-terminated ("" when absent) */
    bool ctype_bad;             /* several Content-Type fields, or one longer than ctype */
    bool upgrade;               /* an Upgrade field */
    char accept[256];           /* Accept value ("" when absent; JSON-RPC reads it) */
    struct proxy_verdict first; /* the decision that asked for the operations */
    void (*resume)(struct proxy_conn *c);
    struct model_gql_ops ops;
    struct model_rpc_calls calls;
    struct proxy_rpc_result *res; /* one per call */
    /* a chunked body: decoded as it arrives, 'scanned' input bytes so far
     * (the bytes stay in the input for the relay) */
    struct proxy_chunk dec;
    struct dechunk data;
    size_t scanned;
};

void proxy_bodyhold_free(struct proxy_gql *g)
{
    if (g == NULL) {
        return;
    }
    model_gql_ops_clear(&g->ops);
    model_rpc_calls_clear(&g->calls);
    free(g->res);
    free(g->data.buf);
    free(g);
}

const struct model_gql_ops *proxy_bodyhold_gql_ops(const struct proxy_conn *c)
{
    return c->cur.gql != NULL && c->cur.gql->read && !c->cur.gql->rpc ? &c->cur.gql->ops : NULL;
}

const struct model_rpc_calls *proxy_rpc_calls(const struct proxy_conn *c)
{
    return c->cur.gql != NULL && c->cur.gql->read && c->cur.gql->rpc ? &c->cur.gql->calls : NULL;
}

struct proxy_rpc_result *proxy_rpc_results(const struct proxy_conn *c)
{
    return proxy_rpc_calls(c) != NULL ? c->cur.gql->res : NULL;
}

/* Refuse the request: the first decision's verdict with 'why' as detail. */
static void refuse(struct proxy_conn *c, const char *why)
{
    struct proxy_gql *g = c->cur.gql;
    struct proxy_verdict v = g->first;
    char path[CANON_MAX];
    char detail[CANON_MAX + 600];
    bool tunnel = c->mode != PROXY_MODE_FORWARD;

    g->waiting = false;
    v.allow = false;
    v.grant = false;
    v.audit = false;
    v.loopback_exception = false; /* a refusal is no exception's pass */
    snprintf(v.detail, sizeof(v.detail), "%s request refused: %s", g->rpc ? "JSON-RPC" : "GraphQL",
             why);
    snprintf(detail, sizeof(detail), "%s %s:%u%s denied by L7 policy: %s", c->cur.method, c->host,
             (unsigned)c->port, proxy_conn_cur_path(c, path, sizeof(path)), v.detail);
    proxy_conn_outcome(c, tunnel ? PROXY_OUT_TUNNEL_L7_DENIED : PROXY_OUT_FORWARD_L7_DENIED, &v,
                       tunnel ? v.detail : detail, NULL);
}

/* A GraphQL request an audit-mode unit allowed and the proxy cannot read
 * goes on undecided by operation: audit mode grants every request
 * (docs/semantics.md#audit), so the request is decided again without one
 * and forwarded. A JSON-RPC request that does not read is refused there too
 * (#rpc-batch). True when the request went on. */
static bool audit_pass(struct proxy_conn *c)
{
    struct proxy_gql *g = c->cur.gql;

    if (g->rpc || !(g->first.allow || g->first.grant)) {
        return false;
    }
    g->waiting = false;
    g->read = false;
    if (c->ev_hdr != NULL) {
        event_del(c->ev_hdr);
    }
    g->resume(c);
    return true;
}

/* The Content-Type field of the current request into g->ctype; true when
 * the client waits for "100 Continue" before it sends the body. */
static bool read_fields(struct proxy_conn *c, struct proxy_gql *g)
{
    const struct proxy_request *r = c->cur.req;
    bool expect = false;

    g->ctype[0] = '\0';
    g->accept[0] = '\0';
    for (size_t i = 0; i < r->nhdr; i++) {
        const struct proxy_header *f = &r->hdr[i];
        const char *name = c->cur.head + f->name.off;
        const char *val = c->cur.head + f->value.off;
        if (proxy_http_name_is(name, f->name.len, "content-type")) {
            /* one field, kept whole: of two, servers take the first or the
             * last, and a cut value could lose its charset */
            if (g->ctype[0] != '\0' || f->value.len >= sizeof(g->ctype) || f->value.len == 0) {
                g->ctype_bad = true;
            } else {
                memcpy(g->ctype, val, f->value.len);
                g->ctype[f->value.len] = '\0';
            }
        } else if (proxy_http_name_is(name, f->name.len, "upgrade")) {
            g->upgrade = true;
        } else if (proxy_http_name_is(name, f->name.len, "accept")) {
            /* several Accept fields are one comma-separated list */
            size_t have = strlen(g->accept);
            size_t n = f->value.len;
            if (have > 0 && have + 1 < sizeof(g->accept)) {
                g->accept[have++] = ',';
            }
            n = n < sizeof(g->accept) - 1 - have ? n : sizeof(g->accept) - 1 - have;
            memcpy(g->accept + have, val, n);
            g->accept[have + n] = '\0';
        } else if (proxy_http_name_is(name, f->name.len, "expect") && f->value.len == 12 &&
                   strncasecmp(val, "100-continue", 12) == 0) {
            expect = true;
        } else if (proxy_http_name_is(name, f->name.len, "content-encoding") &&
                   !(f->value.len == 8 && strncasecmp(val, "identity", 8) == 0)) {
            g->encoded = true;
        }
    }
    return expect;
}

/* Read the operations from the target and 'body' ('len' bytes) and go on
 * with the decision. The body stays in the client's input for the relay. */
/* The JSON-RPC calls of the request (its body is 'body', 'len' bytes). */
static bool read_calls(struct proxy_conn *c, const char *body, size_t len, char *err, size_t errlen)
{
    struct proxy_gql *g = c->cur.gql;
    struct model_rpc_http h;

    memset(&h, 0, sizeof(h));
    h.mcp = g->first.rpc_mcp;
    h.strict_tools = g->first.rpc_strict;
    h.method = c->cur.method;
    h.accept = g->accept[0] != '\0' ? g->accept : NULL;
    h.content_type = g->ctype[0] != '\0' ? g->ctype : NULL;
    h.upgrade = g->upgrade;
    h.has_body = g->chunked || g->need > 0;
    h.body = body;
    h.body_len = len;
    if (!pv_ok(model_rpc_read(&h, &g->calls, err, errlen))) {
        return false;
    }
    g->res = pv_calloc(g->calls.ncalls, sizeof(*g->res));
    if (g->res == NULL) {
        snprintf(err, errlen, "out of memory");
        return false;
    }
    return true;
}

static void read_ops(struct proxy_conn *c, const char *body, size_t len)
{
    struct proxy_gql *g = c->cur.gql;
    char err[256];
    struct model_gql_http h = {c->cur.method,
                               c->cur.target,
                               c->cur.target_len,
                               g->ctype[0] != '\0' ? g->ctype : NULL,
                               body,
                               len,
                               g->max};
    if (g->rpc ? !read_calls(c, body, len, err, sizeof(err))
               : !pv_ok(model_gql_http_read(&h, &g->ops, err, sizeof(err)))) {
        model_gql_ops_clear(&g->ops);
        if (!audit_pass(c)) {
            refuse(c, err);
        }
        return;
    }
    g->waiting = false;
    g->read = true;
    if (c->ev_hdr != NULL) {
        event_del(c->ev_hdr);
    }
    g->resume(c);
}

bool proxy_bodyhold_hold(struct proxy_conn *c, struct proxy_verdict *v,
                         void (*resume)(struct proxy_conn *c))
{
    const struct proxy_request *r = c->cur.req;
    struct proxy_gql *g;
    char why[160];

    bool asked =
        !v->allow && !v->grant &&
        (v->reason == MODEL_REASON_GQL_NO_OPERATION || v->reason == MODEL_REASON_RPC_NO_CALL);
    /* an audit-mode graphql (json-rpc, mcp) endpoint allows everything (a
     * JSON-RPC request it cannot read is still refused, #rpc-batch; a GraphQL
     * one goes on, audit_pass), and the audit line names the operations:
     * read them there too */
    bool audited = (v->gql_endpoint || v->rpc_endpoint) && (v->allow || v->grant) &&
                   v->route == MODEL_ROUTE_INSPECTED;

    if ((!asked && !audited) || c->cur.gql != NULL) {
        return false; /* not asked for, or asked again after reading: decided */
    }
    g = pv_calloc(1, sizeof(*g));
    if (g == NULL) {
        proxy_conn_outcome(c, PROXY_OUT_INTERNAL, NULL, "out of memory", NULL);
        return true;
    }
    c->cur.gql = g;
    g->first = *v;
    g->resume = resume;
    g->rpc = asked ? v->reason == MODEL_REASON_RPC_NO_CALL : v->rpc_endpoint;
    g->max = g->rpc ? v->rpc_max_body : v->gql_max_body;
    bool expect = read_fields(c, g);
    g->chunked = r->framing == PROXY_BODY_CHUNKED;
    if (g->ctype_bad) {
        /* the reader cannot know which value a server would use */
        if (!audit_pass(c)) {
            refuse(c, "Content-Type given twice, empty, or longer than 127 bytes");
        }
        return true;
    }
    if (g->encoded && r->framing != PROXY_BODY_NONE) {
        /* the server would decode it: the proxy reads only what it sees */
        if (!audit_pass(c)) {
            refuse(c, "a Content-Encoding other than identity is not read");
        }
        return true;
    }
    if (r->framing == PROXY_BODY_LENGTH && r->content_length > g->max) {
        if (audit_pass(c)) {
            return true;
        }
        snprintf(why, sizeof(why), "body of %llu bytes exceeds %s (%zu)",
                 (unsigned long long)r->content_length,
                 g->rpc ? "max_body_bytes" : "graphql_max_body_bytes", g->max);
        refuse(c, why);
        return true;
    }
    g->need = r->framing == PROXY_BODY_LENGTH ? (size_t)r->content_length : 0;
    g->waiting = true;
    if (expect && (g->need > 0 || g->chunked) &&
        evbuffer_get_length(bufferevent_get_input(c->c)) == 0) {
        /* the body is needed before any decision: ask for it (the
         * upstream's own interim answer is relayed later as usual) */
        evbuffer_add(bufferevent_get_output(c->c), "HTTP/1.1 100 Continue\r\n\r\n", 25);
    }
    if (c->ev_hdr != NULL && c->srv->cfg->header_timeout_ms > 0 &&
        (g->chunked || evbuffer_get_length(bufferevent_get_input(c->c)) < g->need)) {
        /* the body must arrive within the header timeout (408, logged) */
        struct timeval tv = {(time_t)(c->srv->cfg->header_timeout_ms / 1000),
                             (suseconds_t)(c->srv->cfg->header_timeout_ms % 1000) * 1000};
        evtimer_add(c->ev_hdr, &tv);
    }
    (void)proxy_bodyhold_pending(c);
    return true;
}

/* A chunked body: feed the decoder the input bytes that arrived since the
 * last call (each byte is decoded once, however the body is split), without
 * consuming them: the relay decodes them again as it forwards them. */
static void pending_chunked(struct proxy_conn *c, struct proxy_gql *g)
{
    struct evbuffer *in = bufferevent_get_input(c->c);
    size_t len = evbuffer_get_length(in);
    /* chunk framing costs at most a few bytes per data byte: a client
     * sending more raw bytes than this for a body within the bound is
     * refused rather than buffered */
    size_t raw_max = g->max * 8 + 4096;
    enum proxy_chunk_status st = PROXY_CHUNK_MORE;
    struct evbuffer_ptr at;
    char why[160];

    if (g->data.buf == NULL) {
        proxy_chunk_init(&g->dec);
        g->data.max = g->max;
        g->data.buf = pv_malloc(g->data.max + 1);
        if (g->data.buf == NULL) {
            refuse(c, "out of memory");
            return;
        }
    }
    if (len > raw_max) {
        len = raw_max;
    }
    while (g->scanned < len && st == PROXY_CHUNK_MORE) {
        struct evbuffer_iovec vec;
        size_t used = 0;
        if (evbuffer_ptr_set(in, &at, g->scanned, EVBUFFER_PTR_SET) != 0 ||
            evbuffer_peek(in, -1, &at, &vec, 1) < 1) {
            break;
        }
        size_t n = vec.iov_len < len - g->scanned ? vec.iov_len : len - g->scanned;
        st = proxy_chunk_feed(&g->dec, vec.iov_base, n, &used, dechunk_emit, &g->data);
        g->scanned += st == PROXY_CHUNK_MORE ? n : used;
    }
    if (st == PROXY_CHUNK_BAD) {
        snprintf(why, sizeof(why), "malformed chunked body: %s", g->dec.why);
        refuse(c, why);
    } else if (g->data.over) {
        snprintf(why, sizeof(why), "chunked body exceeds %s (%zu)",
                 g->rpc ? "max_body_bytes" : "graphql_max_body_bytes", g->max);
        refuse(c, why);
    } else if (st == PROXY_CHUNK_DONE) {
        read_ops(c, g->data.buf, g->data.len);
    } else if (g->scanned >= raw_max) {
        snprintf(why, sizeof(why), "chunked body framing exceeds %zu bytes", raw_max);
        refuse(c, why);
    } else if (c->c_eof) {
        refuse(c, "the client closed before the end of the body");
    }
}

bool proxy_bodyhold_pending(struct proxy_conn *c)
{
    struct proxy_gql *g = c->cur.gql;
    struct evbuffer *in;

    if (g == NULL || !g->waiting) {
        return false;
    }
    in = bufferevent_get_input(c->c);
    if (g->chunked) {
        pending_chunked(c, g);
    } else if (evbuffer_get_length(in) >= g->need) {
        const char *body = g->need > 0 ? (const char *)evbuffer_pullup(in, (ssize_t)g->need) : "";
        if (body == NULL) {
            refuse(c, "out of memory");
        } else {
            read_ops(c, body, g->need);
        }
    } else if (c->c_eof) {
        refuse(c, "the client closed before the end of the body");
    }
    return true;
}
