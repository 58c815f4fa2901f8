/* SPDX-License-Identifier: Apache-2.0 */
/* proxy_server.c - listeners, admin port, DNS, signals, reload, drain
 *
 * One libevent loop owns everything: the proxy listener, the admin listener
 * (GET /healthz), the asynchronous resolver (evdns, hosts file first), the
 * signal events and two timers (policy file check, drain grace). A reload
 * compiles the new version off to the side and swaps one pointer: requests
 * already decided keep their version, and proxy_conn_policy_changed() closes
 * what the new version no longer allows. A reload that fails to load puts
 * the proxy in fail-closed quarantine (every decision denies) until a valid
 * policy appears. SIGTERM stops accepting, closes idle connections, lets busy
 * ones finish for a grace period and exits 0.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/dns.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/listener.h>
#include <event2/util.h>
#include <jansson.h>
#include <openssl/ssl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/pv_log.h"
#include "common/pv_notify.h"
#include "proxy/proxy_int.h"

#define DRAIN_GRACE_S 5

/* ---------------------------------------------------------------------------
 * Hooks used by proxy_conn.c
 * ------------------------------------------------------------------------- */

void proxy_server_log_touch(struct proxy_server *srv)
{
    if (srv->ev_flush != NULL && !event_pending(srv->ev_flush, EV_TIMEOUT, NULL)) {
        event_active(srv->ev_flush, EV_TIMEOUT, 0);
    }
}

void proxy_server_conn_gone(struct proxy_server *srv)
{
    if (srv->draining && srv->nconns == 0) {
        event_base_loopexit(srv->base, NULL);
    }
}

static void flush_cb(evutil_socket_t fd, short what, void *arg)
{
    struct proxy_server *srv = arg;

    (void)fd;
    (void)what;
    proxy_log_flush(srv->log);
}

static void reap_cb(evutil_socket_t fd, short what, void *arg)
{
    struct proxy_server *srv = arg;

    (void)fd;
    (void)what;
    while (srv->graveyard != NULL) {
        struct proxy_conn *c = srv->graveyard;
        srv->graveyard = c->next;
        proxy_conn_free(c);
    }
}

/* ---------------------------------------------------------------------------
 * Reload
 * ------------------------------------------------------------------------- */

static void remember_stat(struct proxy_server *srv)
{
    srv->policy_st_valid = stat(srv->cfg->policy_path, &srv->policy_st) == 0;
}

/* The credentials store is reloaded with the policy. A store that no
 * longer loads is dropped: every placeholder is then refused as
 * unavailable (fail closed), other traffic is unaffected. */
static void reload_creds(struct proxy_server *srv, const char *why)
{
    char err[1024];
    struct proxy_creds *ns;

    if (srv->cfg->credentials == NULL) {
        return;
    }
    ns = proxy_creds_load(srv->cfg->credentials, err, sizeof(err));
    proxy_creds_free(srv->creds);
    srv->creds = ns;
    if (ns == NULL) {
        proxy_log_note(srv->log, "credentials reload (%s) failed, every placeholder is refused: %s",
                       why, err);
        pv_log_warnx("credentials reload failed: %s", err);
    } else {
        proxy_log_note(srv->log, "credentials reloaded (%s): %zu placeholder keys", why,
                       proxy_creds_count(ns));
    }
}

static void reload(struct proxy_server *srv, const char *why)
{
    char err[1024];
    struct proxy_policy *np;
    uint64_t gen = srv->generation + 1;

    remember_stat(srv);
    reload_creds(srv, why);
    np = proxy_policy_load(srv->cfg->policy_path, gen, err, sizeof(err));
    if (np == NULL) {
        char reason[1200];
        snprintf(reason, sizeof(reason),
                 "policy validation failed; fail-closed quarantine is active; candidate "
                 "version %llu rejected: %s",
                 (unsigned long long)gen, err);
        np = proxy_policy_quarantine(gen, reason);
        if (np == NULL) {
            return;
        }
        srv->metrics.reloads_failed++;
        proxy_log_note(srv->log, "WARNING: policy reload (%s) failed, fail-closed: %s", why, err);
    } else {
        srv->metrics.reloads_ok++;
        proxy_log_note(srv->log, "policy reloaded (%s): generation %llu", why,
                       (unsigned long long)gen);
    }
    proxy_policy_unref(srv->policy);
    srv->policy = np;
    srv->generation = gen;
    for (struct proxy_conn *c = srv->conns, *next; c != NULL; c = next) {
        next = c->next;
        proxy_conn_policy_changed(c);
    }
}

