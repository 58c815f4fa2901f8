/* SPDX-License-Identifier: Apache-2.0 */
/* proxy_log.c - one shorthand line per decision, JSON lines per denial
 *
 * The decision log uses the reference's OCSF shorthand (docs/proxy.md "Log
 * lines"): "{ISO8601 ms}Z OCSF NET:OPEN [INFO] ALLOWED /usr/bin/curl(42) ->
 * host:443 [policy:p engine:policy]". The engine is what decided here -
 * policy (model_decide on host, port and binary), l7, ssrf, http-parser -
 * never the reference's "opa", which proviso does not run. Unlike the
 * reference, an audit-mode pass is written as AUDIT with its reason, never
 * as ALLOWED. Query strings are never logged: a request with a query shows
 * "?[redacted]".
 *
 * Denials also go to a JSON-lines stream (data dir, denials.jsonl) with the
 * fields a mapper needs. Lines are buffered in memory and written when the
 * event loop is idle (proxy_log_flush), or when the buffer passes 64 KiB.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "common/pv_dynbuf.h"
#include "proxy/proxy_int.h"

#define LOG_FLUSH_AT 65536
#define LOG_CAP (16u * 1024u * 1024u)

struct proxy_log {
    int fd;  /* decision log, 2 for stderr */
    int dfd; /* denials.jsonl, -1 when off */
    struct pv_dynbuf buf;
    struct pv_dynbuf dbuf;
    void (*tap)(void *arg, const char *line, size_t len,
                const struct proxy_log_event *e); /* DENIED lines (advisor mode) */
    void *tap_arg;
    void (*sink)(void *arg, const struct proxy_log_event *e); /* DENIED records */
    void *sink_arg;
};

void proxy_log_set_sink(struct proxy_log *l, void (*fn)(void *, const struct proxy_log_event *),
                        void *arg)
{
    l->sink = fn;
    l->sink_arg = arg;
}

void proxy_log_set_tap(struct proxy_log *l,
                       void (*fn)(void *, const char *, size_t, const struct proxy_log_event *),
                       void *arg)
{
    l->tap = fn;
    l->tap_arg = arg;
}

struct proxy_log *proxy_log_new(const char *path, const char *denials_path)
{
    struct proxy_log *l = pv_calloc(1, sizeof(*l));

    if (l == NULL) {
        return NULL;
    }
    l->fd = 2;
    l->dfd = -1;
    pv_dynbuf_init(&l->buf, LOG_CAP);
    pv_dynbuf_init(&l->dbuf, LOG_CAP);
    if (path != NULL) {
        l->fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (l->fd < 0) {
            free(l);
            return NULL;
        }
    }
    if (denials_path != NULL) {
        l->dfd = open(denials_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        if (l->dfd < 0) {
            if (l->fd != 2) {
                close(l->fd);
            }
            free(l);
            return NULL;
        }
    }
    return l;
}

static void write_all(int fd, struct pv_dynbuf *b)
{
    size_t off = 0;

    while (off < b->len) {
        ssize_t n = write(fd, b->buf + off, b->len - off);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break; /* the log is best effort: never block the proxy on it */
        }
        off += (size_t)n;
    }
    pv_dynbuf_reset(b);
}

void proxy_log_flush(struct proxy_log *l)
{
    if (l == NULL) {
        return;
    }
    if (l->buf.len > 0) {
        write_all(l->fd, &l->buf);
    }
    if (l->dbuf.len > 0 && l->dfd >= 0) {
        write_all(l->dfd, &l->dbuf);
    }
}

bool proxy_log_pending(const struct proxy_log *l)
{
    return l != NULL && (l->buf.len > 0 || l->dbuf.len > 0);
}

void proxy_log_free(struct proxy_log *l)
{
    if (l == NULL) {
        return;
    }
    proxy_log_flush(l);
    if (l->fd != 2) {
        close(l->fd);
    }
    if (l->dfd >= 0) {
        close(l->dfd);
    }
    pv_dynbuf_free(&l->buf);
    pv_dynbuf_free(&l->dbuf);
    free(l);
}

static void timestamp(char *out, size_t len)
{
    struct timeval tv;
    struct tm tm;

    gettimeofday(&tv, NULL);
    gmtime_r(&tv.tv_sec, &tm);
    snprintf(out, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(tv.tv_usec / 1000));
}

