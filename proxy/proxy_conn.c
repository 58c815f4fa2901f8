/* SPDX-License-Identifier: Apache-2.0 */
/* proxy_conn.c - one client connection: lifecycle, callbacks and the one exit
 *
 * States (struct proxy_conn.state):
 *
 *   HEAD -> (forward request) decide -> RESOLVE -> CONNECT -> RELAY -> HEAD
 *   HEAD -> (CONNECT) decide -> RESOLVE -> CONNECT -> 200 -> TUNNEL (opaque)
 *                                                       \-> SNIFF -> HEAD (inspected)
 *   any  -> CLOSING (a last response is flushed, then the connection is freed)
 *
 * This file owns what every connection shares: accept (per-address cap),
 * the header timeout, the identity hand-over from the worker (proxy_idq.c),
 * request heads, the bufferevent callbacks, reload and drain hooks, and the
 * one exit every refused or failed outcome goes through
 * (proxy_conn_outcome: the decision line first, then the reply, as the
 * table of proxy_outcome.c prescribes). Request relay is proxy_relay.c,
 * CONNECT tunnels proxy_tunnel.c.
 *
 * A connection closed inside a callback is only marked dead and handed to
 * the server's reaper, so no code path touches freed memory.
 */
#include "config.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/dns.h>
#include <event2/event.h>
#include <event2/util.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "proxy/proxy_int.h"
#include "proxy/proxy_ws.h"

static void conn_linger(struct proxy_conn *c);
static void reply_json(struct proxy_conn *c, unsigned status, const char *error, const char *detail,
                       const char *reason, const struct proxy_missing *miss);
static void log_decision(struct proxy_conn *c, enum proxy_log_action action, const char *engine,
                         const char *method, const char *path, const char *policy,
                         const char *binary, const char *reason, const char *stage,
                         const struct proxy_verdict *v, const struct model_rpc_call *rpc,
                         bool withheld);
static void deny_l7(struct proxy_conn *c, const char *error, const struct proxy_verdict *v,
                    const char *detail);
static void kick_cb(evutil_socket_t fd, short what, void *arg);
static void process_head(struct proxy_conn *c);
static void header_timeout_cb(evutil_socket_t fd, short what, void *arg);
static void arm_header_timer(struct proxy_conn *c);
static bool client_half_closed(struct proxy_conn *c);
static void client_cap(struct proxy_conn *c);

/* ---------------------------------------------------------------------------
 * Lifetime
 * ------------------------------------------------------------------------- */

void proxy_conn_cur_clear(struct proxy_cur *cur)
{
    free(cur->head);
    free(cur->req);
    free(cur->method);
    free(cur->target);
    free(cur->out_target);
    proxy_cred_req_free(cur->cred);
    proxy_bodyhold_free(cur->gql);
    memset(cur, 0, sizeof(*cur));
}

void proxy_conn_drop_upstream(struct proxy_conn *c)
{
    if (c->u != NULL) {
        bufferevent_free(c->u);
        c->u = NULL;
    }
    if (c->ufd >= 0) {
        close(c->ufd);
        c->ufd = -1;
    }
    c->u_tls = false;
}

void proxy_conn_free(struct proxy_conn *c)
{
    struct proxy_server *srv;

    if (c == NULL) {
        return;
    }
    srv = c->srv;
    if (c->dnsreq != NULL) {
        struct evdns_getaddrinfo_request *r = c->dnsreq;
        c->dnsreq = NULL;
        evdns_getaddrinfo_cancel(r);
    }
    if (c->ev_kick != NULL) {
        event_free(c->ev_kick);
    }
    if (c->ev_io != NULL) {
        event_free(c->ev_io);
    }
    if (c->ev_hdr != NULL) {
        event_free(c->ev_hdr);
    }
    if (c->ev_gone != NULL) {
        event_free(c->ev_gone);
    }
    proxy_idq_cancel(c->idjob);
    proxy_splice_free(c->spl);
    if (c->c != NULL) {
        bufferevent_free(c->c);
    }
    if (c->cfd >= 0) {
        close(c->cfd);
    }
    proxy_conn_drop_upstream(c);
    if (c->early != NULL) {
        evbuffer_free(c->early);
    }
    proxy_conn_cur_clear(&c->cur);
    proxy_ws_conn_free(c->ws);
    proxy_identity_unref(c->id);
    proxy_policy_unref(c->pol);
    if (!c->dead) {
        /* still on the live list (shutdown path) */
        if (c->prev != NULL) {
            c->prev->next = c->next;
        } else if (srv->conns == c) {
            srv->conns = c->next;
        }
        if (c->next != NULL) {
            c->next->prev = c->prev;
        }
        srv->nconns--;
    }
    free(c);
}

/* Close now as far as the peers can tell; free later (reaper). */
void proxy_conn_kill(struct proxy_conn *c)
{
    struct proxy_server *srv = c->srv;

    if (c->dead) {
        return;
    }
    c->dead = true;
    if (c->c != NULL) {
        bufferevent_setcb(c->c, NULL, NULL, NULL, NULL);
        bufferevent_disable(c->c, EV_READ | EV_WRITE);
    }
    if (c->u != NULL) {
        bufferevent_setcb(c->u, NULL, NULL, NULL, NULL);
        bufferevent_disable(c->u, EV_READ | EV_WRITE);
    }
    if (c->ev_io != NULL) {
        event_del(c->ev_io);
    }
    if (c->ev_kick != NULL) {
        event_del(c->ev_kick);
    }
    if (c->ev_hdr != NULL) {
        event_del(c->ev_hdr);
    }
    if (c->ev_gone != NULL) {
        event_del(c->ev_gone);
    }
    proxy_idq_cancel(c->idjob);
    c->idjob = NULL;
    proxy_splice_free(c->spl); /* may be inside its 'done' callback: it ends there */
    c->spl = NULL;
    /* unlink from the live list, push on the graveyard */
    if (c->prev != NULL) {
        c->prev->next = c->next;
    } else {
        srv->conns = c->next;
    }
    if (c->next != NULL) {
        c->next->prev = c->prev;
    }
    srv->nconns--;
    c->prev = NULL;
    c->next = srv->graveyard;
    srv->graveyard = c;
    event_active(srv->ev_reap, EV_TIMEOUT, 0);
    if (srv->nconns == 0) {
        proxy_server_conn_gone(srv);
    }
}

