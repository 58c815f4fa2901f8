/* SPDX-License-Identifier: Apache-2.0 */
/* proxy_tunnel.c - CONNECT tunnels: opaque (spliced) and inspected
 *
 * A CONNECT is decided at the policy layer, then per resolved address. An
 * opaque route is spliced (proxy_splice.c); an inspected one is sniffed
 * (TLS, HTTP/1 with any method token, or refused), terminated when TLS, and
 * every request in it must name the tunnel's authority in its target and
 * its Host field alike before it is decided with the connected address.
 * After a reload a tunnel lives on only if the new version reaches it by
 * the same route (proxy_tunnel_still_routed).
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

#define SNIFF_STEP_MS 5u
#define SNIFF_DEADLINE_MS 100u

static const char established[] = "HTTP/1.1 200 Connection Established\r\n\r\n";

static bool authority_is(const struct proxy_conn *c, const char *a, size_t alen, uint16_t ap,
                         uint16_t dport);
static bool host_field_agrees(const struct proxy_conn *c, uint16_t dport, bool *ok);
static void start_raw_tunnel(struct proxy_conn *c);
static void splice_done(void *arg, bool error);
static void sniff_wait(struct proxy_conn *c, bool timer);
static void start_l7(struct proxy_conn *c, bool tls);
static void sniff_deny(struct proxy_conn *c, const char *detail);
static void sniff_cb(evutil_socket_t fd, short what, void *arg);

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
void proxy_tunnel_deny_upgrade(struct proxy_conn *c, struct proxy_verdict *v, enum proxy_outcome o)
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
    proxy_conn_outcome(c, o, v, v->detail, NULL);
}

/* A request inside an inspected tunnel: the request's authority (absolute
 * form and Host field alike) must be the tunnel's, then the request is
 * decided against the pinned version with the connected address. */
/* long: a tunnelled request in order (authority, target, credentials, decision, upgrade, gate,
 * send); each step ends the request or passes it on */
