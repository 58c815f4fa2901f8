/* SPDX-License-Identifier: Apache-2.0 */
/* server.h - proviso-prover, the prover HTTP service: internal API of server/
 *
 * The service is split by concept: configuration (server_config.c),
 * request body decoding (server_body.c), the metrics registry
 * (server_metrics.c), the route table on the shared HTTP layer of httpd/
 * (server_http.c; the token, the worker pool and the daemon live there), the
 * route handlers
 * (server_routes.c), OpenAPI-driven tool discovery (server_discover.c), this
 * service's own API description (server_api.c) and the process (server_main.c).
 *
 * Invariants: untrusted bytes (request bodies, headers, OpenAPI documents)
 * only ever produce an error value with a location; the token is held in one
 * place (httpd/httpd_token.c), compared in constant time and wiped on exit; no log
 * line carries a token or policy contents.
 */
#ifndef SERVER_H
#define SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "common/pv.h"
#include "httpd/httpd.h"

/* ===========================================================================
 * Configuration (server_config.c)
 * ========================================================================= */

#define SERVER_DEFAULT_PORT 8787
#define SERVER_DEFAULT_BODY_LIMIT (1024u * 1024u)
#define SERVER_MAX_BODY_LIMIT (64u * 1024u * 1024u)
#define SERVER_DEFAULT_TIMEOUT_MS 2000u
#define SERVER_DEFAULT_MAX_TIMEOUT_MS 30000u
#define SERVER_MAX_WORKERS 256u
#define SERVER_DEFAULT_MAX_CONNECTIONS 16384u

struct server_config {
    uint16_t port;            /* 0: pick a free port and log it */
    char bind[64];            /* IPv4 or IPv6 literal */
    size_t body_limit;        /* bytes; larger bodies get 413 */
    unsigned workers;         /* prover threads; 0 = number of online cores */
    unsigned io_threads;      /* MHD polling threads */
    unsigned max_concurrent;  /* queued + running jobs before 503 */
    unsigned timeout_ms;      /* default per-request solver timeout */
    unsigned max_timeout_ms;  /* largest options.timeout_ms accepted */
    unsigned grace_ms;        /* SIGTERM drain bound */
    unsigned conn_timeout_s;  /* idle connection timeout */
    unsigned max_connections; /* MHD connection limit */
    unsigned per_ip_limit;    /* connections per client address; 0: none */
};

/* Fill 'c' with the embedded defaults (the service runs with no config). */
void server_config_defaults(struct server_config *c);
/* Apply a YAML or JSON flat mapping (keys as in docs/operations.md) on top of
 * 'c'. 'file' names the document in errors. On error returns PV_ERR_PARSE or
 * PV_ERR_USAGE and writes "FILE:LINE:COL: message" into 'err'. */
pv_result server_config_load(struct server_config *c, const char *file, const char *buf, size_t len,
                             char *err, size_t errlen) PV_WUR;
/* Check cross-field constraints (timeout <= max, ...); message into 'err'. */
pv_result server_config_check(const struct server_config *c, char *err, size_t errlen) PV_WUR;

/* ===========================================================================
 * Metrics (server_metrics.c) - lock-free counters, Prometheus text
 * ========================================================================= */

enum server_route_id {
    SERVER_R_HEALTHZ,
    SERVER_R_METRICS,
    SERVER_R_OPENAPI,
    SERVER_R_TOOLS,
    SERVER_R_PROVE,
    SERVER_R_CHECK,
    SERVER_R_DISCOVER,
    SERVER_R_UNKNOWN,
    SERVER_R__COUNT
};

enum server_verdict {
    SERVER_V_NONE,
    SERVER_V_EMPTY,
    SERVER_V_FINDINGS,
    SERVER_V_UNKNOWN,
    SERVER_V_WITHIN,
    SERVER_V_EXCEEDS,
    SERVER_V_INVALID,
    SERVER_V__COUNT
};

const char *server_route_path(enum server_route_id r);
const char *server_verdict_name(enum server_verdict v);
enum server_verdict server_verdict_parse(const char *s);