bool proxy_conn_stale(const struct proxy_conn *c)
{
    return proxy_policy_generation(c->pol) != c->srv->generation;
}

/* ---------------------------------------------------------------------------
 * Replies
 * ------------------------------------------------------------------------- */

/* The response is out: shut our write side and discard what the client
 * still sends for a moment, so that the close does not turn into a reset
 * that destroys the response (lingering close): a client refused in the
 * middle of a large upload still reads its 403. Inside TLS the records are
 * read and dropped the same way; the TCP write side stays open there (the
 * TLS layer may still need to write), the close comes with the timeout or
 * the client's own close. */
static void conn_linger(struct proxy_conn *c)
{
    struct timeval tv = {1, 0};
    int fd = c->c != NULL ? (int)bufferevent_getfd(c->c) : -1;

    if (fd < 0 || !c->linger) {
        proxy_conn_kill(c);
        return;
    }
    proxy_conn_drop_upstream(c);
    if (!c->c_tls) {
        (void)shutdown(fd, SHUT_WR);
    }
    c->state = PROXY_ST_LINGER;
    evbuffer_drain(bufferevent_get_input(c->c), evbuffer_get_length(bufferevent_get_input(c->c)));
    bufferevent_disable(c->c, EV_WRITE);
    bufferevent_set_timeouts(c->c, &tv, NULL);
    bufferevent_enable(c->c, EV_READ);
}

/* Queue 'buf' to the client and close once it is flushed. */
void proxy_conn_reply_close(struct proxy_conn *c, const char *buf, size_t len)
{
    struct evbuffer *out;

    if (c->c == NULL) {
        proxy_conn_kill(c);
        return;
    }
    proxy_conn_drop_upstream(c);
    out = bufferevent_get_output(c->c);
    if (buf != NULL) {
        evbuffer_add(out, buf, len);
    }
    c->state = PROXY_ST_CLOSING;
    c->linger = true;
    bufferevent_disable(c->c, EV_READ);
    bufferevent_setwatermark(c->c, EV_WRITE, 0, 0);
    bufferevent_enable(c->c, EV_WRITE);
    if (evbuffer_get_length(out) == 0) {
        conn_linger(c);
    }
}

void proxy_conn_reply_bare(struct proxy_conn *c, unsigned status)
{
    const char *r = proxy_reply_bare(status);
    proxy_conn_reply_close(c, r, strlen(r));
}

static void reply_json(struct proxy_conn *c, unsigned status, const char *error, const char *detail,
                       const char *reason, const struct proxy_missing *miss)
{
    size_t len = 0;
    char *r = proxy_reply_json(status, error, detail, reason, miss, &len);

    if (r == NULL) {
        proxy_conn_reply_bare(c, 500);
        return;
    }
    proxy_conn_reply_close(c, r, len);
    free(r);
}

/* ---------------------------------------------------------------------------
 * Logging helpers
 * ------------------------------------------------------------------------- */

static void log_decision(struct proxy_conn *c, enum proxy_log_action action, const char *engine,
                         const char *method, const char *path, const char *policy,
                         const char *binary, const char *reason, const char *stage,
                         const struct proxy_verdict *v, const struct model_rpc_call *rpc,
                         bool withheld)
{
    struct proxy_log_event e;

    memset(&e, 0, sizeof(e));
    e.action = action;
    e.engine = engine;
    e.id = c->id;
    e.binary = binary;
    e.host = c->nhost[0] != '\0' ? c->nhost : c->host[0] != '\0' ? c->host : "-";
    e.port = c->port;
    e.method = method;
    e.path = path;
    e.has_query = method != NULL && c->cur.has_query;
    e.policy = policy != NULL ? policy : "-";
    e.reason = reason;
    e.stage = stage;
    e.tunnel = c->mode != PROXY_MODE_FORWARD;
    e.gql = v != NULL ? v->gql_op : NULL;
    e.gql_endpoint = v != NULL && v->gql_endpoint;
    e.rpc = rpc;
    e.rpc_mcp = v != NULL && v->rpc_mcp;
    e.rpc_withheld = withheld;
    proxy_log_event(c->srv->log, &e);
    proxy_server_log_touch(c->srv);
    proxy_metrics_decision(&c->srv->metrics, action, stage, c->t_head);
    c->t_head = 0; /* one latency sample per request */
}

/* A request whose JSON-RPC calls were read: one line per call, each with
 * its own decision (docs/proxy.md#rpc). A call allowed in a refused
 * request was not sent: its line says why. False when no calls were read. */