/* a mode (advisor mode) wrote a new policy to cfg->policy_path */
void proxy_server_reload(struct proxy_server *srv, const char *why)
{
    reload(srv, why);
}

/* ---------------------------------------------------------------------------
 * Hooks (proxy_int.h): what a mode adds, called by the core without knowing it
 * ------------------------------------------------------------------------- */

void proxy_server_set_hooks(struct proxy_server *srv, const struct proxy_hooks *h)
{
    srv->hooks = *h;
}

bool proxy_server_local_serve(struct proxy_conn *c, const char *rest, size_t len)
{
    const struct proxy_hooks *h = &c->srv->hooks;

    return h->local_serve != NULL && h->local_serve(h->arg, c, rest, len);
}

size_t proxy_server_local_clients(const struct proxy_server *srv,
                                  const struct sockaddr_storage *peer)
{
    const struct proxy_hooks *h = &srv->hooks;

    return h->local_clients != NULL ? h->local_clients(h->arg, peer) : 0;
}

const char *proxy_server_skill(const struct proxy_server *srv)
{
    const struct proxy_hooks *h = &srv->hooks;

    return h->skill != NULL ? h->skill(h->arg) : NULL;
}

static void stat_cb(evutil_socket_t fd, short what, void *arg)
{
    struct proxy_server *srv = arg;
    struct stat st;
    const struct stat *o = &srv->policy_st;

    (void)fd;
    (void)what;
    if (stat(srv->cfg->policy_path, &st) != 0) {
        return; /* being replaced: keep the current version */
    }
    if (!srv->policy_st_valid || st.st_dev != o->st_dev || st.st_ino != o->st_ino ||
        st.st_size != o->st_size || st.st_mtim.tv_sec != o->st_mtim.tv_sec ||
        st.st_mtim.tv_nsec != o->st_mtim.tv_nsec) {
        reload(srv, "file changed");
    }
}

/* ---------------------------------------------------------------------------
 * Signals and drain
 * ------------------------------------------------------------------------- */

static void drain_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
    struct proxy_server *srv = arg;

    (void)fd;
    (void)what;
    event_base_loopexit(srv->base, NULL);
}

static void term_cb(evutil_socket_t fd, short what, void *arg)
{
    struct proxy_server *srv = arg;
    struct timeval tv = {DRAIN_GRACE_S, 0};

    (void)fd;
    (void)what;
    if (srv->draining) {
        event_base_loopexit(srv->base, NULL);
        return;
    }
    srv->draining = true;
    proxy_log_note(srv->log, "draining: %zu connection(s)", srv->nconns);
    evconnlistener_disable(srv->listener);
    for (struct proxy_conn *c = srv->conns, *next; c != NULL; c = next) {
        next = c->next;
        proxy_conn_drain(c);
    }
    if (srv->nconns == 0) {
        event_base_loopexit(srv->base, NULL);
        return;
    }
    event_add(srv->ev_drain, &tv);
}

static void hup_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    reload(arg, "SIGHUP");
}

/* ---------------------------------------------------------------------------
 * Listeners
 * ------------------------------------------------------------------------- */

static void accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int salen,
                      void *arg)
{
    struct proxy_server *srv = arg;

    (void)l;
    if (srv->warned_accept) {
        srv->warned_accept = false;
        proxy_log_note(srv->log, "accepting connections again");
    }
    proxy_conn_accept(srv, fd, sa, salen);
}

static void accept_error_cb(struct evconnlistener *l, void *arg)
{
    struct proxy_server *srv = arg;
    int e = EVUTIL_SOCKET_ERROR();

    (void)l;
    /* EMFILE and friends: keep serving the connections we have; one line
     * until an accept succeeds again, not one per attempt */
    if (!srv->warned_accept) {
        srv->warned_accept = true;
        proxy_log_note(srv->log, "accept failed: %s (logged once until accepts succeed again)",
                       evutil_socket_error_to_string(e));
    }
}

