/* SPDX-License-Identifier: Apache-2.0 */
/* httpd_server.c - the HTTP layer: MHD daemon, routing, limits, replies, access log
 *
 * libmicrohttpd runs the sockets on its own polling thread(s). Everything a
 * request can be refused for is decided when its headers arrive, before a
 * body byte is buffered: token (401), route (404), method (405), content type
 * (415), declared length (413), capacity (503). A body is then accumulated
 * in a pv_dynbuf capped at the configured limit (a chunked body that grows
 * past it is discarded, never buffered, and answered 413). Handlers run on
 * the worker pool: the connection is suspended, the worker builds the
 * response and resumes it, so the polling thread never waits for a proof, a
 * disk write or a long-poll, and /healthz stays fast under load. Slow or
 * stalled clients are bounded by the connection timeout, a per-address
 * connection limit and a connection limit sized to the descriptor limit.
 *
 * Every reply is JSON and goes through reply_json()/reply_error(). One access
 * log line per request is written by the completion callback: method, route
 * (the table's path, not the raw URL), status, a verdict label and
 * milliseconds —
 * never a header, a body or the token.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "common/pv_dynbuf.h"
#include "common/pv_log.h"
#include "httpd/httpd.h"

struct httpd {
    struct MHD_Daemon *d;
    const struct httpd_service *svc;
    const struct httpd_config *cfg;
    const struct httpd_token *token;
    struct httpd_pool *pool;
    unsigned workers;
    uint16_t port;
    atomic_uint active;   /* requests between first callback and completion */
    atomic_uint admitted; /* work requests past the header checks, not completed */
    atomic_bool draining;
};

struct request {
    struct httpd_job job; /* first member: the pool hands it back */
    struct httpd *h;
    struct MHD_Connection *conn;
    const struct httpd_route *route; /* NULL: unknown path */
    uint64_t start_ns;
    unsigned status;
    const char *label;
    bool replied;   /* a response was queued */
    bool too_big;   /* body grew past the cap: discarding */
    bool oom;       /* ... or could not be stored */
    bool submitted; /* handed to the pool; the reply arrives on resume */
    bool admitted;  /* holds one of the max_concurrent slots */
    int principal;
    struct MHD_Response *resp; /* built by the worker */
    char method[16];
    char *path; /* the URL path (owned) */
    const char *params[HTTPD_MAX_PARAMS];
    size_t nparams;
    char *param_buf;  /* backing store of params (owned) */
    size_t discarded; /* bytes dropped after the cap */
    struct pv_dynbuf body;
};

/* How much of an oversized chunked body is read and dropped before the
 * connection is closed instead of answered. */
#define DISCARD_MAX (16u * 1024u * 1024u)

static void http_release(struct httpd *h);

/* ===========================================================================
 * Helpers
 * ========================================================================= */

uint64_t httpd_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

size_t httpd_json_escape(char *out, size_t outlen, const char *s, size_t max)
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

char *httpd_json_line(const json_t *j, size_t *len)
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

void httpd_reply_error(struct httpd_reply *r, unsigned status, const char *code, const char *detail)
{
    json_t *body = json_object();

    if (body != NULL) {
        if (json_object_set_new(body, "error", json_string(code)) != 0 ||
            (detail != NULL && json_object_set_new(body, "detail", json_string(detail)) != 0)) {
            json_decref(body);
            body = NULL;
        }
    }
    memset(r, 0, sizeof(*r));
    r->status = status;
    r->body = body;
    if (status == 503) {
        r->retry_after_s = 1;
    }
}

void httpd_reply_json(struct httpd_reply *r, unsigned status, json_t *body)
{
    if (body == NULL) {
        httpd_reply_error(r, 500, "internal", "out of memory");
        return;
    }
    memset(r, 0, sizeof(*r));
    r->status = status;
    r->body = body;
}

unsigned long httpd_raise_nofile(unsigned long want)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) {
        return 1024;
    }
    if (rl.rlim_cur < want && rl.rlim_cur < rl.rlim_max) {
        rlim_t old = rl.rlim_cur;
        rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ? want : rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
            rl.rlim_cur = old;
        }
    }
    return (unsigned long)rl.rlim_cur;
}

/* The MHD response for a handler's reply (consumes r->body / r->raw). */
static struct MHD_Response *make_response(struct httpd_reply *r)
{
    struct MHD_Response *resp = NULL;
    const char *ctype = r->content_type;