static bool log_calls(struct proxy_conn *c, const struct proxy_verdict *v, const char *engine,
                      const char *method, const char *path, const char *stage)
{
    const struct model_rpc_calls *k = proxy_rpc_calls(c);
    const struct proxy_rpc_result *res = proxy_rpc_results(c);
    bool some_denied = false;
    char why[320];

    if (k == NULL || res == NULL || method == NULL) {
        return false;
    }
    for (size_t i = 0; i < k->ncalls; i++) {
        some_denied = some_denied || !res[i].allow;
    }
    for (size_t i = 0; i < k->ncalls; i++) {
        enum proxy_log_action a = PROXY_LOG_ALLOWED;
        const char *reason = res[i].detail;
        if (!v->allow && !res[i].allow) {
            a = PROXY_LOG_DENIED;
        } else if (!v->allow) {
            a = PROXY_LOG_DENIED;
            reason = why;
            snprintf(why, sizeof(why), "%s",
                     some_denied ? "not sent: another call of this batch was denied" : v->detail);
        } else if (res[i].audit) {
            a = PROXY_LOG_AUDIT;
        }
        log_decision(c, a, engine, method, path, res[i].policy != NULL ? res[i].policy : v->policy,
                     v->binary, reason, stage, v, &k->calls[i], !v->allow && res[i].allow);
    }
    return true;
}

void proxy_conn_log_verdict(struct proxy_conn *c, const struct proxy_verdict *v, const char *engine,
                            const char *method, const char *path, const char *stage)
{
    enum proxy_log_action a = !v->allow  ? PROXY_LOG_DENIED
                              : v->audit ? PROXY_LOG_AUDIT
                                         : PROXY_LOG_ALLOWED;
    const char *reason = v->detail;

    /* a body buffered for credential rewriting decides last (proxy_credgate.c) */
    if (proxy_cred_defer_line(c, v, engine, method, path, stage)) {
        return;
    }
    char buf[300];

    if (v->loopback_exception) {
        snprintf(buf, sizeof(buf), "allowed by --test-allow-loopback (%s)", v->detail);
        reason = buf;
    }
    if (log_calls(c, v, engine, method, path, stage)) {
        return;
    }
    /* the reference names no policy for connection-level denials */
    log_decision(c, a, engine, method, path,
                 (!v->allow && !v->grant && proxy_conn_reason_is_l4(v->reason)) ? "-" : v->policy,
                 v->binary, reason, stage, v, NULL, false);
}

/* ---------------------------------------------------------------------------
 * The one exit for refused and failed outcomes
 * ------------------------------------------------------------------------- */

/* Every refused or failed outcome: the decision line (or, after an ALLOWED
 * line, a note) first, then the reply the table prescribes. 'v' is the
 * verdict behind a policy outcome (NULL otherwise); 'detail' goes into the
 * body and, without 'v', into the log; 'reason' is the body's reason field. */
void proxy_conn_outcome(struct proxy_conn *c, enum proxy_outcome o, const struct proxy_verdict *v,
                        const char *detail, const char *reason)
{
    const struct proxy_outcome_row *row = proxy_outcome_row(o);
    const char *m = c->cur.method;
    char path[CANON_MAX];
    const char *why = detail != NULL ? detail : "";

    if (row == NULL) {
        proxy_conn_kill(c); /* a missing row is our bug: close, deny */
        return;
    }
    if (m != NULL && strcmp(m, "CONNECT") == 0) {
        m = NULL;
    }
    if (o == PROXY_OUT_DNS) {
        c->srv->metrics.dns_failures++;
    } else if (o == PROXY_OUT_UPSTREAM_FAILED || o == PROXY_OUT_TUNNEL_UPSTREAM) {
        c->srv->metrics.upstream_errors++;
    }
    if (!row->log) {
        proxy_log_note(c->srv->log, "%s %s:%u: %s (stage %s, %s(%d))",
                       row->error != NULL ? row->error : row->name, c->host[0] ? c->host : "-",
                       (unsigned)c->port, why, row->stage,
                       c->id != NULL && c->id->n > 0 ? c->id->path[0] : "-",
                       c->id != NULL ? (int)c->id->pid : 0);
        proxy_server_log_touch(c->srv);
    } else if (v != NULL) {
        proxy_conn_log_verdict(c, v, row->engine, m,
                               m != NULL ? proxy_conn_cur_path(c, path, sizeof(path)) : NULL,
                               row->stage);
    } else {
        log_decision(c, PROXY_LOG_DENIED, row->engine, m,
                     m != NULL ? proxy_conn_cur_path(c, path, sizeof(path)) : NULL, "-", NULL,
                     reason != NULL && reason[0] != '\0' ? reason : why, row->stage, NULL, NULL,
                     false);
    }
    switch (row->kind) {
    case PROXY_REPLY_NONE:
        proxy_conn_kill(c);
        return;
    case PROXY_REPLY_BARE:
        proxy_conn_reply_bare(c, row->status);
        return;
    case PROXY_REPLY_JSON: {
        /* a denial a rule could lift: what is missing, for an agent that may
         * ask for it (advisor mode with proposals on; else NULL skill) */
        struct proxy_missing miss = {row->missing, c->nhost[0] != '\0' ? c->nhost : c->host,
                                     c->port, v != NULL ? v->binary : NULL,
                                     proxy_server_skill(c->srv)};

        reply_json(c, row->status, row->error, why, reason, row->missing != NULL ? &miss : NULL);
        return;
    }
    case PROXY_REPLY_L7:
        if (v == NULL) {
            proxy_conn_reply_bare(c, 500);
            return;
        }
        deny_l7(c, row->error, v, why);
        return;
    case PROXY_REPLY_TEXT: {
        char buf[512];
        proxy_conn_reply_close(c, buf, proxy_reply_text(row->status, why, buf, sizeof(buf)));
        return;
    }
    case PROXY_REPLY_MESSAGE: {
        char buf[512];
        proxy_conn_reply_close(c, buf,
                               proxy_reply_message(row->status, row->error, why, buf, sizeof(buf)));
        return;
    }
    case PROXY_REPLY_AUTHORITY: {
        char buf[512];
        proxy_conn_reply_close(c, buf, proxy_reply_authority(buf, sizeof(buf)));
        return;
    }
    }
    proxy_conn_kill(c);
}

