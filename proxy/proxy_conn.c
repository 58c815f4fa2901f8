/* SPDX-License-Identifier: Apache-2.0 */
/* proxy_conn.c - one client connection: forward requests, CONNECT tunnels
 *
 * States (struct proxy_conn.state):
 *
 *   HEAD -> (forward request) decide -> RESOLVE -> CONNECT -> RELAY -> HEAD
 *   HEAD -> (CONNECT) decide -> RESOLVE -> CONNECT -> 200 -> TUNNEL (opaque)
 *                                                       \-> SNIFF -> HEAD (inspected)
 *   any  -> CLOSING (a last response is flushed, then the connection is freed)
 *
 * Decisions are model_decide() calls through proxy_policy.c: the connection
 * level (binary reaches host:port, and by which route), the request level on
 * inspected routes, and the destination for every resolved address. The
 * proxy connects only to admitted addresses, in resolver order, and never
 * resolves a name twice for one request. Denials answer with the structured
 * bodies of proxy_policy.c and close the connection.
 *
 * Bytes move between bufferevents without copies (evbuffer_remove_buffer);
 * request bodies and responses are framed by libhttp-parser so that a
 * keep-alive connection knows where each message ends. Output buffers above
 * RELAY_HWM stop reading on the other side (backpressure).
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

#define RELAY_HWM (256u * 1024u)
#define CANON_MAX (3u * 4096u + 64u)
#define SNIFF_STEP_MS 5u
#define SNIFF_DEADLINE_MS 100u

static const char established[] = "HTTP/1.1 200 Connection Established\r\n\r\n";

static void client_read(struct bufferevent *bev, void *arg);
static void client_write(struct bufferevent *bev, void *arg);
static void client_event(struct bufferevent *bev, short what, void *arg);
static void up_read(struct bufferevent *bev, void *arg);
static void up_write(struct bufferevent *bev, void *arg);
static void up_event(struct bufferevent *bev, short what, void *arg);
static void process_head(struct proxy_conn *c);
static void client_cap(struct proxy_conn *c);
static void arm_header_timer(struct proxy_conn *c);
static void pump_req_body(struct proxy_conn *c);
static void pump_resp(struct proxy_conn *c);
static void deny_upgrade(struct proxy_conn *c, struct proxy_verdict *v, enum proxy_outcome o);
static void start_connect(struct proxy_conn *c);
static bool reason_is_l4(enum model_reason r);

/* ---------------------------------------------------------------------------
 * Lifetime
 * ------------------------------------------------------------------------- */

static void cur_clear(struct proxy_cur *cur)
{
    free(cur->head);
    free(cur->req);
    free(cur->method);
    free(cur->target);
    free(cur->out_target);
    memset(cur, 0, sizeof(*cur));
}

static void drop_upstream(struct proxy_conn *c)
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
    proxy_idq_cancel(c->idjob);
    proxy_splice_free(c->spl);
    if (c->c != NULL) {
        bufferevent_free(c->c);
    }
    if (c->cfd >= 0) {
        close(c->cfd);
    }
    drop_upstream(c);
    if (c->early != NULL) {
        evbuffer_free(c->early);
    }
    cur_clear(&c->cur);
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
static void conn_kill(struct proxy_conn *c)
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

static bool stale(const struct proxy_conn *c)
{
    return proxy_policy_generation(c->pol) != c->srv->generation;
}

/* ---------------------------------------------------------------------------
 * Replies
 * ------------------------------------------------------------------------- */

/* The response is out: shut our write side and discard what the client
 * still sends for a moment, so that the close does not turn into a reset
 * that destroys the response (lingering close). TLS clients close at once. */
static void conn_linger(struct proxy_conn *c)
{
    struct timeval tv = {1, 0};
    int fd = c->c != NULL ? (int)bufferevent_getfd(c->c) : -1;

    if (c->c_tls || fd < 0 || !c->linger) {
        conn_kill(c);
        return;
    }
    drop_upstream(c);
    (void)shutdown(fd, SHUT_WR);
    c->state = PROXY_ST_LINGER;
    evbuffer_drain(bufferevent_get_input(c->c), evbuffer_get_length(bufferevent_get_input(c->c)));
    bufferevent_disable(c->c, EV_WRITE);
    bufferevent_set_timeouts(c->c, &tv, NULL);
    bufferevent_enable(c->c, EV_READ);
}

/* Queue 'buf' to the client and close once it is flushed. */
static void reply_close(struct proxy_conn *c, const char *buf, size_t len)
{
    struct evbuffer *out;

    if (c->c == NULL) {
        conn_kill(c);
        return;
    }
    drop_upstream(c);
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

static void reply_bare(struct proxy_conn *c, unsigned status)
{
    const char *r = proxy_reply_bare(status);
    reply_close(c, r, strlen(r));
}

static void reply_json(struct proxy_conn *c, unsigned status, const char *error,
                       const char *detail, const char *reason)
{
    size_t len = 0;
    char *r = proxy_reply_json(status, error, detail, reason, &len);

    if (r == NULL) {
        reply_bare(c, 500);
        return;
    }
    reply_close(c, r, len);
    free(r);
}

/* ---------------------------------------------------------------------------
 * Logging helpers
 * ------------------------------------------------------------------------- */

static void log_decision(struct proxy_conn *c, enum proxy_log_action action, const char *engine,
                         const char *method, const char *path, const char *policy,
                         const char *binary, const char *reason, const char *stage)
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
    proxy_log_event(c->srv->log, &e);
    proxy_server_log_touch(c->srv);
}

static void log_verdict(struct proxy_conn *c, const struct proxy_verdict *v, const char *engine,
                        const char *method, const char *path, const char *stage)
{
    enum proxy_log_action a = !v->allow ? PROXY_LOG_DENIED
                              : v->audit ? PROXY_LOG_AUDIT
                                         : PROXY_LOG_ALLOWED;
    const char *reason = v->detail;
    char buf[300];

    if (v->loopback_exception) {
        snprintf(buf, sizeof(buf), "allowed by --test-allow-loopback (%s)", v->detail);
        reason = buf;
    }
    /* the reference names no policy for connection-level denials */
    log_decision(c, a, engine, method, path,
                 (!v->allow && !v->grant && reason_is_l4(v->reason)) ? "-" : v->policy,
                 v->binary, reason, stage);
}

/* ---------------------------------------------------------------------------
 * The one exit for refused and failed outcomes
 * ------------------------------------------------------------------------- */

static void deny_l7(struct proxy_conn *c, const char *error, const struct proxy_verdict *v,
                    const char *detail);
static const char *cur_path(struct proxy_conn *c, char *buf, size_t len);

static const char authority_body[] =
    "{\"error\":\"request_authority_mismatch\",\"message\":\"HTTP request authority does "
    "not match the authorized tunnel endpoint\"}";

/* Every refused or failed outcome: the decision line (or, after an ALLOWED
 * line, a note) first, then the reply the table prescribes. 'v' is the
 * verdict behind a policy outcome (NULL otherwise); 'detail' goes into the
 * body and, without 'v', into the log; 'reason' is the body's reason field. */
static void conn_outcome(struct proxy_conn *c, enum proxy_outcome o, const struct proxy_verdict *v,
                         const char *detail, const char *reason)
{
    const struct proxy_outcome_row *row = proxy_outcome_row(o);
    const char *m = c->cur.method;
    char path[CANON_MAX];
    const char *why = detail != NULL ? detail : "";

    if (row == NULL) {
        conn_kill(c); /* a missing row is our bug: close, deny */
        return;
    }
    if (m != NULL && strcmp(m, "CONNECT") == 0) {
        m = NULL;
    }
    if (!row->log) {
        proxy_log_note(c->srv->log, "%s %s:%u: %s", row->name, c->host[0] ? c->host : "-",
                       (unsigned)c->port, why);
        proxy_server_log_touch(c->srv);
    } else if (v != NULL) {
        log_verdict(c, v, row->engine, m, m != NULL ? cur_path(c, path, sizeof(path)) : NULL,
                    row->stage);
    } else {
        log_decision(c, PROXY_LOG_DENIED, row->engine, m,
                     m != NULL ? cur_path(c, path, sizeof(path)) : NULL, "-", NULL,
                     reason != NULL && reason[0] != '\0' ? reason : why, row->stage);
    }
    switch (row->kind) {
    case PROXY_REPLY_NONE:
        conn_kill(c);
        return;
    case PROXY_REPLY_BARE:
        reply_bare(c, row->status);
        return;
    case PROXY_REPLY_JSON:
        reply_json(c, row->status, row->error, why, reason);
        return;
    case PROXY_REPLY_L7:
        if (v == NULL) {
            reply_bare(c, 500);
            return;
        }
        deny_l7(c, row->error, v, why);
        return;
    case PROXY_REPLY_TEXT: {
        char buf[512];
        int n = snprintf(buf, sizeof(buf),
                         "HTTP/1.1 %u Bad Request\r\nContent-Length: %zu\r\n"
                         "Connection: close\r\n\r\n%s\n",
                         row->status, strlen(why) + 1, why);
        reply_close(c, buf, n > 0 && (size_t)n < sizeof(buf) ? (size_t)n : 0);
        return;
    }
    case PROXY_REPLY_AUTHORITY: {
        char buf[512];
        int n = snprintf(buf, sizeof(buf),
                         "HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\n"
                         "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
                         sizeof(authority_body) - 1, authority_body);
        reply_close(c, buf, (size_t)n);
        return;
    }
    }
    conn_kill(c);
}