/* GET /healthz: 200 while policy decisions can allow, 503 with the reason
 * while the proxy is in fail-closed quarantine (every decision denies). */
static void admin_healthz(struct proxy_server *srv, struct evhttp_request *req, struct evbuffer *b)
{
    const char *q = proxy_policy_quarantine_reason(srv->policy);
    json_t *o;
    char *s;

    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", "application/json");
    if (q == NULL) {
        evbuffer_add_printf(b, "{\"status\":\"ok\"}");
        evhttp_send_reply(req, 200, "OK", b);
        return;
    }
    o = json_pack("{s:s,s:s,s:I}", "status", "quarantined", "reason", q, "generation",
                  (json_int_t)srv->generation);
    s = o != NULL ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    evbuffer_add_printf(b, "%s", s != NULL ? s : "{\"status\":\"quarantined\"}");
    free(s);
    evhttp_send_reply(req, 503, "Service Unavailable", b);
}

/* GET /metrics: Prometheus text format (proxy_metrics.c). */
static void admin_metrics(struct proxy_server *srv, struct evhttp_request *req, struct evbuffer *b)
{
    struct proxy_metrics_gauges g;

    memset(&g, 0, sizeof(g));
    g.quarantined = proxy_policy_quarantine_reason(srv->policy) != NULL;
    g.generation = srv->generation;
    g.pins = proxy_idq_pins(srv->idq);
    g.conns = srv->nconns;
    for (const struct proxy_conn *c = srv->conns; c != NULL; c = c->next) {
        if (!c->dead && (c->state == PROXY_ST_TUNNEL || c->mode != PROXY_MODE_FORWARD)) {
            g.tunnels++;
        }
    }
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
                      "text/plain; version=0.0.4; charset=utf-8");
    proxy_metrics_render(&srv->metrics, &g, b);
    evhttp_send_reply(req, 200, "OK", b);
}

static void admin_cb(struct evhttp_request *req, void *arg)
{
    struct proxy_server *srv = arg;
    struct evbuffer *b = evbuffer_new();
    const char *path = evhttp_uri_get_path(evhttp_request_get_evhttp_uri(req));
    bool get = evhttp_request_get_command(req) == EVHTTP_REQ_GET;

    if (b == NULL) {
        evhttp_send_error(req, 500, NULL);
        return;
    }
    if (path != NULL && strcmp(path, "/healthz") == 0 && get) {
        admin_healthz(srv, req, b);
    } else if (path != NULL && strcmp(path, "/metrics") == 0 && get) {
        admin_metrics(srv, req, b);
    } else {
        evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
                          "application/json");
        evbuffer_add_printf(b, "{\"detail\":\"no such route\",\"error\":\"not_found\"}");
        evhttp_send_reply(req, 404, "Not Found", b);
    }
    evbuffer_free(b);
}

static uint16_t fd_port(evutil_socket_t fd)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);

    if (getsockname(fd, (struct sockaddr *)&ss, &sl) != 0) {
        return 0;
    }
    if (ss.ss_family == AF_INET) {
        return ntohs(((struct sockaddr_in *)&ss)->sin_port);
    }
    return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
}

