/* SPDX-License-Identifier: Apache-2.0 */
/* proxy_reply.c - every reply the proxy writes itself: deny bodies and errors
 *
 * The proxy answers a client itself only to refuse or to report a failure;
 * each such answer is built here, from the outcome table's reply kind
 * (proxy_outcome.c) and what the decision knew: a bare status line, the
 * {"detail","error"[,"reason"]} JSON body (with "rule_missing" when a rule
 * could lift the refusal), the structured L7 deny, a text/plain detail,
 * the reference's credential message and authority-mismatch bodies, and
 * the head of policy.local's answers. The advice an agent gets in a deny
 * body ("next_steps", "agent_guidance") is written here too, from the skill
 * path advisor mode hands over (NULL without it): the core decides what a
 * body says, advisor mode only whether proposals are on.
 *
 * Builders are pure: they allocate the reply (or fill the caller's buffer)
 * and do no I/O. Strings a peer or a policy chose go through jansson, which
 * escapes them; a string that is not UTF-8 becomes "?" rather than fail.
 */
#include "config.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/proxy_int.h"

/* ---------------------------------------------------------------------------
 * Status lines
 * ------------------------------------------------------------------------- */

const char *proxy_reply_status_text(unsigned status)
{
    static const struct {
        unsigned code;
        const char *text;
    } texts[] = {
        {200, "OK"},
        {201, "Created"},
        {202, "Accepted"},
        {400, "Bad Request"},
        {401, "Unauthorized"},
        {403, "Forbidden"},
        {404, "Not Found"},
        {408, "Request Timeout"},
        {409, "Conflict"},
        {411, "Length Required"},
        {412, "Precondition Failed"},
        {413, "Content Too Large"},
        {429, "Too Many Requests"}, /* the advisor's per-sandbox /wait share */
        {431, "Request Header Fields Too Large"},
        {500, "Internal Server Error"},
        {502, "Bad Gateway"},
        {503, "Service Unavailable"},
        {504, "Gateway Timeout"},
    };

    for (size_t i = 0; i < PV_ARRAY_LEN(texts); i++) {
        if (texts[i].code == status) {
            return texts[i].text;
        }
    }
    return "Error";
}

const char *proxy_reply_bare(unsigned status)
{
    switch (status) {
    case 400:
        return "HTTP/1.1 400 Bad Request\r\n\r\n";
    case 408:
        return "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n";
    case 431:
        return "HTTP/1.1 431 Request Header Fields Too Large\r\n\r\n";
    case 503:
        return "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\n\r\n";
    default:
        return "HTTP/1.1 500 Internal Server Error\r\n\r\n";
    }
}

/* 'n' from snprintf into a buffer of 'len': the length, or 0 when it did
 * not fit (the caller then sends nothing and closes). */
static size_t fitted(int n, size_t len)
{
    return n > 0 && (size_t)n < len ? (size_t)n : 0;
}

size_t proxy_reply_text(unsigned status, const char *detail, char *buf, size_t len)
{
    return fitted(snprintf(buf, len,
                           "HTTP/1.1 %u %s\r\nContent-Length: %zu\r\n"
                           "Connection: close\r\n\r\n%s\n",
                           status, proxy_reply_status_text(status), strlen(detail) + 1, detail),
                  len);
}

size_t proxy_reply_message(unsigned status, const char *error, const char *message, char *buf,
                           size_t len)
{
    /* the reference's credential bodies: a fixed message, no detail; both
     * strings are our own constants (nothing to escape) */
    char body[256];
    int bl = snprintf(body, sizeof(body), "{\"error\":\"%s\",\"message\":\"%s\"}", error, message);

    if (bl < 0 || (size_t)bl >= sizeof(body)) {
        return 0;
    }
    return fitted(snprintf(buf, len,
                           "HTTP/1.1 %u %s\r\nContent-Type: application/json\r\n"
                           "Content-Length: %d\r\nConnection: close\r\n\r\n%s",
                           status, proxy_reply_status_text(status), bl, body),
                  len);
}

size_t proxy_reply_authority(char *buf, size_t len)
{
    static const char body[] =
        "{\"error\":\"request_authority_mismatch\",\"message\":\"HTTP request authority "
        "does not match the authorized tunnel endpoint\"}";

    return fitted(snprintf(buf, len,
                           "HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\n"
                           "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
                           sizeof(body) - 1, body),
                  len);
}

