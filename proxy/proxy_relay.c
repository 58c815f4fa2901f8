/* SPDX-License-Identifier: Apache-2.0 */
/* proxy_relay.c - forward requests: decision, resolution, connect, relay
 *
 * A forward (absolute-form) request is decided by model_decide() through
 * proxy_policy.c (request, then every resolved address); the proxy connects
 * only to admitted addresses, in resolver order, and never resolves a name
 * twice for one request. The head that goes upstream is written by the
 * proxy (decided Host, decided target, its own framing fields); request
 * bodies are counted (Content-Length) or re-chunked by the strict decoder
 * (proxy_chunk.c), so an upstream never sees framing the proxy did not
 * validate. Responses are framed by libhttp-parser so that a keep-alive
 * connection knows where each ends. Bytes move between bufferevents without
 * copies where no re-framing is needed; output buffers above RELAY_HWM stop
 * reading on the other side (backpressure).
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

#include "common/pv_dynbuf.h"
#include "proxy/proxy_int.h"
#include "proxy/proxy_ws.h"

static void check_addrs(struct proxy_conn *c);
static void dns_cb(int result, struct evutil_addrinfo *res, void *arg);
static int sockaddr_of(const struct model_ip *ip, uint16_t port, struct sockaddr_storage *ss);
static void connect_failed(struct proxy_conn *c);
static void connect_cb(evutil_socket_t fd, short what, void *arg);
static void start_connect(struct proxy_conn *c);
static int resp_headers_complete(http_parser *p);
static int resp_msg_complete(http_parser *p);
static void start_req_body(struct proxy_conn *c);
static void write_head(struct proxy_conn *c, struct evbuffer *out, size_t body_len);
static void finish_request(struct proxy_conn *c);
static ssize_t parse_chunks(http_parser *p, const http_parser_settings *s, struct evbuffer *in,
                            bool *done);
static void emit_out(void *arg, const char *p, size_t n);
static void body_error(struct proxy_conn *c, const char *why);
static void collect_body(struct proxy_conn *c, struct evbuffer *in, struct evbuffer *out);

/* ---------------------------------------------------------------------------
 * Host bookkeeping
 * ------------------------------------------------------------------------- */

void proxy_relay_set_host(struct proxy_conn *c, const char *h, size_t hl, uint16_t port)
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
bool proxy_relay_canonicalise(struct proxy_conn *c, const char *t, size_t tl)
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

bool proxy_relay_reason_is_target(enum model_reason r)
{
    return r == MODEL_REASON_BAD_TARGET || r == MODEL_REASON_ENCODED_SLASH;
}

/* ---------------------------------------------------------------------------
 * Destination checks and connect
 * ------------------------------------------------------------------------- */

/* Shape the target a forward request sends upstream for 'route': on an opaque
 * route it goes as the client wrote it, on an inspected one in canonical
 * form. False when an inspected route meets a target that does not
 * canonicalise (or memory runs out). */
static bool shape_target(struct proxy_conn *c, enum model_route route)
{
    const char *t = c->cur.target;
    size_t tl = c->cur.target_len;

    free(c->cur.out_target);
    c->cur.out_target = NULL;
    if (route != MODEL_ROUTE_OPAQUE) {
        return proxy_relay_canonicalise(c, t, tl);
    }
    {
        const char *q = memchr(t, '?', tl);
        c->cur.out_target = pv_strndup(t, tl);
        if (c->cur.out_target == NULL) {
            return false;
        }
        c->cur.canon_len = q != NULL ? (size_t)(q - t) : tl;
        c->cur.has_query = q != NULL;
    }
    return true;
}

