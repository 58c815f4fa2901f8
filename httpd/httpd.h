/* SPDX-License-Identifier: Apache-2.0 */
/* httpd.h - the HTTP service layer shared by proviso's servers (libhttpd)
 *
 * proviso-prover and proviso-advisor serve JSON APIs with the same process
 * contract (docs/operations.md): a bearer token that never comes from argv,
 * GET /healthz, bounded bodies, a bounded worker pool, JSON errors
 * {"error": code, "detail": text}, one access-log line per request and a
 * SIGTERM drain. This library is that layer, built on libmicrohttpd; a
 * service supplies a route table and a handler.
 *
 *  - httpd_token.c   the bearer token: read, generate, compare, wipe
 *  - httpd_pool.c    a FIFO worker pool; each thread owns a per-thread state
 *                    the service creates (a prover session, a store handle)
 *  - httpd_server.c  the daemon: routing, limits, replies, access log, drain
 *
 * Invariants: untrusted bytes never reach a handler before the header checks
 * (route, method, token, content type, declared length, capacity) passed;
 * a body is never buffered past the configured limit; handlers run on the
 * pool, never on the socket-polling thread (so /healthz answers while every
 * worker is busy); every request ends in exactly one access-log line.
 */
#ifndef HTTPD_H
#define HTTPD_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "common/pv.h"
#include "common/pv_token.h"

/* ===========================================================================
 * The bearer token (httpd_token.c)
 * ========================================================================= */

struct httpd_token {
    unsigned char *buf; /* secret bytes, wiped on free */
    size_t len;
    char *generated_path; /* the 0600 file of a generated token (unlinked on free) */
};

#define HTTPD_TOKEN_MIN PV_TOKEN_MIN
#define HTTPD_TOKEN_MAX PV_TOKEN_MAX

/* Read the token from a file or an inherited descriptor (which is closed),
 * by the rules of common/pv_token.h. PV_ERR_IO / PV_ERR_PARSE with a message
 * in 'err'. */
pv_result httpd_token_from_file(struct httpd_token *t, const char *path, char *err,
                                size_t errlen) PV_WUR;
pv_result httpd_token_from_fd(struct httpd_token *t, int fd, char *err, size_t errlen) PV_WUR;
/* Generate 32 random bytes (hex), write them to a new mode-0600 file in
 * 'dir' (NULL: $XDG_RUNTIME_DIR or /tmp) and remember its path. */
pv_result httpd_token_generate(struct httpd_token *t, const char *dir, char *err,
                               size_t errlen) PV_WUR;
/* Generate a token into 't' without writing a file (the caller hands it on,
 * e.g. through a pipe to a child). */
pv_result httpd_token_random(struct httpd_token *t) PV_WUR;
/* Constant-time check of an Authorization header value ("Bearer <token>");
 * NULL header is false. */
bool httpd_token_check(const struct httpd_token *t, const char *authorization);
/* The token bytes of an Authorization value ("Bearer X" -> X), or NULL. */
const char *httpd_bearer(const char *authorization, size_t *len);
/* Wipe and free; unlink the generated file. */
void httpd_token_free(struct httpd_token *t);

/* ===========================================================================
 * Worker pool (httpd_pool.c)
 * ========================================================================= */

struct httpd_pool;
struct httpd_job {
    struct httpd_job *next;
    /* Runs on a worker thread with that thread's state. 'cancelled' is true
     * when the pool is shutting down before the job started. */
    void (*run)(struct httpd_job *job, void *worker, bool cancelled);
};

/* Start 'n' threads; each calls worker_new(arg) once (NULL is allowed: the
 * thread then runs its next job with a NULL state, and calls worker_new
 * again before each later job until it succeeds) and worker_free at exit. */
struct httpd_pool *httpd_pool_new(unsigned n, void *(*worker_new)(void *arg),
                                  void (*worker_free)(void *worker), void *arg);
/* Enqueue unless 'limit' jobs are queued or running: then false (503). */
bool httpd_pool_submit(struct httpd_pool *p, struct httpd_job *job, unsigned limit);
unsigned httpd_pool_load(struct httpd_pool *p); /* queued + running */
/* Cancel jobs that have not started (they run with cancelled = true). */
void httpd_pool_cancel_queued(struct httpd_pool *p);
/* Stop after the queue drains, join the threads, free the workers. */
void httpd_pool_free(struct httpd_pool *p);