static bool listen_all(struct proxy_server *srv)
{
    const struct proxy_config *cfg = srv->cfg;
    struct sockaddr_storage ss;
    int sl = sizeof(ss);
    char spec[300];
    struct evhttp_bound_socket *h;
    uint16_t admin_port;

    memset(&ss, 0, sizeof(ss));
    snprintf(spec, sizeof(spec), "%s:%u", cfg->bind_addr, (unsigned)cfg->port);
    if (evutil_inet_pton(AF_INET, cfg->bind_addr, &((struct sockaddr_in *)&ss)->sin_addr) == 1) {
        ((struct sockaddr_in *)&ss)->sin_family = AF_INET;
        ((struct sockaddr_in *)&ss)->sin_port = htons(cfg->port);
        sl = (int)sizeof(struct sockaddr_in);
    } else if (evutil_inet_pton(AF_INET6, cfg->bind_addr,
                                &((struct sockaddr_in6 *)&ss)->sin6_addr) == 1) {
        ((struct sockaddr_in6 *)&ss)->sin6_family = AF_INET6;
        ((struct sockaddr_in6 *)&ss)->sin6_port = htons(cfg->port);
        sl = (int)sizeof(struct sockaddr_in6);
    } else {
        pv_log_errorx("invalid --bind address '%s' (an IP address is needed)", cfg->bind_addr);
        return false;
    }
    /* --sandbox-init: the listener lives in the sandbox's namespace */
    srv->listener = proxy_sandbox_enter()
                        ? evconnlistener_new_bind(srv->base, accept_cb, srv,
                                                  LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE |
                                                      LEV_OPT_CLOSE_ON_EXEC,
                                                  4096, (struct sockaddr *)&ss, sl)
                        : NULL;
    proxy_sandbox_leave();
    if (srv->listener == NULL) {
        pv_log_errorx("cannot listen on %s: %s", spec, strerror(errno));
        return false;
    }
    evconnlistener_set_error_cb(srv->listener, accept_error_cb);
    srv->port = fd_port(evconnlistener_get_fd(srv->listener));
    admin_port = cfg->admin_given ? cfg->admin_port : (cfg->port != 0 ? cfg->port + 1 : 0);
    srv->admin = evhttp_new(srv->base);
    if (srv->admin == NULL) {
        return false;
    }
    evhttp_set_gencb(srv->admin, admin_cb, srv);
    evhttp_set_allowed_methods(srv->admin, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD);
    h = evhttp_bind_socket_with_handle(srv->admin, cfg->bind_addr, admin_port);
    if (h == NULL) {
        pv_log_errorx("cannot listen on admin port %u: %s", (unsigned)admin_port, strerror(errno));
        return false;
    }
    srv->admin_port = fd_port(evhttp_bound_socket_get_fd(h));
    return true;
}

/* ---------------------------------------------------------------------------
 * Run
 * ------------------------------------------------------------------------- */

static bool setup_dns(struct proxy_server *srv)
{
    srv->dns = evdns_base_new(srv->base, 0);
    if (srv->dns == NULL) {
        return false;
    }
    /* nameservers and /etc/hosts; a missing resolv.conf leaves DNS empty */
    (void)evdns_base_resolv_conf_parse(srv->dns, DNS_OPTIONS_ALL, "/etc/resolv.conf");
    (void)evdns_base_load_hosts(srv->dns, NULL);
    (void)evdns_base_set_option(srv->dns, "timeout:", "3");
    (void)evdns_base_set_option(srv->dns, "attempts:", "2");
    if (srv->cfg->hosts_file != NULL &&
        evdns_base_load_hosts(srv->dns, srv->cfg->hosts_file) != 0) {
        pv_log_errorx("cannot read hosts file %s", srv->cfg->hosts_file);
        return false;
    }
    return true;
}

static bool write_port_file(const struct proxy_server *srv)
{
    char tmp[4200];
    FILE *f;

    if (srv->cfg->port_file == NULL) {
        return true;
    }
    snprintf(tmp, sizeof(tmp), "%s.tmp", srv->cfg->port_file);
    f = fopen(tmp, "we");
    if (f == NULL) {
        return false;
    }
    fprintf(f, "%u %u\n", (unsigned)srv->port, (unsigned)srv->admin_port);
    if (fclose(f) != 0) {
        return false;
    }
    return rename(tmp, srv->cfg->port_file) == 0;
}

static struct event *timer_event(struct proxy_server *srv, event_callback_fn fn, bool persist,
                                 unsigned ms)
{
    struct event *e = event_new(srv->base, -1, persist ? EV_PERSIST : 0, fn, srv);
    struct timeval tv;

    if (e != NULL && ms > 0) {
        tv.tv_sec = ms / 1000;
        tv.tv_usec = (long)(ms % 1000) * 1000;
        event_add(e, &tv);
    }
    return e;
}