/* Keep the addresses the policy admits for the current request. The route
 * is the one the first admitted address is reached by: with several identity
 * entries the entry that admits an address may differ from the one the
 * destination-less decision chose, and a connection has one route, so
 * addresses admitted by another route are dropped
 * (docs/semantics.md#identity-any, docs/proxy.md#routes). */
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
    struct proxy_decide_opts o = c->srv->opts;

    /* an upgrade is carried only by an opaque route: prefer an entry with one */
    o.prefer_opaque = !connect && c->cur.req != NULL && c->cur.req->upgrade;
    o.gql_ops = connect ? NULL : proxy_bodyhold_gql_ops(c);
    o.rpc_calls = connect ? NULL : proxy_rpc_calls(c);
    o.rpc_res = connect ? NULL : proxy_rpc_results(c);
    memset(&first, 0, sizeof(first));
    for (size_t i = 0; i < c->naddrs; i++) {
        proxy_decide_dest(c->pol, c->id, c->host, strlen(c->host), c->port, m, t, tl, &c->addrs[i],
                          &o, &v);
        if (v.allow) {
            if (nok == 0) {
                first = v;
            } else if (v.route != first.route) {
                continue;
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
        proxy_conn_outcome(c, PROXY_OUT_SSRF, &first, detail, NULL);
        return;
    }
    if (!connect && first.route != c->route) {
        /* the target was shaped for the destination-less route */
        if (!shape_target(c, first.route)) {
            first.allow = false;
            first.loopback_exception = false;
            snprintf(first.detail, sizeof(first.detail), "request-target must be canonical");
            proxy_conn_outcome(c, PROXY_OUT_FORWARD_TARGET, &first,
                               "request-target must be canonical", NULL);
            return;
        }
    }
    c->route = first.route;
    if (!connect && c->cur.req->upgrade && first.route == MODEL_ROUTE_INSPECTED &&
        !proxy_ws_admit(c, &first, PROXY_OUT_FORWARD_UNSUPPORTED)) {
        return;
    }
    memcpy(c->addrs, ok, nok * sizeof(ok[0]));
    c->naddrs = nok;
    c->next_addr = 0;
    if (connect) {
        proxy_conn_log_verdict(c, &first, "policy", NULL, NULL, "connect");
    } else {
        if (!proxy_cred_gate(c, &first)) {
            return;
        }
        proxy_conn_log_verdict(c, &first, c->route == MODEL_ROUTE_INSPECTED ? "l7" : "policy",
                               c->cur.method, proxy_conn_cur_path(c, path, sizeof(path)),
                               "forward");
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
            const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)(const void *)a->ai_addr;
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

void proxy_relay_after_resolve(struct proxy_conn *c)
{
    char detail[400];

    if (c->dns_err != 0 || c->naddrs == 0) {
        snprintf(detail, sizeof(detail), "DNS resolution failed for %s:%u: %s", c->host,
                 (unsigned)c->port,
                 c->dns_err != 0 ? evutil_gai_strerror(c->dns_err) : "no addresses");
        proxy_conn_outcome(c, PROXY_OUT_DNS, NULL, detail, NULL);
        return;
    }
    check_addrs(c);
}

void proxy_relay_resolve(struct proxy_conn *c)
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

void proxy_relay_set_nodelay(int fd)
{
    int one = 1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

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
    proxy_conn_outcome(c, PROXY_OUT_UPSTREAM_FAILED, NULL, detail, NULL);
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
    if ((what & EV_TIMEOUT) != 0 || getsockopt(c->ufd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 ||
        err != 0) {
        connect_failed(c);
        return;
    }
    proxy_tunnel_upstream_connected(c);
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
    proxy_relay_set_nodelay(c->ufd);
    if (connect(c->ufd, (struct sockaddr *)&ss, (socklen_t)sl) == 0) {
        proxy_tunnel_upstream_connected(c);
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
void proxy_relay_bulk_sizes(struct bufferevent *bev)
{
    (void)bufferevent_set_max_single_read(bev, RELAY_HWM);
    (void)bufferevent_set_max_single_write(bev, RELAY_HWM);
}

/* Wrap the connected upstream socket in a plain bufferevent. */
bool proxy_relay_wrap_upstream(struct proxy_conn *c)
{
    c->u = bufferevent_socket_new(c->srv->base, c->ufd, BEV_OPT_CLOSE_ON_FREE);
    if (c->u == NULL) {
        return false;
    }
    c->ufd = -1;
    proxy_relay_bulk_sizes(c->u);
    bufferevent_setcb(c->u, proxy_conn_up_read, proxy_conn_up_write, proxy_conn_up_event, c);
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
static void write_head(struct proxy_conn *c, struct evbuffer *out, size_t body_len)
{
    const struct proxy_request *r = c->cur.req;
    const char *h = c->cur.head;
    bool forward = c->mode == PROXY_MODE_FORWARD;
    bool via = false;
    bool v6 = strchr(c->nhost, ':') != NULL;
    uint16_t dport = c->c_tls ? 443 : 80;

    const struct proxy_cred_req *cr = c->cur.cred;

    evbuffer_add_printf(out, "%s %s HTTP/1.%u\r\n", c->cur.method,
                        cr != NULL && cr->out_target != NULL ? cr->out_target : c->cur.out_target,
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
        /* a WebSocket upgrade never offers an extension: a compressed
         * message could not be inspected (docs/proxy.md#websocket) */
        if (c->ws != NULL && proxy_http_name_is(n, f->name.len, "sec-websocket-extensions")) {
            continue;
        }
        if (proxy_http_name_is(n, f->name.len, "via")) {
            via = true;
        }
        evbuffer_add(out, n, f->name.len);
        evbuffer_add(out, ": ", 2);
        if (cr != NULL && cr->hdr[i] != NULL) {
            evbuffer_add(out, cr->hdr[i], cr->hlen[i]); /* placeholders resolved */
        } else {
            evbuffer_add(out, h + f->value.off, f->value.len);
        }
        evbuffer_add(out, "\r\n", 2);
    }
    switch (r->framing) {
    case PROXY_BODY_NONE:
        break;
    case PROXY_BODY_LENGTH:
        evbuffer_add_printf(
            out, "Content-Length: %llu\r\n",
            (unsigned long long)(cr != NULL && cr->body ? body_len : r->content_length));
        break;
    case PROXY_BODY_CHUNKED:
        evbuffer_add_printf(out, "Transfer-Encoding: chunked\r\n");
        break;
    }
    if (c->ws != NULL) {
        evbuffer_add_printf(out, "Upgrade: websocket\r\nConnection: Upgrade\r\n");
    }
    if (forward && !via) {
        evbuffer_add_printf(out, "Via: 1.1 proviso-proxy\r\n");
    }
    if (r->version_minor == 0) {
        evbuffer_add_printf(out, "Connection: close\r\n");
    }
    evbuffer_add(out, "\r\n", 2);
}

void proxy_relay_send_request(struct proxy_conn *c)
{
    start_req_body(c);
    if (c->cur.cred == NULL || !c->cur.cred->body) {
        write_head(c, bufferevent_get_output(c->u), 0);
    }
    http_parser_init(&c->resp, HTTP_RESPONSE);
    c->resp.data = c;
    c->resp_done = false;
    c->resp_head_ok = false;
    c->resp_started = false;
    c->resp_eof_framed = false;
    c->resp_stream = false;
    c->resp_status = 0;
    c->state = PROXY_ST_RELAY;
    c->nreq++;
    bufferevent_setwatermark(c->u, EV_WRITE, RELAY_HWM / 2, 0);
    bufferevent_setwatermark(c->c, EV_WRITE, RELAY_HWM / 2, 0);
    bufferevent_enable(c->u, EV_READ | EV_WRITE);
    bufferevent_set_timeouts(c->c, NULL, NULL);
    proxy_relay_pump_req_body(c);
    if (!c->dead && c->state == PROXY_ST_RELAY) {
        proxy_relay_pump_resp(c);
    }
}

static void finish_request(struct proxy_conn *c)
{
    bool up_ok = http_should_keep_alive(&c->resp) && !c->resp_eof_framed && c->req_done &&
                 c->u != NULL && evbuffer_get_length(bufferevent_get_input(c->u)) == 0;
    bool keep =
        c->cur.keep_alive && up_ok && !c->srv->draining && !proxy_conn_stale(c) && !c->c_eof;
    struct timeval tv;
    unsigned ms = c->srv->cfg->idle_timeout_ms;

    if (c->ev_gone != NULL) {
        event_del(c->ev_gone);
    }
    proxy_conn_cur_clear(&c->cur);
    /* an upgrade answered with anything but 101 was a normal request */
    proxy_ws_conn_free(c->ws);
    c->ws = NULL;
    if (!up_ok) {
        proxy_conn_drop_upstream(c);
        /* an inspected tunnel has exactly one upstream */
        keep = keep && c->mode == PROXY_MODE_FORWARD;
    }
    if (!keep) {
        proxy_conn_reply_close(c, NULL, 0);
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

void proxy_relay_pump_req_body(struct proxy_conn *c)
{
    struct evbuffer *in = bufferevent_get_input(c->c);
    struct evbuffer *out;

    if (c->req_done) {
        /* pipelined bytes wait for the response to finish */
        bufferevent_disable(c->c, EV_READ);
        return;
    }
    out = bufferevent_get_output(c->u);
    if (c->cur.cred != NULL && c->cur.cred->body) {
        collect_body(c, in, out);
        return;
    }
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

/* request_body_credential_rewrite: the whole body (Content-Length, at most
 * PROXY_CRED_BODY_MAX, checked by the gate) is read before the head goes,
 * since its length changes. */
static void collect_body(struct proxy_conn *c, struct evbuffer *in, struct evbuffer *out)
{
    struct proxy_cred_req *q = c->cur.cred;
    size_t avail = evbuffer_get_length(in);
    size_t n = (uint64_t)avail < c->body_left ? avail : (size_t)c->body_left;
    struct pv_dynbuf nb;

    if (q->bodybuf == NULL) {
        q->bodybuf = evbuffer_new();
        if (q->bodybuf == NULL) {
            proxy_conn_outcome(c, PROXY_OUT_INTERNAL, NULL, "out of memory", NULL);
            return;
        }
    }
    evbuffer_remove_buffer(in, q->bodybuf, n);
    c->body_left -= n;
    if (c->body_left > 0) {
        if (c->c_eof && evbuffer_get_length(in) == 0) {
            body_error(c, "the client closed before the end of the body");
        }
        return;
    }
    c->req_done = true;
    bufferevent_disable(c->c, EV_READ);
    pv_dynbuf_init(&nb, PROXY_CRED_BODY_MAX + PROXY_CRED_GROWTH);
    if (!proxy_cred_body_ready(c, &nb)) {
        pv_dynbuf_free(&nb);
        return;
    }
    write_head(c, out, nb.len);
    evbuffer_add(out, nb.buf != NULL ? nb.buf : "", nb.len);
    if (nb.buf != NULL) {
        OPENSSL_cleanse(nb.buf, nb.len);
    }
    pv_dynbuf_free(&nb);
}

static void body_error(struct proxy_conn *c, const char *why)
{
    char detail[160];

    snprintf(detail, sizeof(detail), "malformed request body: %s", why);
    if (c->resp_started) {
        /* the response is already flowing: no reply can be framed any more */
        proxy_log_note(c->srv->log, "%s:%u: %s, connection closed", c->host, (unsigned)c->port,
                       detail);
        proxy_server_log_touch(c->srv);
        proxy_conn_kill(c);
        return;
    }
    proxy_conn_outcome(c, PROXY_OUT_BODY_BAD, NULL, detail, NULL);
}

static void null_emit(void *arg, const char *p, size_t n)
{
    (void)arg;
    (void)p;
    (void)n;
}

/* A response the proxy cannot frame strictly: it is not relayed further. */
static void response_error(struct proxy_conn *c, const char *why)
{
    char detail[300];

    snprintf(detail, sizeof(detail), "malformed response from %s:%u: %s", c->host,
             (unsigned)c->port, why);
    c->srv->metrics.upstream_errors++;
    if (c->resp_started) {
        proxy_log_note(c->srv->log, "%s, connection closed", detail);
        proxy_server_log_touch(c->srv);
        proxy_conn_kill(c);
        return;
    }
    proxy_conn_outcome(c, PROXY_OUT_UPSTREAM_FAILED, NULL, detail, NULL);
}

/* The client closed its side while an event stream relays. Its reads are
 * off once the request is sent (pipelined bytes wait for the response), so
 * its close would be seen only at the next write to it, and a quiet stream
 * - an MCP receive stream between two server messages - may write nothing
 * for hours: both connections stayed open. An event stream never ends by
 * itself, so a client that closed (or half-closed) its side is done with
 * it: the upstream is dropped with the client, as at any other client
 * close during a response. The decision line was written when the request
 * was allowed; this adds none. */
static void client_gone_cb(evutil_socket_t fd, short what, void *arg)
{
    struct proxy_conn *c = arg;

    (void)fd;
    (void)what;
    if (c->dead || c->state != PROXY_ST_RELAY || !c->resp_stream || c->resp_done) {
        return;
    }
    proxy_conn_kill(c);
}

/* Watch the client's socket for its close (EV_CLOSED: epoll's RDHUP, which
 * reads nothing) while an event stream relays. Without a backend that
 * reports an early close, the close is seen at the next write, as before. */
static void watch_client_gone(struct proxy_conn *c)
{
    evutil_socket_t fd = c->c != NULL ? bufferevent_getfd(c->c) : -1;

    if (fd < 0 || (event_base_get_features(c->srv->base) & EV_FEATURE_EARLY_CLOSE) == 0) {
        return;
    }
    if (c->ev_gone != NULL && event_get_fd(c->ev_gone) != fd) {
        event_free(c->ev_gone);
        c->ev_gone = NULL;
    }
    if (c->ev_gone == NULL) {
        c->ev_gone = event_new(c->srv->base, fd, EV_CLOSED, client_gone_cb, c);
    }
    if (c->ev_gone != NULL) {
        event_add(c->ev_gone, NULL);
    }
}

/* Validate the response heads waiting in 'in' before any of their bytes is
 * relayed: interim (1xx) heads are relayed as they complete, the final one
 * fixes how the body is checked. False when the caller must wait or the
 * connection ended. */
static bool check_response_head(struct proxy_conn *c, struct evbuffer *in, struct evbuffer *out)
{
    while (!c->resp_head_ok) {
        size_t avail = evbuffer_get_length(in);
        size_t n = avail < PROXY_MAX_RESP_HEAD ? avail : PROXY_MAX_RESP_HEAD;
        const char *p = (const char *)evbuffer_pullup(in, (ssize_t)n);
        size_t hl = 0;
        const char *why = "";
        struct proxy_response r;
        enum proxy_head_status st;

        if (n == 0) {
            return false;
        }
        st = proxy_http_response_head(p, n, &hl, &r, &why);
        if (st == PROXY_HEAD_INCOMPLETE) {
            return false;
        }
        if (st != PROXY_HEAD_OK) {
            response_error(c, why);
            return false;
        }
        if (r.status >= 100 && r.status < 200 && r.status != 101) {
            /* an interim response: relay it now (a client may wait for its 100) */
            if (http_parser_execute(&c->resp, &resp_settings, p, hl) != hl ||
                HTTP_PARSER_ERRNO(&c->resp) != HPE_OK) {
                response_error(c, "interim response");
                return false;
            }
            c->resp_started = true;
            evbuffer_remove_buffer(in, out, hl);
            continue;
        }
        if (r.status == 101 && c->ws != NULL) {
            proxy_ws_upgraded(c, hl); /* the session takes over, or refuses */
            return false;
        }
        c->resp_head_ok = true;
        c->resp_body_off = hl;
        c->resp_chunked = r.framing == PROXY_BODY_CHUNKED && !c->cur.is_head && r.status != 204 &&
                          r.status != 304;
        proxy_chunk_init(&c->resp_chunk);
        c->resp_stream = r.event_stream && !c->cur.is_head;
        if (c->resp_stream) {
            watch_client_gone(c);
        }
    }
    return true;
}

/* The chunked body bytes among the 'n' the framer gave this message must
 * pass the strict decoder too, and both must end at the same byte. */
static bool check_response_body(struct proxy_conn *c, struct evbuffer *in, size_t n)
{
    const char *p;
    size_t start = c->resp_body_off;
    size_t used = 0;
    enum proxy_chunk_status st;

    if (!c->resp_chunked) {
        return true;
    }
    c->resp_body_off = 0; /* the head is relayed with this first batch */
    if (start >= n) {
        c->resp_body_off = start - n;
        return true;
    }
    p = (const char *)evbuffer_pullup(in, (ssize_t)n);
    st = proxy_chunk_feed(&c->resp_chunk, p + start, n - start, &used, null_emit, NULL);
    if (st == PROXY_CHUNK_BAD) {
        response_error(c, c->resp_chunk.why);
        return false;
    }
    if ((st == PROXY_CHUNK_DONE) != c->resp_done || used != n - start) {
        response_error(c, "chunked framing is ambiguous");
        return false;
    }
    return true;
}

void proxy_relay_pump_resp(struct proxy_conn *c)
{
    struct evbuffer *in = bufferevent_get_input(c->u);
    struct evbuffer *out = bufferevent_get_output(c->c);
    ssize_t n;

    while (!c->resp_done && evbuffer_get_length(in) > 0) {
        if (!check_response_head(c, in, out)) {
            return;
        }
        n = parse_chunks(&c->resp, &resp_settings, in, &c->resp_done);
        if (n < 0) {
            response_error(c, "framing");
            return;
        }
        if (n == 0) {
            break;
        }
        if (!check_response_body(c, in, (size_t)n)) {
            return;
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
void proxy_relay_resp_eof(struct proxy_conn *c)
{
    if (c->u != NULL && evbuffer_get_length(bufferevent_get_input(c->u)) > 0) {
        proxy_relay_pump_resp(c);
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
        proxy_conn_outcome(c, PROXY_OUT_UPSTREAM_FAILED, NULL, detail, NULL);
        return;
    }
    proxy_conn_reply_close(c, NULL, 0);
}

/* ---------------------------------------------------------------------------
 * Request handlers
 * ------------------------------------------------------------------------- */

/* long: a forward-proxy request in order (target, authority, policy.local, decision, destination,
 * credentials, send); each step ends the request or passes it on */
void proxy_relay_forward(struct proxy_conn *c)
{
    struct proxy_uri u;
    const char *t = c->cur.target;
    const char *rest;
    size_t rl;

    if (!pv_ok(proxy_http_parse_uri(t, c->cur.target_len, &u))) {
        proxy_conn_outcome(c, PROXY_OUT_FORWARD_URI, NULL, "malformed absolute-form request-target",
                           NULL);
        return;
    }
    if (u.scheme.len == 5 && strncasecmp(t, "https", 5) == 0) {
        proxy_conn_outcome(c, PROXY_OUT_FORWARD_HTTPS, NULL, "Use CONNECT for HTTPS URLs", NULL);
        return;
    }
    if (!(u.scheme.len == 4 && strncasecmp(t, "http", 4) == 0)) {
        proxy_conn_outcome(c, PROXY_OUT_FORWARD_SCHEME, NULL,
                           "Forward proxy requests must use http", NULL);
        return;
    }
    proxy_relay_set_host(c, t + u.host.off, u.host.len, u.port);
    /* the client's Host is ignored and replaced by the decided authority
     * (RFC 9112 §3.2.2): write_head() writes only the normalised host */
    if (strcmp(c->nhost, "policy.local") == 0) {
        if (u.port != 80) {
            proxy_conn_outcome(c, PROXY_OUT_POLICY_LOCAL_PORT, NULL, "Use http://policy.local only",
                               NULL);
        } else if (proxy_server_local_serve(c, t + u.rest.off, u.rest.len)) {
            /* advisor mode (its local_serve hook) took the client socket and answers
             * it (one decision line per outcome, engine policy-local) */
            proxy_conn_kill(c);
        } else {
            /* proviso's own switches, not the reference's */
            proxy_conn_outcome(
                c, PROXY_OUT_POLICY_LOCAL, NULL,
                "agent-driven policy proposals are not enabled in this sandbox: "
                "policy.local is served only when proviso-proxy runs with --advisor "
                "URL --sandbox NAME, and proposals are enabled with `proviso settings "
                "set agent_policy_proposals_enabled true --sandbox NAME`",
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
            proxy_conn_outcome(c, PROXY_OUT_INTERNAL, NULL, "out of memory", NULL);
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
    /* placeholders in the target: decided and logged redacted */
    proxy_cred_prepare_target(c);
    proxy_relay_forward_decide(c);
}

void proxy_relay_forward_decide(struct proxy_conn *c)
{
    struct proxy_verdict v;
    size_t rl = c->cur.target_len;
    char path[CANON_MAX];
    char detail[CANON_MAX + 600];
    bool deferred;
    struct proxy_decide_opts o = c->srv->opts;

    o.prefer_opaque = c->cur.req != NULL && c->cur.req->upgrade;
    o.gql_ops = proxy_bodyhold_gql_ops(c);
    o.rpc_calls = proxy_rpc_calls(c);
    o.rpc_res = proxy_rpc_results(c);
    proxy_decide_request(c->pol, c->id, c->host, strlen(c->host), c->port, c->cur.method,
                         c->cur.target, rl, &o, &v);
    /* a graphql endpoint decides by the operations: read them first */
    if (proxy_bodyhold_hold(c, &v, proxy_relay_forward_decide)) {
        return;
    }
    /* a grant whose only failure is the destination goes on to the address
     * checks (IP hosts are their own destination in model_decide) */
    if (!v.allow && !v.grant && proxy_conn_reason_is_l4(v.reason)) {
        (void)proxy_relay_canonicalise(c, c->cur.target, rl);
        snprintf(detail, sizeof(detail), "%s %s:%u%s not permitted by policy", c->cur.method,
                 c->host, (unsigned)c->port, proxy_conn_cur_path(c, path, sizeof(path)));
        proxy_conn_outcome(c, PROXY_OUT_FORWARD_DENIED, &v, detail, v.detail);
        return;
    }
    /* only the destination failed: the address checks decide every resolved
     * address with this request and fix the route and the target's shape
     * (check_addrs); the route of this destination-less decision may belong
     * to an identity entry no address admits */
    deferred = !v.allow && v.grant;
    /* not inspected: the target goes upstream as the client wrote it */
    if (!deferred && v.route == MODEL_ROUTE_OPAQUE && !shape_target(c, v.route)) {
        proxy_conn_outcome(c, PROXY_OUT_INTERNAL, NULL, "out of memory", NULL);
        return;
    }
    if (!deferred && v.route != MODEL_ROUTE_OPAQUE &&
        (!shape_target(c, v.route) || (!v.allow && proxy_relay_reason_is_target(v.reason)))) {
        if (v.detail[0] == '\0' || v.allow) {
            v.allow = false;
            snprintf(v.detail, sizeof(v.detail), "request-target must be canonical");
        }
        proxy_conn_outcome(c, PROXY_OUT_FORWARD_TARGET, &v, "request-target must be canonical",
                           NULL);
        return;
    }
    c->route = deferred ? MODEL_ROUTE_NONE : v.route;
    if (!v.allow && !v.grant) {
        snprintf(detail, sizeof(detail), "%s %s:%u%s denied by L7 policy: %s", c->cur.method,
                 c->host, (unsigned)c->port, proxy_conn_cur_path(c, path, sizeof(path)), v.detail);
        proxy_conn_outcome(c,
                           v.reason == MODEL_REASON_L7_UNSUPPORTED ? PROXY_OUT_FORWARD_UNSUPPORTED
                                                                   : PROXY_OUT_FORWARD_L7_DENIED,
                           &v, detail, NULL);
        return;
    }
    if (c->cur.req->upgrade && c->route == MODEL_ROUTE_INSPECTED &&
        !proxy_ws_admit(c, &v, PROXY_OUT_FORWARD_UNSUPPORTED)) {
        return;
    }
    /* reuse the upstream when it serves the same host:port */
    if (c->u != NULL && strcmp(c->u_host_key, c->nhost) == 0 && c->u_port == c->port) {
        struct proxy_verdict dv;
        bool l7 = c->route == MODEL_ROUTE_INSPECTED;
        proxy_decide_dest(c->pol, c->id, c->host, strlen(c->host), c->port, c->cur.method,
                          c->cur.target, c->cur.target_len, &c->u_ip, &o, &dv);
        if (dv.allow && dv.route == c->route) {
            if (!proxy_cred_gate(c, &dv)) {
                return;
            }
            proxy_conn_log_verdict(c, &dv, l7 ? "l7" : "policy", c->cur.method,
                                   proxy_conn_cur_path(c, path, sizeof(path)), "forward");
            proxy_relay_send_request(c);
            return;
        }
    }
    proxy_conn_drop_upstream(c);
    proxy_relay_resolve(c);
}