/* ===========================================================================
 * The server (httpd_server.c)
 * ========================================================================= */

#define HTTPD_MAX_PARAMS 4u

enum httpd_route_flags {
    HTTPD_PUBLIC = 1u << 0, /* no token needed */
    HTTPD_BODY = 1u << 1,   /* takes an application/json body */
    HTTPD_INLINE = 1u << 2, /* cheap: answered on the polling thread (no body) */
};

/* One route. 'path' is matched segment by segment; a segment "*" captures
 * one non-empty segment into httpd_req.params (in order). Several routes may
 * share a path with different methods; a path with no route for the method
 * answers 405 with an Allow header. A GET route also answers HEAD. */
struct httpd_route {
    const char *method;
    const char *path;
    int id;
    unsigned flags;
};

struct httpd_req {
    const struct httpd_route *route;
    const char *method;
    const char *path; /* the raw path, without the query */
    const char *params[HTTPD_MAX_PARAMS];
    size_t nparams;
    const char *body; /* NUL-terminated copy; "" when none */
    size_t body_len;
    int principal; /* what the service's authorize callback returned */
    void *conn;    /* for httpd_req_arg / httpd_req_header */
};

/* A query argument or a request header (NULL when absent). Valid only while
 * the handler runs. */
const char *httpd_req_arg(const struct httpd_req *rq, const char *name);
const char *httpd_req_header(const struct httpd_req *rq, const char *name);
/* True when the client of 'rq' went away: its connection reports a hang-up,
 * an error or a shut-down write side (POLLRDHUP). A handler that holds a
 * long-poll asks between waits, because libmicrohttpd does not watch a
 * suspended connection: its socket leaves the poll set until the handler
 * resumes it, so neither MHD_OPTION_NOTIFY_CONNECTION nor the completion
 * callback can see the client leave before the handler has answered.
 * A client that is gone is answered anyway; the reply is dropped. */
bool httpd_req_gone(const struct httpd_req *rq);

/* What a handler produces. Either 'body' (JSON, a new reference the layer
 * sends and releases), 'raw' (bytes with 'content_type', freed with free())
 * or 'raw_static' (bytes that outlive the reply, never freed); 'raw_len' is
 * the length of either. No bytes at all is an empty body. 'label' is the
 * access log's verdict field. */
struct httpd_reply {
    unsigned status;
    json_t *body;
    char *raw;
    const char *raw_static;
    size_t raw_len;
    const char *content_type;
    const char *label;
    const char *location;   /* a Location header, e.g. for 201 */
    const char *csp;        /* a Content-Security-Policy header */
    unsigned retry_after_s; /* a Retry-After header when > 0 */
};

/* Fill 'r' with {"error": code, "detail": detail} (detail may be NULL). */
void httpd_reply_error(struct httpd_reply *r, unsigned status, const char *code,
                       const char *detail);
/* Fill 'r' with a JSON body (steals 'body'; NULL becomes a 500). */
void httpd_reply_json(struct httpd_reply *r, unsigned status, json_t *body);

struct httpd_config {
    uint16_t port;            /* 0: pick a free port */
    char bind[64];            /* IPv4 or IPv6 literal */
    size_t body_limit;        /* bytes; larger bodies get 413 */
    unsigned workers;         /* pool threads; 0 = number of online cores */
    unsigned io_threads;      /* MHD polling threads */
    unsigned max_concurrent;  /* queued + running jobs before 503 */
    unsigned conn_timeout_s;  /* idle/slow connection timeout */
    unsigned max_connections; /* MHD connection limit */
    unsigned per_ip_limit;    /* connections per client address; 0: none */
};

struct httpd_service {
    const char *name; /* log prefix of the access log ("prover", "advisor") */
    const struct httpd_route *routes;
    size_t nroutes;
    void *ctx;
    /* Per-thread state for handlers (may be NULL). */
    void *(*worker_new)(void *ctx);
    void (*worker_free)(void *worker);
    /* Handles every route on a pool thread (or HTTPD_INLINE routes on the
     * polling thread, with worker NULL). Must fill 'r'. */
    void (*handle)(void *ctx, void *worker, const struct httpd_req *rq, struct httpd_reply *r);
    /* Who is asking: called when the headers arrive for routes that are not
     * HTTPD_PUBLIC. Returns >= 0 (stored in httpd_req.principal), or -1 for
     * 401. NULL: the single 'token' given to httpd_start decides (principal 0). */
    int (*authorize)(void *ctx, const struct httpd_route *route, const char *authorization);
    /* After each reply (metrics); may be NULL. */
    void (*completed)(void *ctx, int route_id, unsigned status, uint64_t ns);
    /* Called when a job is refused for capacity (metrics); may be NULL. */
    void (*rejected)(void *ctx);
};

