/* SPDX-License-Identifier: Apache-2.0 */
/* proxy_local.c - http://policy.local, the sandbox's side of the advisor
 *
 * In advisor mode an agent reaches the advisor through its own proxy with
 * plain forward-proxy requests to http://policy.local (docs/proxy.md
 * "Advisor mode and policy.local"). proxy_relay.c hands such a request over
 * once its head is parsed and its sender identified: the client's
 * bufferevent and socket move here, the connection object is retired
 * (proxy_conn_kill, no line of its own), and this module reads the body
 * (Content-Length only, 64 KiB), answers one request and closes
 * (Connection: close, lingering close).
 *
 *   GET  /v1/policy/current           the YAML this proxy enforces (inline)
 *   GET  /v1/denials?last=N           recent DENIED lines, redacted (inline)
 *   POST /v1/proposals                forwarded to the advisor (a job)
 *   GET  /v1/proposals/{id}           forwarded (a job)
 *   GET  /v1/proposals/{id}/wait      forwarded; an approval is answered
 *                                     once this proxy enforces it (a job)
 *   GET  /v1/tools                    the host-side tools the caller may call
 *                                     under the revision this proxy enforces
 *   GET  /v1/openapi[?server=NAME]    the same as pruned OpenAPI documents
 *                                     (a job each; docs/advisor.md#tools)
 *
 * Calls to the advisor run on proxy_advisor.c's workers: the loop never
 * waits for HTTP. policy_reloaded is this proxy's own answer: true only when
 * it has loaded a revision at or after the chunk's approved_revision. When
 * agent_policy_proposals_enabled is off every route answers 404
 * feature_disabled. Every outcome leaves exactly one decision line, written
 * before the reply (engine policy-local, stage policy-local; non-2xx answers
 * are DENIED): answer_text() is this module's one exit, the counterpart of
 * proxy_conn_outcome() for requests whose status is the advisor's.
 */
#include "config.h"

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/pv_dynbuf.h"
#include "proxy/proxy_advisor.h"
#include "proxy/proxy_int.h"

#define BODY_MAX 65536u
#define BODY_TIMEOUT_S 15
#define RING_MAX 100
#define LINE_MAX_BYTES 4096
#define ID_MAX 128
#define WAIT_DEFAULT_S 60
#define WAIT_MAX_S 300

/* proviso's own way to turn proposals on (docs/cli.md "settings") */
#define FEATURE_DISABLED                                                               \
    "agent-driven policy proposals are not enabled in this sandbox; enable them with " \
    "`proviso settings set agent_policy_proposals_enabled true --sandbox %s`"

enum local_route {
    ROUTE_NONE,
    ROUTE_POLICY,
    ROUTE_DENIALS,
    ROUTE_SUBMIT,
    ROUTE_CHUNK,
    ROUTE_WAIT,
    ROUTE_TOOLS,
    ROUTE_OPENAPI,
    ROUTE_BAD_SUB, /* a malformed /v1/proposals/... path */
};

enum local_state {
    LS_BODY,   /* reading the request body */
    LS_JOB,    /* an advisor call is running */
    LS_WRITE,  /* the answer is being written */
    LS_LINGER, /* answered, write side shut: discarding input */
};

struct local_req {
    struct proxy_local *l;
    struct local_req *prev, *next;
    struct sockaddr_storage peer; /* counts toward its address's connection cap */
    struct bufferevent *bev;      /* NULL once the client is gone */
    int fd;
    struct proxy_identity *id;
    enum local_state st;
    enum local_route route;
    bool in_job;
    char method[16];
    char path[1024]; /* the route, without the query */
    char *query;     /* owned, NULL when none */
    char chunk[ID_MAX + 1];
    uint64_t want; /* Content-Length */
    struct pv_dynbuf body;
};

struct proxy_local {
    struct proxy_server *srv;
    struct proxy_advisor *a;
    struct local_req *reqs;
    size_t nreqs;           /* clients being served (the connection cap counts them) */
    json_t *ring[RING_MAX]; /* newest at (head + n - 1) % RING_MAX */
    size_t head;
    size_t n;
};

