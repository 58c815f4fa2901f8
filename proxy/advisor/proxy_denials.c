/* SPDX-License-Identifier: Apache-2.0 */
/* proxy_denials.c - advisor mode: stream denials to the advisor's mapper
 *
 * Every DENIED outcome (proxy_log_event) is copied, on the event loop, into
 * a bounded batch: host, port, binary, ancestors, stage, and for requests
 * the proxy inspected the method and canonical path (never the query) and
 * the GraphQL operation refused (type, name, root fields) - in
 * tunnels the proxy intercepts as well as on the forward path. A timer on
 * the loop hands the batch to an advisor worker every DENIALS_FLUSH_MS
 * (POST .../denials), one batch in flight at a time. Traffic never waits
 * for this: when the batch is full further denials are counted as dropped
 * and the count travels with the next batch; when the advisor is
 * unreachable the batch is dropped and the outage logged once. Denials are
 * streamed only while agent_policy_proposals_enabled is on (the mapper's
 * proposals would be refused otherwise). docs/advisor.md#mapper.
 */
#include "config.h"

#include <event2/event.h>
#include <stdlib.h>
#include <string.h>

#include "common/pv_log.h"
#include "proxy/advisor/proxy_advisor.h"
#include "proxy/proxy_int.h"

#define DENIALS_FLUSH_MS 250
#define DENIALS_BATCH_MAX 512

struct proxy_denials {
    struct proxy_server *srv;
    struct proxy_advisor *a;
    struct event *timer;
    json_t *batch;      /* events not yet handed over (loop thread only) */
    json_int_t dropped; /* denials not queued since the last hand-over */
    bool in_flight;
    bool outage; /* the last hand-over failed (logged once) */
};

struct denials_job {
    struct proxy_advisor_job j;
    struct proxy_denials *d;
    char *body;
    long status;
    char err[200];
};

static void job_run(struct proxy_advisor *a, struct proxy_advisor_job *j)
{
    struct denials_job *dj = (struct denials_job *)j;
    struct proxy_advisor_resp r;

    if (proxy_advisor_call(a, "POST", "/denials", dj->body, strlen(dj->body), 10, &r)) {
        dj->status = r.status;
        snprintf(dj->err, sizeof(dj->err), "%.150s", r.body != NULL ? r.body : "");
    } else {
        dj->status = 0;
        snprintf(dj->err, sizeof(dj->err), "%.150s", r.err);
    }
    free(r.body);
}

static void job_done(struct proxy_advisor *a, struct proxy_advisor_job *j)
{
    struct denials_job *dj = (struct denials_job *)j;
    struct proxy_denials *d = dj->d;
    bool ok = dj->status == 202;

    (void)a;
    d->in_flight = false;
    if (!ok && !d->outage) {
        proxy_log_note(d->srv->log,
                       "denials not delivered to the advisor (%ld): %s; dropping "
                       "them until it answers",
                       dj->status, dj->err);
    } else if (ok && d->outage) {
        proxy_log_note(d->srv->log, "denials delivered to the advisor again");
    }
    d->outage = !ok;
    free(dj->body);
    free(dj);
}

static void flush_cb(evutil_socket_t fd, short what, void *arg)
{
    struct proxy_denials *d = arg;
    struct denials_job *dj;
    json_t *doc;

    (void)fd;
    (void)what;
    if (d->in_flight || (json_array_size(d->batch) == 0 && d->dropped == 0)) {
        return;
    }
    doc = json_pack("{s:o,s:I}", "events", d->batch, "dropped", d->dropped);
    d->batch = json_array();
    d->dropped = 0;
    dj = pv_calloc(1, sizeof(*dj));
    if (doc == NULL || d->batch == NULL || dj == NULL ||
        (dj->body = json_dumps(doc, JSON_COMPACT)) == NULL) {
        json_decref(doc);
        free(dj);
        if (d->batch == NULL) {
            d->batch = json_array();
        }
        return;
    }
    json_decref(doc);
    dj->d = d;
    dj->j.run = job_run;
    dj->j.done = job_done;
    d->in_flight = true;
    if (!proxy_advisor_submit(d->a, &dj->j)) {
        d->in_flight = false;
        free(dj->body);
        free(dj);
    }
}

/* Policy decisions only: what a rule could have allowed. Malformed
 * requests, policy.local's own answers, connection caps and the
 * quarantine (no policy loaded yet) are not the mapper's business. */