/* ---------------------------------------------------------------------------
 * Host bookkeeping
 * ------------------------------------------------------------------------- */

static void set_host(struct proxy_conn *c, const char *h, size_t hl, uint16_t port)
{
    size_t nl = 0;
    bool is_ip = false;
    struct model_ip ip;

    if (hl >= sizeof(c->host)) {
        hl = sizeof(c->host) - 1;
    }
    for (size_t i = 0; i < hl; i++) {
        unsigned char ch = (unsigned char)h[i];
        c->host[i] = (char)((ch >= 'A' && ch <= 'Z') ? ch + 32 : ch);
    }
    c->host[hl] = '\0';
    c->port = port;
    c->host_is_ip = false;
    if (model_host_normalize(c->host, hl, c->nhost, sizeof(c->nhost), &nl, &is_ip, &ip)) {
        c->nhost[nl < sizeof(c->nhost) ? nl : sizeof(c->nhost) - 1] = '\0';
        c->host_is_ip = is_ip;
        if (is_ip) {
            c->addrs[0] = ip;
        }
    } else {
        snprintf(c->nhost, sizeof(c->nhost), "%s", c->host);
    }
}

/* Canonicalise the current target; on success fills out_target. */
static bool canonicalise(struct proxy_conn *c, const char *t, size_t tl)
{
    char canon[CANON_MAX];
    size_t cl = 0;
    const char *q = NULL;
    size_t ql = 0;
    bool slash = false;
    enum model_target_status st;
    size_t need;

    st = model_path_canonicalize(t, tl, canon, sizeof(canon), &cl, &q, &ql, &slash);
    if (st != MODEL_TARGET_OK && st != MODEL_TARGET_ENCODED_SLASH) {
        return false;
    }
    if (cl >= sizeof(canon)) {
        return false;
    }
    c->cur.has_query = q != NULL || memchr(t, '?', tl) != NULL;
    if (q == NULL && c->cur.has_query) {
        const char *qm = memchr(t, '?', tl);
        q = qm + 1;
        ql = tl - (size_t)(q - t);
    }
    need = cl + (c->cur.has_query ? ql + 1 : 0) + 1;
    c->cur.out_target = pv_malloc(need);
    if (c->cur.out_target == NULL) {
        return false;
    }
    memcpy(c->cur.out_target, canon, cl);
    if (c->cur.has_query) {
        c->cur.out_target[cl] = '?';
        memcpy(c->cur.out_target + cl + 1, q, ql);
    }
    c->cur.out_target[need - 1] = '\0';
    c->cur.canon_len = cl;
    return true;
}

/* The canonical path without query, for logs and bodies (owned by cur). */
static const char *cur_path(struct proxy_conn *c, char *buf, size_t len)
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

static bool reason_is_l4(enum model_reason r)
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
        break;
    }
    return false;
}

static bool reason_is_target(enum model_reason r)
{
    return r == MODEL_REASON_BAD_TARGET || r == MODEL_REASON_ENCODED_SLASH;
}

static void deny_l7(struct proxy_conn *c, const char *error, const struct proxy_verdict *v,
                    const char *detail)
{
    char path[CANON_MAX];
    struct proxy_l7_deny d;
    size_t len = 0;
    char *r;

    memset(&d, 0, sizeof(d));
    d.error = error;
    d.policy = v->policy;
    d.method = c->cur.method;
    d.path = cur_path(c, path, sizeof(path));
    d.detail = detail;
    d.host = c->nhost;
    d.port = c->port;
    d.binary = v->binary;
    r = proxy_reply_l7(&d, &len);
    if (r == NULL) {
        reply_bare(c, 500);
        return;
    }
    reply_close(c, r, len);
    free(r);
}

/* ---------------------------------------------------------------------------
 * Destination checks and connect
 * ------------------------------------------------------------------------- */

/* Keep the addresses the policy admits for the current request. */
static void check_addrs(struct proxy_conn *c)
{
    struct model_ip ok[PROXY_MAX_ADDRS];
    size_t nok = 0;
    struct proxy_verdict first;
    struct proxy_verdict v;
    bool have_first = false;
    bool connect = c->cur.method == NULL || strcmp(c->cur.method, "CONNECT") == 0;
    /* a forward request is decided as a request (method and target) on every
     * route: with several identity entries the route is chosen per entry */
    const char *m = connect ? NULL : c->cur.method;
    const char *t = connect ? NULL : c->cur.target;
    size_t tl = connect ? 0 : c->cur.target_len;
    char detail[600];
    char path[CANON_MAX];

    memset(&first, 0, sizeof(first));
    for (size_t i = 0; i < c->naddrs; i++) {
        proxy_decide_dest(c->pol, c->id, c->host, strlen(c->host), c->port, m, t, tl,
                          &c->addrs[i], &c->srv->opts, &v);
        if (v.allow) {
            if (nok == 0) {
                first = v;
            }
            ok[nok++] = c->addrs[i];
        } else if (!have_first && nok == 0) {
            first = v;
            have_first = true;
        }
    }
    if (nok == 0) {
        snprintf(detail, sizeof(detail), "%s %s:%u blocked: %s",
                 connect ? "CONNECT" : c->cur.method, c->host, (unsigned)c->port,
                 proxy_ssrf_kind(first.reason));
        /* the body carries no reason field: the precise one is in the log */
        conn_outcome(c, PROXY_OUT_SSRF, &first, detail, NULL);
        return;
    }
    memcpy(c->addrs, ok, nok * sizeof(ok[0]));
    c->naddrs = nok;
    c->next_addr = 0;
    if (connect) {
        log_verdict(c, &first, "opa", NULL, NULL, "connect");
    } else {
        log_verdict(c, &first, c->route == MODEL_ROUTE_INSPECTED ? "l7" : "opa", c->cur.method,
                    cur_path(c, path, sizeof(path)), "forward");
    }
    snprintf(c->policy_key, sizeof(c->policy_key), "%s", first.policy);
    start_connect(c);
}

static void dns_cb(int result, struct evutil_addrinfo *res, void *arg)
{
    struct proxy_conn *c = arg;

    if (result == EVUTIL_EAI_CANCEL) {
        if (res != NULL) {
            evutil_freeaddrinfo(res);
        }
        return;
    }
    c->dnsreq = NULL;
    c->dns_err = result;
    c->naddrs = 0;
    for (struct evutil_addrinfo *a = res; a != NULL && c->naddrs < PROXY_MAX_ADDRS;
         a = a->ai_next) {
        struct model_ip ip;
        memset(&ip, 0, sizeof(ip));
        if (a->ai_family == AF_INET) {
            const struct sockaddr_in *s4 = (const struct sockaddr_in *)(const void *)a->ai_addr;
            ip.b[10] = 0xff;
            ip.b[11] = 0xff;
            memcpy(ip.b + 12, &s4->sin_addr, 4);
        } else if (a->ai_family == AF_INET6) {
            const struct sockaddr_in6 *s6 =
                (const struct sockaddr_in6 *)(const void *)a->ai_addr;
            memcpy(ip.b, &s6->sin6_addr, 16);
        } else {
            continue;
        }
        bool dup = false;
        for (size_t i = 0; i < c->naddrs; i++) {
            dup = dup || memcmp(c->addrs[i].b, ip.b, 16) == 0;
        }
        if (!dup) {
            c->addrs[c->naddrs++] = ip;
        }
    }
    if (res != NULL) {
        evutil_freeaddrinfo(res);
    }
    c->dns_done = true;
    /* may run inside evdns_getaddrinfo(): continue from the loop */
    event_active(c->ev_kick, EV_TIMEOUT, 0);
}