    if (r->body != NULL) {
        size_t len;
        char *text = httpd_json_line(r->body, &len);
        json_decref(r->body);
        r->body = NULL;
        if (text == NULL) {
            return NULL;
        }
        resp = MHD_create_response_from_buffer_with_free_callback(len, text, free);
        if (resp == NULL) {
            free(text);
            return NULL;
        }
        ctype = "application/json";
    } else if (r->raw != NULL || r->raw_static != NULL || r->raw_len == 0) {
        if (r->raw == NULL) {
            /* persistent: libmicrohttpd only reads these bytes */
            resp = MHD_create_response_from_buffer(
                r->raw_static != NULL ? r->raw_len : 0,
                PV_UNCONST(r->raw_static != NULL ? r->raw_static : ""), MHD_RESPMEM_PERSISTENT);
        } else {
            resp = MHD_create_response_from_buffer_with_free_callback(r->raw_len, r->raw, free);
            if (resp == NULL) {
                free(r->raw);
            }
        }
        r->raw = NULL;
        if (resp == NULL) {
            return NULL;
        }
    }
    if (resp == NULL) {
        return NULL;
    }
    if ((ctype != NULL &&
         MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, ctype) != MHD_YES) ||
        (r->location != NULL &&
         MHD_add_response_header(resp, MHD_HTTP_HEADER_LOCATION, r->location) != MHD_YES) ||
        (r->csp != NULL &&
         MHD_add_response_header(resp, "Content-Security-Policy", r->csp) != MHD_YES)) {
        MHD_destroy_response(resp);
        return NULL;
    }
    if (r->retry_after_s > 0) {
        char v[16];
        snprintf(v, sizeof(v), "%u", r->retry_after_s);
        (void)MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, v);
    }
    if (r->status == MHD_HTTP_UNAUTHORIZED) {
        (void)MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
    }
    /* Every answer: no sniffing, no caching, and no URL (which may name a
     * sandbox or a chunk) leaks to another site through a Referer. */
    (void)MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    (void)MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    (void)MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
    return resp;
}

static struct MHD_Response *error_response(unsigned status, const char *code, const char *detail)
{
    struct httpd_reply r;

    httpd_reply_error(&r, status, code, detail);
    return make_response(&r);
}

/* Queue 'resp' (consumed) as the reply to 'rq'. */
static enum MHD_Result queue(struct request *rq, unsigned status, struct MHD_Response *resp)
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
    MHD_destroy_response(resp);
    return ret;
}

/* The methods a path answers, for 405's Allow header. */
static void allowed_methods(const struct httpd *h, const char *path, char *out, size_t outlen);
static bool path_match(const char *pattern, const char *path, struct request *rq);

static enum MHD_Result reply_error(struct request *rq, unsigned status, const char *code,
                                   const char *detail)
{
    struct MHD_Response *resp = error_response(status, code, detail);

    if (resp != NULL && status == MHD_HTTP_METHOD_NOT_ALLOWED) {
        char allow[128];
        allowed_methods(rq->h, rq->path, allow, sizeof(allow));
        (void)MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, allow);
    }
    return queue(rq, status, resp);
}

/* Segment-wise match; "*" captures one non-empty segment (into rq when
 * given). */
static bool path_match(const char *pattern, const char *path, struct request *rq)
{
    const char *p = pattern;
    const char *u = path;
    size_t n = 0;
    size_t off = 0;

    for (;;) {
        const char *pe;
        const char *ue;
        if (*p != '/' || *u != '/') {
            return *p == '\0' && *u == '\0';
        }
        p++;
        u++;
        pe = strchr(p, '/');
        ue = strchr(u, '/');
        if (pe == NULL) {
            pe = p + strlen(p);
        }
        if (ue == NULL) {
            ue = u + strlen(u);
        }
        if (pe - p == 1 && *p == '*') {
            if (ue == u || n >= HTTPD_MAX_PARAMS) {
                return false;
            }
            if (rq != NULL) {
                memcpy(rq->param_buf + off, u, (size_t)(ue - u));
                rq->param_buf[off + (size_t)(ue - u)] = '\0';
                rq->params[n] = rq->param_buf + off;
                off += (size_t)(ue - u) + 1;
            }
            n++;
        } else if (pe - p != ue - u || memcmp(p, u, (size_t)(pe - p)) != 0) {
            return false;
        }
        p = pe;
        u = ue;
        if (rq != NULL) {
            rq->nparams = n;
        }
    }
}

