/* SPDX-License-Identifier: Apache-2.0 */
/* server_http.c - proviso-prover's routes on the shared HTTP layer (httpd/)
 *
 * The route table of the prover service and the glue between libhttpd and
 * the handlers of server_routes.c: static documents (/healthz,
 * /openapi.json, /tools.json) and /metrics are answered on the polling
 * thread; the work routes run on the pool, whose threads each own a prover
 * session (server_worker_new). Metrics are counted here, per route and per
 * verdict.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "common/pv_log.h"
#include "server/server.h"

static const struct httpd_route routes[] = {
    {"GET", "/healthz", SERVER_R_HEALTHZ, HTTPD_PUBLIC | HTTPD_INLINE},
    {"GET", "/metrics", SERVER_R_METRICS, HTTPD_INLINE},
    {"GET", "/openapi.json", SERVER_R_OPENAPI, HTTPD_INLINE},
    {"GET", "/tools.json", SERVER_R_TOOLS, HTTPD_INLINE},
    {"POST", "/v1/prove", SERVER_R_PROVE, HTTPD_BODY},
    {"POST", "/v1/check", SERVER_R_CHECK, HTTPD_BODY},
    {"POST", "/v1/discover", SERVER_R_DISCOVER, HTTPD_BODY},
};

struct server_http {
    struct httpd_service svc;
    struct httpd_config hcfg;
    struct server_ctx *ctx;
    struct httpd *h;
};

static void *worker_new(void *arg)
{
    struct server_http *sh = arg;
    struct server_worker *w = server_worker_new(sh->ctx);

    if (w == NULL) {
        pv_log_warnx("%s: cannot create a prover session; this request answers 500 (the "
                     "worker tries again at its next)",
                     __func__);
    }
    return w;
}

static void worker_free(void *w)
{
    server_worker_free(w);
}

static void reply_static(struct server_http *sh, const struct httpd_req *rq, struct httpd_reply *r)
{
    r->status = 200;
    r->content_type = "application/json";
    switch ((enum server_route_id)rq->route->id) {
    case SERVER_R_HEALTHZ:
        httpd_reply_healthz(r);
        return;
    case SERVER_R_OPENAPI:
        r->raw_static = server_ctx_openapi_text(sh->ctx, &r->raw_len);
        return;
    case SERVER_R_TOOLS:
        r->raw_static = server_ctx_tools_text(sh->ctx, &r->raw_len);
        return;
    case SERVER_R_METRICS:
        r->content_type = "text/plain; version=0.0.4; charset=utf-8";
        r->raw = server_metrics_render(httpd_admitted(sh->h), httpd_workers(sh->h), &r->raw_len);
        if (r->raw == NULL) {
            httpd_reply_error(r, 500, "internal", "out of memory");
        }
        return;
    case SERVER_R_PROVE:
    case SERVER_R_CHECK:
    case SERVER_R_DISCOVER:
    case SERVER_R_UNKNOWN:
    case SERVER_R__COUNT:
        break;
    }
    httpd_reply_error(r, 500, "internal", "not a static route");
}

static void handle(void *ctx, void *worker, const struct httpd_req *rq, struct httpd_reply *r)
{
    struct server_http *sh = ctx;
    struct server_reply sr;

    if (rq->route->flags & HTTPD_INLINE) {
        reply_static(sh, rq, r);
        return;
    }
    server_route_run(worker, (enum server_route_id)rq->route->id, rq->body, rq->body_len, &sr);
    server_metrics_verdict(sr.verdict);
    if (sr.solver_timeout) {
        server_metrics_solver_timeout();
    }
    httpd_reply_json(r, sr.status, sr.body);
    r->status = sr.body != NULL ? sr.status : 500;
    r->label = server_verdict_name(sr.verdict);
    if (sr.status == 503) {
        r->retry_after_s = 1;
    }
}

static void completed(void *ctx, int route_id, unsigned status, uint64_t ns)
{
    (void)ctx;
    server_metrics_request(route_id >= 0 ? (enum server_route_id)route_id : SERVER_R_UNKNOWN,
                           status, ns);
}

static void rejected(void *ctx)
{
    (void)ctx;
    server_metrics_rejected();
}

struct server_http *server_http_start(struct server_ctx *ctx, const struct httpd_token *token,
                                      char *err, size_t errlen)
{
    const struct server_config *cfg = server_ctx_config(ctx);
    struct server_http *sh = pv_calloc(1, sizeof(*sh));

    if (sh == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    sh->ctx = ctx;
    sh->hcfg.port = cfg->port;
    snprintf(sh->hcfg.bind, sizeof(sh->hcfg.bind), "%s", cfg->bind);
    sh->hcfg.body_limit = cfg->body_limit;
    sh->hcfg.workers = cfg->workers;
    sh->hcfg.io_threads = cfg->io_threads;
    sh->hcfg.max_concurrent = cfg->max_concurrent;
    sh->hcfg.conn_timeout_s = cfg->conn_timeout_s;
    sh->hcfg.max_connections = cfg->max_connections;
    sh->hcfg.per_ip_limit = cfg->per_ip_limit;
    sh->svc.name = "prover";
    sh->svc.routes = routes;
    sh->svc.nroutes = PV_ARRAY_LEN(routes);
    sh->svc.ctx = sh;
    sh->svc.worker_new = worker_new;
    sh->svc.worker_free = worker_free;
    sh->svc.handle = handle;
    sh->svc.completed = completed;
    sh->svc.rejected = rejected;
    sh->h = httpd_start(&sh->svc, &sh->hcfg, token, err, errlen);
    if (sh->h == NULL) {
        free(sh);
        return NULL;
    }
    return sh;
}

uint16_t server_http_port(const struct server_http *sh)
{
    return httpd_port(sh->h);
}

unsigned server_http_workers(const struct server_http *sh)
{
    return httpd_workers(sh->h);
}

bool server_http_drain(struct server_http *sh, unsigned grace_ms)
{
    /* Running proofs are bounded by their own timeout: allow that much more. */
    return httpd_drain(sh->h, grace_ms, server_ctx_config(sh->ctx)->max_timeout_ms + 2000u);
}

bool server_http_free(struct server_http *sh)
{
    if (sh == NULL) {
        return true;
    }
    if (!httpd_free(sh->h)) {
        return false;
    }
    free(sh);
    return true;
}