static void after_resolve(struct proxy_conn *c)
{
    char detail[400];

    if (c->dns_err != 0 || c->naddrs == 0) {
        snprintf(detail, sizeof(detail), "DNS resolution failed for %s:%u: %s", c->host,
                 (unsigned)c->port,
                 c->dns_err != 0 ? evutil_gai_strerror(c->dns_err) : "no addresses");
        conn_outcome(c, PROXY_OUT_DNS, NULL, detail, NULL);
        return;
    }
    check_addrs(c);
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
        after_resolve(c);
    } else if (c->state == PROXY_ST_HEAD) {
        process_head(c);
    }
}

static void resolve(struct proxy_conn *c)
{
    struct evutil_addrinfo hints;
    struct evdns_getaddrinfo_request *r;

    c->naddrs = 0;
    if (c->host_is_ip) {
        /* IP literals in any spelling: no DNS, the normalised address */
        c->naddrs = 1;
        check_addrs(c);
        return;
    }
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_protocol = IPPROTO_TCP;
    c->state = PROXY_ST_RESOLVE;
    c->dns_done = false;
    r = evdns_getaddrinfo(c->srv->dns, c->nhost, NULL, &hints, dns_cb, c);
    if (!c->dns_done) {
        c->dnsreq = r;
    }
}

static int sockaddr_of(const struct model_ip *ip, uint16_t port, struct sockaddr_storage *ss)
{
    memset(ss, 0, sizeof(*ss));
    if (model_ip_is_v4(ip)) {
        struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
        s4->sin_family = AF_INET;
        s4->sin_port = htons(port);
        memcpy(&s4->sin_addr, ip->b + 12, 4);
        return (int)sizeof(*s4);
    }
    struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
    s6->sin6_family = AF_INET6;
    s6->sin6_port = htons(port);
    memcpy(&s6->sin6_addr, ip->b, 16);
    return (int)sizeof(*s6);
}

