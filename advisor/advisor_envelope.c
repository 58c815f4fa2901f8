/* SPDX-License-Identifier: Apache-2.0 */
/* advisor_envelope.c - the default auto-approval envelope
 * (docs/advisor.md#envelope)
 *
 * The prover's categories say what a change grants that is dangerous by
 * kind (credentials, private reach, metadata, bypass). They do not say how
 * broad it is: every binary under /usr/bin with opaque reach to any name
 * under pastebin.com has no finding at all. In auto mode a chunk is approved without a reviewer
 * only when, beside an empty verdict, every grant is within an envelope a
 * security engineer would sign - built in, on by default:
 *
 *   exact_binary     the binary is an exact path (breadth.binary "exact")
 *   exact_host       the host is an exact name or address (breadth.host)
 *   inspected_route  the route is inspected and enforced: no opaque L4, no
 *                    audit mode, no `protocol: tcp`, no `tls: skip`
 *   explicit_rules   explicit methods: no `access` preset, no `*` method,
 *                    nothing whose methods are "all"; GraphQL rules name
 *                    their operation type (not `*`) and their root fields
 *                    (no glob)
 *   no_new_port      no new port on a host the policy already reaches
 *                    (exactly or through a wildcard)
 *   no_endpoint_flags no switch that widens the endpoint's path rules
 *                    (allow_encoded_slash); not relaxable
 *
 * Each clause can be relaxed by a setting (envelope_allow_*), and the whole
 * envelope turned off (auto_approval_envelope: false); the operator's
 * boundary, when set, still applies on top. The breadth marks come from the
 * prover's grants (docs/semantics.md#grant-breadth): one definition, read
 * here and shown to reviewers.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "advisor/advisor.h"
#include "advisor/store.h"
#include "model/model.h"

/* A bool setting; unset or not a bool: its default (common/pv_settings.h). */
static bool setting_bool(struct store *st, const char *sandbox, const char *key)
{
    const char *from;
    const struct pv_setting_row *row = pv_setting_find(key);
    json_t *v = advisor_setting_resolve(st, sandbox, key, &from);
    /* the default's text, not parsed: no allocation can turn it over */
    bool on = json_is_boolean(v)
                  ? json_is_true(v)
                  : row != NULL && row->dflt != NULL && strcmp(row->dflt, "true") == 0;

    json_decref(v);
    return on;
}

void advisor_envelope_get(struct store *st, const char *sandbox, struct advisor_envelope *out)
{
    out->on = setting_bool(st, sandbox, ADVISOR_SET(ENVELOPE));
    out->binary_globs = setting_bool(st, sandbox, ADVISOR_SET(ENV_BINARY_GLOBS));
    out->host_wildcards = setting_bool(st, sandbox, ADVISOR_SET(ENV_HOST_WILDCARDS));
    out->uninspected = setting_bool(st, sandbox, ADVISOR_SET(ENV_UNINSPECTED));
    out->access_presets = setting_bool(st, sandbox, ADVISOR_SET(ENV_ACCESS_PRESETS));
    out->new_ports = setting_bool(st, sandbox, ADVISOR_SET(ENV_NEW_PORTS));
}

/* "+ BINARY -> HOST:PORTS ROUTE" of a grant, for a note. */
static void grant_text(const json_t *g, char *out, size_t len)
{
    const char *host = json_string_value(json_object_get(g, "host"));
    const char *peer = json_string_value(json_object_get(g, "target_sandbox"));
    const char *bin = json_string_value(json_object_get(g, "binary"));
    const char *route = json_string_value(json_object_get(g, "route"));
    const json_t *ports = json_object_get(g, "ports");
    char plist[64] = "";
    size_t i;
    const json_t *p;

    json_array_foreach(ports, i, p)
    {
        size_t at = strlen(plist);
        snprintf(plist + at, sizeof(plist) - at, "%s%lld", i > 0 ? "," : "",
                 (long long)json_integer_value(p));
    }
    snprintf(out, len, "%.300s -> %.300s:%s %s", bin != NULL ? bin : "?",
             host != NULL && host[0] != '\0' ? host
             : peer != NULL                  ? peer
                                             : "(hostless)",
             plist, route != NULL ? route : "?");
}