size_t proxy_reply_json_head(unsigned status, size_t body_len, char *buf, size_t len)
{
    return fitted(snprintf(buf, len,
                           "HTTP/1.1 %u %s\r\nContent-Type: application/json\r\nContent-Length: "
                           "%zu\r\nConnection: close\r\n\r\n",
                           status, proxy_reply_status_text(status), body_len),
                  len);
}

/* Serialise 'body' (stolen) behind a head; 'extra' is added as-is. */
static char *reply(unsigned status, json_t *body, const char *extra, size_t *len)
{
    char *js;
    char *out;
    size_t jl;
    size_t cap;
    int n;

    if (body == NULL) {
        return NULL;
    }
    js = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    if (js == NULL) {
        return NULL;
    }
    jl = strlen(js);
    cap = jl + 512 + (extra != NULL ? strlen(extra) : 0);
    out = pv_malloc(cap);
    if (out == NULL) {
        free(js);
        return NULL;
    }
    n = snprintf(out, cap,
                 "HTTP/1.1 %u %s\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
                 "%sConnection: close\r\n\r\n%s",
                 status, proxy_reply_status_text(status), jl, extra != NULL ? extra : "", js);
    free(js);
    if (n < 0 || (size_t)n >= cap) {
        free(out);
        return NULL;
    }
    *len = (size_t)n;
    return out;
}

/* jansson refuses invalid UTF-8: replace such strings rather than fail. */
json_t *proxy_reply_jstr(const char *s)
{
    json_t *j = json_string(s != NULL ? s : "");
    return j != NULL ? j : json_string("?");
}

char *proxy_reply_json(unsigned status, const char *error, const char *detail, const char *reason,
                       const struct proxy_missing *miss, size_t *len)
{
    json_t *o = json_object();

    /* keys in alphabetical order, as the reference's serde output */
    json_object_set_new(o, "detail", proxy_reply_jstr(detail));
    json_object_set_new(o, "error", json_string(error));
    if (reason != NULL && reason[0] != '\0') {
        json_object_set_new(o, "reason", proxy_reply_jstr(reason));
    }
    if (miss != NULL && miss->skill != NULL) {
        /* proposals on: what to ask for, then the advice last, as the L7 body */
        json_t *m = json_object();
        bool has_bin =
            miss->binary != NULL && miss->binary[0] != '\0' && strcmp(miss->binary, "-") != 0;

        json_object_set_new(m, "type", proxy_reply_jstr(miss->type));
        json_object_set_new(m, "layer", json_string("l4"));
        json_object_set_new(m, "host", proxy_reply_jstr(miss->host));
        json_object_set_new(m, "port", json_integer(miss->port));
        if (has_bin) {
            json_object_set_new(m, "binary", proxy_reply_jstr(miss->binary));
        }
        json_object_set_new(o, "rule_missing", m);
        proxy_reply_advice(o, miss->skill);
    }
    return reply(status, o, NULL, len);
}