static bool method_ok(const struct httpd_route *r, const char *method)
{
    if (strcmp(method, r->method) == 0) {
        return true;
    }
    return strcmp(r->method, "GET") == 0 && strcmp(method, "HEAD") == 0;
}

static void allowed_methods(const struct httpd *h, const char *path, char *out, size_t outlen)
{
    size_t o = 0;

    out[0] = '\0';
    for (size_t i = 0; i < h->svc->nroutes; i++) {
        const struct httpd_route *r = &h->svc->routes[i];
        int n;
        if (!path_match(r->path, path, NULL)) {
            continue;
        }
        n = snprintf(out + o, outlen - o, "%s%s%s", o > 0 ? ", " : "", r->method,
                     strcmp(r->method, "GET") == 0 ? ", HEAD" : "");
        if (n < 0 || (size_t)n >= outlen - o) {
            break;
        }
        o += (size_t)n;
    }
}

/* The route for (method, path); *path_known says whether any route has the
 * path (405 rather than 404), *path_public whether one of them is public (a
 * wrong method on a public path is a 405 without a token). Captures go into
 * rq. */
static const struct httpd_route *find_route(const struct httpd *h, struct request *rq,
                                            const char *method, bool *path_known, bool *path_public)
{
    *path_known = false;
    *path_public = false;
    for (size_t i = 0; i < h->svc->nroutes; i++) {
        const struct httpd_route *r = &h->svc->routes[i];
        if (!path_match(r->path, rq->path, NULL)) {
            continue;
        }
        *path_known = true;
        *path_public = *path_public || (r->flags & HTTPD_PUBLIC) != 0;
        if (method_ok(r, method)) {
            (void)path_match(r->path, rq->path, rq);
            return r;
        }
    }
    return NULL;
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

const char *httpd_req_arg(const struct httpd_req *rq, const char *name)
{
    return MHD_lookup_connection_value(rq->conn, MHD_GET_ARGUMENT_KIND, name);
}

const char *httpd_req_header(const struct httpd_req *rq, const char *name)
{
    return MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, name);
}

bool httpd_req_gone(const struct httpd_req *rq)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(rq->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    struct pollfd p;

    if (ci == NULL) {
        return false;
    }
    /* The connection is suspended while its handler runs: MHD neither reads
     * nor closes the socket until the resume, so the descriptor stays ours
     * to look at. Only the hang-up bits count: bytes the client sent after
     * its request (a pipelined one) do not mean it left. */
    p.fd = ci->connect_fd;
    p.events = POLLRDHUP;
    p.revents = 0;
    return poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0;
}

/* ===========================================================================
 * Access log and completion
 * ========================================================================= */

/* One line per request in the shape of every other log line (pv_log):
 * "TS proviso-advisor access: POST /v1/prove 200 verdict:findings 20.394 ms".
 * The method is the client's: anything but a token character is written as
 * '?', so it cannot split or forge a line. */
static void access_log(const struct request *rq, uint64_t ns, bool aborted)
{
    char method[sizeof(rq->method)];
    size_t i;

    for (i = 0; i + 1 < sizeof(method) && rq->method[i] != '\0'; i++) {
        unsigned char ch = (unsigned char)rq->method[i];
        method[i] = (ch > 0x20 && ch < 0x7f && ch != '"' && ch != '\\') ? (char)ch : '?';
    }
    method[i] = '\0';
    pv_log_access("%s %s %u verdict:%s %llu.%03llu ms%s", method[0] ? method : "-",
                  rq->route != NULL ? rq->route->path : "unknown", rq->status,
                  rq->label != NULL ? rq->label : "none", (unsigned long long)(ns / 1000000),
                  (unsigned long long)(ns / 1000 % 1000), aborted ? " aborted" : "");
}

static void request_free(struct request *rq)
{
    if (rq->resp != NULL) {
        MHD_destroy_response(rq->resp);
    }
    pv_dynbuf_free(&rq->body);
    free(rq->path);
    free(rq->param_buf);
    free(rq);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    struct httpd *h = cls;
    struct request *rq = *con_cls;
    uint64_t ns;

    (void)conn;
    if (rq == NULL) {
        return;
    }
    *con_cls = NULL;
    ns = httpd_now_ns() - rq->start_ns;
    if (rq->status != 0 && h->svc->completed != NULL) {
        h->svc->completed(h->svc->ctx, rq->route != NULL ? rq->route->id : -1, rq->status, ns);
    }
    /* a health probe that succeeded is counted in /metrics, not logged: the
     * advisor asks its prover every 2 s, and those lines buried the rest */
    if (!(rq->status == 200 && rq->route != NULL && strcmp(rq->route->path, "/healthz") == 0 &&
          toe == MHD_REQUEST_TERMINATED_COMPLETED_OK)) {
        access_log(rq, ns, toe != MHD_REQUEST_TERMINATED_COMPLETED_OK);
    }
    if (rq->admitted) {
        atomic_fetch_sub(&h->admitted, 1);
    }
    request_free(rq);
    atomic_fetch_sub(&h->active, 1);
}