static bool outside(char *note, size_t len, const char *clause, const char *what,
                    const json_t *grant, const char *setting)
{
    char g[700] = "";

    if (grant != NULL) {
        grant_text(grant, g, sizeof(g));
    }
    snprintf(note, len,
             "outside the auto-approval envelope (%s): %s%s%s; a reviewer must decide%s%s", clause,
             what, g[0] != '\0' ? ": " : "", g, setting != NULL ? ", or set " : "",
             setting != NULL ? setting : "");
    return false;
}

static bool breadth_is(const json_t *g, const char *field, const char *want)
{
    const char *v = json_string_value(json_object_get(json_object_get(g, "breadth"), field));

    return v != NULL && strcmp(v, want) == 0;
}

/* A GraphQL allow rule is explicit when it names its operation type (not
 * `*`) and its root fields, each a name without a glob character: `fields`
 * absent allows every root field of the type, `create*` every field that
 * begins so (docs/advisor.md#envelope). Other rules: true. */
static bool gql_explicit(const json_t *al, char *note, size_t len)
{
    const char *t = json_string_value(json_object_get(al, "operation_type"));
    const json_t *fields = json_object_get(al, "fields");
    size_t i;
    const json_t *f;

    if (json_object_get(al, "operation_type") == NULL) {
        return true;
    }
    if (t == NULL || strcmp(t, "*") == 0) {
        return outside(note, len, "explicit_rules", "operation_type '*' allows every operation",
                       NULL, ADVISOR_SET(ENV_ACCESS_PRESETS));
    }
    if (json_array_size(fields) == 0) {
        return outside(note, len, "explicit_rules",
                       "a GraphQL rule without fields allows every root field", NULL,
                       ADVISOR_SET(ENV_ACCESS_PRESETS));
    }
    json_array_foreach(fields, i, f)
    {
        const char *v = json_string_value(f);
        if (v == NULL || strpbrk(v, "*?[]{}\\") != NULL) {
            return outside(note, len, "explicit_rules",
                           "a GraphQL field glob allows root fields nobody named", NULL,
                           ADVISOR_SET(ENV_ACCESS_PRESETS));
        }
    }
    return true;
}

/* The rule's own words that the grants do not show: access presets, `*`
 * methods, `protocol: tcp`, `tls: skip`. */
static bool rule_within(const struct advisor_envelope *env, const json_t *rule, char *note,
                        size_t len)
{
    size_t i;
    const json_t *ep;

    json_array_foreach(json_object_get(rule, "endpoints"), i, ep)
    {
        const char *proto = json_string_value(json_object_get(ep, "protocol"));
        const char *tls = json_string_value(json_object_get(ep, "tls"));
        size_t k;
        const json_t *r;

        if (!env->uninspected && proto != NULL && strcmp(proto, "tcp") == 0) {
            return outside(note, len, "inspected_route", "protocol: tcp is not inspected", NULL,
                           ADVISOR_SET(ENV_UNINSPECTED));
        }
        if (!env->uninspected && tls != NULL && strcmp(tls, "skip") == 0) {
            return outside(note, len, "inspected_route", "tls: skip is not inspected", NULL,
                           ADVISOR_SET(ENV_UNINSPECTED));
        }
        if (env->access_presets) {
            continue;
        }
        if (json_object_get(ep, "access") != NULL) {
            char what[96];
            snprintf(what, sizeof(what),
                     "access: %.40s is a preset, not explicit methods and paths",
                     json_string_value(json_object_get(ep, "access")) != NULL
                         ? json_string_value(json_object_get(ep, "access"))
                         : "?");
            return outside(note, len, "explicit_rules", what, NULL,
                           ADVISOR_SET(ENV_ACCESS_PRESETS));
        }
        json_array_foreach(json_object_get(ep, "rules"), k, r)
        {
            const char *m =
                json_string_value(json_object_get(json_object_get(r, "allow"), "method"));
            if (m != NULL && strcmp(m, "*") == 0) {
                return outside(note, len, "explicit_rules", "method '*' allows every method", NULL,
                               ADVISOR_SET(ENV_ACCESS_PRESETS));
            }
            if (!gql_explicit(json_object_get(r, "allow"), note, len)) {
                return false;
            }
        }
    }
    return true;
}