void proxy_tunnel_request(struct proxy_conn *c)
{
    const struct proxy_request *r = c->cur.req;
    const char *t = c->cur.target;
    const char *rest = t;
    size_t rl = c->cur.target_len;
    uint16_t dport = c->c_tls ? 443 : 80;
    bool agree = true;
    bool ok = true;

    if (c->u_err[0] != '\0' || c->u == NULL) {
        char detail[600];
        snprintf(detail, sizeof(detail), "connection to %s:%u failed%s%s", c->host,
                 (unsigned)c->port, c->u_err[0] ? ": " : "", c->u_err);
        proxy_conn_outcome(c, PROXY_OUT_TUNNEL_UPSTREAM, NULL, detail, NULL);
        return;
    }
    if (t[0] != '/') {
        struct proxy_uri u;
        if (!pv_ok(proxy_http_parse_uri(t, rl, &u))) {
            proxy_conn_outcome(c, PROXY_OUT_TUNNEL_HEAD_BAD, NULL, "malformed request-target",
                               NULL);
            return;
        }
        agree = authority_is(c, t + u.host.off, u.host.len, u.port_given ? u.port : 0, dport);
        rest = u.rest.len ? t + u.rest.off : "/";
        rl = u.rest.len ? u.rest.len : 1;
    } else if (r->host < 0 && r->version_minor == 1) {
        proxy_conn_outcome(c, PROXY_OUT_TUNNEL_HEAD_BAD, NULL, "HTTP/1.1 request without Host",
                           NULL);
        return;
    }
    agree = host_field_agrees(c, dport, &ok) && agree;
    if (!ok) {
        proxy_conn_outcome(c, PROXY_OUT_TUNNEL_HEAD_BAD, NULL, "malformed Host field", NULL);
        return;
    }
    if (!agree) {
        proxy_conn_outcome(c, PROXY_OUT_TUNNEL_AUTHORITY, NULL,
                           "HTTP request authority does not match the authorized tunnel endpoint",
                           NULL);
        return;
    }
    if (rest != t) {
        char *nt = pv_strndup(rest[0] == '?' ? "/" : rest, rest[0] == '?' ? 1 : rl);
        if (nt == NULL) {
            proxy_conn_outcome(c, PROXY_OUT_INTERNAL, NULL, "out of memory", NULL);
            return;
        }
        if (rest[0] == '?') {
            char *q = pv_malloc(rl + 2);
            if (q == NULL) {
                free(nt);
                proxy_conn_outcome(c, PROXY_OUT_INTERNAL, NULL, "out of memory", NULL);
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
    /* placeholders in the target: decided and logged redacted */
    proxy_cred_prepare_target(c);
    if (!proxy_relay_canonicalise(c, c->cur.target, c->cur.target_len)) {
        proxy_conn_outcome(c, PROXY_OUT_TUNNEL_TARGET, NULL, "request-target must be canonical",
                           NULL);
        return;
    }
    proxy_tunnel_request_decide(c);
}

void proxy_tunnel_request_decide(struct proxy_conn *c)
{
    struct proxy_verdict v;
    struct proxy_decide_opts o = c->srv->opts;

    o.gql_ops = proxy_bodyhold_gql_ops(c);
    o.rpc_calls = proxy_rpc_calls(c);
    o.rpc_res = proxy_rpc_results(c);
    proxy_decide_dest(c->pol, c->id, c->host, strlen(c->host), c->port, c->cur.method,
                      c->cur.target, c->cur.target_len, &c->u_ip, &o, &v);
    /* a graphql endpoint decides by the operations: read them first */
    if (proxy_bodyhold_hold(c, &v, proxy_tunnel_request_decide)) {
        return;
    }
    if (!v.allow) {
        if (v.grant) {
            /* granted by a unit that does not admit the tunnel's address */
            char detail[600];
            snprintf(detail, sizeof(detail), "%s %s:%u blocked: %s", c->cur.method, c->host,
                     (unsigned)c->port, proxy_ssrf_kind(v.reason));
            proxy_conn_outcome(c, PROXY_OUT_TUNNEL_SSRF, &v, detail, NULL);
        } else if (proxy_relay_reason_is_target(v.reason)) {
            proxy_conn_outcome(c, PROXY_OUT_TUNNEL_TARGET, &v, "request-target must be canonical",
                               NULL);
        } else {
            proxy_conn_outcome(c,
                               v.reason == MODEL_REASON_L7_UNSUPPORTED
                                   ? PROXY_OUT_TUNNEL_UNSUPPORTED
                                   : PROXY_OUT_TUNNEL_L7_DENIED,
                               &v, v.detail, NULL);
        }
        return;
    }
    if (c->cur.req->upgrade && !proxy_ws_admit(c, &v, PROXY_OUT_TUNNEL_UNSUPPORTED)) {
        return;
    }
    if (!proxy_cred_gate(c, &v)) {
        return;
    }
    {
        char path[CANON_MAX];
        proxy_conn_log_verdict(c, &v, "l7", c->cur.method,
                               proxy_conn_cur_path(c, path, sizeof(path)), "l7");
    }
    proxy_relay_send_request(c);
}

void proxy_tunnel_connect(struct proxy_conn *c)
{
    struct proxy_span h;
    bool br = false;
    uint16_t port = 0;
    struct proxy_verdict v;
    char detail[600];
    struct evbuffer *in = bufferevent_get_input(c->c);

    if (c->mode != PROXY_MODE_FORWARD ||
        !pv_ok(
            proxy_http_parse_authority(c->cur.target, c->cur.target_len, false, &h, &br, &port))) {
        proxy_conn_outcome(c, PROXY_OUT_CONNECT_TARGET, NULL, "malformed CONNECT target", NULL);
        return;
    }
    proxy_conn_drop_upstream(c);
    proxy_relay_set_host(c, c->cur.target + h.off, h.len, port);
    proxy_decide_connect(c->pol, c->id, c->host, strlen(c->host), port, &c->srv->opts, &v);
    if (!v.allow && !v.grant) {
        snprintf(detail, sizeof(detail), "CONNECT %s:%u not permitted by policy", c->host,
                 (unsigned)port);
        proxy_conn_outcome(c, PROXY_OUT_CONNECT_DENIED, &v, detail, v.detail);
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
            proxy_conn_outcome(c, PROXY_OUT_INTERNAL, NULL, "out of memory", NULL);
            return;
        }
        evbuffer_add_buffer(c->early, in);
    }
    proxy_relay_resolve(c);
}

/* ---------------------------------------------------------------------------
 * Tunnels
 * ------------------------------------------------------------------------- */

static void start_raw_tunnel(struct proxy_conn *c)
{
    if (!proxy_relay_wrap_upstream(c)) {
        proxy_conn_outcome(c, PROXY_OUT_INTERNAL, NULL, "out of memory", NULL);
        return;
    }
    proxy_relay_bulk_sizes(c->c);
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
    proxy_conn_kill(arg);
}

/* The 200 is out and no byte is buffered on either side: hand both sockets
 * to the splice relay; the bufferevent is no longer needed. */
void proxy_tunnel_start_splice(struct proxy_conn *c)
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
        proxy_conn_kill(c);
    }
}

