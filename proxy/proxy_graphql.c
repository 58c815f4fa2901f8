/* SPDX-License-Identifier: Apache-2.0 */
/* proxy_graphql.c - GraphQL over HTTP on inspected routes
 *
 * An enforced graphql endpoint decides a request by the operations it would
 * run (docs/semantics.md#graphql). When a decision asks for them (reason
 * graphql_no_operation), this file reads them: from the target of a GET,
 * or from the POST body, which it waits for while the connection stays in
 * the HEAD state and the bytes stay in the client's input buffer. The body
 * is read with model_gql_http_read() and left where it is: when every
 * operation is allowed, the relay forwards it unchanged. A body over the
 * endpoint's graphql_max_body_bytes, a chunked body, a request the reader
 * refuses and a client that leaves mid-body are refused with the L7 deny
 * (403 policy_denied) and one decision line (docs/proxy.md#graphql).
 */
#include "config.h"

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "proxy/proxy_int.h"

struct proxy_gql {
    bool waiting;               /* the POST body is not complete yet */
    bool read;                  /* 'ops' holds the request's operations */
    size_t need;                /* body bytes (Content-Length) */
    char ctype[128];            /* Content-Type value, NUL-terminated ("" when absent) */
    struct proxy_verdict first; /* the decision that asked for the operations */
    void (*resume)(struct proxy_conn *c);
    struct model_gql_ops ops;
};

void proxy_graphql_free(struct proxy_gql *g)
{
    if (g == NULL) {
        return;
    }
    model_gql_ops_clear(&g->ops);
    free(g);
}

const struct model_gql_ops *proxy_graphql_ops(const struct proxy_conn *c)
{
    return c->cur.gql != NULL && c->cur.gql->read ? &c->cur.gql->ops : NULL;
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
    snprintf(v.detail, sizeof(v.detail), "GraphQL request refused: %s", why);
    snprintf(detail, sizeof(detail), "%s %s:%u%s denied by L7 policy: %s", c->cur.method, c->host,
             (unsigned)c->port, proxy_conn_cur_path(c, path, sizeof(path)), v.detail);
    proxy_conn_outcome(c, tunnel ? PROXY_OUT_TUNNEL_L7_DENIED : PROXY_OUT_FORWARD_L7_DENIED, &v,
                       tunnel ? v.detail : detail, NULL);
}

/* The Content-Type field of the current request into g->ctype; true when
 * the client waits for "100 Continue" before it sends the body. */
static bool read_fields(struct proxy_conn *c, struct proxy_gql *g)
{
    const struct proxy_request *r = c->cur.req;
    bool expect = false;

    g->ctype[0] = '\0';
    for (size_t i = 0; i < r->nhdr; i++) {
        const struct proxy_header *f = &r->hdr[i];
        const char *name = c->cur.head + f->name.off;
        const char *val = c->cur.head + f->value.off;
        if (proxy_http_name_is(name, f->name.len, "content-type") && g->ctype[0] == '\0') {
            size_t n = f->value.len < sizeof(g->ctype) - 1 ? f->value.len : sizeof(g->ctype) - 1;
            memcpy(g->ctype, val, n);
            g->ctype[n] = '\0';
        } else if (proxy_http_name_is(name, f->name.len, "expect") && f->value.len == 12 &&
                   strncasecmp(val, "100-continue", 12) == 0) {
            expect = true;
        }
    }
    return expect;
}

/* Read the operations from the target and the body ('body_len' bytes at
 * the start of the client's input) and go on with the decision. */
static void read_ops(struct proxy_conn *c)
{
    struct proxy_gql *g = c->cur.gql;
    struct evbuffer *in = bufferevent_get_input(c->c);
    char err[256];
    const char *body = "";

    if (g->need > 0) {
        body = (const char *)evbuffer_pullup(in, (ssize_t)g->need);
        if (body == NULL) {
            refuse(c, "out of memory");
            return;
        }
    }
    struct model_gql_http h = {
        c->cur.method, c->cur.target, c->cur.target_len,    g->ctype[0] != '\0' ? g->ctype : NULL,
        body,          g->need,       g->first.gql_max_body};
    if (!pv_ok(model_gql_http_read(&h, &g->ops, err, sizeof(err)))) {
        refuse(c, err);
        return;
    }
    g->waiting = false;
    g->read = true;
    if (c->ev_hdr != NULL) {
        event_del(c->ev_hdr);
    }
    g->resume(c);
}

bool proxy_graphql_hold(struct proxy_conn *c, struct proxy_verdict *v,
                        void (*resume)(struct proxy_conn *c))
{
    const struct proxy_request *r = c->cur.req;
    struct proxy_gql *g;
    char why[160];

    if (v->allow || v->grant || v->reason != MODEL_REASON_GQL_NO_OPERATION || c->cur.gql != NULL) {
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
    bool expect = read_fields(c, g);
    if (r->framing == PROXY_BODY_CHUNKED) {
        refuse(c, "a GraphQL request body must be sent with Content-Length, not chunked");
        return true;
    }
    if (r->framing == PROXY_BODY_LENGTH && r->content_length > v->gql_max_body) {
        snprintf(why, sizeof(why), "body of %llu bytes exceeds graphql_max_body_bytes (%zu)",
                 (unsigned long long)r->content_length, v->gql_max_body);
        refuse(c, why);
        return true;
    }
    g->need = r->framing == PROXY_BODY_LENGTH ? (size_t)r->content_length : 0;
    g->waiting = true;
    if (expect && g->need > 0 && evbuffer_get_length(bufferevent_get_input(c->c)) == 0) {
        /* the body is needed before any decision: ask for it (the
         * upstream's own interim answer is relayed later as usual) */
        evbuffer_add(bufferevent_get_output(c->c), "HTTP/1.1 100 Continue\r\n\r\n", 25);
    }
    if (c->ev_hdr != NULL && c->srv->cfg->header_timeout_ms > 0 &&
        evbuffer_get_length(bufferevent_get_input(c->c)) < g->need) {
        /* the body must arrive within the header timeout (408, logged) */
        struct timeval tv = {(time_t)(c->srv->cfg->header_timeout_ms / 1000),
                             (suseconds_t)(c->srv->cfg->header_timeout_ms % 1000) * 1000};
        evtimer_add(c->ev_hdr, &tv);
    }
    (void)proxy_graphql_pending(c);
    return true;
}

bool proxy_graphql_pending(struct proxy_conn *c)
{
    struct proxy_gql *g = c->cur.gql;

    if (g == NULL || !g->waiting) {
        return false;
    }
    if (evbuffer_get_length(bufferevent_get_input(c->c)) >= g->need) {
        read_ops(c);
    } else if (c->c_eof) {
        refuse(c, "the client closed before the end of the body");
    }
    return true;
}