static void note_rejected(const struct httpd *h)
{
    if (h->svc->rejected != NULL) {
        h->svc->rejected(h->svc->ctx);
    }
}

/* ===========================================================================
 * Handlers
 * ========================================================================= */

static void fill_req(struct request *rq, struct httpd_req *req)
{
    memset(req, 0, sizeof(*req));
    req->route = rq->route;
    req->method = rq->method;
    req->path = rq->path;
    memcpy(req->params, rq->params, sizeof(req->params));
    req->nparams = rq->nparams;
    req->body = rq->body.buf != NULL ? rq->body.buf : "";
    req->body_len = rq->body.len;
    req->principal = rq->principal;
    req->conn = rq->conn;
}

static void job_run(struct httpd_job *job, void *worker, bool cancelled)
{
    struct request *rq = (struct request *)job;
    const struct httpd_service *svc = rq->h->svc;
    struct httpd_reply r;

    if (cancelled) {
        httpd_reply_error(&r, MHD_HTTP_SERVICE_UNAVAILABLE, "shutting_down",
                          "the service is stopping");
    } else {
        struct httpd_req req;
        memset(&r, 0, sizeof(r));
        fill_req(rq, &req);
        svc->handle(svc->ctx, worker, &req, &r);
    }
    if (r.status == MHD_HTTP_SERVICE_UNAVAILABLE) {
        note_rejected(rq->h);
    }
    rq->label = r.label;
    rq->status = r.status;
    rq->resp = make_response(&r);
    pv_dynbuf_free(&rq->body);
    /* Last touch of 'rq': once resumed, the polling thread may free it. */
    MHD_resume_connection(rq->conn);
}

static enum MHD_Result reply_inline(struct request *rq)
{
    const struct httpd_service *svc = rq->h->svc;
    struct httpd_reply r;
    struct httpd_req req;

    memset(&r, 0, sizeof(r));
    fill_req(rq, &req);
    svc->handle(svc->ctx, NULL, &req, &r);
    rq->label = r.label;
    return queue(rq, r.status, make_response(&r));
}

static enum MHD_Result reply_too_big(struct request *rq)
{
    char detail[96];

    snprintf(detail, sizeof(detail), "request body exceeds %zu bytes", rq->h->cfg->body_limit);
    return reply_error(rq, MHD_HTTP_CONTENT_TOO_LARGE, "body_too_large", detail);
}

/* Headers are in: decide everything that does not need the body. */
static enum MHD_Result first_call(struct httpd *h, struct request *rq, const char *method)
{
    const char *len_hdr;
    uint64_t declared = 0;
    bool path_known = false;
    bool path_public = false;

    rq->route = find_route(h, rq, method, &path_known, &path_public);
    if (atomic_load(&h->draining)) {
        struct MHD_Response *resp = error_response(MHD_HTTP_SERVICE_UNAVAILABLE, "shutting_down",
                                                   "the service is stopping");
        note_rejected(h);
        if (resp != NULL) {
            (void)MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
        }
        return queue(rq, MHD_HTTP_SERVICE_UNAVAILABLE, resp);
    }
    if (rq->route != NULL ? (rq->route->flags & HTTPD_PUBLIC) == 0 : !path_public) {
        const char *authz =
            MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
        int who;
        if (h->svc->authorize != NULL) {
            who = h->svc->authorize(h->svc->ctx, rq->route, authz);
        } else {
            who = httpd_token_check(h->token, authz) ? 0 : -1;
        }
        if (who < 0) {
            return reply_error(rq, MHD_HTTP_UNAUTHORIZED, "unauthorized",
                               authz == NULL ? "missing bearer token" : "invalid bearer token");
        }
        rq->principal = who;
    }
    if (rq->route == NULL) {
        if (path_known) {
            return reply_error(rq, MHD_HTTP_METHOD_NOT_ALLOWED, "method_not_allowed",
                               "method not allowed on this route");
        }
        return reply_error(rq, MHD_HTTP_NOT_FOUND, "not_found", "no such route");
    }
    if ((rq->route->flags & HTTPD_BODY) == 0) {
        /* Answer on the next call: a reply queued while the request is
         * still being read makes MHD close the connection. */
        return MHD_YES;
    }
    if (!content_type_ok(
            MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE))) {
        return reply_error(rq, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type",
                           "Content-Type must be application/json");
    }
    len_hdr =
        MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (len_hdr != NULL && (!pv_ok(pv_parse_u64(len_hdr, strlen(len_hdr), UINT64_MAX, &declared)) ||
                            declared > h->cfg->body_limit)) {
        return reply_too_big(rq);
    }
    /* A slot is held from here (body upload included) to completion. */
    if (atomic_fetch_add(&h->admitted, 1) >= h->cfg->max_concurrent) {
        atomic_fetch_sub(&h->admitted, 1);
        note_rejected(h);
        return reply_error(rq, MHD_HTTP_SERVICE_UNAVAILABLE, "overloaded",
                           "too many concurrent requests; retry later");
    }
    rq->admitted = true;
    pv_dynbuf_init(&rq->body, h->cfg->body_limit);
    return MHD_YES;
}

