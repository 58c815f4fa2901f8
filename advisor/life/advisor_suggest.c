/* SPDX-License-Identifier: Apache-2.0 */
/* advisor_suggest.c - a narrowed suggestion, proved before it is offered
 * (docs/advisor.md#suggestion)
 *
 * A chunk with findings or outside the auto-approval envelope waits for a
 * reviewer. Often the agent asked for more than it needs: a binary glob
 * where one binary was denied, a host wildcard where one host was, `access:
 * full` or an opaque rule where it read a few paths. The advisor builds the
 * narrower rule from what the sandbox was really denied (the mapper's
 * recent denials; never from the prover's witnesses, which are made-up
 * examples of a pattern, not what the agent ran), and only from denials
 * that lie inside the proposal, as the evaluator decides them
 * (model_decide): a denial narrows binaries and hosts only when the
 * proposal's candidate lets its binary reach its host and port, and shapes
 * paths only when the candidate allows its very request and the policy in
 * force does not. A denial the proposal would not lift says nothing about
 * what it is for, and must not steer the suggestion:
 *
 *   - a binary glob becomes the denied binaries it matches;
 *   - a host wildcard becomes the denied hosts it matches on its port;
 *   - an opaque, audit, `protocol: tcp`, `tls: skip`, preset or `*` method
 *     endpoint becomes an enforced `rest` endpoint allowing GET and HEAD on
 *     the path prefix the denials show (every path when none did), keeping
 *     the endpoint's path scope, deny rules and allowed_ips;
 *   - a `graphql` or `websocket` endpoint is never turned into a `rest`
 *     one: kept when enforced with explicit rules, else no suggestion;
 *
 * and proves it: first that its candidate is within the proposal's
 * (advisor_evaluate_within, the prover's containment with the proposal's
 * candidate as the boundary), then exactly like a proposal. It is offered
 * only when that proof says it is approvable - verdict empty, within the
 * envelope and the boundary, no security note, not already allowed - and
 * it is strictly narrower than the proposal: the proposal had a finding the
 * suggestion has not (a finding is a request, so the suggestion allows
 * less), or the prover shows a request the proposal allows and the
 * suggestion does not. No suggestion is better than an unproved one.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "advisor/life/life.h"
#include "model/model.h"

#define SUGGEST_MAX 8u /* binaries or hosts a glob is narrowed to */

static bool has_meta(const char *s)
{
    return strpbrk(s, "*?[{") != NULL;
}

static bool glob_matches(enum model_glob_kind kind, const char *pat, const char *s)
{
    const char *why = NULL;
    struct model_glob *g = model_glob_compile(kind, pat, strlen(pat), &why);
    bool hit = g != NULL && model_glob_match(g, s, strlen(s));

    model_glob_free(g);
    return hit;
}

static bool array_has(const json_t *a, const char *s)
{
    size_t i;
    const json_t *x;

    json_array_foreach(a, i, x)
    {
        if (json_is_string(x) && strcmp(json_string_value(x), s) == 0) {
            return true;
        }
    }
    return false;
}

/* The concrete values of field 'key' in 'seen' that pattern 'pat' (of
 * 'kind') matches, on 'port' when it is not 0, at most SUGGEST_MAX, in
 * order. */
static json_t *narrow_to(const json_t *seen, const char *key, enum model_glob_kind kind,
                         const char *pat, json_int_t port)
{
    json_t *out = json_array();
    size_t i;
    const json_t *d;

    json_array_foreach(seen, i, d)
    {
        const char *v = json_string_value(json_object_get(d, key));
        if (out == NULL || json_array_size(out) >= SUGGEST_MAX) {
            break;
        }
        if (port != 0 && json_integer_value(json_object_get(d, "port")) != port) {
            continue;
        }
        if (v != NULL && v[0] != '\0' && !has_meta(v) && !array_has(out, v) &&
            glob_matches(kind, pat, v)) {
            json_array_append_new(out, json_string(v));
        }
    }
    return out;
}

/* The directory the denied paths of (host, port) share, followed by the
 * any-depth glob; the glob alone when they share none or there is none. */