char *proxy_reply_l7(const struct proxy_l7_deny *d, size_t *len)
{
    json_t *o = json_object();
    json_t *miss = json_object();
    char rule[900];
    char what[300];
    char hdr[320];
    bool has_bin = d->binary != NULL && d->binary[0] != '\0' && strcmp(d->binary, "-") != 0;
    bool has_host = d->host != NULL && d->host[0] != '\0';
    /* a GraphQL endpoint's denial names the operation, not a REST rule
     * (docs/proxy.md#graphql-deny) */
    bool gql = d->gql != NULL || d->gql_endpoint;

    proxy_gql_describe(d->gql, what, sizeof(what));
    snprintf(rule, sizeof(rule), "%s %s%s%s", d->method, d->path, what[0] != '\0' ? " " : "", what);
    json_object_set_new(o, "error", proxy_reply_jstr(d->error));
    json_object_set_new(o, "policy", proxy_reply_jstr(d->policy));
    json_object_set_new(o, "rule", proxy_reply_jstr(rule));
    json_object_set_new(o, "detail", proxy_reply_jstr(d->detail));
    json_object_set_new(o, "layer", json_string("l7"));
    json_object_set_new(o, "protocol", json_string(gql ? "graphql" : "rest"));
    json_object_set_new(o, "method", proxy_reply_jstr(d->method));
    json_object_set_new(o, "path", proxy_reply_jstr(d->path));
    if (d->gql != NULL) {
        json_object_set_new(o, "graphql", proxy_gql_json(d->gql));
    }
    if (has_host) {
        json_object_set_new(o, "host", proxy_reply_jstr(d->host));
    }
    if (d->port != 0) {
        json_object_set_new(o, "port", json_integer(d->port));
    }
    if (has_bin) {
        json_object_set_new(o, "binary", proxy_reply_jstr(d->binary));
    }
    if (d->gql != NULL && d->gql->persisted_id == NULL) {
        /* what a GraphQL rule of the endpoint would have to allow */
        json_t *g = proxy_gql_json(d->gql);
        json_object_set_new(miss, "type", json_string("graphql_allow"));
        json_object_set_new(miss, "layer", json_string("l7"));
        json_object_set(miss, "operation_type", json_object_get(g, "operation_type"));
        if (json_object_get(g, "operation_name") != NULL) {
            json_object_set(miss, "operation_name", json_object_get(g, "operation_name"));
        }
        json_object_set(miss, "fields", json_object_get(g, "fields"));
        json_object_set_new(miss, "path", proxy_reply_jstr(d->path));
        json_decref(g);
    } else if (d->gql != NULL) {
        /* a hash-only persisted query: only the endpoint's registry decides it */
        json_object_set_new(miss, "type", json_string("graphql_persisted_query"));
        json_object_set_new(miss, "layer", json_string("l7"));
        json_object_set_new(miss, "persisted_id", proxy_reply_jstr(d->gql->persisted_id));
        json_object_set_new(miss, "path", proxy_reply_jstr(d->path));
    } else if (gql) {
        /* no operation could be read (or the method cannot carry it): no
         * rule lifts this, the request itself must change */
        json_decref(miss);
        miss = NULL;
    } else {
        json_object_set_new(miss, "type", json_string("rest_allow"));
        json_object_set_new(miss, "layer", json_string("l7"));
        json_object_set_new(miss, "method", proxy_reply_jstr(d->method));
        json_object_set_new(miss, "path", proxy_reply_jstr(d->path));
    }
    if (miss != NULL) {
        if (has_host) {
            json_object_set_new(miss, "host", proxy_reply_jstr(d->host));
        }
        if (d->port != 0) {
            json_object_set_new(miss, "port", json_integer(d->port));
        }
        if (has_bin) {
            json_object_set_new(miss, "binary", proxy_reply_jstr(d->binary));
        }
        json_object_set_new(o, "rule_missing", miss);
    }
    proxy_reply_advice(o, d->skill); /* next_steps, agent_guidance */
    /* rule keys come from the policy file: keep control bytes out of the head */
    snprintf(hdr, sizeof(hdr), "X-OpenShell-Policy: %.256s\r\n", d->policy);
    for (size_t i = 20; hdr[i] != '\0' && hdr[i + 1] != '\0' && hdr[i + 2] != '\0'; i++) {
        unsigned char c = (unsigned char)hdr[i];
        if (c < 0x20 || c == 0x7F) {
            hdr[i] = '?';
        }
    }
    return reply(403, o, hdr, len);
}

/* ---------------------------------------------------------------------------
 * The deny-body advice
 * ------------------------------------------------------------------------- */

void proxy_reply_advice(json_t *o, const char *skill)
{
    json_t *steps = json_array();

    if (skill != NULL) {
        char g[1200];
        json_array_append_new(steps, json_pack("{s:s,s:s}", "action", "read_skill", "path", skill));
        json_array_append_new(steps,
                              json_pack("{s:s,s:s,s:s}", "action", "inspect_policy", "method",
                                        "GET", "url", "http://policy.local/v1/policy/current"));
        json_array_append_new(steps, json_pack("{s:s,s:s,s:s}", "action", "inspect_recent_denials",
                                               "method", "GET", "url",
                                               "http://policy.local/v1/denials?last=5"));
        json_array_append_new(steps,
                              json_pack("{s:s,s:s,s:s,s:s}", "action", "submit_proposal", "method",
                                        "POST", "url", "http://policy.local/v1/proposals",
                                        "body_type", "PolicyMergeOperation"));
        snprintf(g, sizeof(g),
                 "The sandbox's network policy (enforced by proviso) refused this request. If "
                 "the task really needs it, do not give up: follow %s, propose the narrowest "
                 "rule that allows exactly this request to http://policy.local/v1/proposals, "
                 "wait on /v1/proposals/{id}/wait until it is approved with policy_reloaded "
                 "true, then retry the request once.",
                 skill);
        json_object_set_new(o, "next_steps", steps);
        json_object_set_new(o, "agent_guidance", json_string(g));
        return;
    }
    json_object_set_new(o, "next_steps", steps);
}