/* Reason text. A reason may quote what a client sent (a member name, a header): it must
 * not end its field or forge another. Line breaks and tabs become spaces;
 * brackets, other control bytes, DEL and every byte above 0x7F (a bidi
 * override, an invalid sequence) are written \xNN, as names are in the
 * [rpc:] field. At most 256 bytes of 'in' are read. */
static void clean_reason(const char *in, char *out, size_t outlen)
{
    size_t w = 0;

    for (size_t i = 0; in != NULL && in[i] != '\0' && i < 256; i++) {
        unsigned char c = (unsigned char)in[i];
        if (c == '\r' || c == '\n' || c == '\t') {
            c = ' ';
        }
        if (c < 0x20 || c >= 0x7F || c == '[' || c == ']') {
            if (w + 5 > outlen) {
                break;
            }
            snprintf(out + w, 5, "\\x%02X", c);
            w += 4;
        } else {
            if (w + 2 > outlen) {
                break;
            }
            out[w++] = (char)c;
        }
    }
    if (outlen > 0) {
        out[w < outlen ? w : outlen - 1] = '\0';
    }
}

static const char *action_name(enum proxy_log_action a)
{
    switch (a) {
    case PROXY_LOG_ALLOWED:
        return "ALLOWED";
    case PROXY_LOG_DENIED:
        return "DENIED";
    case PROXY_LOG_AUDIT:
        return "AUDIT";
    }
    return "DENIED";
}

static const char *severity(enum proxy_log_action a)
{
    switch (a) {
    case PROXY_LOG_ALLOWED:
        return "[INFO]";
    case PROXY_LOG_DENIED:
        return "[MED]";
    case PROXY_LOG_AUDIT:
        return "[LOW]";
    }
    return "[MED]";
}

static void deny_json(struct proxy_log *l, const struct proxy_log_event *e, const char *ts)
{
    json_t *o = json_object();
    json_t *anc = json_array();
    char *s;

    if (o == NULL || anc == NULL) {
        json_decref(o);
        json_decref(anc);
        return;
    }
    json_object_set_new(o, "time", json_string(ts));
    json_object_set_new(o, "host", json_string(e->host != NULL ? e->host : ""));
    json_object_set_new(o, "port", json_integer(e->port));
    json_object_set_new(o, "binary", json_string(e->binary != NULL ? e->binary : "-"));
    for (size_t i = 1; e->id != NULL && i < e->id->n; i++) {
        json_array_append_new(anc, json_string(e->id->path[i]));
    }
    json_object_set_new(o, "ancestors", anc);
    json_object_set_new(o, "pid", json_integer(e->id != NULL ? e->id->pid : 0));
    json_object_set_new(o, "method", e->method != NULL ? json_string(e->method) : json_null());
    json_object_set_new(o, "path", e->path != NULL ? json_string(e->path) : json_null());
    json_object_set_new(o, "query_redacted", json_boolean(e->has_query));
    json_object_set_new(o, "reason", json_string(e->reason != NULL ? e->reason : ""));
    json_object_set_new(o, "stage", json_string(e->stage != NULL ? e->stage : ""));
    json_object_set_new(o, "engine", json_string(e->engine != NULL ? e->engine : ""));
    json_object_set_new(o, "policy", json_string(e->policy != NULL ? e->policy : "-"));
    if (e->gql != NULL) {
        json_object_set_new(o, "graphql", proxy_gql_json(e->gql)); /* the operation refused */
    }
    if (e->rpc != NULL) {
        json_t *call = json_object();
        json_object_set_new(call, "kind", json_string(model_rpc_kind_name(e->rpc->kind)));
        json_object_set_new(call, "method", json_string(e->rpc->method));
        if (e->rpc->tool != NULL) {
            json_object_set_new(call, "tool", json_string(e->rpc->tool));
        }
        json_object_set_new(o, "rpc", call);
    }
    /* jansson drops values with invalid UTF-8 (NULL from json_string): fine */
    s = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    if (s != NULL) {
        if (!pv_ok(pv_dynbuf_addstr(&l->dbuf, s)) || !pv_ok(pv_dynbuf_addc(&l->dbuf, '\n'))) {
            write_all(l->dfd, &l->dbuf);
        }
        free(s);
    }
}