static void server_free(struct proxy_server *srv)
{
    if (srv->hooks.stop != NULL) {
        srv->hooks.stop(srv->hooks.arg); /* advisor mode: threads, policy.local clients */
    }
    while (srv->conns != NULL) {
        proxy_conn_free(srv->conns);
    }
    while (srv->graveyard != NULL) {
        struct proxy_conn *c = srv->graveyard;
        srv->graveyard = c->next;
        proxy_conn_free(c);
    }
    struct event *evs[] = {srv->ev_term,  srv->ev_int,   srv->ev_hup, srv->ev_stat,
                           srv->ev_flush, srv->ev_drain, srv->ev_reap};
    for (size_t i = 0; i < PV_ARRAY_LEN(evs); i++) {
        if (evs[i] != NULL) {
            event_free(evs[i]);
        }
    }
    if (srv->listener != NULL) {
        evconnlistener_free(srv->listener);
    }
    if (srv->admin != NULL) {
        evhttp_free(srv->admin);
    }
    if (srv->dns != NULL) {
        evdns_base_free(srv->dns, 0);
    }
    proxy_policy_unref(srv->policy);
    proxy_creds_free(srv->creds);
    proxy_idq_free(srv->idq);
    proxy_tls_free(srv->tls);
    proxy_log_free(srv->log);
    if (srv->base != NULL) {
        event_base_free(srv->base);
    }
}

/* The event loop. epoll's changelist folds the several enable/disable calls
 * a connection makes in one loop iteration into one epoll_ctl per fd: every
 * new connection changes its events a few times before it settles. The
 * changelist is unsafe only for fds that share an open file description
 * (dup); the proxy never dups a socket or a pipe. */
static struct event_base *new_base(void)
{
    struct event_config *cfg = event_config_new();
    struct event_base *b;

    if (cfg == NULL) {
        return NULL;
    }
    (void)event_config_set_flag(cfg, EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST);
    b = event_base_new_with_config(cfg);
    event_config_free(cfg);
    return b;
}

/* long: the proxy's start and stop sequence, each step guarded in the order it must happen, then
 * the loop and the drain */