/* The canonical path without query, for logs and bodies (owned by cur). */
const char *proxy_conn_cur_path(struct proxy_conn *c, char *buf, size_t len)
{
    if (c->cur.out_target != NULL) {
        snprintf(buf, len, "%.*s", (int)c->cur.canon_len, c->cur.out_target);
    } else {
        const char *t = c->cur.target != NULL ? c->cur.target : "/";
        const char *q;
        if (t[0] != '/') {
            /* absolute form not decided yet: log its path only */
            const char *sep = strstr(t, "://");
            const char *p = sep != NULL ? strpbrk(sep + 3, "/?") : NULL;
            t = p != NULL ? p : "/";
        }
        q = strchr(t, '?');
        snprintf(buf, len, "%.*s", (int)(q != NULL ? (size_t)(q - t) : strlen(t)), t);
        if (buf[0] == '\0') {
            snprintf(buf, len, "/");
        }
    }
    return buf;
}

/* ---------------------------------------------------------------------------
 * Denials
 * ------------------------------------------------------------------------- */

bool proxy_conn_reason_is_l4(enum model_reason r)
{
    switch (r) {
    case MODEL_REASON_NO_POLICY:
    case MODEL_REASON_NO_ENDPOINT:
    case MODEL_REASON_BINARY:
    case MODEL_REASON_BAD_HOST:
        return true;
    case MODEL_REASON_ALLOWED:
    case MODEL_REASON_AUDIT:
    case MODEL_REASON_BAD_TARGET:
    case MODEL_REASON_ENCODED_SLASH:
    case MODEL_REASON_NO_L7_PATH:
    case MODEL_REASON_L7_NOT_PERMITTED:
    case MODEL_REASON_L7_DENY_RULE:
    case MODEL_REASON_L7_UNSUPPORTED:
    case MODEL_REASON_BAD_QUERY:
    case MODEL_REASON_DEST_BLOCKED:
    case MODEL_REASON_DEST_PORT:
    case MODEL_REASON_DEST_INTERNAL:
    case MODEL_REASON_DEST_ALLOWED_IPS:
    case MODEL_REASON_DEST_UNRESOLVED:
    case MODEL_REASON_GQL_NO_OPERATION:
    case MODEL_REASON_GQL_BAD_METHOD:
    case MODEL_REASON_GQL_BAD_OPERATION:
    case MODEL_REASON_GQL_PERSISTED_DENIED:
    case MODEL_REASON_GQL_PERSISTED_UNKNOWN:
    case MODEL_REASON_RPC_NO_CALL:
    case MODEL_REASON_RPC_BAD_METHOD:
        break;
    }
    return false;
}

static void deny_l7(struct proxy_conn *c, const char *error, const struct proxy_verdict *v,
                    const char *detail)
{
    char path[CANON_MAX];
    struct proxy_l7_deny d;
    size_t len = 0;
    char *r;

    if (v->rpc_endpoint && strcmp(error, "policy_denied") == 0) {
        proxy_rpc_deny(c, v, detail); /* JSON-RPC errors (proxy_rpc.c) */
        return;
    }
    memset(&d, 0, sizeof(d));
    d.error = error;
    d.policy = v->policy;
    d.method = c->cur.method;
    d.path = proxy_conn_cur_path(c, path, sizeof(path));
    d.detail = detail;
    d.host = c->nhost;
    d.port = c->port;
    d.binary = v->binary;
    d.skill = proxy_server_skill(c->srv); /* advisor mode: next_steps, agent_guidance */
    d.gql = v->gql_op;
    d.gql_endpoint = v->gql_endpoint;
    r = proxy_reply_l7(&d, &len);
    if (r == NULL) {
        proxy_conn_reply_bare(c, 500);
        return;
    }
    proxy_conn_reply_close(c, r, len);
    free(r);
}

static void kick_cb(evutil_socket_t fd, short what, void *arg)
{
    struct proxy_conn *c = arg;

    (void)fd;
    (void)what;
    if (c->dead) {
        return;
    }
    if (c->state == PROXY_ST_RESOLVE && c->dns_done) {
        c->dns_done = false;
        proxy_relay_after_resolve(c);
    } else if (c->state == PROXY_ST_HEAD) {
        process_head(c);
    }
}

/* ---------------------------------------------------------------------------
 * Heads
 * ------------------------------------------------------------------------- */

/* long: the request head in wire order (wait, sniff h2c, parse, copy, dispatch); each failure is
 * one outcome */