static void set_nodelay(int fd)
{
    int one = 1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static void upstream_connected(struct proxy_conn *c);

static void connect_failed(struct proxy_conn *c)
{
    char detail[400];

    if (c->ufd >= 0) {
        close(c->ufd);
        c->ufd = -1;
    }
    if (c->next_addr < c->naddrs) {
        start_connect(c);
        return;
    }
    snprintf(detail, sizeof(detail), "connection to %s:%u failed", c->host, (unsigned)c->port);
    conn_outcome(c, PROXY_OUT_UPSTREAM_FAILED, NULL, detail, NULL);
}

static void connect_cb(evutil_socket_t fd, short what, void *arg)
{
    struct proxy_conn *c = arg;
    int err = 0;
    socklen_t len = sizeof(err);

    (void)fd;
    if (c->dead) {
        return;
    }
    if ((what & EV_TIMEOUT) != 0 ||
        getsockopt(c->ufd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
        connect_failed(c);
        return;
    }
    upstream_connected(c);
}

static void start_connect(struct proxy_conn *c)
{
    struct sockaddr_storage ss;
    int sl;
    struct timeval tv;
    unsigned ms = c->srv->cfg->connect_timeout_ms;

    c->state = PROXY_ST_CONNECT;
    c->u_ip = c->addrs[c->next_addr++];
    sl = sockaddr_of(&c->u_ip, c->port, &ss);
    c->ufd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (c->ufd < 0) {
        connect_failed(c);
        return;
    }
    set_nodelay(c->ufd);
    if (connect(c->ufd, (struct sockaddr *)&ss, (socklen_t)sl) == 0) {
        upstream_connected(c);
        return;
    }
    if (errno != EINPROGRESS) {
        connect_failed(c);
        return;
    }
    if (c->ev_io != NULL) {
        event_free(c->ev_io);
    }
    c->ev_io = event_new(c->srv->base, c->ufd, EV_WRITE, connect_cb, c);
    if (c->ev_io == NULL) {
        connect_failed(c);
        return;
    }
    tv.tv_sec = ms / 1000;
    tv.tv_usec = (long)(ms % 1000) * 1000;
    event_add(c->ev_io, &tv);
}

/* Bulk relays: read and write up to 256 KiB per syscall (libevent's default
 * is 16 KiB), which is what keeps a tunnel close to direct throughput. */
static void bulk_sizes(struct bufferevent *bev)
{
    (void)bufferevent_set_max_single_read(bev, RELAY_HWM);
    (void)bufferevent_set_max_single_write(bev, RELAY_HWM);
}

/* Wrap the connected upstream socket in a plain bufferevent. */
static bool wrap_upstream_plain(struct proxy_conn *c)
{
    c->u = bufferevent_socket_new(c->srv->base, c->ufd, BEV_OPT_CLOSE_ON_FREE);
    if (c->u == NULL) {
        return false;
    }
    c->ufd = -1;
    bulk_sizes(c->u);
    bufferevent_setcb(c->u, up_read, up_write, up_event, c);
    bufferevent_enable(c->u, EV_READ | EV_WRITE);
    return true;
}

/* ---------------------------------------------------------------------------
 * Forwarding one request
 * ------------------------------------------------------------------------- */

static int resp_headers_complete(http_parser *p)
{
    struct proxy_conn *c = p->data;
    c->resp_status = p->status_code;
    return c->cur.is_head ? 1 : 0;
}

static int resp_msg_complete(http_parser *p)
{
    struct proxy_conn *c = p->data;

    if (p->status_code >= 100 && p->status_code < 200 && p->status_code != 101) {
        return 0; /* interim response: the final one follows */
    }
    c->resp_done = true;
    http_parser_pause(p, 1);
    return 0;
}

static const http_parser_settings resp_settings = {
    .on_headers_complete = resp_headers_complete,
    .on_message_complete = resp_msg_complete,
};

/* Body framing: Content-Length bodies are counted, chunked ones go through
 * the strict decoder, which re-chunks them (proxy_chunk.c). */
static void start_req_body(struct proxy_conn *c)
{
    const struct proxy_request *r = c->cur.req;

    c->req_done = r->framing == PROXY_BODY_NONE ||
                  (r->framing == PROXY_BODY_LENGTH && r->content_length == 0);
    c->body_left = r->framing == PROXY_BODY_LENGTH ? r->content_length : 0;
    proxy_chunk_init(&c->chunk);
}

/* The head that goes upstream: the method as sent, the decided target, the
 * decided Host (never the client's spelling), the client's end-to-end fields,
 * and framing fields written by the proxy for the body it will forward
 * (never the client's Content-Length or Transfer-Encoding lines). */
static void write_head(struct proxy_conn *c, struct evbuffer *out)
{
    const struct proxy_request *r = c->cur.req;
    const char *h = c->cur.head;
    bool forward = c->mode == PROXY_MODE_FORWARD;
    bool via = false;
    bool v6 = strchr(c->nhost, ':') != NULL;
    uint16_t dport = c->c_tls ? 443 : 80;

    evbuffer_add_printf(out, "%s %s HTTP/1.%u\r\n", c->cur.method, c->cur.out_target,
                        (unsigned)r->version_minor);
    evbuffer_add_printf(out, "Host: %s%s%s", v6 ? "[" : "", c->nhost, v6 ? "]" : "");
    if (c->port != dport) {
        evbuffer_add_printf(out, ":%u", (unsigned)c->port);
    }
    evbuffer_add(out, "\r\n", 2);
    for (size_t i = 0; i < r->nhdr; i++) {
        const struct proxy_header *f = &r->hdr[i];
        const char *n = h + f->name.off;
        if (f->hop || (int)i == r->host || proxy_http_name_is(n, f->name.len, "content-length") ||
            proxy_http_name_is(n, f->name.len, "transfer-encoding")) {
            continue;
        }
        if (proxy_http_name_is(n, f->name.len, "via")) {
            via = true;
        }
        evbuffer_add(out, n, f->name.len);
        evbuffer_add(out, ": ", 2);
        evbuffer_add(out, h + f->value.off, f->value.len);
        evbuffer_add(out, "\r\n", 2);
    }
    switch (r->framing) {
    case PROXY_BODY_NONE:
        break;
    case PROXY_BODY_LENGTH:
        evbuffer_add_printf(out, "Content-Length: %llu\r\n",
                            (unsigned long long)r->content_length);
        break;
    case PROXY_BODY_CHUNKED:
        evbuffer_add_printf(out, "Transfer-Encoding: chunked\r\n");
        break;
    }
    if (forward && !via) {
        evbuffer_add_printf(out, "Via: 1.1 proviso-proxy\r\n");
    }
    if (r->version_minor == 0) {
        evbuffer_add_printf(out, "Connection: close\r\n");
    }
    evbuffer_add(out, "\r\n", 2);
}

static void send_request(struct proxy_conn *c)
{
    start_req_body(c);
    write_head(c, bufferevent_get_output(c->u));
    http_parser_init(&c->resp, HTTP_RESPONSE);
    c->resp.data = c;
    c->resp_done = false;
    c->resp_started = false;
    c->resp_eof_framed = false;
    c->resp_status = 0;
    c->state = PROXY_ST_RELAY;
    c->nreq++;
    bufferevent_setwatermark(c->u, EV_WRITE, RELAY_HWM / 2, 0);
    bufferevent_setwatermark(c->c, EV_WRITE, RELAY_HWM / 2, 0);
    bufferevent_enable(c->u, EV_READ | EV_WRITE);
    bufferevent_set_timeouts(c->c, NULL, NULL);
    pump_req_body(c);
    if (!c->dead && c->state == PROXY_ST_RELAY) {
        pump_resp(c);
    }
}

static void finish_request(struct proxy_conn *c)
{
    bool up_ok = http_should_keep_alive(&c->resp) && !c->resp_eof_framed && c->req_done &&
                 c->u != NULL && evbuffer_get_length(bufferevent_get_input(c->u)) == 0;
    bool keep = c->cur.keep_alive && up_ok && !c->srv->draining && !stale(c) && !c->c_eof;
    struct timeval tv;
    unsigned ms = c->srv->cfg->idle_timeout_ms;

    cur_clear(&c->cur);
    if (!up_ok) {
        drop_upstream(c);
        /* an inspected tunnel has exactly one upstream */
        keep = keep && c->mode == PROXY_MODE_FORWARD;
    }
    if (!keep) {
        reply_close(c, NULL, 0);
        return;
    }
    c->state = PROXY_ST_HEAD;
    tv.tv_sec = ms / 1000;
    tv.tv_usec = (long)(ms % 1000) * 1000;
    bufferevent_set_timeouts(c->c, &tv, NULL);
    bufferevent_enable(c->c, EV_READ);
    if (c->u != NULL) {
        bufferevent_enable(c->u, EV_READ);
    }
    if (evbuffer_get_length(bufferevent_get_input(c->c)) > 0) {
        event_active(c->ev_kick, EV_TIMEOUT, 0);
    }
}

/* Feed 'in' to 'p' chunk by chunk without copying; returns the number of
 * bytes that belong to the current message, or -1 on a framing error. */
static ssize_t parse_chunks(http_parser *p, const http_parser_settings *s, struct evbuffer *in,
                            bool *done)
{
    struct evbuffer_iovec vec[16];
    int n = evbuffer_peek(in, -1, NULL, vec, 16);
    size_t total = 0;

    if (n > 16) {
        n = 16;
    }
    for (int i = 0; i < n && !*done; i++) {
        size_t used = http_parser_execute(p, s, vec[i].iov_base, vec[i].iov_len);
        enum http_errno e = HTTP_PARSER_ERRNO(p);
        total += used;
        if (e == HPE_PAUSED) {
            break;
        }
        if (e != HPE_OK || used != vec[i].iov_len) {
            return -1;
        }
    }
    return (ssize_t)total;
}

static void emit_out(void *arg, const char *p, size_t n)
{
    evbuffer_add(arg, p, n);
}

/* A request body whose framing is broken: the upstream has at most a valid
 * prefix of the body and is dropped with the connection. */
static void body_error(struct proxy_conn *c, const char *why);

static void pump_req_body(struct proxy_conn *c)
{
    struct evbuffer *in = bufferevent_get_input(c->c);
    struct evbuffer *out;

    if (c->req_done) {
        /* pipelined bytes wait for the response to finish */
        bufferevent_disable(c->c, EV_READ);
        return;
    }
    out = bufferevent_get_output(c->u);
    if (c->cur.req->framing == PROXY_BODY_LENGTH) {
        size_t avail = evbuffer_get_length(in);
        size_t n = (uint64_t)avail < c->body_left ? avail : (size_t)c->body_left;
        evbuffer_remove_buffer(in, out, n);
        c->body_left -= n;
        c->req_done = c->body_left == 0;
    }
    while (!c->req_done && c->cur.req->framing == PROXY_BODY_CHUNKED &&
           evbuffer_get_length(in) > 0 && evbuffer_get_length(out) < RELAY_HWM) {
        struct evbuffer_iovec vec;
        size_t used = 0;
        enum proxy_chunk_status st;
        if (evbuffer_peek(in, -1, NULL, &vec, 1) < 1) {
            break;
        }
        st = proxy_chunk_feed(&c->chunk, vec.iov_base, vec.iov_len, &used, emit_out, out);
        if (st == PROXY_CHUNK_BAD) {
            body_error(c, c->chunk.why);
            return;
        }
        evbuffer_drain(in, used);
        c->req_done = st == PROXY_CHUNK_DONE;
    }
    if (!c->req_done && c->c_eof && evbuffer_get_length(in) == 0) {
        body_error(c, "the client closed before the end of the body");
        return;
    }
    if (c->req_done || evbuffer_get_length(out) >= RELAY_HWM) {
        bufferevent_disable(c->c, EV_READ);
    }
}

static void body_error(struct proxy_conn *c, const char *why)
{
    char detail[160];

    snprintf(detail, sizeof(detail), "malformed chunked request body: %s", why);
    if (c->resp_started) {
        /* the response is already flowing: no reply can be framed any more */
        proxy_log_note(c->srv->log, "%s:%u: %s, connection closed", c->host, (unsigned)c->port,
                       detail);
        proxy_server_log_touch(c->srv);
        conn_kill(c);
        return;
    }
    conn_outcome(c, PROXY_OUT_BODY_BAD, NULL, detail, NULL);
}

static void pump_resp(struct proxy_conn *c)
{
    struct evbuffer *in = bufferevent_get_input(c->u);
    struct evbuffer *out = bufferevent_get_output(c->c);
    ssize_t n;

    while (!c->resp_done && evbuffer_get_length(in) > 0) {
        n = parse_chunks(&c->resp, &resp_settings, in, &c->resp_done);
        if (n < 0) {
            conn_kill(c); /* upstream broke HTTP framing */
            return;
        }
        if (n == 0) {
            break;
        }
        c->resp_started = true;
        evbuffer_remove_buffer(in, out, (size_t)n);
    }
    if (c->resp_done) {
        finish_request(c);
        return;
    }
    if (evbuffer_get_length(out) >= RELAY_HWM) {
        bufferevent_disable(c->u, EV_READ);
    }
}

/* Upstream EOF while relaying: EOF-delimited bodies end here. */
static void resp_eof(struct proxy_conn *c)
{
    if (c->u != NULL && evbuffer_get_length(bufferevent_get_input(c->u)) > 0) {
        pump_resp(c);
        if (c->dead || c->state != PROXY_ST_RELAY) {
            return;
        }
    }
    if (!c->resp_done && c->resp_status != 0) {
        http_parser_execute(&c->resp, &resp_settings, NULL, 0);
        if (c->resp_done) {
            c->resp_eof_framed = true;
            finish_request(c);
            return;
        }
    }
    if (!c->resp_done && !c->resp_started && c->cur.method != NULL) {
        char detail[600];
        if (c->u_err[0] != '\0') {
            snprintf(detail, sizeof(detail), "connection to %s:%u failed: %s", c->host,
                     (unsigned)c->port, c->u_err);
        } else {
            snprintf(detail, sizeof(detail), "connection to %s:%u closed before a response",
                     c->host, (unsigned)c->port);
        }
        conn_outcome(c, PROXY_OUT_UPSTREAM_FAILED, NULL, detail, NULL);
        return;
    }
    reply_close(c, NULL, 0);
}

/* ---------------------------------------------------------------------------
 * Request handlers
 * ------------------------------------------------------------------------- */

static void forward_request(struct proxy_conn *c)
{
    struct proxy_uri u;
    struct proxy_verdict v;
    const char *t = c->cur.target;
    const char *rest;
    size_t rl;
    char path[CANON_MAX];
    char detail[CANON_MAX + 600];

    if (!pv_ok(proxy_http_parse_uri(t, c->cur.target_len, &u))) {
        conn_outcome(c, PROXY_OUT_FORWARD_URI, NULL, "malformed absolute-form request-target",
                     NULL);
        return;
    }
    if (u.scheme.len == 5 && strncasecmp(t, "https", 5) == 0) {
        conn_outcome(c, PROXY_OUT_FORWARD_HTTPS, NULL, "Use CONNECT for HTTPS URLs", NULL);
        return;
    }
    if (!(u.scheme.len == 4 && strncasecmp(t, "http", 4) == 0)) {
        conn_outcome(c, PROXY_OUT_FORWARD_SCHEME, NULL, "Forward proxy requests must use http",
                     NULL);
        return;
    }
    set_host(c, t + u.host.off, u.host.len, u.port);
    /* the client's Host is ignored and replaced by the decided authority
     * (RFC 9112 §3.2.2): write_head() writes only the normalised host */
    if (strcmp(c->nhost, "policy.local") == 0) {
        if (u.port != 80) {
            conn_outcome(c, PROXY_OUT_POLICY_LOCAL_PORT, NULL, "Use http://policy.local only",
                         NULL);
        } else {
            conn_outcome(c, PROXY_OUT_POLICY_LOCAL, NULL,
                         "agent-driven policy proposals are not enabled in this sandbox; set the "
                         "`agent_policy_proposals_enabled` setting to true to enable",
                         NULL);
        }
        return;
    }
    rest = t + u.rest.off;
    rl = u.rest.len;
    if (rl == 0) {
        rest = "/";
        rl = 1;
    }
    {
        /* 'rest' points into the old target: copy before freeing; an empty
         * path before a query ("http://h?q") is "/" */
        bool slash = rest[0] == '?';
        char *nt = pv_malloc(rl + 2);
        if (nt == NULL) {
            conn_outcome(c, PROXY_OUT_INTERNAL, NULL, "out of memory", NULL);
            return;
        }
        nt[0] = '/';
        memcpy(nt + (slash ? 1 : 0), rest, rl);
        rl += slash ? 1 : 0;
        nt[rl] = '\0';
        free(c->cur.target);
        c->cur.target = nt;
        c->cur.target_len = rl;
    }
    proxy_decide_request(c->pol, c->id, c->host, strlen(c->host), c->port, c->cur.method,
                         c->cur.target, rl, &v);
    /* a grant whose only failure is the destination goes on to the address
     * checks (IP hosts are their own destination in model_decide) */
    if (!v.allow && !v.grant && reason_is_l4(v.reason)) {
        (void)canonicalise(c, c->cur.target, rl);
        snprintf(detail, sizeof(detail), "%s %s:%u%s not permitted by policy", c->cur.method,
                 c->host, (unsigned)c->port, cur_path(c, path, sizeof(path)));
        conn_outcome(c, PROXY_OUT_FORWARD_DENIED, &v, detail, v.detail);
        return;
    }
    if (v.route == MODEL_ROUTE_OPAQUE) {
        /* not inspected: the target goes upstream as the client wrote it */
        const char *q = memchr(c->cur.target, '?', rl);
        c->cur.out_target = pv_strndup(c->cur.target, rl);
        if (c->cur.out_target == NULL) {
            conn_outcome(c, PROXY_OUT_INTERNAL, NULL, "out of memory", NULL);
            return;
        }
        c->cur.canon_len = q != NULL ? (size_t)(q - c->cur.target) : rl;
        c->cur.has_query = q != NULL;
    } else if (!canonicalise(c, c->cur.target, rl) ||
               (!v.allow && reason_is_target(v.reason))) {
        if (v.detail[0] == '\0' || v.allow) {
            v.allow = false;
            snprintf(v.detail, sizeof(v.detail), "request-target must be canonical");
        }
        conn_outcome(c, PROXY_OUT_FORWARD_TARGET, &v, "request-target must be canonical", NULL);
        return;
    }
    c->route = v.route;
    if (!v.allow && !v.grant) {
        snprintf(detail, sizeof(detail), "%s %s:%u%s denied by L7 policy: %s", c->cur.method,
                 c->host, (unsigned)c->port, cur_path(c, path, sizeof(path)), v.detail);
        conn_outcome(c,
                     v.reason == MODEL_REASON_L7_UNSUPPORTED ? PROXY_OUT_FORWARD_UNSUPPORTED
                                                             : PROXY_OUT_FORWARD_L7_DENIED,
                     &v, detail, NULL);
        return;
    }
    if (c->cur.req->upgrade && v.route == MODEL_ROUTE_INSPECTED) {
        deny_upgrade(c, &v, PROXY_OUT_FORWARD_UNSUPPORTED);
        return;
    }
    /* reuse the upstream when it serves the same host:port */
    if (c->u != NULL && strcmp(c->u_host_key, c->nhost) == 0 && c->u_port == c->port) {
        struct proxy_verdict dv;
        bool l7 = c->route == MODEL_ROUTE_INSPECTED;
        proxy_decide_dest(c->pol, c->id, c->host, strlen(c->host), c->port, c->cur.method,
                          c->cur.target, c->cur.target_len, &c->u_ip, &c->srv->opts, &dv);
        if (dv.allow) {
            log_verdict(c, &dv, l7 ? "l7" : "opa", c->cur.method,
                        cur_path(c, path, sizeof(path)), "forward");
            send_request(c);
            return;
        }
    }
    drop_upstream(c);
    resolve(c);
}

/* Does the authority 'a' (port 'ap', 0 = the scheme's default) name the
 * decided host and port after normalisation? */
static bool authority_is(const struct proxy_conn *c, const char *a, size_t alen, uint16_t ap,
                         uint16_t dport)
{
    char nh[256];
    size_t nl = 0;
    bool is_ip = false;
    struct model_ip ip;

    if (!model_host_normalize(a, alen, nh, sizeof(nh), &nl, &is_ip, &ip) ||
        nl != strlen(c->nhost) || memcmp(nh, c->nhost, nl) != 0) {
        return false;
    }
    return (ap != 0 ? ap : dport) == c->port;
}

/* The Host field of the current request agrees with the decided authority
 * (or is absent). 'ok' false on a malformed field. */
static bool host_field_agrees(const struct proxy_conn *c, uint16_t dport, bool *ok)
{
    const struct proxy_request *r = c->cur.req;
    const struct proxy_header *hh;
    struct proxy_span ah;
    bool br = false;
    uint16_t ap = 0;

    *ok = true;
    if (r->host < 0) {
        return true;
    }
    hh = &r->hdr[r->host];
    if (!pv_ok(proxy_http_parse_authority(c->cur.head + hh->value.off, hh->value.len, true, &ah,
                                          &br, &ap))) {
        *ok = false;
        return false;
    }
    return authority_is(c, c->cur.head + hh->value.off + ah.off, ah.len, ap, dport);
}

/* Protocol upgrades are not inspected: a documented denial that names the
 * protocol asked for. */
static void deny_upgrade(struct proxy_conn *c, struct proxy_verdict *v, enum proxy_outcome o)
{
    const struct proxy_request *r = c->cur.req;
    const char *what = "protocol upgrades are not supported on L7-inspected endpoints";

    for (size_t i = 0; i < r->nhdr; i++) {
        const struct proxy_header *f = &r->hdr[i];
        const char *val = c->cur.head + f->value.off;
        if (!proxy_http_name_is(c->cur.head + f->name.off, f->name.len, "upgrade")) {
            continue;
        }
        for (size_t k = 0; k + 3 <= f->value.len; k++) {
            if (strncasecmp(val + k, "h2c", 3) == 0) {
                what = "HTTP/2 cleartext upgrades (h2c) are not supported on L7-inspected "
                       "endpoints";
            }
        }
        for (size_t k = 0; k + 9 <= f->value.len; k++) {
            if (strncasecmp(val + k, "websocket", 9) == 0) {
                what = "protocol upgrades (WebSocket) are not supported on L7-inspected "
                       "endpoints";
            }
        }
    }
    v->allow = false;
    v->loopback_exception = false;
    v->reason = MODEL_REASON_L7_UNSUPPORTED;
    snprintf(v->detail, sizeof(v->detail), "%s", what);
    conn_outcome(c, o, v, v->detail, NULL);
}

/* A request inside an inspected tunnel: the request's authority (absolute
 * form and Host field alike) must be the tunnel's, then the request is
 * decided against the pinned version with the connected address. */
static void tunnel_request(struct proxy_conn *c)
{
    const struct proxy_request *r = c->cur.req;
    const char *t = c->cur.target;
    const char *rest = t;
    size_t rl = c->cur.target_len;
    uint16_t dport = c->c_tls ? 443 : 80;
    bool agree = true;
    bool ok = true;
    struct proxy_verdict v;

    if (c->u_err[0] != '\0' || c->u == NULL) {
        char detail[600];
        snprintf(detail, sizeof(detail), "connection to %s:%u failed%s%s", c->host,
                 (unsigned)c->port, c->u_err[0] ? ": " : "", c->u_err);
        conn_outcome(c, PROXY_OUT_TUNNEL_UPSTREAM, NULL, detail, NULL);
        return;
    }
    if (t[0] != '/') {
        struct proxy_uri u;
        if (!pv_ok(proxy_http_parse_uri(t, rl, &u))) {
            conn_outcome(c, PROXY_OUT_TUNNEL_HEAD_BAD, NULL, "malformed request-target", NULL);
            return;
        }
        agree = authority_is(c, t + u.host.off, u.host.len, u.port_given ? u.port : 0, dport);
        rest = u.rest.len ? t + u.rest.off : "/";
        rl = u.rest.len ? u.rest.len : 1;
    } else if (r->host < 0 && r->version_minor == 1) {
        conn_outcome(c, PROXY_OUT_TUNNEL_HEAD_BAD, NULL, "HTTP/1.1 request without Host", NULL);
        return;
    }
    agree = host_field_agrees(c, dport, &ok) && agree;
    if (!ok) {
        conn_outcome(c, PROXY_OUT_TUNNEL_HEAD_BAD, NULL, "malformed Host field", NULL);
        return;
    }
    if (!agree) {
        conn_outcome(c, PROXY_OUT_TUNNEL_AUTHORITY, NULL,
                     "HTTP request authority does not match the authorized tunnel endpoint",
                     NULL);
        return;
    }
    if (rest != t) {
        char *nt = pv_strndup(rest[0] == '?' ? "/" : rest, rest[0] == '?' ? 1 : rl);
        if (nt == NULL) {
            conn_outcome(c, PROXY_OUT_INTERNAL, NULL, "out of memory", NULL);
            return;
        }
        if (rest[0] == '?') {
            char *q = pv_malloc(rl + 2);
            if (q == NULL) {
                free(nt);
                conn_outcome(c, PROXY_OUT_INTERNAL, NULL, "out of memory", NULL);
                return;
            }
            q[0] = '/';
            memcpy(q + 1, rest, rl);
            q[rl + 1] = '\0';
            free(nt);
            nt = q;
            rl++;
        }
        free(c->cur.target);
        c->cur.target = nt;
        c->cur.target_len = rl;
    }
    if (!canonicalise(c, c->cur.target, c->cur.target_len)) {
        conn_outcome(c, PROXY_OUT_TUNNEL_TARGET, NULL, "request-target must be canonical", NULL);
        return;
    }
    proxy_decide_dest(c->pol, c->id, c->host, strlen(c->host), c->port, c->cur.method,
                      c->cur.target, c->cur.target_len, &c->u_ip, &c->srv->opts, &v);
    if (!v.allow) {
        if (v.grant) {
            /* granted by a unit that does not admit the tunnel's address */
            char detail[600];
            snprintf(detail, sizeof(detail), "%s %s:%u blocked: %s", c->cur.method, c->host,
                     (unsigned)c->port, proxy_ssrf_kind(v.reason));
            conn_outcome(c, PROXY_OUT_TUNNEL_SSRF, &v, detail, NULL);
        } else if (reason_is_target(v.reason)) {
            conn_outcome(c, PROXY_OUT_TUNNEL_TARGET, &v, "request-target must be canonical",
                         NULL);
        } else {
            conn_outcome(c,
                         v.reason == MODEL_REASON_L7_UNSUPPORTED ? PROXY_OUT_TUNNEL_UNSUPPORTED
                                                                 : PROXY_OUT_TUNNEL_L7_DENIED,
                         &v, v.detail, NULL);
        }
        return;
    }
    if (r->upgrade) {
        deny_upgrade(c, &v, PROXY_OUT_TUNNEL_UNSUPPORTED);
        return;
    }
    {
        char path[CANON_MAX];
        log_verdict(c, &v, "l7", c->cur.method, cur_path(c, path, sizeof(path)), "l7");
    }
    send_request(c);
}

static void connect_request(struct proxy_conn *c)
{
    struct proxy_span h;
    bool br = false;
    uint16_t port = 0;
    struct proxy_verdict v;
    char detail[600];
    struct evbuffer *in = bufferevent_get_input(c->c);

    if (c->mode != PROXY_MODE_FORWARD ||
        !pv_ok(proxy_http_parse_authority(c->cur.target, c->cur.target_len, false, &h, &br,
                                          &port))) {
        conn_outcome(c, PROXY_OUT_CONNECT_TARGET, NULL, "malformed CONNECT target", NULL);
        return;
    }
    drop_upstream(c);
    set_host(c, c->cur.target + h.off, h.len, port);
    proxy_decide_connect(c->pol, c->id, c->host, strlen(c->host), port, &v);
    if (!v.allow && !v.grant) {
        snprintf(detail, sizeof(detail), "CONNECT %s:%u not permitted by policy", c->host,
                 (unsigned)port);
        conn_outcome(c, PROXY_OUT_CONNECT_DENIED, &v, detail, v.detail);
        return;
    }
    c->route = v.route;
    c->nreq++;
    /* bytes the client sent after the CONNECT head belong to the tunnel */
    bufferevent_disable(c->c, EV_READ);
    bufferevent_set_timeouts(c->c, NULL, NULL);
    if (evbuffer_get_length(in) > 0) {
        c->early = evbuffer_new();
        if (c->early == NULL) {
            conn_outcome(c, PROXY_OUT_INTERNAL, NULL, "out of memory", NULL);
            return;
        }
        evbuffer_add_buffer(c->early, in);
    }
    resolve(c);
}

/* ---------------------------------------------------------------------------
 * Tunnels
 * ------------------------------------------------------------------------- */

static void start_raw_tunnel(struct proxy_conn *c)
{
    if (!wrap_upstream_plain(c)) {
        conn_outcome(c, PROXY_OUT_INTERNAL, NULL, "out of memory", NULL);
        return;
    }
    bulk_sizes(c->c);
    c->mode = PROXY_MODE_RAW;
    c->state = PROXY_ST_TUNNEL;
    bufferevent_setwatermark(c->u, EV_WRITE, RELAY_HWM / 2, 0);
    bufferevent_setwatermark(c->c, EV_WRITE, RELAY_HWM / 2, 0);
    if (c->early != NULL) {
        evbuffer_add_buffer(bufferevent_get_output(c->u), c->early);
    }
    bufferevent_enable(c->c, EV_READ | EV_WRITE);
    bufferevent_enable(c->u, EV_READ | EV_WRITE);
    /* bytes may already wait in the client buffer */
    if (evbuffer_get_length(bufferevent_get_input(c->c)) > 0) {
        evbuffer_add_buffer(bufferevent_get_output(c->u), bufferevent_get_input(c->c));
    }
}

static void splice_done(void *arg, bool error)
{
    (void)error;
    conn_kill(arg);
}

/* The 200 is out and no byte is buffered on either side: hand both sockets
 * to the splice relay; the bufferevent is no longer needed. */
static void start_splice(struct proxy_conn *c)
{
    c->splice_pending = false;
    if (evbuffer_get_length(bufferevent_get_input(c->c)) > 0) {
        start_raw_tunnel(c);
        return;
    }
    bufferevent_free(c->c);
    c->c = NULL;
    c->spl = proxy_splice_new(c->srv->base, c->cfd, c->ufd, splice_done, c);
    if (c->spl == NULL) {
        conn_kill(c);
    }
}

static void sniff_cb(evutil_socket_t fd, short what, void *arg);

static void sniff_wait(struct proxy_conn *c, bool timer)
{
    struct timeval tv = {0, (long)SNIFF_STEP_MS * 1000};

    if (c->ev_io != NULL) {
        event_free(c->ev_io);
    }
    c->ev_io = event_new(c->srv->base, timer ? -1 : c->cfd, timer ? EV_TIMEOUT : EV_READ,
                         sniff_cb, c);
    if (c->ev_io == NULL) {
        conn_kill(c);
        return;
    }
    if (timer) {
        c->sniff_ms += SNIFF_STEP_MS;
    }
    event_add(c->ev_io, timer ? &tv : NULL);
}

static void start_l7(struct proxy_conn *c, bool tls)
{
    struct proxy_server *srv = c->srv;

    if (tls) {
        SSL *cs;
        SSL *us;
        if (c->early != NULL && evbuffer_get_length(c->early) > 0) {
            conn_kill(c); /* TLS bytes sent before the 200: cannot splice them into SSL */
            return;
        }
        cs = proxy_tls_server(srv->tls, c->nhost);
        us = proxy_tls_client(srv->tls, c->nhost, c->host_is_ip);
        if (cs == NULL || us == NULL) {
            SSL_free(cs);
            SSL_free(us);
            conn_kill(c);
            return;
        }
        bufferevent_free(c->c);
        c->c = bufferevent_openssl_socket_new(srv->base, c->cfd, cs,
                                              BUFFEREVENT_SSL_ACCEPTING, BEV_OPT_CLOSE_ON_FREE);
        if (c->c == NULL) {
            SSL_free(us);
            conn_kill(c);
            return;
        }
        c->cfd = -1;
        bufferevent_openssl_set_allow_dirty_shutdown(c->c, 1);
        c->u = bufferevent_openssl_socket_new(srv->base, c->ufd, us, BUFFEREVENT_SSL_CONNECTING,
                                              BEV_OPT_CLOSE_ON_FREE);
        if (c->u == NULL) {
            conn_kill(c);
            return;
        }
        c->ufd = -1;
        bufferevent_openssl_set_allow_dirty_shutdown(c->u, 1);
        bufferevent_setcb(c->u, up_read, up_write, up_event, c);
        bufferevent_enable(c->u, EV_READ | EV_WRITE);
        bulk_sizes(c->c);
        bulk_sizes(c->u);
        c->c_tls = true;
        c->u_tls = true;
    } else if (!wrap_upstream_plain(c)) {
        conn_kill(c);
        return;
    }
    c->mode = PROXY_MODE_L7;
    c->state = PROXY_ST_HEAD;
    bufferevent_setcb(c->c, client_read, client_write, client_event, c);
    if (!tls && c->early != NULL) {
        evbuffer_prepend_buffer(bufferevent_get_input(c->c), c->early);
    }
    {
        struct timeval tv;
        unsigned ms = srv->cfg->idle_timeout_ms;
        tv.tv_sec = ms / 1000;
        tv.tv_usec = (long)(ms % 1000) * 1000;
        bufferevent_set_timeouts(c->c, &tv, NULL);
    }
    bufferevent_enable(c->c, EV_READ | EV_WRITE);
    if (evbuffer_get_length(bufferevent_get_input(c->c)) > 0) {
        event_active(c->ev_kick, EV_TIMEOUT, 0);
    }
}

static void sniff_deny(struct proxy_conn *c, const char *detail)
{
    conn_outcome(c, PROXY_OUT_TUNNEL_PROTOCOL, NULL, detail, NULL);
}

static void sniff_try(struct proxy_conn *c)
{
    unsigned char buf[24];
    ssize_t n;
    enum proxy_sniff s;

    if (c->early != NULL && evbuffer_get_length(c->early) > 0) {
        n = evbuffer_copyout(c->early, buf, sizeof(buf));
    } else {
        n = recv(c->cfd, buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT);
        if (n == 0) {
            conn_kill(c);
            return;
        }
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR) {
                sniff_wait(c, false);
            } else {
                conn_kill(c);
            }
            return;
        }
    }
    s = proxy_http_sniff(buf, (size_t)n);
    if (s == PROXY_SNIFF_MORE && c->sniff_ms >= SNIFF_DEADLINE_MS) {
        s = PROXY_SNIFF_OTHER;
    }
    switch (s) {
    case PROXY_SNIFF_MORE:
        sniff_wait(c, true);
        return;
    case PROXY_SNIFF_TLS:
        start_l7(c, true);
        return;
    case PROXY_SNIFF_HTTP:
        start_l7(c, false);
        return;
    case PROXY_SNIFF_H2C:
        sniff_deny(c, "HTTP/2 prior-knowledge (h2c) is not supported for L7-inspected endpoints");
        return;
    case PROXY_SNIFF_OTHER:
        sniff_deny(c, "Unsupported tunnel protocol for L7-inspected endpoint");
        return;
    }
    conn_kill(c);
}