/* Does endpoint 'ep' reach concrete host 'host' (lower-case)? Through its
 * exact host or its wildcard. */
static bool endpoint_reaches(const struct model_endpoint *ep, const char *host)
{
    struct model_endpoint_view v;

    model_endpoint_view_host(ep, &v);
    if (v.host == NULL) {
        return false;
    }
    if (v.host_glob != NULL) {
        return model_glob_match(v.host_glob, host, strlen(host));
    }
    return strcasecmp(v.host, host) == 0;
}

/* A new port on a host the policy already reaches: some endpoint of
 * 'current' reaches the grant's host (exactly or through a wildcard) and
 * one of the grant's ports is on none of those endpoints. */
static bool new_port(const struct model_policy *current, const json_t *g)
{
    const char *host = json_string_value(json_object_get(g, "host"));
    char lower[256];
    bool reached = false;
    size_t k;
    const json_t *p;

    if (host == NULL || host[0] == '\0' || !model_host_lower(host, lower, sizeof(lower))) {
        return false;
    }
    json_array_foreach(json_object_get(g, "ports"), k, p)
    {
        bool listed = false;
        for (size_t i = 0; !listed && i < model_policy_nrules(current); i++) {
            const struct model_rule *r = model_policy_rule(current, i);
            for (size_t e = 0; !listed && e < model_rule_nendpoints(r); e++) {
                const struct model_endpoint *ep = model_rule_endpoint(r, e);
                if (!endpoint_reaches(ep, lower)) {
                    continue;
                }
                reached = true;
                for (size_t j = 0; j < model_endpoint_nports(ep); j++) {
                    if ((json_int_t)model_endpoint_port(ep, j) == json_integer_value(p)) {
                        listed = true;
                    }
                }
            }
        }
        if (reached && !listed) {
            return true;
        }
    }
    return false;
}

bool advisor_envelope_within(const struct advisor_envelope *env, const struct model_policy *current,
                             const json_t *rule, const json_t *grants, char *note, size_t len)
{
    size_t i;
    const json_t *g;

    note[0] = '\0';
    if (!env->on) {
        return true;
    }
    if (!json_is_array(grants)) {
        return outside(note, len, "grants", "the prover's answer lists no grants", NULL, NULL);
    }
    json_array_foreach(grants, i, g)
    {
        if (json_object_get(g, "breadth") == NULL) {
            return outside(note, len, "grants", "a grant without breadth marks", g, NULL);
        }
        if (!env->binary_globs && !breadth_is(g, "binary", "exact")) {
            return outside(note, len, "exact_binary", "the binary is a glob", g,
                           ADVISOR_SET(ENV_BINARY_GLOBS));
        }
        if (!env->host_wildcards && !breadth_is(g, "host", "exact")) {
            return outside(note, len, "exact_host",
                           breadth_is(g, "host", "hostless") ? "the endpoint has no host"
                                                             : "the host is a wildcard",
                           g, ADVISOR_SET(ENV_HOST_WILDCARDS));
        }
        if (!env->uninspected && !breadth_is(g, "route", "inspected")) {
            return outside(note, len, "inspected_route",
                           breadth_is(g, "route", "audit")
                               ? "an audit-mode route passes every request"
                               : "an opaque route is not inspected",
                           g, ADVISOR_SET(ENV_UNINSPECTED));
        }
        /* On an opaque or audit route every method passes: that is the
         * inspected_route clause's to refuse or to allow. */
        if (!env->access_presets && breadth_is(g, "route", "inspected") &&
            breadth_is(g, "methods", "all")) {
            return outside(note, len, "explicit_rules", "every method is allowed", g,
                           ADVISOR_SET(ENV_ACCESS_PRESETS));
        }
        if (json_array_size(json_object_get(g, "flags")) > 0) {
            /* allow_encoded_slash widens every path rule of the endpoint
             * (docs/semantics.md#encoded-slash): never without a reviewer */
            return outside(note, len, "no_endpoint_flags",
                           "the endpoint turns on allow_encoded_slash", g, NULL);
        }
        if (!env->new_ports && new_port(current, g)) {
            return outside(note, len, "no_new_port", "a new port on a host the policy reaches", g,
                           ADVISOR_SET(ENV_NEW_PORTS));
        }
    }
    return rule_within(env, rule, note, len);
}
