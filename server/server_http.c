/* SPDX-License-Identifier: Apache-2.0 */
/* server_http.c - the HTTP layer: MHD daemon, route table, limits, replies, access log
 *
 * libmicrohttpd runs the sockets on its own polling thread(s). Everything a
 * request can be refused for is decided when its headers arrive, before a
 * body byte is buffered: token (401), route (404), method (405), content type
 * (415), declared length (413), capacity (503). A body is then accumulated
 * in a pv_dynbuf capped at the configured limit (a chunked body that grows
 * past it is discarded, never buffered, and answered 413). Work routes run
 * on the worker pool: the connection is suspended, the worker builds the
 * response and resumes it, so the polling thread never waits for Z3 and
 * /healthz stays fast under load.
 *
 * Every reply is JSON and goes through reply_json()/reply_error(). One access
 * log line per request is written by the completion callback: method, route
 * (the table's path, not the raw URL), status, verdict and milliseconds —
 * never a header, a body or the token.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "common/pv_dynbuf.h"
#include "common/pv_log.h"
#include "server/server.h"

/* ===========================================================================
 * Route table
 * ========================================================================= */

enum route_kind { ROUTE_STATIC, ROUTE_METRICS, ROUTE_JOB };

static const struct route {
    const char *path;
    enum server_route_id id;
    const char *method; /* GET routes also answer HEAD */
    bool auth;
    enum route_kind kind;
} routes[] = {
    {"/healthz", SERVER_R_HEALTHZ, "GET", false, ROUTE_STATIC},
    {"/metrics", SERVER_R_METRICS, "GET", true, ROUTE_METRICS},
    {"/openapi.json", SERVER_R_OPENAPI, "GET", true, ROUTE_STATIC},
    {"/tools.json", SERVER_R_TOOLS, "GET", true, ROUTE_STATIC},
    {"/v1/prove", SERVER_R_PROVE, "POST", true, ROUTE_JOB},
    {"/v1/check", SERVER_R_CHECK, "POST", true, ROUTE_JOB},
    {"/v1/discover", SERVER_R_DISCOVER, "POST", true, ROUTE_JOB},
};

struct server_http {
    struct MHD_Daemon *d;
    struct server_ctx *ctx;
    const struct server_config *cfg;
    const struct server_token *token;
    struct server_pool *pool;
    unsigned workers;
    uint16_t port;
    atomic_uint active;   /* requests between first callback and completion */
    atomic_uint admitted; /* work requests past the header checks, not completed */
    atomic_bool draining;
    /* Prebuilt, reused responses for the static routes. */
    struct MHD_Response *statics[SERVER_R__COUNT];
};

struct request {
    struct server_job job; /* first member: the pool hands it back */
    struct server_http *h;
    struct MHD_Connection *conn;
    const struct route *route; /* NULL: unknown path */
    uint64_t start_ns;
    unsigned status;
    enum server_verdict verdict;
    bool replied;   /* a response was queued */
    bool too_big;   /* body grew past the cap: discarding */
    bool oom;       /* ... or could not be stored */
    bool submitted; /* handed to the pool; the reply arrives on resume */
    bool admitted;  /* holds one of the max_concurrent slots */
    struct MHD_Response *resp; /* built by the worker */
    char method[16];
    size_t discarded; /* bytes dropped after the cap */
    struct pv_dynbuf body;
};

/* How much of an oversized chunked body is read and dropped before the
 * connection is closed instead of answered. */
#define DISCARD_MAX (16u * 1024u * 1024u)

static void http_release(struct server_http *h);

/* ===========================================================================
 * Helpers
 * ========================================================================= */

uint64_t server_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

size_t server_json_escape(char *out, size_t outlen, const char *s, size_t max)
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;

    if (outlen == 0) {
        return 0;
    }
    for (size_t i = 0; s != NULL && s[i] != '\0' && i < max; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            if (o + 3 > outlen) {
                break;
            }
            out[o++] = '\\';
            out[o++] = (char)c;
        } else if (c < 0x20 || c >= 0x7f) {
            if (o + 7 > outlen) {
                break;
            }
            out[o++] = '\\';
            out[o++] = 'u';
            out[o++] = '0';
            out[o++] = '0';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        } else {
            if (o + 2 > outlen) {
                break;
            }
            out[o++] = (char)c;
        }
    }
    out[o] = '\0';
    return o;
}