static void sniff_wait(struct proxy_conn *c, bool timer)
{
    struct timeval tv = {0, (long)SNIFF_STEP_MS * 1000};

    if (c->ev_io != NULL) {
        event_free(c->ev_io);
    }
    c->ev_io =
        event_new(c->srv->base, timer ? -1 : c->cfd, timer ? EV_TIMEOUT : EV_READ, sniff_cb, c);
    if (c->ev_io == NULL) {
        proxy_conn_kill(c);
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
            proxy_conn_kill(c); /* TLS bytes sent before the 200: cannot splice them into SSL */
            return;
        }
        cs = proxy_tls_server(srv->tls, c->nhost);
        us = proxy_tls_client(srv->tls, c->nhost, c->host_is_ip);
        if (cs == NULL || us == NULL) {
            SSL_free(cs);
            SSL_free(us);
            proxy_conn_kill(c);
            return;
        }
        bufferevent_free(c->c);
        c->c = bufferevent_openssl_socket_new(srv->base, c->cfd, cs, BUFFEREVENT_SSL_ACCEPTING,
                                              BEV_OPT_CLOSE_ON_FREE);
        if (c->c == NULL) {
            SSL_free(us);
            proxy_conn_kill(c);
            return;
        }
        c->cfd = -1;
        bufferevent_openssl_set_allow_dirty_shutdown(c->c, 1);
        c->u = bufferevent_openssl_socket_new(srv->base, c->ufd, us, BUFFEREVENT_SSL_CONNECTING,
                                              BEV_OPT_CLOSE_ON_FREE);
        if (c->u == NULL) {
            proxy_conn_kill(c);
            return;
        }
        c->ufd = -1;
        bufferevent_openssl_set_allow_dirty_shutdown(c->u, 1);
        bufferevent_setcb(c->u, proxy_conn_up_read, proxy_conn_up_write, proxy_conn_up_event, c);
        bufferevent_enable(c->u, EV_READ | EV_WRITE);
        proxy_relay_bulk_sizes(c->c);
        proxy_relay_bulk_sizes(c->u);
        c->c_tls = true;
        c->u_tls = true;
    } else if (!proxy_relay_wrap_upstream(c)) {
        proxy_conn_kill(c);
        return;
    }
    c->mode = PROXY_MODE_L7;
    c->state = PROXY_ST_HEAD;
    bufferevent_setcb(c->c, proxy_conn_client_read, proxy_conn_client_write,
                      proxy_conn_client_event, c);
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
    proxy_conn_outcome(c, PROXY_OUT_TUNNEL_PROTOCOL, NULL, detail, NULL);
}