static bool policy_denial(const struct proxy_server *srv, const struct proxy_log_event *e)
{
    static const char *const stages[] = {"connect", "forward", "forward-l7-deny",
                                         "l7",      "ssrf",    "websocket"};
    bool known = false;

    if (e->host == NULL || e->host[0] == '\0' || e->stage == NULL ||
        strcmp(e->host, "policy.local") == 0 ||
        proxy_policy_quarantine_reason(srv->policy) != NULL) {
        return false;
    }
    for (size_t i = 0; i < sizeof(stages) / sizeof(stages[0]); i++) {
        known = known || strcmp(e->stage, stages[i]) == 0;
    }
    return known;
}

/* proxy_log's sink: one DENIED outcome (loop thread). */
static void on_denial(void *arg, const struct proxy_log_event *e)
{
    struct proxy_denials *d = arg;
    json_t *o;
    json_t *anc;

    if (!proxy_advisor_enabled(d->a) || !policy_denial(d->srv, e)) {
        return;
    }
    if (e->rpc_withheld) {
        return; /* allowed, only not sent with its batch: no rule is missing */
    }
    if (json_array_size(d->batch) >= DENIALS_BATCH_MAX) {
        d->dropped++;
        return;
    }
    anc = json_array();
    for (size_t i = 1; anc != NULL && e->id != NULL && i < e->id->n; i++) {
        json_array_append_new(anc, json_string(e->id->path[i]));
    }
    o = json_pack("{s:s,s:i,s:s,s:o,s:s,s:I}", "host", e->host, "port", (int)e->port, "binary",
                  e->id != NULL && e->id->n > 0 ? e->id->path[0] : "-", "ancestors",
                  anc != NULL ? anc : json_array(), "stage", e->stage != NULL ? e->stage : "",
                  "ts_ms", (json_int_t)proxy_advisor_now_ms());
    if (o == NULL) {
        d->dropped++;
        return;
    }
    if (e->method != NULL && e->path != NULL) {
        /* jansson refuses invalid UTF-8: such a sample is left out */
        json_t *m = json_string(e->method);
        json_t *p = json_string(e->path);
        if (m != NULL && p != NULL) {
            json_object_set_new(o, "method", m);
            json_object_set_new(o, "path", p);
        } else {
            json_decref(m);
            json_decref(p);
        }
    }
    if (e->gql_endpoint) {
        /* a GraphQL endpoint refused it: a REST rule could not lift it */
        json_object_set_new(o, "protocol", json_string("graphql"));
    }
    if (e->gql != NULL) {
        /* the operation refused, for a GraphQL rule (advisor_mapper.c);
         * names are GraphQL Names, so the object is never refused */
        json_t *g = proxy_gql_json(e->gql);
        if (g != NULL) {
            json_object_set_new(o, "graphql", g);
        }
    }
    if (e->rpc != NULL) {
        /* the call refused, for a call rule (advisor_mapper.c); jansson
         * refuses invalid UTF-8, which the reader never lets through */
        json_t *k = json_object();
        json_object_set_new(o, "protocol", json_string(e->rpc_mcp ? "mcp" : "json-rpc"));
        json_object_set_new(k, "kind", json_string(model_rpc_kind_name(e->rpc->kind)));
        json_object_set_new(k, "method", json_string(e->rpc->method));
        if (e->rpc->tool != NULL) {
            json_object_set_new(k, "tool", json_string(e->rpc->tool));
        }
        json_object_set_new(o, "rpc", k);
    }
    json_array_append_new(d->batch, o);
}

struct proxy_denials *proxy_denials_new(struct proxy_server *srv, struct proxy_advisor *a)
{
    struct proxy_denials *d = pv_calloc(1, sizeof(*d));
    struct timeval tv = {0, DENIALS_FLUSH_MS * 1000};

    if (d == NULL) {
        return NULL;
    }
    d->srv = srv;
    d->a = a;
    d->batch = json_array();
    d->timer = event_new(srv->base, -1, EV_PERSIST, flush_cb, d);
    if (d->batch == NULL || d->timer == NULL || event_add(d->timer, &tv) != 0) {
        proxy_denials_free(d);
        return NULL;
    }
    proxy_log_set_sink(srv->log, on_denial, d);
    return d;
}

void proxy_denials_free(struct proxy_denials *d)
{
    if (d == NULL) {
        return;
    }
    proxy_log_set_sink(d->srv->log, NULL, NULL);
    if (d->timer != NULL) {
        event_free(d->timer);
    }
    json_decref(d->batch);
    free(d);
}