struct httpd;

/* Start listening on cfg->bind:cfg->port. 'svc', 'cfg' and 'token' are
 * borrowed for the server's lifetime. NULL with a message in 'err'. */
struct httpd *httpd_start(const struct httpd_service *svc, const struct httpd_config *cfg,
                          const struct httpd_token *token, char *err, size_t errlen);
uint16_t httpd_port(const struct httpd *h);
unsigned httpd_workers(const struct httpd *h);
unsigned httpd_admitted(const struct httpd *h); /* requests holding a work slot */
/* SIGTERM path: stop accepting, let in-flight requests finish (at most
 * 'grace_ms', then cancel queued jobs and wait at most 'hard_ms' more).
 * Returns true when every in-flight request completed. */
bool httpd_drain(struct httpd *h, unsigned grace_ms, unsigned hard_ms);
/* Stop the daemon and the pool and free 'h'. Returns false (and frees
 * nothing) when a job still runs: the caller must then exit without cleanup. */
bool httpd_free(struct httpd *h) PV_WUR;

/* Raise the soft RLIMIT_NOFILE towards the hard limit so 'want' descriptors
 * fit; returns the limit in force. */
unsigned long httpd_raise_nofile(unsigned long want);

/* ===========================================================================
 * Small helpers
 * ========================================================================= */

uint64_t httpd_now_ns(void);
/* 'j' as compact JSON plus a newline, not NUL-terminated: *len bytes, new
 * (caller frees); NULL on NOMEM. */
char *httpd_json_line(const json_t *j, size_t *len);
/* Append 's' JSON-escaped (without quotes) to 'out' of size 'outlen',
 * truncating at 'max' input bytes. Returns bytes written. */
size_t httpd_json_escape(char *out, size_t outlen, const char *s, size_t max);

/* ===========================================================================
 * The service shell (httpd_shell.c): what every proviso server does the same
 * way around its routes. docs/architecture.md ("The service shell").
 */

/* Parse an embedded JSON document (common/embed.sh output) such as a
 * service's OpenAPI description; duplicate keys are refused. NULL when the
 * text is not JSON (the caller fails its start-up). */
json_t *httpd_doc_parse(const char *text, size_t len);
/* The GET /healthz answer: 200 {"status":"ok"}. */
void httpd_reply_healthz(struct httpd_reply *r);
/* The bearer token from 'file', else from descriptor 'fd' (>= 0), else a
 * new random token written to a 0600 file in 'gen_dir' (NULL: the
 * temporary directory). */
pv_result httpd_token_load(struct httpd_token *t, const char *file, int fd, const char *gen_dir,
                           char *err, size_t errlen) PV_WUR;
/* Ignore SIGPIPE and block SIGTERM and SIGINT in 'sigs'; call before any
 * thread starts so that every thread inherits the mask. */
void httpd_signals_block(sigset_t *sigs);
/* Wait on the main thread until SIGTERM or SIGINT arrives; returns it. */
int httpd_signals_wait(const sigset_t *sigs);

/* ===========================================================================
 * Request metrics (httpd_metrics.c): requests by route and status, latency
 * by route and capacity refusals, in the Prometheus text format. Safe to
 * record from any thread; never allocates after httpd_metrics_new.
 */
struct httpd_metrics;

/* Metric names start with 'prefix' (e.g. "proviso_advisor"); 'routes' is
 * the service's route table and must outlive the metrics. NULL: no memory. */
struct httpd_metrics *httpd_metrics_new(const char *prefix, const struct httpd_route *routes,
                                        size_t nroutes);
void httpd_metrics_free(struct httpd_metrics *m);
/* One reply (struct httpd_service.completed) and one 503 refusal
 * (struct httpd_service.rejected). */
void httpd_metrics_request(struct httpd_metrics *m, int route_id, unsigned status, uint64_t ns);
void httpd_metrics_rejected(struct httpd_metrics *m);
/* The exposition text (malloc'd; *len set), or NULL when out of memory. */
char *httpd_metrics_render(const struct httpd_metrics *m, size_t *len);

#endif