void proxy_log_event(struct proxy_log *l, const struct proxy_log_event *e)
{
    char ts[64];
    char reason[1028]; /* 256 bytes, each at most \xNN */
    const char *exe = (e->id != NULL && e->id->n > 0) ? e->id->path[0] : "-";
    int pid = (e->id != NULL && e->id->n > 0) ? (int)e->id->pid : 0;
    const char *q = e->has_query ? "?[redacted]" : "";
    pv_result r;
    size_t start;

    if (l == NULL) {
        return;
    }
    start = l->buf.len;
    timestamp(ts, sizeof(ts));
    clean_reason(e->reason, reason, sizeof(reason));
    if (e->method == NULL) {
        r = pv_dynbuf_printf(&l->buf, "%s OCSF NET:OPEN %s %s %s(%d) -> %s:%u [policy:%s%s%s]", ts,
                             severity(e->action), action_name(e->action), exe, pid, e->host,
                             (unsigned)e->port, e->policy != NULL ? e->policy : "-",
                             e->engine != NULL ? " engine:" : "",
                             e->engine != NULL ? e->engine : "");
    } else {
        char port[8] = "";
        if (e->port != 80) {
            snprintf(port, sizeof(port), ":%u", (unsigned)e->port);
        }
        r = pv_dynbuf_printf(
            &l->buf, "%s OCSF HTTP:%s %s %s %s(%d) -> %s http://%s%s%s%s [policy:%s%s%s]", ts,
            e->method, severity(e->action), action_name(e->action), exe, pid, e->method, e->host,
            port, e->path != NULL ? e->path : "/", q, e->policy != NULL ? e->policy : "-",
            e->engine != NULL ? " engine:" : "", e->engine != NULL ? e->engine : "");
    }
    if (pv_ok(r) && e->rpc != NULL) {
        /* names escaped (\xHH outside 0x21..0x7E, and \ [ ] = "): a method
         * or tool name cannot forge a field of the line */
        char call[2 * MODEL_RPC_MAX_NAME * 4 + 32];
        model_rpc_call_describe(e->rpc, call, sizeof(call));
        r = pv_dynbuf_printf(&l->buf, " [rpc:%s]", call);
    }
    if (pv_ok(r) && e->action != PROXY_LOG_ALLOWED) {
        r = pv_dynbuf_printf(&l->buf, " [reason:%s]", reason);
    }
    if (pv_ok(r) && e->action == PROXY_LOG_DENIED && l->tap != NULL) {
        l->tap(l->tap_arg, l->buf.buf + start, l->buf.len - start,
               e); /* advisor mode's recent denials */
    }
    if (e->action == PROXY_LOG_DENIED && l->sink != NULL) {
        l->sink(l->sink_arg, e); /* advisor mode's denial stream */
    }
    if (pv_ok(r)) {
        r = pv_dynbuf_addc(&l->buf, '\n');
    }
    if (!pv_ok(r) || l->buf.len >= LOG_FLUSH_AT) {
        write_all(l->fd, &l->buf);
    }
    if (e->action == PROXY_LOG_DENIED && l->dfd >= 0) {
        deny_json(l, e, ts);
        if (l->dbuf.len >= LOG_FLUSH_AT) {
            write_all(l->dfd, &l->dbuf);
        }
    }
}

/* An operational line ("listening on ...", "advisor revision 2 loaded",
 * "WARNING: ..."): the shape of every other log line of the programs
 * (common/pv_log.c), "TS proviso-proxy info: text" or "... warning: text",
 * written once to stderr and, when the decision log is a file, once there
 * too (the decisions read in context). Callers log an event here or with
 * pv_log_*, never both. */
void proxy_log_note(struct proxy_log *l, const char *fmt, ...)
{
    char ts[64];
    va_list ap;
    pv_result r;
    struct pv_dynbuf text;
    const char *t;
    const char *tag = "info";
    size_t start;

    if (l == NULL) {
        return;
    }
    pv_dynbuf_init(&text, 65536);
    va_start(ap, fmt);
    r = pv_dynbuf_vprintf(&text, fmt, ap);
    va_end(ap);
    if (!pv_ok(r) || text.buf == NULL) {
        pv_dynbuf_free(&text);
        return;
    }
    t = text.buf;
    if (strncmp(t, "WARNING: ", 9) == 0) {
        tag = "warning";
        t += 9;
    }
    timestamp(ts, sizeof(ts));
    start = l->buf.len;
    r = pv_dynbuf_printf(&l->buf, "%s proviso-proxy %s: %s\n", ts, tag, t);
    pv_dynbuf_free(&text);
    if (pv_ok(r) && l->fd != 2) {
        /* the same line on stderr: one write, so it stays whole */
        ssize_t w = write(2, l->buf.buf + start, l->buf.len - start);
        (void)w;
    }
    write_all(l->fd, &l->buf);
}