char *server_json_line(const json_t *j, size_t *len)
{
    char *text = json_dumps(j, JSON_COMPACT);
    size_t n;

    if (text == NULL) {
        return NULL;
    }
    n = strlen(text);
    text[n] = '\n'; /* json_dumps allocated n + 1 bytes: reuse the NUL's slot */
    *len = n + 1;
    return text;
}

static struct MHD_Response *json_response(json_t *body /* steals */)
{
    size_t len;
    char *text;
    struct MHD_Response *resp;

    if (body == NULL) {
        return NULL;
    }
    text = server_json_line(body, &len);
    json_decref(body);
    if (text == NULL) {
        return NULL;
    }
    resp = MHD_create_response_from_buffer_with_free_callback(len, text, free);
    if (resp == NULL) {
        free(text);
        return NULL;
    }
    if (MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json") !=
        MHD_YES) {
        MHD_destroy_response(resp);
        return NULL;
    }
    return resp;
}

static struct MHD_Response *error_response(unsigned status, const char *code,
                                           const char *detail)
{
    struct server_reply r;
    struct MHD_Response *resp;

    server_reply_error(&r, status, code, detail);
    resp = json_response(r.body);
    if (resp == NULL) {
        return NULL;
    }
    switch (status) {
    case MHD_HTTP_UNAUTHORIZED:
        (void)MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
        break;
    case MHD_HTTP_SERVICE_UNAVAILABLE:
        (void)MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, "1");
        break;
    default:
        break;
    }
    return resp;
}

/* Queue 'resp' (consumed) as the reply to 'rq'. */
static enum MHD_Result queue(struct request *rq, unsigned status, struct MHD_Response *resp,
                             bool keep)
{
    enum MHD_Result ret;

    if (resp == NULL) {
        /* Out of memory: closing the connection is the only answer left. */
        rq->status = 500;
        return MHD_NO;
    }
    rq->status = status;
    rq->replied = true;
    ret = MHD_queue_response(rq->conn, status, resp);
    if (!keep) {
        MHD_destroy_response(resp);
    }
    return ret;
}

static enum MHD_Result reply_error(struct request *rq, unsigned status, const char *code,
                                   const char *detail)
{
    struct MHD_Response *resp = error_response(status, code, detail);

    if (resp != NULL && status == MHD_HTTP_METHOD_NOT_ALLOWED && rq->route != NULL) {
        (void)MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW,
                                      strcmp(rq->route->method, "GET") == 0 ? "GET, HEAD"
                                                                            : rq->route->method);
    }
    return queue(rq, status, resp, false);
}

static const struct route *find_route(const char *url)
{
    for (size_t i = 0; i < PV_ARRAY_LEN(routes); i++) {
        if (strcmp(url, routes[i].path) == 0) {
            return &routes[i];
        }
    }
    return NULL;
}

static bool method_ok(const struct route *r, const char *method)
{
    if (strcmp(method, r->method) == 0) {
        return true;
    }
    return strcmp(r->method, "GET") == 0 && strcmp(method, "HEAD") == 0;
}

/* "application/json", any case, optionally followed by parameters. */
static bool content_type_ok(const char *ct)
{
    static const char want[] = "application/json";
    size_t n = sizeof(want) - 1;

    if (ct == NULL || strncasecmp(ct, want, n) != 0) {
        return false;
    }
    ct += n;
    while (*ct == ' ' || *ct == '\t') {
        ct++;
    }
    return *ct == '\0' || *ct == ';';
}

/* ===========================================================================
 * Access log and completion
 * ========================================================================= */