struct local_job {
    struct proxy_advisor_job j;
    struct local_req *req;
    enum local_route route;
    char chunk[ID_MAX + 1];
    unsigned timeout;
    char *body; /* request body (submit) */
    size_t blen;
    unsigned status; /* answer */
    char *out;       /* JSON text */
    char server[64]; /* /v1/openapi?server=NAME */
};

static void req_read(struct bufferevent *bev, void *arg);
static void req_write(struct bufferevent *bev, void *arg);
static void req_event(struct bufferevent *bev, short what, void *arg);

/* ---------------------------------------------------------------------------
 * Pure helpers
 * ------------------------------------------------------------------------- */

void proxy_local_redact(const char *in, size_t len, char *out, size_t outlen)
{
    static const char mark[] = "[redacted]";
    size_t o = 0;
    size_t i = 0;

    if (outlen == 0) {
        return;
    }
    while (i < len && o + 1 < outlen) {
        char c = in[i];
        size_t j = i + 1;
        if (c != '?' && c != '#') {
            out[o++] = c;
            i++;
            continue;
        }
        if (len - j >= sizeof(mark) - 1 && memcmp(in + j, mark, sizeof(mark) - 1) == 0) {
            j += sizeof(mark) - 1; /* already redacted: keep it */
        } else {
            while (j < len && in[j] != ' ' && in[j] != '\t' && in[j] != ']' && in[j] != '\n' &&
                   in[j] != '\r') {
                j++;
            }
        }
        if (o + sizeof(mark) + 1 >= outlen) {
            break;
        }
        out[o++] = c;
        memcpy(out + o, mark, sizeof(mark) - 1);
        o += sizeof(mark) - 1;
        i = j;
    }
    out[o] = '\0';
}

unsigned proxy_local_query_uint(const char *query, const char *name, unsigned dflt, unsigned lo,
                                unsigned hi)
{
    size_t nl = strlen(name);
    const char *p = query;

    while (p != NULL && *p != '\0') {
        const char *end = strchr(p, '&');
        size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
        if (len > nl && strncmp(p, name, nl) == 0 && p[nl] == '=') {
            uint64_t v = 0;
            if (!pv_ok(pv_parse_u64(p + nl + 1, len - nl - 1, UINT64_MAX, &v))) {
                return dflt;
            }
            return v < lo ? lo : v > hi ? hi : (unsigned)v;
        }
        p = end != NULL ? end + 1 : NULL;
    }
    return dflt;
}

/* Route of (method, path); 'id' gets a proposal id. */
static enum local_route route_of(const char *method, const char *path, char *id, size_t idlen)
{
    static const char pfx[] = "/v1/proposals/";
    const char *rest;
    const char *slash;
    size_t il;
    bool get = strcmp(method, "GET") == 0;

    if (get && strcmp(path, "/v1/policy/current") == 0) {
        return ROUTE_POLICY;
    }
    if (get && strcmp(path, "/v1/denials") == 0) {
        return ROUTE_DENIALS;
    }
    if (get && strcmp(path, "/v1/tools") == 0) {
        return ROUTE_TOOLS;
    }
    if (get && strcmp(path, "/v1/openapi") == 0) {
        return ROUTE_OPENAPI;
    }
    if (strcmp(method, "POST") == 0 && strcmp(path, "/v1/proposals") == 0) {
        return ROUTE_SUBMIT;
    }
    if (!get || strncmp(path, pfx, sizeof(pfx) - 1) != 0) {
        return ROUTE_NONE;
    }
    rest = path + sizeof(pfx) - 1;
    slash = strchr(rest, '/');
    il = slash != NULL ? (size_t)(slash - rest) : strlen(rest);
    if (il == 0 || il > ID_MAX || il >= idlen) {
        return ROUTE_BAD_SUB;
    }
    for (size_t i = 0; i < il; i++) {
        char c = rest[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.')) {
            return ROUTE_BAD_SUB;
        }
    }
    memcpy(id, rest, il);
    id[il] = '\0';
    if (slash == NULL) {
        return ROUTE_CHUNK;
    }
    return strcmp(slash, "/wait") == 0 ? ROUTE_WAIT : ROUTE_BAD_SUB;
}

/* ---------------------------------------------------------------------------
 * Recent denials
 * ------------------------------------------------------------------------- */