static void sniff_cb(evutil_socket_t fd, short what, void *arg)
{
    struct proxy_conn *c = arg;

    (void)fd;
    (void)what;
    if (!c->dead) {
        sniff_try(c);
    }
}

/* After a reload: does the tunnel still reach its destination by the same
 * route under the current version (docs/semantics.md#route)? If so it is
 * re-pinned to that version; if not it is closed with its log line. */
static bool tunnel_still_routed(struct proxy_conn *c)
{
    struct proxy_verdict v;
    const char *why;

    proxy_decide_dest(c->srv->policy, c->id, c->host, strlen(c->host), c->port, NULL, NULL, 0,
                      &c->u_ip, &c->srv->opts, &v);
    if (v.allow && v.route == c->route) {
        proxy_policy_unref(c->pol);
        c->pol = proxy_policy_ref(c->srv->policy);
        return true;
    }
    why = v.allow ? "route changed" : "no longer allowed";
    v.allow = false;
    snprintf(v.detail, sizeof(v.detail), "tunnel closed after policy reload (%s)", why);
    conn_outcome(c, PROXY_OUT_RELOAD_CLOSED, &v, v.detail, NULL);
    return false;
}

static void upstream_connected(struct proxy_conn *c)
{
    if (c->ev_io != NULL) {
        event_free(c->ev_io);
        c->ev_io = NULL;
    }
    if (c->cur.method != NULL && strcmp(c->cur.method, "CONNECT") == 0) {
        if (stale(c) && !tunnel_still_routed(c)) {
            return; /* a reload during resolve/connect changed the route */
        }
        bufferevent_write(c->c, established, sizeof(established) - 1);
        cur_clear(&c->cur);
        if (c->route == MODEL_ROUTE_INSPECTED) {
            /* sniff once the 200 is flushed (client_write) */
            c->state = PROXY_ST_SNIFF;
            c->sniff_ms = 0;
            bufferevent_setwatermark(c->c, EV_WRITE, 0, 0);
            bufferevent_enable(c->c, EV_WRITE);
            return;
        }
        if (c->early == NULL) {
            /* splice once the 200 is flushed (client_write) */
            c->mode = PROXY_MODE_RAW;
            c->state = PROXY_ST_TUNNEL;
            c->splice_pending = true;
            bufferevent_setwatermark(c->c, EV_WRITE, 0, 0);
            bufferevent_enable(c->c, EV_WRITE);
            return;
        }
        start_raw_tunnel(c);
        return;
    }
    if (!wrap_upstream_plain(c)) {
        conn_outcome(c, PROXY_OUT_INTERNAL, NULL, "out of memory", NULL);
        return;
    }
    snprintf(c->u_host_key, sizeof(c->u_host_key), "%s", c->nhost);
    c->u_port = c->port;
    send_request(c);
}