static void access_log(const struct request *rq, uint64_t ns, bool aborted)
{
    char line[512];
    char method[64];
    char ts[32];
    struct timespec now;
    struct tm tm;
    int n;

    clock_gettime(CLOCK_REALTIME, &now);
    gmtime_r(&now.tv_sec, &tm);
    strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
    server_json_escape(method, sizeof(method), rq->method, sizeof(rq->method));
    n = snprintf(line, sizeof(line),
                 "{\"ts\":\"%s.%03ldZ\",\"log\":\"access\",\"method\":\"%s\",\"route\":\"%s\","
                 "\"status\":%u,\"verdict\":\"%s\",\"ms\":%llu.%03llu%s}\n",
                 ts, now.tv_nsec / 1000000, method,
                 rq->route != NULL ? rq->route->path : "unknown", rq->status,
                 server_verdict_name(rq->verdict), (unsigned long long)(ns / 1000000),
                 (unsigned long long)(ns / 1000 % 1000), aborted ? ",\"aborted\":true" : "");
    if (n > 0) {
        /* One write(2) per line keeps lines whole across threads. */
        ssize_t w = write(STDERR_FILENO, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line));
        (void)w;
    }
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    struct server_http *h = cls;
    struct request *rq = *con_cls;
    uint64_t ns;

    (void)conn;
    if (rq == NULL) {
        return;
    }
    *con_cls = NULL;
    ns = server_now_ns() - rq->start_ns;
    if (rq->status != 0) {
        server_metrics_request(rq->route != NULL ? rq->route->id : SERVER_R_UNKNOWN, rq->status,
                               ns);
    }
    access_log(rq, ns, toe != MHD_REQUEST_TERMINATED_COMPLETED_OK);
    if (rq->resp != NULL) {
        MHD_destroy_response(rq->resp);
    }
    pv_dynbuf_free(&rq->body);
    if (rq->admitted) {
        atomic_fetch_sub(&h->admitted, 1);
    }
    free(rq);
    atomic_fetch_sub(&h->active, 1);
}

/* ===========================================================================
 * Jobs (worker threads)
 * ========================================================================= */

static void job_run(struct server_job *job, struct server_worker *w, bool cancelled)
{
    struct request *rq = (struct request *)job;
    struct server_reply r;
    struct MHD_Response *resp;

    if (cancelled) {
        server_reply_error(&r, MHD_HTTP_SERVICE_UNAVAILABLE, "shutting_down",
                           "the service is stopping");
    } else {
        server_route_run(w, rq->route->id, rq->body.buf != NULL ? rq->body.buf : "",
                         rq->body.len, &r);
    }
    server_metrics_verdict(r.verdict);
    if (r.solver_timeout) {
        server_metrics_solver_timeout();
    }
    if (r.status == MHD_HTTP_SERVICE_UNAVAILABLE) {
        server_metrics_rejected();
    }
    resp = json_response(r.body);
    if (resp != NULL && r.status == MHD_HTTP_SERVICE_UNAVAILABLE) {
        (void)MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, "1");
    }
    rq->verdict = r.verdict;
    rq->status = r.status;
    rq->resp = resp;
    pv_dynbuf_free(&rq->body);
    /* Last touch of 'rq': once resumed, the polling thread may free it. */
    MHD_resume_connection(rq->conn);
}

/* ===========================================================================
 * The access handler
 * ========================================================================= */

static enum MHD_Result reply_static(struct request *rq)
{
    struct server_http *h = rq->h;

    if (rq->route->kind == ROUTE_METRICS) {
        size_t len = 0;
        char *text = server_metrics_render(atomic_load(&h->admitted), h->workers, &len);
        struct MHD_Response *resp;
        if (text == NULL) {
            return reply_error(rq, 500, "internal", "out of memory");
        }
        resp = MHD_create_response_from_buffer_with_free_callback(len, text, free);
        if (resp == NULL) {
            free(text);
            return reply_error(rq, 500, "internal", "out of memory");
        }
        (void)MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                                      "text/plain; version=0.0.4; charset=utf-8");
        return queue(rq, 200, resp, false);
    }
    return queue(rq, 200, h->statics[rq->route->id], true);
}

static enum MHD_Result reply_too_big(struct request *rq)
{
    char detail[96];