static void process_head(struct proxy_conn *c)
{
    struct evbuffer *in = bufferevent_get_input(c->c);
    size_t len = evbuffer_get_length(in);
    size_t n = len < PROXY_MAX_HEAD ? len : PROXY_MAX_HEAD;
    size_t hl = 0;
    const char *why = "";
    unsigned char *p;
    enum proxy_head_status st;
    struct proxy_request *req;

    if (len == 0 || c->state != PROXY_ST_HEAD || proxy_bodyhold_pending(c)) {
        return;
    }
    if (proxy_conn_stale(c) || c->srv->draining) {
        if (c->mode == PROXY_MODE_FORWARD && c->nreq == 0 && !c->srv->draining) {
            /* nothing was decided under the old version yet: adopt the new one */
            proxy_policy_unref(c->pol);
            c->pol = proxy_policy_ref(c->srv->policy);
        } else {
            proxy_conn_kill(c); /* request boundary after a reload: close */
            return;
        }
    }
    p = evbuffer_pullup(in, (ssize_t)n);
    st = proxy_http_head_end((const char *)p, n, &hl);
    if (st == PROXY_HEAD_INCOMPLETE) {
        return;
    }
    if (c->ev_hdr != NULL) {
        event_del(c->ev_hdr);
    }
    if (c->t_head == 0) {
        c->t_head = proxy_metrics_now_us(); /* decision latency (metrics) */
    }
    if (c->id == NULL) {
        /* the head is complete: who sent it? (off the loop, see proxy_idq.c);
         * process_head runs again once the identity is known */
        if (c->idjob == NULL) {
            c->idjob = proxy_idq_submit(c->srv->idq, c, &c->peer, &c->local);
            if (c->idjob == NULL) {
                proxy_conn_outcome(c, PROXY_OUT_INTERNAL, NULL, "out of memory", NULL);
                return;
            }
            /* nothing more is read until the request is decided */
            bufferevent_disable(c->c, EV_READ);
        }
        return;
    }
    if (c->mode == PROXY_MODE_L7 && proxy_http_sniff(p, n < 24 ? n : 24) == PROXY_SNIFF_H2C) {
        /* a client that speaks HTTP/2 inside TLS although ALPN did not
         * choose h2 (an h2-only offer gets no ALPN answer): refuse it as
         * the protocol it is, not as a malformed HTTP/1.1 head */
        proxy_conn_outcome(c, PROXY_OUT_TUNNEL_PROTOCOL, NULL,
                           "HTTP/2 is not supported for L7-inspected endpoints (the proxy "
                           "negotiates http/1.1 by ALPN)",
                           NULL);
        return;
    }
    if (st != PROXY_HEAD_OK) {
        proxy_conn_outcome(
            c, st == PROXY_HEAD_TOOBIG ? PROXY_OUT_HEAD_TOOBIG : PROXY_OUT_HEAD_BAD, NULL,
            st == PROXY_HEAD_TOOBIG ? "request header block too large" : "malformed request head",
            NULL);
        return;
    }
    proxy_conn_cur_clear(&c->cur);
    c->cur.head = pv_malloc(hl);
    req = pv_malloc(sizeof(*req));
    if (c->cur.head == NULL || req == NULL) {
        free(req);
        proxy_conn_outcome(c, PROXY_OUT_INTERNAL, NULL, "out of memory", NULL);
        return;
    }
    c->cur.req = req;
    evbuffer_remove(in, c->cur.head, hl);
    c->cur.head_len = hl;
    st = proxy_http_parse(c->cur.head, hl, req, &why);
    if (st != PROXY_HEAD_OK) {
        proxy_conn_outcome(c, st == PROXY_HEAD_TOOBIG ? PROXY_OUT_HEAD_TOOBIG : PROXY_OUT_HEAD_BAD,
                           NULL, why, NULL);
        return;
    }
    c->cur.method = pv_strndup(c->cur.head + req->method.off, req->method.len);
    c->cur.target = pv_strndup(c->cur.head + req->target.off, req->target.len);
    if (c->cur.method == NULL || c->cur.target == NULL) {
        proxy_conn_outcome(c, PROXY_OUT_INTERNAL, NULL, "out of memory", NULL);
        return;
    }
    c->cur.target_len = req->target.len;
    c->cur.is_head = strcmp(c->cur.method, "HEAD") == 0;
    c->cur.keep_alive = req->version_minor == 1 && !req->conn_close && !c->c_eof;
    bufferevent_set_timeouts(c->c, NULL, NULL);
    if (strcmp(c->cur.method, "CONNECT") == 0) {
        proxy_tunnel_connect(c);
    } else if (c->mode == PROXY_MODE_FORWARD) {
        proxy_relay_forward(c);
    } else {
        proxy_tunnel_request(c);
    }
}

/* A request head must be complete within --header-timeout of its first
 * byte (of the connection, for the first request): slow or stalled heads
 * are answered 408 and logged, whatever else the loop is doing. */
static void header_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
    struct proxy_conn *c = arg;

    (void)fd;
    (void)what;
    if (c->dead || c->state != PROXY_ST_HEAD || c->idjob != NULL) {
        return;
    }
    proxy_conn_outcome(c, PROXY_OUT_HEAD_TIMEOUT, NULL, "request head not complete in time", NULL);
}

static void arm_header_timer(struct proxy_conn *c)
{
    unsigned ms = c->srv->cfg->header_timeout_ms;
    struct timeval tv;

    if (ms == 0 || c->ev_hdr == NULL || evtimer_pending(c->ev_hdr, NULL) || c->idjob != NULL) {
        return;
    }
    tv.tv_sec = ms / 1000;
    tv.tv_usec = (long)(ms % 1000) * 1000;
    evtimer_add(c->ev_hdr, &tv);
}

void proxy_conn_identified(struct proxy_conn *c, struct proxy_identity *id)
{
    c->idjob = NULL;
    if (c->dead) {
        proxy_identity_unref(id);
        return;
    }
    if (id == NULL) {
        proxy_conn_outcome(c, PROXY_OUT_INTERNAL, NULL, "out of memory (identity)", NULL);
        return;
    }
    c->id = id;
    bufferevent_enable(c->c, EV_READ);
    process_head(c);
}