/* ---------------------------------------------------------------------------
 * Heads
 * ------------------------------------------------------------------------- */

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

    if (len == 0 || c->state != PROXY_ST_HEAD) {
        return;
    }
    if (stale(c) || c->srv->draining) {
        if (c->mode == PROXY_MODE_FORWARD && c->nreq == 0 && !c->srv->draining) {
            /* nothing was decided under the old version yet: adopt the new one */
            proxy_policy_unref(c->pol);
            c->pol = proxy_policy_ref(c->srv->policy);
        } else {
            conn_kill(c); /* request boundary after a reload: close */
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
    if (c->id == NULL) {
        /* the head is complete: who sent it? (off the loop, see proxy_idq.c);
         * process_head runs again once the identity is known */
        if (c->idjob == NULL) {
            c->idjob = proxy_idq_submit(c->srv->idq, c, &c->peer, &c->local);
            if (c->idjob == NULL) {
                conn_outcome(c, PROXY_OUT_INTERNAL, NULL, "out of memory", NULL);
            }
        }
        return;
    }
    if (st != PROXY_HEAD_OK) {
        conn_outcome(c, st == PROXY_HEAD_TOOBIG ? PROXY_OUT_HEAD_TOOBIG : PROXY_OUT_HEAD_BAD, NULL,
                     st == PROXY_HEAD_TOOBIG ? "request header block too large"
                                             : "malformed request head",
                     NULL);
        return;
    }
    cur_clear(&c->cur);
    c->cur.head = pv_malloc(hl);
    req = pv_malloc(sizeof(*req));
    if (c->cur.head == NULL || req == NULL) {
        free(req);
        conn_outcome(c, PROXY_OUT_INTERNAL, NULL, "out of memory", NULL);
        return;
    }
    c->cur.req = req;
    evbuffer_remove(in, c->cur.head, hl);
    c->cur.head_len = hl;
    st = proxy_http_parse(c->cur.head, hl, req, &why);
    if (st != PROXY_HEAD_OK) {
        conn_outcome(c, st == PROXY_HEAD_TOOBIG ? PROXY_OUT_HEAD_TOOBIG : PROXY_OUT_HEAD_BAD, NULL,
                     why, NULL);
        return;
    }
    c->cur.method = pv_strndup(c->cur.head + req->method.off, req->method.len);
    c->cur.target = pv_strndup(c->cur.head + req->target.off, req->target.len);
    if (c->cur.method == NULL || c->cur.target == NULL) {
        conn_outcome(c, PROXY_OUT_INTERNAL, NULL, "out of memory", NULL);
        return;
    }
    c->cur.target_len = req->target.len;
    c->cur.is_head = strcmp(c->cur.method, "HEAD") == 0;
    c->cur.keep_alive = req->version_minor == 1 && !req->conn_close && !c->c_eof;
    bufferevent_set_timeouts(c->c, NULL, NULL);
    if (strcmp(c->cur.method, "CONNECT") == 0) {
        connect_request(c);
    } else if (c->mode == PROXY_MODE_FORWARD) {
        forward_request(c);
    } else {
        tunnel_request(c);
    }
}

/* ---------------------------------------------------------------------------
 * Bufferevent callbacks
 * ------------------------------------------------------------------------- */

/* Tunnel relay in user space: move what 'from' read to 'to', and stop
 * reading 'from' while 'to' holds RELAY_HWM bytes (backpressure; the write
 * callback re-enables it). */
static void relay_chunk(struct bufferevent *from, struct bufferevent *to)
{
    struct evbuffer *out = bufferevent_get_output(to);

    evbuffer_add_buffer(out, bufferevent_get_input(from));
    if (evbuffer_get_length(out) >= RELAY_HWM) {
        bufferevent_disable(from, EV_READ);
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
    conn_outcome(c, PROXY_OUT_HEAD_TIMEOUT, NULL, "request head not complete in time", NULL);
}

static void arm_header_timer(struct proxy_conn *c)
{
    unsigned ms = c->srv->cfg->header_timeout_ms;
    struct timeval tv;

    if (ms == 0 || c->ev_hdr == NULL || evtimer_pending(c->ev_hdr, NULL) ||
        c->idjob != NULL) {
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
        conn_outcome(c, PROXY_OUT_INTERNAL, NULL, "out of memory (identity)", NULL);
        return;
    }
    c->id = id;
    process_head(c);
}

static void client_read(struct bufferevent *bev, void *arg)
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
        pump_req_body(c);
        return;
    case PROXY_ST_TUNNEL:
        relay_chunk(c->c, c->u);
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

static void client_write(struct bufferevent *bev, void *arg)
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
            sniff_try(c);
        }
        return;
    case PROXY_ST_TUNNEL:
        if (c->splice_pending) {
            if (evbuffer_get_length(bufferevent_get_output(c->c)) == 0) {
                start_splice(c);
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
    case PROXY_ST_HEAD:
    case PROXY_ST_RESOLVE:
    case PROXY_ST_CONNECT:
        return;
    }
}

static void tunnel_side_closed(struct proxy_conn *c, bool client_side)
{
    struct bufferevent *from = client_side ? c->c : c->u;
    struct bufferevent *to = client_side ? c->u : c->c;

    if (to == NULL) {
        conn_kill(c);
        return;
    }
    evbuffer_add_buffer(bufferevent_get_output(to), bufferevent_get_input(from));
    if (evbuffer_get_length(bufferevent_get_output(to)) == 0) {
        conn_kill(c);
        return;
    }
    /* flush what is left towards the other side, then close */
    c->state = PROXY_ST_CLOSING;
    bufferevent_disable(from, EV_READ);
    bufferevent_disable(to, EV_READ);
    bufferevent_setwatermark(to, EV_WRITE, 0, 0);
    bufferevent_enable(to, EV_WRITE);
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
        complete = c->cur.req != NULL &&
                   (c->cur.req->framing == PROXY_BODY_NONE ||
                    (c->cur.req->framing == PROXY_BODY_LENGTH &&
                     evbuffer_get_length(bufferevent_get_input(c->c)) >=
                         c->cur.req->content_length));
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
        /* a complete head waiting for its identity goes on */
        complete = c->idjob != NULL;
        break;
    case PROXY_ST_SNIFF:
    case PROXY_ST_TUNNEL:
        complete = false;
        break;
    }
    if (!complete) {
        return false;
    }
    if (c->state == PROXY_ST_RELAY && !c->req_done) {
        pump_req_body(c);
        if (c->dead) {
            return true;
        }
        if (!c->req_done) {
            return false; /* the body ended early: the request is incomplete */
        }
    }
    return true;
}