static void path_prefix(const json_t *seen, const char *host, json_int_t port, char *out,
                        size_t len)
{
    char common[512] = "";
    bool first = true;
    size_t i;
    const json_t *d;

    json_array_foreach(seen, i, d)
    {
        const char *p = json_string_value(json_object_get(d, "path"));
        const char *h = json_string_value(json_object_get(d, "host"));
        size_t n = 0;

        if (p == NULL || p[0] != '/' || has_meta(p) || h == NULL || strcasecmp(h, host) != 0 ||
            json_integer_value(json_object_get(d, "port")) != port) {
            continue;
        }
        if (first) {
            snprintf(common, sizeof(common), "%s", p);
            first = false;
            continue;
        }
        while (common[n] != '\0' && common[n] == p[n]) {
            n++;
        }
        common[n] = '\0';
    }
    /* back to a whole segment: the part before the last '/' */
    {
        char *slash = strrchr(common, '/');
        if (slash != NULL) {
            *slash = '\0';
        }
    }
    snprintf(out, len, "%s/**", common);
}

static bool endpoint_needs_rules(const json_t *ep)
{
    const char *pr = json_string_value(json_object_get(ep, "protocol"));

    if (pr != NULL && (strcasecmp(pr, "graphql") == 0 || strcasecmp(pr, "websocket") == 0)) {
        return false; /* kept as it is, or no suggestion (rest_cannot_narrow) */
    }

    const char *proto = json_string_value(json_object_get(ep, "protocol"));
    const char *tls = json_string_value(json_object_get(ep, "tls"));
    const char *enf = json_string_value(json_object_get(ep, "enforcement"));
    size_t i;
    const json_t *r;

    if (proto == NULL || strcmp(proto, "rest") != 0 || (tls != NULL && strcmp(tls, "skip") == 0) ||
        enf == NULL || strcmp(enf, "enforce") != 0 || json_object_get(ep, "access") != NULL) {
        return true;
    }
    json_array_foreach(json_object_get(ep, "rules"), i, r)
    {
        const char *m = json_string_value(json_object_get(json_object_get(r, "allow"), "method"));
        if (m != NULL && strcmp(m, "*") == 0) {
            return true;
        }
    }
    return false;
}

/* A graphql or websocket endpoint the suggestion would have to rewrite
 * (endpoint_needs_rules): its REST replacement would allow other requests
 * than the operations or messages asked for, and cannot merge into the
 * endpoint - no suggestion then. One that is enforced with explicit rules
 * (named methods; GraphQL rules with a named type and fields) is kept as it
 * is while its binaries and hosts are narrowed. */
static bool rest_cannot_narrow(const json_t *ep)
{
    const char *proto = json_string_value(json_object_get(ep, "protocol"));
    const char *enf = json_string_value(json_object_get(ep, "enforcement"));
    const char *tls = json_string_value(json_object_get(ep, "tls"));
    size_t i;
    const json_t *r;

    if (proto == NULL ||
        (strcasecmp(proto, "graphql") != 0 && strcasecmp(proto, "websocket") != 0)) {
        return false;
    }
    if (enf == NULL || strcmp(enf, "enforce") != 0 || json_object_get(ep, "access") != NULL ||
        (tls != NULL && strcmp(tls, "skip") == 0) ||
        json_array_size(json_object_get(ep, "rules")) == 0) {
        return true;
    }
    json_array_foreach(json_object_get(ep, "rules"), i, r)
    {
        const json_t *al = json_object_get(r, "allow");
        const char *m = json_string_value(json_object_get(al, "method"));
        const char *t = json_string_value(json_object_get(al, "operation_type"));
        if ((m != NULL && strcmp(m, "*") == 0) || (t != NULL && strcmp(t, "*") == 0) ||
            (t != NULL && json_array_size(json_object_get(al, "fields")) == 0)) {
            return true;
        }
    }
    return false;
}

/* An enforced rest endpoint for (host, port) allowing GET and HEAD under
 * 'prefix', with what of endpoint 'ep' only narrows it: its path scope,
 * deny rules and allowed_ips. Dropping one of them would allow requests
 * the proposal does not (a deny rule's, a path outside the scope). */
static json_t *read_endpoint(const json_t *ep, const char *host, json_int_t port,
                             const char *prefix)
{
    static const char *const keep[] = {"path", "deny_rules", "allowed_ips"};
    json_t *out =
        json_pack("{s:s,s:I,s:s,s:s,s:[{s:{s:s,s:s}},{s:{s:s,s:s}}]}", "host", host, "port", port,
                  "protocol", "rest", "enforcement", "enforce", "rules", "allow", "method", "GET",
                  "path", prefix, "allow", "method", "HEAD", "path", prefix);

    for (size_t i = 0; out != NULL && i < sizeof(keep) / sizeof(keep[0]); i++) {
        json_t *v = json_object_get(ep, keep[i]);
        if (v != NULL && json_object_set_new(out, keep[i], json_deep_copy(v)) != 0) {
            json_decref(out);
            return NULL;
        }
    }
    return out;
}