void proxy_conn_client_read(struct bufferevent *bev, void *arg)
{
    struct proxy_conn *c = arg;

    (void)bev;
    if (c->dead) {
        return;
    }
    switch (c->state) {
    case PROXY_ST_HEAD:
        arm_header_timer(c);
        process_head(c);
        return;
    case PROXY_ST_RELAY:
        proxy_relay_pump_req_body(c);
        return;
    case PROXY_ST_TUNNEL:
        proxy_tunnel_relay_chunk(c->c, c->u);
        return;
    case PROXY_ST_WS:
        proxy_ws_pump(c, true);
        return;
    case PROXY_ST_LINGER: {
        struct evbuffer *in = bufferevent_get_input(c->c);
        evbuffer_drain(in, evbuffer_get_length(in));
        return;
    }
    case PROXY_ST_RESOLVE:
    case PROXY_ST_CONNECT:
    case PROXY_ST_SNIFF:
    case PROXY_ST_CLOSING:
        bufferevent_disable(c->c, EV_READ);
        return;
    }
}

void proxy_conn_client_write(struct bufferevent *bev, void *arg)
{
    struct proxy_conn *c = arg;

    (void)bev;
    if (c->dead) {
        return;
    }
    switch (c->state) {
    case PROXY_ST_CLOSING:
        if (evbuffer_get_length(bufferevent_get_output(c->c)) == 0 &&
            (c->u == NULL || evbuffer_get_length(bufferevent_get_output(c->u)) == 0)) {
            conn_linger(c);
        }
        return;
    case PROXY_ST_LINGER:
        return;
    case PROXY_ST_SNIFF:
        if (evbuffer_get_length(bufferevent_get_output(c->c)) == 0 && c->ev_io == NULL) {
            bufferevent_disable(c->c, EV_WRITE);
            proxy_tunnel_sniff(c);
        }
        return;
    case PROXY_ST_TUNNEL:
        if (c->splice_pending) {
            if (evbuffer_get_length(bufferevent_get_output(c->c)) == 0) {
                proxy_tunnel_start_splice(c);
            }
            return;
        }
        if (c->u != NULL) {
            bufferevent_enable(c->u, EV_READ); /* backpressure released */
        }
        return;
    case PROXY_ST_RELAY:
        if (c->u != NULL) {
            bufferevent_enable(c->u, EV_READ); /* backpressure released */
        }
        return;
    case PROXY_ST_WS:
        /* backpressure released: frames may wait in the upstream's input */
        bufferevent_enable(c->u, EV_READ);
        proxy_ws_pump(c, false);
        return;
    case PROXY_ST_HEAD:
    case PROXY_ST_RESOLVE:
    case PROXY_ST_CONNECT:
        return;
    }
}

/* The client shut its write side (shutdown(SHUT_WR)): a request whose
 * head and body are complete is still served and answered, then the
 * connection closes; anything else ends here. True when the connection
 * goes on. */
static bool client_half_closed(struct proxy_conn *c)
{
    bool complete = false;

    c->c_eof = true;
    c->cur.keep_alive = false;
    switch (c->state) {
    case PROXY_ST_RESOLVE:
    case PROXY_ST_CONNECT:
        complete =
            c->cur.req != NULL &&
            (c->cur.req->framing == PROXY_BODY_NONE ||
             (c->cur.req->framing == PROXY_BODY_LENGTH &&
              evbuffer_get_length(bufferevent_get_input(c->c)) >= c->cur.req->content_length));
        /* a chunked body is validated as it is relayed: let it run */
        complete = complete || (c->cur.req != NULL && c->cur.req->framing == PROXY_BODY_CHUNKED);
        break;
    case PROXY_ST_RELAY:
        complete = c->req_done || evbuffer_get_length(bufferevent_get_input(c->c)) > 0;
        break;
    case PROXY_ST_CLOSING:
        complete = true; /* the last response is being flushed */
        break;
    case PROXY_ST_LINGER:
        complete = false; /* the peer saw our close: done */
        break;
    case PROXY_ST_HEAD:
        /* a complete head waiting for its identity goes on; a GraphQL body
         * being read is decided now (complete or refused) */
        complete = c->idjob != NULL;
        if (proxy_bodyhold_pending(c)) {
            return true;
        }
        break;
    case PROXY_ST_SNIFF:
    case PROXY_ST_TUNNEL:
    case PROXY_ST_WS:
        complete = false;
        break;
    }
    if (!complete && c->state == PROXY_ST_HEAD && c->c != NULL &&
        evbuffer_get_length(bufferevent_get_output(c->c)) > 0) {
        /* between requests, the last response still queued: the half-close
         * came after the request was answered, so flush the answer and close
         * (killing here would drop a response already decided and logged) */
        proxy_conn_reply_close(c, NULL, 0);
        return true;
    }
    if (!complete) {
        return false;
    }
    if (c->state == PROXY_ST_RELAY && !c->req_done) {
        proxy_relay_pump_req_body(c);
        if (c->dead) {
            return true;
        }
        if (!c->req_done) {
            return false; /* the body ended early: the request is incomplete */
        }
    }
    return true;
}