static void client_event(struct bufferevent *bev, short what, void *arg)
{
    struct proxy_conn *c = arg;

    (void)bev;
    if (c->dead || (what & BEV_EVENT_CONNECTED) != 0) {
        return;
    }
    if (c->state == PROXY_ST_TUNNEL && (what & BEV_EVENT_EOF) != 0) {
        tunnel_side_closed(c, true);
        return;
    }
    if ((what & BEV_EVENT_EOF) != 0 && client_half_closed(c)) {
        return;
    }
    if (c->c_tls && (what & BEV_EVENT_ERROR) != 0) {
        unsigned long e = bufferevent_get_openssl_error(c->c);
        if (e != 0) {
            char b[160];
            ERR_error_string_n(e, b, sizeof(b));
            proxy_log_note(c->srv->log, "TLS with the client for %s:%u failed: %s (does it trust "
                                        "the proxy CA?)",
                           c->host, (unsigned)c->port, b);
        }
        ERR_clear_error();
    }
    conn_kill(c);
}

static void up_read(struct bufferevent *bev, void *arg)
{
    struct proxy_conn *c = arg;

    (void)bev;
    if (c->dead) {
        return;
    }
    switch (c->state) {
    case PROXY_ST_RELAY:
        pump_resp(c);
        return;
    case PROXY_ST_TUNNEL:
        relay_chunk(c->u, c->c);
        return;
    case PROXY_ST_HEAD:
        /* an idle upstream spoke out of turn: it cannot be reused */
        if (c->mode == PROXY_MODE_FORWARD) {
            drop_upstream(c);
        } else {
            conn_kill(c);
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

static void up_write(struct bufferevent *bev, void *arg)
{
    struct proxy_conn *c = arg;

    (void)bev;
    if (c->dead) {
        return;
    }
    if (c->state == PROXY_ST_CLOSING) {
        if (evbuffer_get_length(bufferevent_get_output(c->u)) == 0 &&
            evbuffer_get_length(bufferevent_get_output(c->c)) == 0) {
            conn_kill(c);
        }
        return;
    }
    if ((c->state == PROXY_ST_RELAY && !c->req_done) || c->state == PROXY_ST_TUNNEL) {
        bufferevent_enable(c->c, EV_READ); /* backpressure released */
    }
}

static void up_event(struct bufferevent *bev, short what, void *arg)
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
        resp_eof(c);
        return;
    case PROXY_ST_TUNNEL:
        if ((what & BEV_EVENT_EOF) != 0) {
            tunnel_side_closed(c, false);
        } else {
            conn_kill(c);
        }
        return;
    case PROXY_ST_HEAD:
        if (c->mode == PROXY_MODE_FORWARD) {
            drop_upstream(c);
        } else if (c->u_err[0] != '\0') {
            /* report the TLS failure on the next request */
            drop_upstream(c);
        } else {
            conn_kill(c);
        }
        return;
    case PROXY_ST_RESOLVE:
    case PROXY_ST_CONNECT:
    case PROXY_ST_SNIFF:
    case PROXY_ST_CLOSING:
    case PROXY_ST_LINGER:
        conn_kill(c);
        return;
    }
}

/* ---------------------------------------------------------------------------
 * Server hooks
 * ------------------------------------------------------------------------- */

static bool same_addr(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
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

    if (srv->nconns <= srv->cfg->max_client_conns) {
        return; /* no address can be over the cap */
    }
    /* the list is newest first: the last waiting match is the oldest */
    for (struct proxy_conn *o = srv->conns; o != NULL; o = o->next) {
        if (o->state == PROXY_ST_LINGER || o->state == PROXY_ST_CLOSING ||
            !same_addr(&o->peer, &c->peer)) {
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
    conn_outcome(victim != NULL ? victim : c, PROXY_OUT_CONN_LIMIT, NULL,
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
    set_nodelay(fd);
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
    bulk_sizes(c->c);
    bufferevent_setcb(c->c, client_read, client_write, client_event, c);
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
        (void)tunnel_still_routed(c);
        return;
    }
    if (c->state == PROXY_ST_HEAD && evbuffer_get_length(bufferevent_get_input(c->c)) == 0) {
        if (c->mode == PROXY_MODE_FORWARD && c->nreq == 0) {
            return; /* adopts the new version with its first request */
        }
        conn_kill(c); /* idle at a request boundary */
    }
    /* busy connections close when their current response completes */
}

void proxy_conn_drain(struct proxy_conn *c)
{
    if (c->dead) {
        return;
    }
    if (c->state == PROXY_ST_HEAD && evbuffer_get_length(bufferevent_get_input(c->c)) == 0) {
        conn_kill(c);
    }
}