    snprintf(detail, sizeof(detail), "request body exceeds %zu bytes", rq->h->cfg->body_limit);
    return reply_error(rq, MHD_HTTP_CONTENT_TOO_LARGE, "body_too_large", detail);
}

/* Headers are in: decide everything that does not need the body. */
static enum MHD_Result first_call(struct server_http *h, struct request *rq, const char *url,
                                  const char *method)
{
    const char *len_hdr;
    uint64_t declared = 0;

    rq->route = find_route(url);
    if (atomic_load(&h->draining)) {
        struct MHD_Response *resp = error_response(MHD_HTTP_SERVICE_UNAVAILABLE,
                                                   "shutting_down", "the service is stopping");
        server_metrics_rejected();
        if (resp != NULL) {
            (void)MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
        }
        return queue(rq, MHD_HTTP_SERVICE_UNAVAILABLE, resp, false);
    }
    if (rq->route == NULL || rq->route->auth) {
        const char *authz =
            MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
        if (!server_token_check(h->token, authz)) {
            return reply_error(rq, MHD_HTTP_UNAUTHORIZED, "unauthorized",
                               authz == NULL ? "missing bearer token" : "invalid bearer token");
        }
    }
    if (rq->route == NULL) {
        return reply_error(rq, MHD_HTTP_NOT_FOUND, "not_found", "no such route");
    }
    if (!method_ok(rq->route, method)) {
        return reply_error(rq, MHD_HTTP_METHOD_NOT_ALLOWED, "method_not_allowed",
                           strcmp(rq->route->method, "GET") == 0 ? "use GET" : "use POST");
    }
    if (rq->route->kind != ROUTE_JOB) {
        /* Answer on the next call: a reply queued while the request is
         * still being read makes MHD close the connection. */
        return MHD_YES;
    }
    if (!content_type_ok(MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND,
                                                     MHD_HTTP_HEADER_CONTENT_TYPE))) {
        return reply_error(rq, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type",
                           "Content-Type must be application/json");
    }
    len_hdr = MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND,
                                          MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (len_hdr != NULL &&
        (!pv_ok(pv_parse_u64(len_hdr, strlen(len_hdr), UINT64_MAX, &declared)) ||
         declared > h->cfg->body_limit)) {
        return reply_too_big(rq);
    }
    /* A slot is held from here (body upload included) to completion. */
    if (atomic_fetch_add(&h->admitted, 1) >= h->cfg->max_concurrent) {
        atomic_fetch_sub(&h->admitted, 1);
        server_metrics_rejected();
        return reply_error(rq, MHD_HTTP_SERVICE_UNAVAILABLE, "overloaded",
                           "too many concurrent requests; retry later");
    }
    rq->admitted = true;
    pv_dynbuf_init(&rq->body, h->cfg->body_limit);
    return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
    struct server_http *h = cls;
    struct request *rq = *con_cls;

    (void)version;
    if (rq == NULL) {
        rq = calloc(1, sizeof(*rq));
        if (rq == NULL) {
            return MHD_NO;
        }
        rq->h = h;
        rq->conn = conn;
        rq->start_ns = server_now_ns();
        rq->job.run = job_run;
        snprintf(rq->method, sizeof(rq->method), "%s", method);
        pv_dynbuf_init(&rq->body, 0);
        atomic_fetch_add(&h->active, 1);
        *con_cls = rq;
        return first_call(h, rq, url, method);
    }
    if (rq->replied) {
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (*upload_data_size != 0) {
        if (rq->too_big) {
            /* MHD 0.9.75 cannot queue a reply in the middle of a body: the
             * rest is read and dropped, up to a bound, so the client still
             * gets its 413. Past the bound the connection is closed. */
            rq->discarded += *upload_data_size;
            *upload_data_size = 0;
            return rq->discarded > DISCARD_MAX ? MHD_NO : MHD_YES;
        }
        pv_result r = pv_dynbuf_add(&rq->body, upload_data, *upload_data_size);
        if (!pv_ok(r)) {
            /* Past the cap (a chunked body declares no length): never buffer
             * more. Out of memory drops the body the same way. */
            rq->too_big = true;
            rq->oom = r.err != PV_ERR_TOOBIG;
            pv_dynbuf_free(&rq->body);
        }
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (rq->submitted) {
        struct MHD_Response *resp = rq->resp;
        rq->resp = NULL;
        if (resp == NULL) {
            return reply_error(rq, 500, "internal", "out of memory");
        }
        return queue(rq, rq->status, resp, false);
    }
    if (rq->route->kind != ROUTE_JOB) {
        return reply_static(rq);
    }
    if (rq->oom) {
        return reply_error(rq, 500, "internal", "out of memory");
    }
    if (rq->too_big) {
        return reply_too_big(rq);
    }
    /* Suspend before the job is visible to a worker, so its resume can never
     * precede the suspend. */
    rq->submitted = true;
    MHD_suspend_connection(conn);
    if (!server_pool_submit(h->pool, &rq->job, h->cfg->max_concurrent)) {
        server_metrics_rejected();
        rq->status = MHD_HTTP_SERVICE_UNAVAILABLE;
        rq->resp = atomic_load(&h->draining)
                       ? error_response(MHD_HTTP_SERVICE_UNAVAILABLE, "shutting_down",
                                        "the service is stopping")
                       : error_response(MHD_HTTP_SERVICE_UNAVAILABLE, "overloaded",
                                        "too many concurrent requests; retry later");
        MHD_resume_connection(conn);
    }
    return MHD_YES;
}

/* ===========================================================================
 * Daemon
 * ========================================================================= */

static void mhd_log(void *cls, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    char msg[512];
    size_t n;

    (void)cls;
    vsnprintf(msg, sizeof(msg), fmt, ap);
    n = strlen(msg);
    while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == '\r')) {
        msg[--n] = '\0';
    }
    pv_log_warnx("http: %s", msg);
}