/* The first 'max' bytes of 'in' redacted (queries and fragments) as a new
 * JSON string; "" for NULL. */
static json_t *redacted(const char *in, size_t max)
{
    char buf[LINE_MAX_BYTES * 2];

    if (in == NULL) {
        return json_string("");
    }
    proxy_local_redact(in, strnlen(in, max), buf, sizeof(buf));
    return json_string(buf);
}

/* One denial as GET /v1/denials answers it: the decision line the reference
 * answers as a bare string, and the fields an agent drafts a rule from. */
static json_t *denial_object(const char *line, const struct proxy_log_event *e)
{
    json_t *o = json_pack("{s:o}", "line", redacted(line, strlen(line)));

    if (o == NULL || e == NULL) {
        return o;
    }
    json_object_set_new(o, "host", json_string(e->host != NULL ? e->host : ""));
    json_object_set_new(o, "port", json_integer(e->port));
    json_object_set_new(o, "binary", json_string(e->binary != NULL ? e->binary : ""));
    /* method and path only for an HTTP request the proxy read (else "") */
    json_object_set_new(o, "method", json_string(e->method != NULL ? e->method : ""));
    json_object_set_new(o, "path", redacted(e->method != NULL ? e->path : NULL, LINE_MAX_BYTES));
    json_object_set_new(o, "stage", json_string(e->stage != NULL ? e->stage : ""));
    json_object_set_new(o, "policy", json_string(e->policy != NULL ? e->policy : "-"));
    json_object_set_new(o, "reason", redacted(e->reason, LINE_MAX_BYTES));
    if (e->gql != NULL) {
        /* the GraphQL operation refused: what a graphql_allow rule names */
        json_object_set_new(o, "graphql", proxy_gql_json(e->gql));
    }
    return o;
}

void proxy_local_denial(void *arg, const char *line, size_t len, const struct proxy_log_event *e)
{
    struct proxy_local *l = arg;
    static const char cut[] = "...[truncated]";
    size_t keep = len;
    char *s;
    json_t *o;

    if (keep > LINE_MAX_BYTES) {
        keep = LINE_MAX_BYTES;
        while (keep > 0 && ((unsigned char)line[keep] & 0xC0) == 0x80) {
            keep--; /* never split a UTF-8 sequence */
        }
    }
    s = pv_malloc(keep + sizeof(cut));
    if (s == NULL) {
        return;
    }
    memcpy(s, line, keep);
    if (keep < len) {
        memcpy(s + keep, cut, sizeof(cut));
    } else {
        s[keep] = '\0';
    }
    o = denial_object(s, e);
    free(s);
    if (o == NULL) {
        return;
    }
    if (l->n == RING_MAX) {
        json_decref(l->ring[l->head]);
        l->ring[l->head] = o;
        l->head = (l->head + 1) % RING_MAX;
    } else {
        l->ring[(l->head + l->n) % RING_MAX] = o;
        l->n++;
    }
}

static json_t *denials_json(const struct proxy_local *l, unsigned last)
{
    json_t *arr = json_array();

    for (size_t k = 0; k < l->n && k < last; k++) {
        json_array_append(arr, l->ring[(l->head + l->n - 1 - k) % RING_MAX]);
    }
    return json_pack("{s:o,s:b}", "denials", arr, "log_available", true);
}

/* ---------------------------------------------------------------------------
 * Answers
 * ------------------------------------------------------------------------- */

static void req_free(struct local_req *r)
{
    struct proxy_local *l = r->l;

    if (r->bev != NULL) {
        bufferevent_free(r->bev);
    }
    if (r->fd >= 0) {
        close(r->fd);
    }
    if (r->prev != NULL) {
        r->prev->next = r->next;
    } else {
        l->reqs = r->next;
    }
    if (r->next != NULL) {
        r->next->prev = r->prev;
    }
    l->nreqs--;
    proxy_identity_unref(r->id);
    pv_dynbuf_free(&r->body);
    free(r->query);
    free(r);
}

/* The client is gone (or done): free now, or when its job completes. */
static void req_close(struct local_req *r)
{
    if (r->bev != NULL) {
        bufferevent_free(r->bev);
        r->bev = NULL;
    }
    if (r->fd >= 0) {
        close(r->fd);
        r->fd = -1;
    }
    if (!r->in_job) {
        req_free(r);
    }
}