/* Does policy 'p' grant denial 'd': its binary, host and port, and with
 * 'l7' its method and path too? The evaluator decides (model_decide). */
static bool policy_grants(const struct model_policy *p, const json_t *d, bool l7)
{
    const char *bin = json_string_value(json_object_get(d, "binary"));
    const char *host = json_string_value(json_object_get(d, "host"));
    const char *method = json_string_value(json_object_get(d, "method"));
    const char *path = json_string_value(json_object_get(d, "path"));
    json_int_t port = json_integer_value(json_object_get(d, "port"));
    struct model_request rq;
    struct model_decision dc;

    if (bin == NULL || host == NULL || port < 1 || port > 65535) {
        return false;
    }
    memset(&rq, 0, sizeof(rq));
    rq.binaries = &bin;
    rq.nbinaries = 1;
    rq.host = host;
    rq.host_len = strlen(host);
    rq.port = (uint16_t)port;
    if (l7) {
        rq.method = method;
        rq.target = path;
        rq.target_len = strlen(path);
    }
    model_decide(p, &rq, &dc);
    return dc.grant;
}

static bool inspected(const json_t *d)
{
    const char *method = json_string_value(json_object_get(d, "method"));
    const char *path = json_string_value(json_object_get(d, "path"));

    return method != NULL && method[0] != '\0' && path != NULL && path[0] == '/';
}

/* The denials of 'seen' inside the proposal, whose candidate is 'cand'
 * ('cur' the policy in force): into 'reach' those whose binary reaches the
 * host and port under 'cand' (they may narrow binaries and hosts), into
 * 'reqs' the inspected ones whose very request 'cand' allows and 'cur' does
 * not (they may shape paths). A denial the proposal would not lift says
 * nothing about what it is for. */
static void relevant(const struct model_policy *cand, const struct model_policy *cur,
                     const json_t *seen, json_t *reach, json_t *reqs)
{
    size_t i;
    const json_t *d;

    json_array_foreach(seen, i, d)
    {
        if (!policy_grants(cand, d, false)) {
            continue;
        }
        json_array_append(reach, PV_UNCONST(d));
        if (inspected(d) && policy_grants(cand, d, true) && !policy_grants(cur, d, true)) {
            json_array_append(reqs, PV_UNCONST(d));
        }
    }
}

/* The narrowed rule, or NULL when nothing concrete narrows it: binaries
 * and hosts from the denials in 'seen', paths from those in 'reqs'. */
static json_t *narrowed(const json_t *rule, const json_t *seen, const json_t *reqs)
{
    json_t *out = json_deep_copy(rule);
    json_t *bins = json_array();
    json_t *eps = json_array();
    size_t i;
    const json_t *x;

    if (out == NULL || bins == NULL || eps == NULL) {
        goto fail;
    }
    json_array_foreach(json_object_get(rule, "binaries"), i, x)
    {
        const char *path = json_string_value(json_object_get(x, "path"));
        if (path == NULL) {
            goto fail;
        }
        if (!has_meta(path)) {
            json_array_append(bins, PV_UNCONST(x));
            continue;
        }
        {
            json_t *to = narrow_to(seen, "binary", MODEL_GLOB_BINARY, path, 0);
            size_t k;
            const json_t *b;
            json_array_foreach(to, k, b)
            {
                json_array_append_new(bins, json_pack("{s:O}", "path", b));
            }
            json_decref(to);
        }
    }
    json_array_foreach(json_object_get(rule, "endpoints"), i, x)
    {
        const char *host = json_string_value(json_object_get(x, "host"));
        json_int_t port = json_integer_value(json_object_get(x, "port"));
        json_t *hosts;
        size_t k;
        const json_t *h;

        if (host == NULL || port <= 0) {
            goto fail; /* hostless, peers, port lists: a reviewer's call */
        }
        if (has_meta(host)) {
            char lower[256];
            (void)model_host_lower(host, lower, sizeof(lower)); /* a longer one: its prefix */
            hosts = narrow_to(seen, "host", MODEL_GLOB_HOST, lower, port);
        } else {
            hosts = json_pack("[s]", host);
        }
        if (rest_cannot_narrow(x)) {
            json_decref(hosts);
            goto fail; /* no REST rule narrows a GraphQL or WebSocket endpoint */
        }
        json_array_foreach(hosts, k, h)
        {
            if (endpoint_needs_rules(x)) {
                char prefix[600];
                path_prefix(reqs, json_string_value(h), port, prefix, sizeof(prefix));
                json_array_append_new(eps, read_endpoint(x, json_string_value(h), port, prefix));
            } else {
                json_t *copy = json_deep_copy(x);
                json_object_set(copy, "host", PV_UNCONST(h));
                json_array_append_new(eps, copy);
            }
        }
        json_decref(hosts);
    }
    if (json_array_size(bins) == 0 || json_array_size(eps) == 0) {
        goto fail;
    }
    json_object_set_new(out, "binaries", bins);
    json_object_set_new(out, "endpoints", eps);
    if (json_equal(out, rule)) {
        json_decref(out);
        return NULL; /* nothing to narrow */
    }
    return out;
fail:
    json_decref(out);
    json_decref(bins);
    json_decref(eps);
    return NULL;
}