static pv_result build_statics(struct server_http *h)
{
    static const char healthz[] = "{\"status\":\"ok\"}\n";
    const char *texts[SERVER_R__COUNT] = {NULL};
    size_t lens[SERVER_R__COUNT] = {0};

    texts[SERVER_R_HEALTHZ] = healthz;
    lens[SERVER_R_HEALTHZ] = sizeof(healthz) - 1;
    texts[SERVER_R_OPENAPI] = server_ctx_openapi_text(h->ctx, &lens[SERVER_R_OPENAPI]);
    texts[SERVER_R_TOOLS] = server_ctx_tools_text(h->ctx, &lens[SERVER_R_TOOLS]);
    for (size_t i = 0; i < SERVER_R__COUNT; i++) {
        if (texts[i] == NULL) {
            continue;
        }
        h->statics[i] = MHD_create_response_from_buffer(lens[i], (void *)texts[i],
                                                        MHD_RESPMEM_PERSISTENT);
        PV_ENSURE(h->statics[i] != NULL, PV_ERR_NOMEM);
        PV_ENSURE(MHD_add_response_header(h->statics[i], MHD_HTTP_HEADER_CONTENT_TYPE,
                                          "application/json") == MHD_YES,
                  PV_ERR_NOMEM);
    }
    return PV_RESULT_OK;
}