static struct request *request_new(struct httpd *h, struct MHD_Connection *conn, const char *url,
                                   const char *method)
{
    struct request *rq = pv_calloc(1, sizeof(*rq));
    size_t ulen;

    if (rq == NULL) {
        return NULL;
    }
    ulen = strlen(url);
    rq->path = pv_strdup(url);
    rq->param_buf = pv_malloc(ulen + HTTPD_MAX_PARAMS + 1);
    if (rq->path == NULL || rq->param_buf == NULL) {
        free(rq->path);
        free(rq->param_buf);
        free(rq);
        return NULL;
    }
    rq->h = h;
    rq->conn = conn;
    rq->start_ns = httpd_now_ns();
    rq->job.run = job_run;
    snprintf(rq->method, sizeof(rq->method), "%s", method);
    pv_dynbuf_init(&rq->body, 0);
    return rq;
}

static enum MHD_Result submit(struct httpd *h, struct request *rq)
{
    /* Suspend before the job is visible to a worker, so its resume can never
     * precede the suspend. */
    rq->submitted = true;
    MHD_suspend_connection(rq->conn);
    if (!rq->admitted) {
        /* Bodyless routes take their slot here. */
        if (atomic_fetch_add(&h->admitted, 1) >= h->cfg->max_concurrent) {
            atomic_fetch_sub(&h->admitted, 1);
            goto refused;
        }
        rq->admitted = true;
    }
    if (httpd_pool_submit(h->pool, &rq->job, h->cfg->max_concurrent)) {
        return MHD_YES;
    }
refused:
    note_rejected(h);
    rq->status = MHD_HTTP_SERVICE_UNAVAILABLE;
    rq->resp = atomic_load(&h->draining)
                   ? error_response(MHD_HTTP_SERVICE_UNAVAILABLE, "shutting_down",
                                    "the service is stopping")
                   : error_response(MHD_HTTP_SERVICE_UNAVAILABLE, "overloaded",
                                    "too many concurrent requests; retry later");
    MHD_resume_connection(rq->conn);
    return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
    struct httpd *h = cls;
    struct request *rq = *con_cls;