/* One decision line per outcome; 'js' is the answer body. */
static void log_outcome(struct local_req *r, unsigned status, const char *js)
{
    struct proxy_log_event e;
    char reason[400];
    json_t *j = status >= 300 ? json_loads(js, 0, NULL) : NULL;
    const char *err = json_string_value(json_object_get(j, "error"));
    const char *det = json_string_value(json_object_get(j, "detail"));

    snprintf(reason, sizeof(reason), "policy.local %u %s: %s", status, err != NULL ? err : "error",
             det != NULL ? det : "");
    json_decref(j);
    memset(&e, 0, sizeof(e));
    e.action = status < 300 ? PROXY_LOG_ALLOWED : PROXY_LOG_DENIED;
    e.engine = NULL; /* no reference engine decides policy.local */
    e.id = r->id;
    e.binary = r->id != NULL && r->id->n > 0 ? r->id->path[0] : "-";
    e.host = "policy.local";
    e.port = 80;
    e.method = r->method;
    e.path = r->path;
    e.has_query = r->query != NULL;
    e.policy = "-";
    e.reason = reason;
    e.stage = "policy-local";
    proxy_log_event(r->l->srv->log, &e);
    proxy_server_log_touch(r->l->srv);
    proxy_metrics_decision(&r->l->srv->metrics, e.action, e.stage, 0);
}

/* Answer with 'js' (JSON text) and close. */
static void answer_text(struct local_req *r, unsigned status, const char *js)
{
    struct evbuffer *out;
    char head[200];

    log_outcome(r, status, js);
    if (r->bev == NULL) {
        req_close(r);
        return;
    }
    out = bufferevent_get_output(r->bev);
    evbuffer_add(out, head, proxy_reply_json_head(status, strlen(js), head, sizeof(head)));
    evbuffer_add(out, js, strlen(js));
    r->st = LS_WRITE;
    bufferevent_setwatermark(r->bev, EV_WRITE, 0, 0);
    bufferevent_disable(r->bev, EV_READ);
    bufferevent_enable(r->bev, EV_WRITE);
}

/* Answer with 'o' (stolen). */
static void answer(struct local_req *r, unsigned status, json_t *o)
{
    char *js = o != NULL ? json_dumps(o, JSON_COMPACT) : NULL;

    json_decref(o);
    answer_text(r, js != NULL ? status : 500,
                js != NULL ? js : "{\"error\":\"internal\",\"detail\":\"out of memory\"}");
    free(js);
}

static void answer_error(struct local_req *r, unsigned status, const char *error,
                         const char *detail)
{
    answer(r, status, json_pack("{s:s,s:s}", "error", error, "detail", detail));
}

/* ---------------------------------------------------------------------------
 * Jobs: calls to the advisor (worker threads)
 * ------------------------------------------------------------------------- */

static void job_set(struct local_job *j, unsigned status, json_t *o)
{
    free(j->out);
    j->out = o != NULL ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    j->status = j->out != NULL ? status : 500;
}

static void job_error(struct local_job *j, unsigned status, const char *error, const char *detail)
{
    job_set(j, status, json_pack("{s:s,s:s}", "error", error, "detail", detail));
}

/* policy_reloaded is ours: only an approved chunk has it, and it is true
 * only once this proxy loaded a revision >= approved_revision ('wait_ms'
 * bounds how long to wait for that). */
static void own_reloaded(struct proxy_advisor *a, json_t *o, int64_t deadline)
{
    const char *st = json_string_value(json_object_get(o, "status"));
    json_int_t rev = json_integer_value(json_object_get(o, "approved_revision"));

    if (st == NULL || strcmp(st, "approved") != 0) {
        (void)json_object_del(o, "policy_reloaded");
        return;
    }
    json_object_set_new(o, "policy_reloaded",
                        json_boolean(rev > 0 && proxy_advisor_wait_loaded(a, rev, deadline)));
}

/* /v1/tools and /v1/openapi: the advisor discovers, for the revision this
 * proxy enforces and the caller's identity, which tool operations are
 * reachable (docs/advisor.md#tools); the answer is reshaped for agents. */