struct server_http *server_http_start(struct server_ctx *ctx, const struct server_token *token,
                                      char *err, size_t errlen)
{
    struct server_http *h = pv_calloc(1, sizeof(*h));
    const struct server_config *cfg = server_ctx_config(ctx);
    struct sockaddr_in6 sa6;
    struct sockaddr_in sa4;
    const struct sockaddr *sa;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_ALLOW_SUSPEND_RESUME |
                     MHD_USE_ITC | MHD_USE_ERROR_LOG;
    const union MHD_DaemonInfo *info;
    unsigned workers;

    if (h == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    h->ctx = ctx;
    h->cfg = cfg;
    h->token = token;
    memset(&sa4, 0, sizeof(sa4));
    memset(&sa6, 0, sizeof(sa6));
    if (inet_pton(AF_INET, cfg->bind, &sa4.sin_addr) == 1) {
        sa4.sin_family = AF_INET;
        sa4.sin_port = htons(cfg->port);
        sa = (const struct sockaddr *)&sa4;
    } else if (inet_pton(AF_INET6, cfg->bind, &sa6.sin6_addr) == 1) {
        sa6.sin6_family = AF_INET6;
        sa6.sin6_port = htons(cfg->port);
        sa = (const struct sockaddr *)&sa6;
        flags |= MHD_USE_IPv6;
    } else {
        snprintf(err, errlen, "bind: not an address literal: %s", cfg->bind);
        free(h);
        return NULL;
    }
    workers = cfg->workers;
    if (workers == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        workers = n < 1 ? 1 : n > (long)SERVER_MAX_WORKERS ? SERVER_MAX_WORKERS : (unsigned)n;
    }
    h->workers = workers;
    if (!pv_ok(build_statics(h))) {
        snprintf(err, errlen, "out of memory");
        http_release(h);
        return NULL;
    }
    h->pool = server_pool_new(ctx, workers);
    if (h->pool == NULL) {
        snprintf(err, errlen, "cannot start the worker pool");
        http_release(h);
        return NULL;
    }
    {
        struct MHD_OptionItem opts[] = {
            {MHD_OPTION_SOCK_ADDR, 0, (void *)sa},
            {MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, h},
            {MHD_OPTION_CONNECTION_TIMEOUT, (intptr_t)cfg->conn_timeout_s, NULL},
            {MHD_OPTION_CONNECTION_LIMIT, (intptr_t)cfg->max_connections, NULL},
            {cfg->io_threads > 1 ? MHD_OPTION_THREAD_POOL_SIZE : MHD_OPTION_END,
             (intptr_t)cfg->io_threads, NULL},
            {MHD_OPTION_END, 0, NULL},
        };
        /* The logger goes first so that MHD never prints on its own. */
        h->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, h, MHD_OPTION_EXTERNAL_LOGGER,
                                mhd_log, NULL, MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
    }
    if (h->d == NULL) {
        snprintf(err, errlen, "cannot listen on %s port %u (address in use or not local?)",
                 cfg->bind, (unsigned)cfg->port);
        http_release(h);
        return NULL;
    }
    info = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
    h->port = info != NULL ? info->port : cfg->port;
    return h;
}

uint16_t server_http_port(const struct server_http *h)
{
    return h->port;
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

bool server_http_drain(struct server_http *h, unsigned grace_ms)
{
    uint64_t deadline = server_now_ns() + (uint64_t)grace_ms * 1000000ull;
    /* Running proofs are bounded by their own timeout: allow that much more. */
    uint64_t hard = deadline + ((uint64_t)h->cfg->max_timeout_ms + 2000ull) * 1000000ull;
    MHD_socket fd;

    atomic_store(&h->draining, true);
    fd = MHD_quiesce_daemon(h->d);
    if (fd != MHD_INVALID_SOCKET) {
        close(fd);
    }
    while (atomic_load(&h->active) > 0 && server_now_ns() < deadline) {
        sleep_ms(5);
    }
    if (atomic_load(&h->active) == 0) {
        return true;
    }
    pv_log_warnx("drain: grace period over with %u request(s) in flight; cancelling queued work",
                 atomic_load(&h->active));
    server_pool_cancel_queued(h->pool);
    while (server_pool_load(h->pool) > 0 && server_now_ns() < hard) {
        sleep_ms(5);
    }
    return false;
}

unsigned server_http_workers(const struct server_http *h)
{
    return h->workers;
}

/* Stop and free; only when no job is queued or running. */
static void http_release(struct server_http *h)
{
    if (h->d != NULL) {
        MHD_stop_daemon(h->d);
    }
    server_pool_free(h->pool);
    for (size_t i = 0; i < SERVER_R__COUNT; i++) {
        if (h->statics[i] != NULL) {
            MHD_destroy_response(h->statics[i]);
        }
    }
    free(h);
}

bool server_http_free(struct server_http *h)
{
    if (h == NULL) {
        return true;
    }
    if (h->pool != NULL && server_pool_load(h->pool) > 0) {
        /* A job still runs past every bound: MHD cannot stop with a
         * suspended connection. */
        return false;
    }
    http_release(h);
    return true;
}