/* Approvable without a reviewer, and not already allowed. */
static bool approvable(const struct advisor_eval *p)
{
    return p->candidate != NULL && p->application_error[0] == '\0' && p->empty &&
           p->within_envelope && p->within_boundary && p->security_notes[0] == '\0' &&
           !p->contained;
}

/* Is the suggestion (evaluation 'p', within the proposal's 'e') strictly
 * narrower? When the proposal had a finding and the suggestion has none,
 * yes without asking: a finding is a request the proposal allows, and the
 * suggestion does not. Otherwise the prover must show a request the
 * proposal allows beyond the suggestion. */
static bool narrower(struct advisor_worker *w, const struct advisor_eval *e,
                     const struct advisor_eval *p)
{
    if (!e->empty && p->empty) {
        return true;
    }
    return advisor_eval_exceeds(w, e->candidate_yaml, p->candidate_yaml);
}

/* The narrowed rule for evaluation 'e' of 'rule', from the denials inside
 * it; NULL when none narrows it. */
static json_t *suggestion_rule(struct advisor_worker *w, const struct advisor_snapshot *snap,
                               const json_t *rule, const struct advisor_eval *e)
{
    json_t *seen = advisor_recent_get(w->a->recent, snap->name);
    json_t *reach = json_array();
    json_t *reqs = json_array();
    json_t *sug = NULL;

    if (seen != NULL && reach != NULL && reqs != NULL) {
        relevant(e->candidate, snap->policy, seen, reach, reqs);
        sug = json_array_size(reach) > 0 ? narrowed(rule, reach, reqs) : NULL;
    }
    json_decref(seen);
    json_decref(reach);
    json_decref(reqs);
    return sug;
}

void advisor_suggest(struct advisor_worker *w, const struct advisor_snapshot *snap,
                     const char *name, const json_t *rule, struct advisor_eval *e)
{
    json_t *sug;
    struct advisor_eval proof;

    if (e->candidate == NULL || e->application_error[0] != '\0' || e->contained ||
        e->review_token == NULL ||
        (e->empty && e->within_envelope && e->security_notes[0] == '\0')) {
        return; /* invalid, already allowed, or approvable as it is */
    }
    sug = suggestion_rule(w, snap, rule, e);
    if (sug == NULL) {
        return;
    }
    if (!pv_ok(advisor_evaluate_within(w, snap, name, sug, e, &proof))) {
        json_decref(sug);
        return;
    }
    if (approvable(&proof) && narrower(w, e, &proof)) {
        const json_t *grants = json_object_get(json_object_get(proof.evidence, "prover"), "grants");
        json_t *g = grants != NULL ? json_deep_copy(grants) : json_array();
        json_object_set_new(e->evidence, "suggestion",
                            json_pack("{s:O,s:s,s:s,s:o,s:s,s:s}", "rule", sug, "review_token",
                                      proof.review_token, "validation_result",
                                      proof.validation_result, "grants", g, "candidate_hash",
                                      proof.candidate_hash, "proposal_token", e->review_token));
    }
    advisor_eval_clear(&proof);
    json_decref(sug);
}