static void tools_run(struct proxy_advisor *a, struct local_job *j)
{
    struct proxy_advisor_resp r;
    json_t *o;
    json_t *out;

    if (!proxy_advisor_call(a, "POST", "/tools", j->body, j->blen, 60, &r)) {
        char d[400];
        snprintf(d, sizeof(d), "cannot reach the policy advisor: %s", r.err);
        job_error(j, 502, "gateway_lookup_failed", d);
        return;
    }
    o = json_loadb(r.body, r.len, 0, NULL);
    free(r.body);
    if (r.status != 200 || !json_is_object(o)) {
        if (json_is_object(o) && r.status >= 400 && r.status <= 599 && r.status != 401 &&
            r.status != 403) {
            job_set(j, (unsigned)r.status, o);
            return;
        }
        json_decref(o);
        job_error(j, 502, "discovery_failed", "the policy advisor could not list the tools");
        return;
    }
    if (j->route == ROUTE_TOOLS) {
        out = json_pack("{s:O,s:O}", "revision", json_object_get(o, "revision"), "tools",
                        json_object_get(o, "tools"));
    } else if (j->server[0] == '\0') {
        out = json_pack("{s:O,s:O}", "revision", json_object_get(o, "revision"), "servers",
                        json_object_get(o, "openapi"));
    } else {
        json_t *doc = json_object_get(json_object_get(o, "openapi"), j->server);
        if (doc == NULL) {
            json_decref(o);
            job_error(j, 404, "not_found", "no tool server of that name for this sandbox");
            return;
        }
        out = json_incref(doc);
    }
    json_decref(o);
    job_set(j, 200, out);
}

static void job_run(struct proxy_advisor *a, struct proxy_advisor_job *pj)
{
    struct local_job *j = (struct local_job *)pj;
    struct proxy_advisor_resp r;
    char path[256];
    const char *method = "GET";
    const char *fail_code = "gateway_lookup_failed";
    long timeout = 15;
    int64_t deadline = proxy_advisor_now_ms() + (int64_t)j->timeout * 1000;
    json_t *o;
    bool ok;

    switch (j->route) {
    case ROUTE_SUBMIT:
        snprintf(path, sizeof(path), "/proposals");
        method = "POST";
        fail_code = "gateway_connect_failed";
        timeout = 60; /* the advisor proves before it answers */
        break;
    case ROUTE_CHUNK:
        snprintf(path, sizeof(path), "/proposals/%s", j->chunk);
        break;
    case ROUTE_WAIT:
        snprintf(path, sizeof(path), "/proposals/%s/wait?timeout=%u", j->chunk, j->timeout);
        timeout = (long)j->timeout + 15;
        break;
    case ROUTE_TOOLS:
    case ROUTE_OPENAPI:
        tools_run(a, j);
        return;
    case ROUTE_NONE:
    case ROUTE_POLICY:
    case ROUTE_DENIALS:
    case ROUTE_BAD_SUB:
        job_error(j, 500, "internal", "not an advisor route");
        return;
    }
    ok = proxy_advisor_call(a, method, path, j->body, j->blen, timeout, &r);
    if (!ok) {
        char d[400];
        snprintf(d, sizeof(d), "cannot reach the policy advisor: %s", r.err);
        job_error(j, 502, fail_code, d);
        return;
    }
    o = json_loadb(r.body, r.len, 0, NULL);
    free(r.body);
    if (r.status == 401 || r.status == 403) {
        json_decref(o);
        job_error(j, 502, j->route == ROUTE_SUBMIT ? "proposal_submit_failed" : fail_code,
                  "the policy advisor refused this sandbox's token");
        return;
    }
    if (!json_is_object(o) || r.status < 200 || r.status > 599) {
        char d[128];
        json_decref(o);
        snprintf(d, sizeof(d), "the policy advisor answered %ld without a JSON object", r.status);
        job_error(j, 502, j->route == ROUTE_SUBMIT ? "proposal_submit_failed" : fail_code, d);
        return;
    }
    if (r.status == 200 && j->route == ROUTE_CHUNK) {
        own_reloaded(a, o, 0);
    } else if (r.status == 200 && j->route == ROUTE_WAIT) {
        int64_t floor = proxy_advisor_now_ms() + 500;
        own_reloaded(a, o, deadline > floor ? deadline : floor);
    }
    job_set(j, (unsigned)r.status, o);
}