void proxy_conn_client_event(struct bufferevent *bev, short what, void *arg)
{
    struct proxy_conn *c = arg;

    (void)bev;
    if (c->dead || (what & BEV_EVENT_CONNECTED) != 0) {
        return;
    }
    if (c->state == PROXY_ST_TUNNEL && (what & BEV_EVENT_EOF) != 0) {
        proxy_tunnel_side_closed(c, true);
        return;
    }
    if (c->state == PROXY_ST_WS && (what & BEV_EVENT_EOF) != 0) {
        proxy_ws_side_closed(c, true);
        return;
    }
    if ((what & BEV_EVENT_EOF) != 0 && client_half_closed(c)) {
        return;
    }
    if (c->c_tls && (what & BEV_EVENT_ERROR) != 0) {
        unsigned long e = bufferevent_get_openssl_error(c->c);
        SSL *ssl = bufferevent_openssl_get_ssl(c->c);
        unsigned char fin[8];
        /* the client's Finished arrived: it verified the proxy's leaf (after
         * a fatal error SSL_is_init_finished no longer says so) */
        if (e != 0 && ERR_GET_REASON(e) == SSL_R_UNEXPECTED_EOF_WHILE_READING && ssl != NULL &&
            SSL_get_peer_finished(ssl, fin, sizeof(fin)) > 0) {
            /* a client closing after the handshake without close_notify
             * (Python, node, git between requests): OpenSSL 3 reports it as
             * an error that libevent's dirty-shutdown allowance does not
             * catch. It is a close, not a TLS failure, and must not use up
             * the once-only CA hint that a real trust failure needs. */
            e = 0;
        }
        if (e != 0) {
            char b[160];
            ERR_error_string_n(e, b, sizeof(b));
            /* the hint once: later failures are one short line each */
            proxy_log_note(c->srv->log, "TLS with the client for %s:%u failed: %s%s%s%s", c->host,
                           (unsigned)c->port, b,
                           c->srv->warned_ca ? "" : " (does the client trust the proxy CA, ",
                           c->srv->warned_ca ? "" : c->srv->cfg->data_dir,
                           c->srv->warned_ca ? "" : "/ca.crt?)");
            c->srv->warned_ca = true;
        }
        ERR_clear_error();
    }
    proxy_conn_kill(c);
}

void proxy_conn_up_read(struct bufferevent *bev, void *arg)
{
    struct proxy_conn *c = arg;

    (void)bev;
    if (c->dead) {
        return;
    }
    switch (c->state) {
    case PROXY_ST_RELAY:
        proxy_relay_pump_resp(c);
        return;
    case PROXY_ST_TUNNEL:
        proxy_tunnel_relay_chunk(c->u, c->c);
        return;
    case PROXY_ST_WS:
        proxy_ws_pump(c, false);
        return;
    case PROXY_ST_HEAD:
        /* an idle upstream spoke out of turn: it cannot be reused */
        if (c->mode == PROXY_MODE_FORWARD) {
            proxy_conn_drop_upstream(c);
        } else {
            proxy_conn_kill(c);
        }
        return;
    case PROXY_ST_RESOLVE:
    case PROXY_ST_CONNECT:
    case PROXY_ST_SNIFF:
    case PROXY_ST_CLOSING:
    case PROXY_ST_LINGER:
        bufferevent_disable(c->u, EV_READ);
        return;
    }
}

void proxy_conn_up_write(struct bufferevent *bev, void *arg)
{
    struct proxy_conn *c = arg;

    (void)bev;
    if (c->dead) {
        return;
    }
    if (c->state == PROXY_ST_CLOSING) {
        if (evbuffer_get_length(bufferevent_get_output(c->u)) == 0 &&
            evbuffer_get_length(bufferevent_get_output(c->c)) == 0) {
            proxy_conn_kill(c);
        }
        return;
    }
    if ((c->state == PROXY_ST_RELAY && !c->req_done) || c->state == PROXY_ST_TUNNEL) {
        bufferevent_enable(c->c, EV_READ); /* backpressure released */
    }
    if (c->state == PROXY_ST_WS) {
        bufferevent_enable(c->c, EV_READ); /* frames may wait in the client's input */
        proxy_ws_pump(c, true);
    }
}

void proxy_conn_up_event(struct bufferevent *bev, short what, void *arg)
{
    struct proxy_conn *c = arg;

    (void)bev;
    if (c->dead || (what & BEV_EVENT_CONNECTED) != 0) {
        return;
    }
    if ((what & BEV_EVENT_ERROR) != 0 && c->u_tls) {
        SSL *ssl = bufferevent_openssl_get_ssl(c->u);
        long vr = ssl != NULL ? SSL_get_verify_result(ssl) : X509_V_OK;
        unsigned long e = bufferevent_get_openssl_error(c->u);
        if (vr != X509_V_OK) {
            snprintf(c->u_err, sizeof(c->u_err), "upstream certificate: %s",
                     X509_verify_cert_error_string(vr));
        } else if (e != 0) {
            char b[120];
            ERR_error_string_n(e, b, sizeof(b));
            snprintf(c->u_err, sizeof(c->u_err), "upstream TLS: %s", b);
        } else {
            snprintf(c->u_err, sizeof(c->u_err), "upstream TLS connection failed");
        }
        ERR_clear_error();
    }
    switch (c->state) {
    case PROXY_ST_RELAY:
        proxy_relay_resp_eof(c);
        return;
    case PROXY_ST_TUNNEL:
        if ((what & BEV_EVENT_EOF) != 0) {
            proxy_tunnel_side_closed(c, false);
        } else {
            proxy_conn_kill(c);
        }
        return;
    case PROXY_ST_WS:
        if ((what & BEV_EVENT_EOF) != 0) {
            proxy_ws_side_closed(c, false);
        } else {
            proxy_conn_kill(c);
        }
        return;
    case PROXY_ST_HEAD:
        if (c->mode == PROXY_MODE_FORWARD) {
            proxy_conn_drop_upstream(c);
        } else if (c->u_err[0] != '\0') {
            /* report the TLS failure on the next request */
            proxy_conn_drop_upstream(c);
        } else {
            proxy_conn_kill(c);
        }
        return;
    case PROXY_ST_RESOLVE:
    case PROXY_ST_CONNECT:
    case PROXY_ST_SNIFF:
    case PROXY_ST_CLOSING:
    case PROXY_ST_LINGER:
        proxy_conn_kill(c);
        return;
    }
}