void proxy_tunnel_sniff(struct proxy_conn *c)
{
    unsigned char buf[24];
    ssize_t n;
    enum proxy_sniff s;

    if (c->early != NULL && evbuffer_get_length(c->early) > 0) {
        n = evbuffer_copyout(c->early, buf, sizeof(buf));
    } else {
        n = recv(c->cfd, buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT);
        if (n == 0) {
            proxy_conn_kill(c);
            return;
        }
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR) {
                sniff_wait(c, false);
            } else {
                proxy_conn_kill(c);
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
    proxy_conn_kill(c);
}

static void sniff_cb(evutil_socket_t fd, short what, void *arg)
{
    struct proxy_conn *c = arg;

    (void)fd;
    (void)what;
    if (!c->dead) {
        proxy_tunnel_sniff(c);
    }
}

/* After a reload: does the tunnel still reach its destination by the same
 * route under the current version (docs/semantics.md#route)? If so it is
 * re-pinned to that version; if not it is closed with its log line. */
bool proxy_tunnel_still_routed(struct proxy_conn *c)
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
    proxy_conn_outcome(c, PROXY_OUT_RELOAD_CLOSED, &v, v.detail, NULL);
    return false;
}

void proxy_tunnel_upstream_connected(struct proxy_conn *c)
{
    if (c->ev_io != NULL) {
        event_free(c->ev_io);
        c->ev_io = NULL;
    }
    if (c->cur.method != NULL && strcmp(c->cur.method, "CONNECT") == 0) {
        if (proxy_conn_stale(c) && !proxy_tunnel_still_routed(c)) {
            return; /* a reload during proxy_relay_resolve/connect changed the route */
        }
        bufferevent_write(c->c, established, sizeof(established) - 1);
        proxy_conn_cur_clear(&c->cur);
        if (c->route == MODEL_ROUTE_INSPECTED) {
            /* sniff once the 200 is flushed (proxy_conn_client_write) */
            c->state = PROXY_ST_SNIFF;
            c->sniff_ms = 0;
            bufferevent_setwatermark(c->c, EV_WRITE, 0, 0);
            bufferevent_enable(c->c, EV_WRITE);
            return;
        }
        if (c->early == NULL) {
            /* splice once the 200 is flushed (proxy_conn_client_write) */
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
    if (!proxy_relay_wrap_upstream(c)) {
        proxy_conn_outcome(c, PROXY_OUT_INTERNAL, NULL, "out of memory", NULL);
        return;
    }
    snprintf(c->u_host_key, sizeof(c->u_host_key), "%s", c->nhost);
    c->u_port = c->port;
    proxy_relay_send_request(c);
}

/* ---------------------------------------------------------------------------
 * Bufferevent callbacks
 * ------------------------------------------------------------------------- */

/* Tunnel relay in user space: move what 'from' read to 'to', and stop
 * reading 'from' while 'to' holds RELAY_HWM bytes (backpressure; the write
 * callback re-enables it). */
void proxy_tunnel_relay_chunk(struct bufferevent *from, struct bufferevent *to)
{
    struct evbuffer *out = bufferevent_get_output(to);

    evbuffer_add_buffer(out, bufferevent_get_input(from));
    if (evbuffer_get_length(out) >= RELAY_HWM) {
        bufferevent_disable(from, EV_READ);
    }
}

void proxy_tunnel_side_closed(struct proxy_conn *c, bool client_side)
{
    struct bufferevent *from = client_side ? c->c : c->u;
    struct bufferevent *to = client_side ? c->u : c->c;

    if (to == NULL) {
        proxy_conn_kill(c);
        return;
    }
    evbuffer_add_buffer(bufferevent_get_output(to), bufferevent_get_input(from));
    if (evbuffer_get_length(bufferevent_get_output(to)) == 0) {
        proxy_conn_kill(c);
        return;
    }
    /* flush what is left towards the other side, then close */
    c->state = PROXY_ST_CLOSING;
    bufferevent_disable(from, EV_READ);
    bufferevent_disable(to, EV_READ);
    bufferevent_setwatermark(to, EV_WRITE, 0, 0);
    bufferevent_enable(to, EV_WRITE);
}