static void job_done(struct proxy_advisor *a, struct proxy_advisor_job *pj)
{
    struct local_job *j = (struct local_job *)pj;
    struct local_req *r = j->req;

    (void)a;
    r->in_job = false;
    if (j->out != NULL) {
        answer_text(r, j->status, j->out);
    } else {
        answer_error(r, 503, "advisor_unavailable", "the proxy is shutting down");
    }
    free(j->out);
    free(j->body);
    free(j);
}

/* The advisor query of /v1/tools and /v1/openapi: the caller's identity
 * (binary, then ancestors, as the proxy identified it) and the revision
 * this proxy enforces; 'server' gets ?server=NAME. NULL after an answer. */
static char *tools_query(struct local_req *r, char *server, size_t slen)
{
    const struct proxy_identity *id = r->id;
    int64_t rev = proxy_advisor_applied_rev(r->l->a);
    const char *q = r->query;
    json_t *anc = json_array();
    json_t *o;
    char *text;

    /* ?server=NAME: the exact key, a non-empty name of [a-z0-9_-] */
    server[0] = '\0';
    while (q != NULL && *q != '\0') {
        const char *end = strchr(q, '&');
        size_t len = end != NULL ? (size_t)(end - q) : strlen(q);
        if (len >= 7 && strncmp(q, "server=", 7) == 0) {
            size_t n = len - 7;
            bool ok = n > 0 && n < slen;
            for (size_t i = 0; ok && i < n; i++) {
                char c = q[7 + i];
                ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
            }
            if (!ok) {
                json_decref(anc);
                answer_error(r, 400, "invalid_request", "server: a tool server name");
                return NULL;
            }
            memcpy(server, q + 7, n);
            server[n] = '\0';
        }
        q = end != NULL ? end + 1 : NULL;
    }
    if (id == NULL || !id->known || id->n == 0) {
        json_decref(anc);
        answer_error(r, 403, "identity_unknown", "the calling binary could not be identified");
        return NULL;
    }
    if (rev <= 0) {
        json_decref(anc);
        answer_error(r, 503, "policy_unavailable", "no sandbox policy revision is loaded yet");
        return NULL;
    }
    for (size_t i = 1; anc != NULL && i < id->n; i++) {
        json_array_append_new(anc, json_string(id->path[i]));
    }
    o = anc != NULL ? json_pack("{s:s,s:o,s:I}", "binary", id->path[0], "ancestors", anc,
                                "revision", (json_int_t)rev)
                    : NULL;
    text = o != NULL ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    if (text == NULL) {
        answer_error(r, 500, "internal", "out of memory");
    }
    return text;
}

static void start_job(struct local_req *r)
{
    struct local_job *j = pv_calloc(1, sizeof(*j));

    if (j == NULL) {
        answer_error(r, 500, "internal", "out of memory");
        return;
    }
    j->j.run = job_run;
    j->j.done = job_done;
    j->req = r;
    j->route = r->route;
    snprintf(j->chunk, sizeof(j->chunk), "%s", r->chunk);
    j->timeout = r->route == ROUTE_WAIT
                     ? proxy_local_query_uint(r->query, "timeout", WAIT_DEFAULT_S, 1, WAIT_MAX_S)
                     : 15;
    if (r->route == ROUTE_SUBMIT) {
        j->body = pv_dynbuf_take(&r->body, &j->blen);
        if (j->body == NULL) {
            free(j);
            answer_error(r, 500, "internal", "out of memory");
            return;
        }
    }
    if (r->route == ROUTE_TOOLS || r->route == ROUTE_OPENAPI) {
        j->body = tools_query(r, j->server, sizeof(j->server));
        j->blen = j->body != NULL ? strlen(j->body) : 0;
        if (j->body == NULL) {
            free(j);
            return; /* answered */
        }
    }
    r->st = LS_JOB;
    r->in_job = true;
    bufferevent_disable(r->bev, EV_READ);
    bufferevent_set_timeouts(r->bev, NULL, NULL);
    if (!proxy_advisor_submit(r->l->a, &j->j)) {
        r->in_job = false;
        free(j->body);
        free(j);
        answer_error(r, 503, "advisor_busy", "too many policy.local requests in flight; retry");
    }
}