/* ---------------------------------------------------------------------------
 * Server hooks
 * ------------------------------------------------------------------------- */

bool proxy_conn_same_addr(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
    if (a->ss_family != b->ss_family) {
        return false;
    }
    if (a->ss_family == AF_INET) {
        return memcmp(&((const struct sockaddr_in *)(const void *)a)->sin_addr,
                      &((const struct sockaddr_in *)(const void *)b)->sin_addr,
                      sizeof(struct in_addr)) == 0;
    }
    return memcmp(&((const struct sockaddr_in6 *)(const void *)a)->sin6_addr,
                  &((const struct sockaddr_in6 *)(const void *)b)->sin6_addr,
                  sizeof(struct in6_addr)) == 0;
}

/* Per client address at most --max-client-conns connections: above it, the
 * oldest connection of that address that is waiting for a request head
 * (stalled or idle) is closed with 503, so a flood of stalled connections
 * evicts itself instead of starving the requests that follow it; when none
 * waits, the new connection is refused. */
static void client_cap(struct proxy_conn *c)
{
    struct proxy_server *srv = c->srv;
    struct proxy_conn *victim = NULL;
    size_t same = 0;

    /* policy.local clients left the list but still count (proxy/advisor/proxy_local.c) */
    if (srv->nconns + proxy_server_local_clients(srv, NULL) <= srv->cfg->max_client_conns) {
        return; /* no address can be over the cap */
    }
    same = proxy_server_local_clients(srv, &c->peer);
    /* the list is newest first: the last waiting match is the oldest */
    for (struct proxy_conn *o = srv->conns; o != NULL; o = o->next) {
        if (o->state == PROXY_ST_LINGER || o->state == PROXY_ST_CLOSING ||
            !proxy_conn_same_addr(&o->peer, &c->peer)) {
            continue; /* closing connections do not count */
        }
        same++;
        if (o != c && o->state == PROXY_ST_HEAD && o->idjob == NULL) {
            victim = o;
        }
    }
    if (same <= srv->cfg->max_client_conns) {
        return;
    }
    proxy_conn_outcome(victim != NULL ? victim : c, PROXY_OUT_CONN_LIMIT, NULL,
                       "too many connections from this client address", NULL);
}

void proxy_conn_accept(struct proxy_server *srv, int fd, const struct sockaddr *sa, int salen)
{
    struct proxy_conn *c = pv_calloc(1, sizeof(*c));
    socklen_t ll = sizeof(struct sockaddr_storage);
    struct timeval tv;
    unsigned ms = srv->cfg->idle_timeout_ms;

    if (c == NULL) {
        close(fd);
        return;
    }
    c->srv = srv;
    c->cfd = fd;
    c->ufd = -1;
    memcpy(&c->peer, sa, (size_t)salen < sizeof(c->peer) ? (size_t)salen : sizeof(c->peer));
    if (getsockname(fd, (struct sockaddr *)&c->local, &ll) != 0) {
        close(fd);
        free(c);
        return;
    }
    proxy_relay_set_nodelay(fd);
    c->pol = proxy_policy_ref(srv->policy);
    /* the identity is looked up once the first head is complete */
    c->c = bufferevent_socket_new(srv->base, fd, 0);
    c->ev_kick = event_new(srv->base, -1, 0, kick_cb, c);
    c->ev_hdr = evtimer_new(srv->base, header_timeout_cb, c);
    /* link first so that every failure below goes through one path */
    c->next = srv->conns;
    if (srv->conns != NULL) {
        srv->conns->prev = c;
    }
    srv->conns = c;
    srv->nconns++;
    if (c->c == NULL || c->ev_kick == NULL || c->ev_hdr == NULL) {
        proxy_conn_free(c);
        return;
    }
    c->mode = PROXY_MODE_FORWARD;
    c->state = PROXY_ST_HEAD;
    proxy_relay_bulk_sizes(c->c);
    bufferevent_setcb(c->c, proxy_conn_client_read, proxy_conn_client_write,
                      proxy_conn_client_event, c);
    tv.tv_sec = ms / 1000;
    tv.tv_usec = (long)(ms % 1000) * 1000;
    bufferevent_set_timeouts(c->c, &tv, NULL);
    bufferevent_enable(c->c, EV_READ | EV_WRITE);
    arm_header_timer(c);
    client_cap(c);
}

void proxy_conn_policy_changed(struct proxy_conn *c)
{
    if (c->dead) {
        return;
    }
    if (c->mode == PROXY_MODE_RAW && c->state == PROXY_ST_TUNNEL) {
        /* an opaque tunnel lives on only if the new version still reaches it
         * by the same route: one that became inspected must not keep
         * carrying uninspected requests */
        (void)proxy_tunnel_still_routed(c);
        return;
    }
    if (c->state == PROXY_ST_WS) {
        proxy_ws_policy_changed(c);
        return;
    }
    /* a GraphQL request waiting for its body (cur.gql) is busy, not idle */
    if (c->state == PROXY_ST_HEAD && evbuffer_get_length(bufferevent_get_input(c->c)) == 0 &&
        c->cur.gql == NULL) {
        if (c->mode == PROXY_MODE_FORWARD && c->nreq == 0) {
            return; /* adopts the new version with its first request */
        }
        proxy_conn_kill(c); /* idle at a request boundary */
    }
    /* busy connections close when their current response completes */
}

void proxy_conn_drain(struct proxy_conn *c)
{
    if (c->dead) {
        return;
    }
    if (c->state == PROXY_ST_HEAD && evbuffer_get_length(bufferevent_get_input(c->c)) == 0 &&
        c->cur.gql == NULL) {
        proxy_conn_kill(c);
    }
}
