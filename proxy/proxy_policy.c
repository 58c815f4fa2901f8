/* SPDX-License-Identifier: Apache-2.0 */
/* proxy_policy.c - policy versions and decision wrappers (the deny bodies: proxy_reply.c)
 *
 * A struct proxy_policy is one immutable, compiled policy (or a fail-closed
 * quarantine that denies everything with a reason). Versions are
 * refcounted: a reload swaps the server's pointer and every connection keeps
 * the version it pinned until its next request boundary.
 *
 * The decision wrappers only translate between the proxy's view (identity,
 * host, port, method, target, address) and model_decide(); they never match
 * anything themselves. They are pure: no I/O, no allocation.
 */
#include "config.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "proxy/proxy_int.h"

struct proxy_policy {
    unsigned refs;
    uint64_t generation;
    struct model_policy *model; /* NULL: quarantine, every decision denies */
    char quarantine[256];
};

/* ---------------------------------------------------------------------------
 * Versions
 * ------------------------------------------------------------------------- */

struct proxy_policy *proxy_policy_load(const char *path, uint64_t generation, char *err,
                                       size_t errlen)
{
    struct model_diags *d = model_diags_new();
    struct proxy_policy *p;

    err[0] = '\0';
    if (d == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    p = pv_calloc(1, sizeof(*p));
    if (p == NULL) {
        model_diags_free(d);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    p->refs = 1;
    p->generation = generation;
    p->model = model_policy_load_file(path, MODEL_FMT_AUTO, d);
    if (p->model == NULL) {
        size_t n = model_diags_count(d);
        size_t off = 0;

        snprintf(err, errlen, "%s: cannot load policy", path);
        for (size_t i = 0; i < n && i < 5; i++) {
            int w =
                snprintf(err + off, errlen - off, "%s%s", i ? "; " : "", model_diags_line(d, i));
            if (w < 0 || (size_t)w >= errlen - off) {
                break;
            }
            off += (size_t)w;
        }
        model_diags_free(d);
        free(p);
        return NULL;
    }
    model_diags_free(d);
    return p;
}

struct proxy_policy *proxy_policy_quarantine(uint64_t generation, const char *reason)
{
    struct proxy_policy *p = pv_calloc(1, sizeof(*p));

    if (p == NULL) {
        return NULL;
    }
    p->refs = 1;
    p->generation = generation;
    snprintf(p->quarantine, sizeof(p->quarantine), "%s", reason);
    return p;
}

const char *proxy_policy_quarantine_reason(const struct proxy_policy *p)
{
    return p == NULL ? "no policy" : p->model == NULL ? p->quarantine : NULL;
}

struct proxy_policy *proxy_policy_ref(struct proxy_policy *p)
{
    if (p != NULL) {
        p->refs++;
    }
    return p;
}

void proxy_policy_unref(struct proxy_policy *p)
{
    if (p == NULL || --p->refs > 0) {
        return;
    }
    model_policy_free(p->model);
    free(p);
}

uint64_t proxy_policy_generation(const struct proxy_policy *p)
{
    return p->generation;
}

const struct model_policy *proxy_policy_model(const struct proxy_policy *p)
{
    return p->model;
}

/* ---------------------------------------------------------------------------
 * Decisions
 * ------------------------------------------------------------------------- */

static void verdict_from(const struct model_decision *d, const struct proxy_identity *id,
                         struct proxy_verdict *v)
{
    v->allow = d->allow;
    v->grant = d->grant;
    v->audit = d->allow && d->reason == MODEL_REASON_AUDIT;
    v->loopback_exception = d->test_loopback_used;
    v->reason = d->reason;
    v->route = d->route;
    v->body_cred_rewrite = model_endpoint_body_cred_rewrite(d->endpoint);
    v->ws_cred_rewrite = model_endpoint_ws_cred_rewrite(d->endpoint);
    v->policy = d->rule != NULL ? model_rule_key(d->rule) : "-";
    v->binary = d->binary != NULL ? d->binary : (id != NULL && id->n > 0 ? id->path[0] : "-");
    v->endpoint = d->endpoint;
    v->gql_max_body = model_endpoint_gql_max_body(d->endpoint);
    v->gql_endpoint = model_endpoint_is_graphql(d->endpoint);
    v->rpc_endpoint = model_endpoint_is_rpc(d->endpoint, &v->rpc_mcp);
    v->rpc_strict = model_endpoint_rpc_strict_tools(d->endpoint);
    v->rpc_max_body = model_endpoint_rpc_max_body(d->endpoint);
    v->rpc_call = NULL;
    snprintf(v->detail, sizeof(v->detail), "%s", d->detail);
}

/* run_rpc's state across its calls. */
struct rpc_run {
    const struct proxy_identity *id;
    const struct model_rpc_calls *k;
    const struct proxy_decide_opts *o;
    struct proxy_verdict *v;
    size_t denied;
    size_t audited;
    struct proxy_verdict first_denied;
    struct proxy_verdict first_audited;
};

static void rpc_one(void *arg, size_t i, const struct model_decision *d)
{
    struct rpc_run *x = arg;
    struct proxy_verdict *v = x->v;

    verdict_from(d, x->id, v);
    v->rpc_call = &x->k->calls[i];
    if (x->o->rpc_res != NULL) {
        struct proxy_rpc_result *res = &x->o->rpc_res[i];
        res->allow = v->allow;
        res->audit = v->audit;
        res->reason = v->reason;
        res->policy = v->policy;
        snprintf(res->detail, sizeof(res->detail), "%s", v->detail);
    }
    /* the verdicts the request may take are kept, not decided again */
    if (!v->allow && x->denied == SIZE_MAX) {
        x->denied = i;
        x->first_denied = *v;
    }
    if (v->audit && x->audited == SIZE_MAX) {
        x->audited = i;
        x->first_audited = *v;
    }
}

/* A request's JSON-RPC calls (docs/semantics.md#rpc-batch): each decided
 * as a request of its own (model_decide_calls reads the request once), its
 * result kept in o->rpc_res; the request's verdict is the first refused
 * call's, else the first audited call's, else the last call's. */
static void run_rpc(const struct proxy_policy *p, const struct proxy_identity *id,
                    struct model_request *r, const struct proxy_decide_opts *o,
                    struct proxy_verdict *v)
{
    struct rpc_run x;

    memset(&x, 0, sizeof(x));
    x.id = id;
    x.k = o->rpc_calls;
    x.o = o;
    x.v = v;
    x.denied = SIZE_MAX;
    x.audited = SIZE_MAX;
    model_decide_calls(p->model, r, x.k->calls, x.k->ncalls, rpc_one, &x);
    r->rpc = x.k->ncalls > 0 ? &x.k->calls[x.k->ncalls - 1] : NULL;
    if (x.denied != SIZE_MAX) {
        *v = x.first_denied;
    } else if (x.audited != SIZE_MAX) {
        *v = x.first_audited;
    }
}

void proxy_gql_describe(const struct model_gql_op *op, char *buf, size_t len)
{
    size_t n = 0;

    if (len == 0) {
        return;
    }
    buf[0] = '\0';
    if (op == NULL) {
        return;
    }
    if (op->persisted_id != NULL) {
        snprintf(buf, len, "persisted query %s", op->persisted_id);
        return;
    }
    n = (size_t)snprintf(buf, len, "%s%s%s {", model_gql_optype_name(op->type),
                         op->name != NULL ? " " : "", op->name != NULL ? op->name : "");
    for (size_t i = 0; i < op->nfields && n < len; i++) {
        n += (size_t)snprintf(buf + n, len - n, "%s%s", i > 0 ? "," : "", op->fields[i]);
    }
    if (n < len) {
        snprintf(buf + n, len - n, "}");
    }
}

json_t *proxy_gql_json(const struct model_gql_op *op)
{
    json_t *o;
    json_t *f;

    if (op == NULL) {
        return NULL;
    }
    o = json_object();
    if (o == NULL) {
        return NULL;
    }
    if (op->persisted_id != NULL) {
        json_object_set_new(o, "persisted_id", json_string(op->persisted_id));
        return o;
    }
    f = json_array();
    for (size_t i = 0; f != NULL && i < op->nfields; i++) {
        json_array_append_new(f, json_string(op->fields[i]));
    }
    json_object_set_new(o, "operation_type", json_string(model_gql_optype_name(op->type)));
    if (op->name != NULL) {
        json_object_set_new(o, "operation_name", json_string(op->name));
    }
    json_object_set_new(o, "fields", f != NULL ? f : json_array());
    return o;
}

/* An audit-mode pass of a GraphQL operation names it (the model's detail
 * names only the method and path): "<detail>: mutation Name {a,b}". */
static void audit_detail(const struct model_gql_op *op, size_t nops, struct proxy_verdict *v)
{
    char what[160];
    char line[sizeof(v->detail) + sizeof(what) + 64];

    v->gql_op = op;
    proxy_gql_describe(op, what, sizeof(what));
    if (nops > 1) {
        snprintf(line, sizeof(line), "%s: GraphQL %s (one of a batch of %zu)", v->detail, what,
                 nops);
    } else {
        snprintf(line, sizeof(line), "%s: GraphQL %s", v->detail, what);
    }
    snprintf(v->detail, sizeof(v->detail), "%.*s", (int)sizeof(v->detail) - 1, line);
}

/* Identity failures and quarantine deny before the model is asked. */
static bool predeny(const struct proxy_policy *p, const struct proxy_identity *id,
                    struct proxy_verdict *v)
{
    memset(v, 0, sizeof(*v));
    v->policy = "-";
    v->binary = (id != NULL && id->n > 0) ? id->path[0] : "-";
    v->route = MODEL_ROUTE_NONE;
    if (p->model == NULL) {
        v->reason = MODEL_REASON_NO_POLICY;
        snprintf(v->detail, sizeof(v->detail), "%s", p->quarantine);
        return true;
    }
    if (id != NULL && id->deny[0] != '\0') {
        v->reason = MODEL_REASON_BINARY;
        snprintf(v->detail, sizeof(v->detail), "%s", id->deny);
        return true;
    }
    return false;
}

static void run(const struct proxy_policy *p, const struct proxy_identity *id, const char *host,
                size_t hlen, uint16_t port, const char *method, const char *target, size_t tlen,
                const struct model_ip *ip, const struct proxy_decide_opts *o,
                struct proxy_verdict *v)
{
    struct model_decision d;
    struct model_request r;

    if (predeny(p, id, v)) {
        return;
    }
    memset(&r, 0, sizeof(r));
    r.binaries = (const char *const *)(id != NULL ? id->path : NULL);
    r.nbinaries = id != NULL ? id->n : 0;
    r.host = host;
    r.host_len = hlen;
    r.port = port;
    r.method = method;
    r.target = target;
    r.target_len = tlen;
    r.dest = ip;
    r.test_loopback = o != NULL && o->test_allow_loopback;
    r.prefer_opaque = o != NULL && o->prefer_opaque;
    r.gql = o != NULL ? o->gql : NULL;
    if (o != NULL && o->rpc_calls != NULL && o->rpc_calls->ncalls > 0 && method != NULL) {
        run_rpc(p, id, &r, o, v);
        return;
    }
    /* a GraphQL request runs every operation it carries (a batch): each
     * is decided, and the first refusal is the request's (proxy_bodyhold.c);
     * when audit mode let one through, the request is audited and its line
     * names that operation */
    size_t audited = SIZE_MAX;
    size_t nops = o != NULL && o->gql_ops != NULL ? o->gql_ops->nops : 0;
    for (size_t i = 0; i < nops; i++) {
        r.gql = &o->gql_ops->ops[i];
        memset(&d, 0, sizeof(d));
        model_decide(p->model, &r, &d);
        verdict_from(&d, id, v);
        v->gql_op = r.gql;
        if (!d.allow && !d.grant) {
            return;
        }
        if (v->audit && audited == SIZE_MAX) {
            audited = i;
        }
    }
    if (nops > 0) {
        if (audited != SIZE_MAX) {
            r.gql = &o->gql_ops->ops[audited];
            memset(&d, 0, sizeof(d));
            model_decide(p->model, &r, &d);
            verdict_from(&d, id, v);
            audit_detail(r.gql, nops, v);
        } else {
            v->gql_op = NULL;
        }
        return;
    }
    memset(&d, 0, sizeof(d));
    model_decide(p->model, &r, &d);
    verdict_from(&d, id, v);
    v->gql_op = r.gql;
    if (v->audit && r.gql != NULL) {
        audit_detail(r.gql, 1, v);
    }
}

void proxy_decide_connect(const struct proxy_policy *p, const struct proxy_identity *id,
                          const char *host, size_t hlen, uint16_t port,
                          const struct proxy_decide_opts *o, struct proxy_verdict *v)
{
    run(p, id, host, hlen, port, NULL, NULL, 0, NULL, o, v);
}

void proxy_decide_request(const struct proxy_policy *p, const struct proxy_identity *id,
                          const char *host, size_t hlen, uint16_t port, const char *method,
                          const char *target, size_t tlen, const struct proxy_decide_opts *o,
                          struct proxy_verdict *v)
{
    run(p, id, host, hlen, port, method, target, tlen, NULL, o, v);
}

void proxy_decide_dest(const struct proxy_policy *p, const struct proxy_identity *id,
                       const char *host, size_t hlen, uint16_t port, const char *method,
                       const char *target, size_t tlen, const struct model_ip *ip,
                       const struct proxy_decide_opts *o, struct proxy_verdict *v)
{
    run(p, id, host, hlen, port, method, target, tlen, ip, o, v);
}

const char *proxy_ssrf_kind(enum model_reason r)
{
    switch (r) {
    case MODEL_REASON_DEST_BLOCKED:
    case MODEL_REASON_DEST_INTERNAL:
        return "internal address";
    case MODEL_REASON_DEST_ALLOWED_IPS:
    case MODEL_REASON_DEST_PORT:
        return "allowed_ips check failed";
    case MODEL_REASON_DEST_UNRESOLVED:
        return "target sandbox not resolved";
    case MODEL_REASON_ALLOWED:
    case MODEL_REASON_AUDIT:
    case MODEL_REASON_NO_POLICY:
    case MODEL_REASON_NO_ENDPOINT:
    case MODEL_REASON_BINARY:
    case MODEL_REASON_BAD_HOST:
    case MODEL_REASON_BAD_TARGET:
    case MODEL_REASON_ENCODED_SLASH:
    case MODEL_REASON_NO_L7_PATH:
    case MODEL_REASON_L7_NOT_PERMITTED:
    case MODEL_REASON_L7_DENY_RULE:
    case MODEL_REASON_L7_UNSUPPORTED:
    case MODEL_REASON_BAD_QUERY:
    case MODEL_REASON_GQL_NO_OPERATION:
    case MODEL_REASON_GQL_BAD_METHOD:
    case MODEL_REASON_GQL_BAD_OPERATION:
    case MODEL_REASON_GQL_PERSISTED_DENIED:
    case MODEL_REASON_GQL_PERSISTED_UNKNOWN:
    case MODEL_REASON_RPC_NO_CALL:
    case MODEL_REASON_RPC_BAD_METHOD:
        break;
    }
    return "destination check failed";
}