int proxy_server_run(const struct proxy_config *cfg)
{
    struct proxy_server srv;
    char err[1024];
    char dpath[4200];
    char why[300];
    bool unprivileged;
    int rc = 1;

    memset(&srv, 0, sizeof(srv));
    srv.cfg = cfg;
    srv.opts.test_allow_loopback = cfg->test_allow_loopback;
    signal(SIGPIPE, SIG_IGN);
    /* start-up self-check: without the privilege every request of another
     * user's process would be denied as binary '' - say so now */
    unprivileged = !proxy_ident_privileged(why, sizeof(why));
    if (unprivileged && !cfg->unprivileged_identity) {
        pv_log_errorx("cannot identify client binaries: %s. Run as root or with "
                      "CAP_SYS_PTRACE (e.g. systemd AmbientCapabilities=CAP_SYS_PTRACE), or "
                      "pass --unprivileged-identity to run anyway",
                      why);
        return 2;
    }
    /* a mode that loads the first policy itself (advisor mode): fail closed
     * until it does */
    srv.policy = cfg->start_quarantine != NULL
                     ? proxy_policy_quarantine(1, cfg->start_quarantine)
                     : proxy_policy_load(cfg->policy_path, 1, err, sizeof(err));
    if (srv.policy == NULL) {
        pv_log_errorx("%s", err);
        return 2;
    }
    srv.generation = 1;
    remember_stat(&srv);
    if (cfg->credentials != NULL) {
        /* values never appear in 'err': the store's messages name files,
         * keys and fields only */
        srv.creds = proxy_creds_load(cfg->credentials, err, sizeof(err));
        if (srv.creds == NULL) {
            pv_log_errorx("credentials: %s", err);
            server_free(&srv);
            return 2;
        }
    }
    srv.tls = proxy_tls_new(cfg->data_dir, cfg->upstream_ca, err, sizeof(err));
    if (srv.tls == NULL) {
        pv_log_errorx("TLS: %s", err);
        server_free(&srv);
        return 2;
    }
    snprintf(dpath, sizeof(dpath), "%s/denials.jsonl", cfg->data_dir);
    srv.log = proxy_log_new(cfg->log_path, dpath);
    srv.base = new_base();
    if (!proxy_sandbox_open(cfg, err, sizeof(err))) {
        pv_log_errorx("%s", err);
        server_free(&srv);
        return 2;
    }
    if (srv.base != NULL && event_base_priority_init(srv.base, 3) == 0) {
        /* its sock_diag socket looks sockets up in the sandbox's namespace */
        struct proxy_ident_cache *ic = proxy_sandbox_enter() ? proxy_ident_cache_new() : NULL;
        char swhy[300];

        proxy_sandbox_leave();
        if (ic != NULL && !proxy_ident_use(ic, cfg->identity_scan, swhy, sizeof(swhy))) {
            pv_log_errorx("--identity-scan bpf: the BPF task-file iterator cannot be used: %s",
                          swhy);
            proxy_ident_cache_free(ic);
            server_free(&srv);
            return 2;
        }
        if (ic != NULL) {
            if (strcmp(proxy_ident_scan_name(ic), "bpf") == 0) {
                pv_log_info("identity: socket holders found by the BPF task-file iterator");
            } else if (swhy[0] != '\0') {
                pv_log_info("identity: socket holders found by reading /proc (BPF iterator: %s)",
                            swhy);
            } else {
                pv_log_info("identity: socket holders found by reading /proc");
            }
        }
        srv.idq = proxy_idq_new(srv.base, ic);
    }
    if (srv.log == NULL || srv.idq == NULL || srv.base == NULL) {
        pv_log_errorx("cannot initialise the proxy (log file, memory or event loop)");
        server_free(&srv);
        return 2;
    }
    if (cfg->mode_start != NULL && cfg->mode_start(&srv) != 0) {
        server_free(&srv);
        return 2;
    }
    if (!setup_dns(&srv) || !listen_all(&srv)) {
        server_free(&srv);
        return 2;
    }
    srv.ev_term = evsignal_new(srv.base, SIGTERM, term_cb, &srv);
    srv.ev_int = evsignal_new(srv.base, SIGINT, term_cb, &srv);
    srv.ev_hup = evsignal_new(srv.base, SIGHUP, hup_cb, &srv);
    srv.ev_stat = timer_event(&srv, stat_cb, true, cfg->reload_check_ms);
    srv.ev_flush = timer_event(&srv, flush_cb, false, 0);
    srv.ev_drain = timer_event(&srv, drain_timeout_cb, false, 0);
    srv.ev_reap = timer_event(&srv, reap_cb, false, 0);
    if (srv.ev_term == NULL || srv.ev_int == NULL || srv.ev_hup == NULL || srv.ev_stat == NULL ||
        srv.ev_flush == NULL || srv.ev_drain == NULL || srv.ev_reap == NULL) {
        server_free(&srv);
        return 2;
    }
    /* the log flush runs after every other ready event of an iteration */
    event_priority_set(srv.ev_flush, 2);
    event_add(srv.ev_term, NULL);
    event_add(srv.ev_int, NULL);
    event_add(srv.ev_hup, NULL);
    if (cfg->test_allow_loopback) {
        proxy_log_note(srv.log, "WARNING: --test-allow-loopback is on: loopback destinations "
                                "named literally by an endpoint are reachable (tests only)");
    }
    if (unprivileged) {
        proxy_log_note(srv.log, "WARNING: --unprivileged-identity: %s", why);
    }
    proxy_log_note(srv.log, "listening on %s:%u (admin %u), policy %s generation 1", cfg->bind_addr,
                   (unsigned)srv.port, (unsigned)srv.admin_port, cfg->policy_path);
    /* clients must trust it for inspected HTTPS */
    proxy_log_note(srv.log, "CA certificate (clients must trust it): %s/ca.crt", cfg->data_dir);
    if (srv.creds != NULL) {
        proxy_log_note(srv.log, "credentials: %zu placeholder keys from %s",
                       proxy_creds_count(srv.creds), cfg->credentials);
    }
    if (!write_port_file(&srv)) {
        pv_log_errorx("cannot write %s", cfg->port_file);
        server_free(&srv);
        return 2;
    }
    if (!pv_ok(pv_notify_ready())) {
        pv_log_warnx("cannot tell systemd we are ready ($NOTIFY_SOCKET): %s", strerror(errno));
    }
    if (event_base_dispatch(srv.base) == 0 || srv.draining) {
        rc = 0;
    }
    proxy_log_note(srv.log, "exiting");
    server_free(&srv);
    return rc;
}