/* ---------------------------------------------------------------------------
 * Routing (loop)
 * ------------------------------------------------------------------------- */

static void dispatch(struct local_req *r)
{
    struct proxy_local *l = r->l;
    char d[1200];

    r->route = route_of(r->method, r->path, r->chunk, sizeof(r->chunk));
    /* tool discovery is not the proposals feature: it only tells what the
     * enforced policy already allows */
    if (r->route == ROUTE_TOOLS || r->route == ROUTE_OPENAPI) {
        start_job(r);
        return;
    }
    if (!proxy_advisor_enabled(l->a)) {
        snprintf(d, sizeof(d), FEATURE_DISABLED,
                 l->srv->cfg->sandbox != NULL ? l->srv->cfg->sandbox : "NAME");
        answer_error(r, 404, "feature_disabled", d);
        return;
    }
    switch (r->route) {
    case ROUTE_NONE:
        snprintf(d, sizeof(d), "policy.local route not found: %s %s", r->method, r->path);
        answer_error(r, 404, "not_found", d);
        return;
    case ROUTE_BAD_SUB:
        snprintf(d, sizeof(d), "policy.local proposal sub-route not found: %s", r->path);
        answer_error(r, 404, "not_found", d);
        return;
    case ROUTE_POLICY: {
        const char *y = proxy_advisor_policy_yaml(l->a);
        if (y == NULL) {
            answer_error(r, 404, "policy_unavailable", "no current sandbox policy is loaded");
        } else {
            answer(r, 200, json_pack("{s:s,s:s}", "format", "yaml", "policy_yaml", y));
        }
        return;
    }
    case ROUTE_DENIALS:
        answer(r, 200, denials_json(l, proxy_local_query_uint(r->query, "last", 10, 1, RING_MAX)));
        return;
    case ROUTE_CHUNK:
    case ROUTE_WAIT:
    case ROUTE_TOOLS:
    case ROUTE_OPENAPI:
        start_job(r);
        return;
    case ROUTE_SUBMIT:
        r->st = LS_BODY;
        req_read(r->bev, r); /* bytes may already be here */
        return;
    }
}

static void req_read(struct bufferevent *bev, void *arg)
{
    struct local_req *r = arg;
    struct evbuffer *in = bufferevent_get_input(bev);

    if (r->st == LS_LINGER) {
        evbuffer_drain(in, evbuffer_get_length(in));
        return;
    }
    if (r->st != LS_BODY) {
        return;
    }
    while (r->body.len < r->want && evbuffer_get_length(in) > 0) {
        char buf[4096];
        size_t need = r->want - r->body.len;
        int n = evbuffer_remove(in, buf, need < sizeof(buf) ? need : sizeof(buf));
        if (n <= 0 || !pv_ok(pv_dynbuf_add(&r->body, buf, (size_t)n))) {
            answer_error(r, 500, "internal", "cannot read the request body");
            return;
        }
    }
    if (r->body.len == r->want) {
        start_job(r);
    }
}

static void req_write(struct bufferevent *bev, void *arg)
{
    struct local_req *r = arg;
    struct timeval tv = {1, 0};

    if (r->st != LS_WRITE || evbuffer_get_length(bufferevent_get_output(bev)) > 0) {
        return;
    }
    /* lingering close: the answer must not be lost to a reset */
    (void)shutdown(r->fd, SHUT_WR);
    r->st = LS_LINGER;
    bufferevent_disable(bev, EV_WRITE);
    evbuffer_drain(bufferevent_get_input(bev), evbuffer_get_length(bufferevent_get_input(bev)));
    bufferevent_set_timeouts(bev, &tv, NULL);
    bufferevent_enable(bev, EV_READ);
}

static void req_event(struct bufferevent *bev, short what, void *arg)
{
    struct local_req *r = arg;

    (void)bev;
    if (r->st == LS_BODY && (what & BEV_EVENT_TIMEOUT) != 0) {
        /* the body never came: say so, then close */
        answer_error(r, 400, "invalid_proposal", "the request body did not arrive in time");
        return;
    }
    if (r->st == LS_BODY) {
        log_outcome(r, 400,
                    "{\"error\":\"client_closed\",\"detail\":\"the client closed "
                    "before its body arrived\"}");
    }
    req_close(r);
}