    (void)version;
    if (rq == NULL) {
        rq = request_new(h, conn, url, method);
        if (rq == NULL) {
            return MHD_NO;
        }
        atomic_fetch_add(&h->active, 1);
        *con_cls = rq;
        return first_call(h, rq, method);
    }
    if (rq->replied) {
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (*upload_data_size != 0) {
        if (rq->too_big || (rq->route->flags & HTTPD_BODY) == 0) {
            /* MHD 0.9.75 cannot queue a reply in the middle of a body: the
             * rest is read and dropped, up to a bound, so the client still
             * gets its 413. Past the bound the connection is closed. A body
             * sent to a route that takes none is dropped the same way. */
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
        return queue(rq, rq->status, resp);
    }
    if (rq->oom) {
        return reply_error(rq, 500, "internal", "out of memory");
    }
    if (rq->too_big) {
        return reply_too_big(rq);
    }
    if (rq->route->flags & HTTPD_INLINE) {
        return reply_inline(rq);
    }
    return submit(h, rq);
}

/* ===========================================================================
 * Daemon
 * ========================================================================= */

static void mhd_log(void *cls, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

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

struct httpd *httpd_start(const struct httpd_service *svc, const struct httpd_config *cfg,
                          const struct httpd_token *token, char *err, size_t errlen)
{
    struct httpd *h = pv_calloc(1, sizeof(*h));
    struct sockaddr_in6 sa6;
    struct sockaddr_in sa4;
    const struct sockaddr *sa;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_ALLOW_SUSPEND_RESUME |
                     MHD_USE_ITC | MHD_USE_ERROR_LOG;
    const union MHD_DaemonInfo *info;
    unsigned workers;
    unsigned long nofile;
    unsigned max_conn;

    if (h == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    h->svc = svc;
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
        workers = n < 1 ? 1 : n > 256 ? 256 : (unsigned)n;
    }
    h->workers = workers;
    /* The connection limit must fit the descriptor limit, with room for the
     * process's own files: a flood of stalled connections then meets the
     * limit and the timeout, never EMFILE on accept. */
    nofile = httpd_raise_nofile((unsigned long)cfg->max_connections + 64ul);
    max_conn = cfg->max_connections;
    if (nofile < (unsigned long)max_conn + 64ul) {
        max_conn = nofile > 128ul ? (unsigned)(nofile - 64ul) : 64u;
        pv_log_warnx("connection limit lowered to %u (RLIMIT_NOFILE %lu)", max_conn, nofile);
    }
    pv_errno = PV_OK;
    h->pool = httpd_pool_new(workers, svc->worker_new, svc->worker_free, svc->ctx);
    if (h->pool == NULL) {
        snprintf(err, errlen, "cannot start the worker pool: %s",
                 pv_strerror(pv_errno != PV_OK ? pv_errno : PV_ERR_INTERNAL));
        http_release(h);
        return NULL;
    }
    {
        struct MHD_OptionItem opts[] = {
            {MHD_OPTION_SOCK_ADDR, 0, PV_UNCONST(sa)},
            {MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, h},
            {MHD_OPTION_CONNECTION_TIMEOUT, (intptr_t)cfg->conn_timeout_s, NULL},
            {MHD_OPTION_CONNECTION_LIMIT, (intptr_t)max_conn, NULL},
            {MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024, NULL},
            {cfg->per_ip_limit > 0 ? MHD_OPTION_PER_IP_CONNECTION_LIMIT : MHD_OPTION_END,
             (intptr_t)cfg->per_ip_limit, NULL},
            {MHD_OPTION_END, 0, NULL},
            {MHD_OPTION_END, 0, NULL},
        };
        size_t k = cfg->per_ip_limit > 0 ? 6 : 5;
        if (cfg->io_threads > 1) {
            opts[k].option = MHD_OPTION_THREAD_POOL_SIZE;
            opts[k].value = (intptr_t)cfg->io_threads;
        }
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

uint16_t httpd_port(const struct httpd *h)
{
    return h->port;
}

unsigned httpd_workers(const struct httpd *h)
{
    return h->workers;
}

unsigned httpd_admitted(const struct httpd *h)
{
    return atomic_load(&h->admitted);
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

bool httpd_drain(struct httpd *h, unsigned grace_ms, unsigned hard_ms)
{
    uint64_t deadline = httpd_now_ns() + (uint64_t)grace_ms * 1000000ull;
    uint64_t hard = deadline + (uint64_t)hard_ms * 1000000ull;
    MHD_socket fd;

    atomic_store(&h->draining, true);
    fd = MHD_quiesce_daemon(h->d);
    if (fd != MHD_INVALID_SOCKET) {
        close(fd);
    }
    while (atomic_load(&h->active) > 0 && httpd_now_ns() < deadline) {
        sleep_ms(5);
    }
    if (atomic_load(&h->active) == 0) {
        return true;
    }
    pv_log_warnx("drain: grace period over with %u request(s) in flight; cancelling queued work",
                 atomic_load(&h->active));
    httpd_pool_cancel_queued(h->pool);
    while (httpd_pool_load(h->pool) > 0 && httpd_now_ns() < hard) {
        sleep_ms(5);
    }
    return false;
}

/* Stop and free; only when no job is queued or running. */
static void http_release(struct httpd *h)
{
    if (h->d != NULL) {
        MHD_stop_daemon(h->d);
    }
    httpd_pool_free(h->pool);
    free(h);
}

bool httpd_free(struct httpd *h)
{
    if (h == NULL) {
        return true;
    }
    if (h->pool != NULL && httpd_pool_load(h->pool) > 0) {
        /* A job still runs past every bound: MHD cannot stop with a
         * suspended connection. */
        return false;
    }
    http_release(h);
    return true;
}