void server_metrics_request(enum server_route_id route, unsigned status, uint64_t ns);
void server_metrics_verdict(enum server_verdict v);
void server_metrics_solver_timeout(void);
void server_metrics_rejected(void);
void server_metrics_cache(bool hit); /* compiled-policy cache lookups */
/* New NUL-terminated Prometheus exposition text (caller frees); NULL on OOM. */
char *server_metrics_render(unsigned inflight, unsigned workers, size_t *len);

/* ===========================================================================
 * Route handlers (server_routes.c, server_discover.c)
 * ========================================================================= */

struct server_ctx;    /* shared read-only state (registry, config) */
struct server_worker; /* one per worker thread: its prover session */

/* What a handler produces. 'body' is a new reference the HTTP layer sends. */
struct server_reply {
    unsigned status;
    json_t *body;
    enum server_verdict verdict;
    bool solver_timeout;
};

/* Fill 'r' with {"error": code, "detail": detail} (detail may be NULL). */
void server_reply_error(struct server_reply *r, unsigned status, const char *code,
                        const char *detail);

pv_result server_ctx_new(const struct server_config *cfg, struct server_ctx **out) PV_WUR;
void server_ctx_free(struct server_ctx *ctx);
const struct server_config *server_ctx_config(const struct server_ctx *ctx);
/* The serialised GET /openapi.json and GET /tools.json replies (borrowed). */
const char *server_ctx_openapi_text(const struct server_ctx *ctx, size_t *len);
const char *server_ctx_tools_text(const struct server_ctx *ctx, size_t *len);

/* Per-thread state: created on the worker thread that uses it. */
struct server_worker *server_worker_new(struct server_ctx *ctx);
void server_worker_free(struct server_worker *w);

/* Run a POST route on a worker: decode 'body', do the work, fill 'r'. */
void server_route_run(struct server_worker *w, enum server_route_id route, const char *body,
                      size_t len, struct server_reply *r);

/* The discovery core, usable without HTTP (tests): 'openapi' borrowed,
 * 'policy' compiled (borrowed); 'bins' is the calling binary then its
 * ancestors (the proxy's identity, nbins >= 1); 'test_loopback' decides
 * as a proxy with --test-allow-loopback (docs/semantics.md#test-loopback).
 * Returns a new
 * {"openapi":..., "tools":..., "operations":[...]} object or NULL with a
 * message in 'err'. */
struct model_policy;
json_t *server_discover(const json_t *openapi, const struct model_policy *policy,
                        const char *const *bins, size_t nbins, bool test_loopback, char *err,
                        size_t errlen);
/* tools.json entries for every operation of 'openapi' (no policy filter).
 * New reference or NULL. */
json_t *server_openapi_tools(const json_t *openapi);

/* ===========================================================================
 * This service's API description (server_api.c)
 * ========================================================================= */

/* The OpenAPI 3 document of this service. New reference; NULL on NOMEM. */
json_t *server_api_openapi(void);

/* ===========================================================================
 * The service (server_http.c): this service's routes on libhttpd
 * ========================================================================= */

struct server_http;

/* Start listening on cfg->bind:cfg->port. 'token' and 'ctx' are borrowed for
 * the server's lifetime. NULL with a message in 'err'. */
struct server_http *server_http_start(struct server_ctx *ctx, const struct httpd_token *token,
                                      char *err, size_t errlen);
uint16_t server_http_port(const struct server_http *h);
unsigned server_http_workers(const struct server_http *h);
/* SIGTERM path: stop accepting, let in-flight requests finish (at most
 * 'grace_ms', then cancel queued jobs). Returns true when every in-flight
 * request completed. */
bool server_http_drain(struct server_http *h, unsigned grace_ms);
/* Stop the daemon and the pool and free 'h'. Returns false (and frees
 * nothing) when a job still runs: the caller must then exit without cleanup. */
bool server_http_free(struct server_http *h) PV_WUR;

#endif