/* ---------------------------------------------------------------------------
 * Hand-over from proxy_relay.c
 * ------------------------------------------------------------------------- */

bool proxy_local_serve(struct proxy_local *l, struct proxy_conn *c, const char *rest, size_t len)
{
    const struct proxy_request *hq = c->cur.req;
    struct local_req *r;
    struct timeval tv = {BODY_TIMEOUT_S, 0};
    const char *q;
    size_t pl;

    if (l == NULL || c->c == NULL || c->cfd < 0) {
        return false;
    }
    r = pv_calloc(1, sizeof(*r));
    if (r == NULL) {
        return false;
    }
    r->l = l;
    r->bev = c->c;
    r->fd = c->cfd;
    c->c = NULL;
    c->cfd = -1;
    r->id = proxy_identity_ref(c->id);
    pv_dynbuf_init(&r->body, BODY_MAX);
    snprintf(r->method, sizeof(r->method), "%s", c->cur.method);
    q = memchr(rest, '?', len);
    pl = q != NULL ? (size_t)(q - rest) : len;
    snprintf(r->path, sizeof(r->path), "%.*s", (int)pl, pl > 0 ? rest : "/");
    if (q != NULL) {
        r->query = pv_strndup(q + 1, len - pl - 1);
    }
    r->peer = c->peer;
    r->next = l->reqs;
    if (l->reqs != NULL) {
        l->reqs->prev = r;
    }
    l->reqs = r;
    l->nreqs++;
    bufferevent_setcb(r->bev, req_read, req_write, req_event, r);
    bufferevent_set_timeouts(r->bev, &tv, NULL);
    bufferevent_enable(r->bev, EV_READ | EV_WRITE);
    if (hq->framing == PROXY_BODY_CHUNKED) {
        answer_error(r, 411, "length_required",
                     "policy.local reads request bodies framed by Content-Length only; chunked "
                     "transfer encoding is not supported");
        return true;
    }
    if (hq->framing == PROXY_BODY_LENGTH && hq->content_length > BODY_MAX) {
        answer_error(r, 413, "payload_too_large",
                     "policy.local request bodies are limited to 65536 bytes");
        return true;
    }
    r->want = hq->framing == PROXY_BODY_LENGTH ? hq->content_length : 0;
    dispatch(r);
    return true;
}

size_t proxy_local_clients(const struct proxy_local *l, const struct sockaddr_storage *peer)
{
    size_t n = 0;

    if (l == NULL) {
        return 0;
    }
    if (peer == NULL) {
        return l->nreqs;
    }
    for (const struct local_req *r = l->reqs; r != NULL; r = r->next) {
        if (r->fd >= 0 && proxy_conn_same_addr(&r->peer, peer)) {
            n++;
        }
    }
    return n;
}

/* ---------------------------------------------------------------------------
 * Life cycle
 * ------------------------------------------------------------------------- */

struct proxy_local *proxy_local_new(struct proxy_server *srv, struct proxy_advisor *a)
{
    struct proxy_local *l = pv_calloc(1, sizeof(*l));

    if (l == NULL) {
        return NULL;
    }
    l->srv = srv;
    l->a = a;
    proxy_log_set_tap(srv->log, proxy_local_denial, l);
    return l;
}

void proxy_local_free(struct proxy_local *l)
{
    if (l == NULL) {
        return;
    }
    proxy_log_set_tap(l->srv->log, NULL, NULL);
    while (l->reqs != NULL) {
        struct local_req *r = l->reqs;
        if (r->st == LS_BODY) {
            /* its outcome had no line yet (jobs were answered by their done) */
            log_outcome(r, 503,
                        "{\"error\":\"advisor_unavailable\",\"detail\":\"the proxy "
                        "is shutting down\"}");
        }
        r->in_job = false;
        req_free(r);
    }
    for (size_t i = 0; i < l->n; i++) {
        json_decref(l->ring[(l->head + i) % RING_MAX]);
    }
    free(l);
}
