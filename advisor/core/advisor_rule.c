/* SPDX-License-Identifier: Apache-2.0 */
/* advisor_rule.c - reading a proposed rule: key, notes, blocked hosts, text
 *
 * A chunk's rule is kept as the JSON object the agent proposed (after the
 * model accepted it), so these readers work on JSON: the dedup key
 * (first endpoint's host and port, first binary), the security notes a
 * reviewer sees beside the prover's findings (docs/advisor.md#notes),
 * the always-blocked destinations a proposal may never name, and the
 * text of events.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "advisor/core/core.h"
#include "common/pv_dynbuf.h"
#include "model/model.h"

static const char *str_of(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static bool flag_of(const json_t *o, const char *key)
{
    return json_is_true(json_object_get(o, key));
}

/* The endpoint's ports: "ports" when given, else "port". */
static size_t ports_of(const json_t *ep, json_int_t *out, size_t max)
{
    const json_t *ports = json_object_get(ep, "ports");
    const json_t *port = json_object_get(ep, "port");
    size_t n = 0;

    if (json_is_array(ports) && json_array_size(ports) > 0) {
        size_t i;
        const json_t *v;
        json_array_foreach(ports, i, v)
        {
            if (json_is_integer(v) && n < max) {
                out[n++] = json_integer_value(v);
            }
        }
    } else if (json_is_integer(port) && max > 0) {
        out[n++] = json_integer_value(port);
    }
    return n;
}

bool advisor_protocol_is_rpc(const json_t *o)
{
    const char *proto = str_of(o, "protocol");

    return proto != NULL && (strcmp(proto, "json-rpc") == 0 || strcmp(proto, "mcp") == 0);
}

void advisor_rule_key(const json_t *rule, char *host, size_t hostlen, int64_t *port, char *binary,
                      size_t binlen)
{
    const json_t *eps = json_object_get(rule, "endpoints");
    const json_t *bins = json_object_get(rule, "binaries");
    const json_t *ep = json_array_get(eps, 0);
    const char *h = ep != NULL ? str_of(ep, "host") : NULL;
    const char *b = str_of(json_array_get(bins, 0), "path");
    json_int_t p = 0;

    host[0] = '\0';
    if (h != NULL && h[0] != '\0') {
        (void)model_host_lower(h, host, hostlen); /* a longer one: its prefix */
    } else if (ep != NULL && str_of(ep, "target_sandbox") != NULL) {
        /* a hostless peer endpoint is keyed by its peer: no DNS host has a ':' */
        snprintf(host, hostlen, "sandbox:%s", str_of(ep, "target_sandbox"));
    }
    *port = ep != NULL && ports_of(ep, &p, 1) == 1 ? (int64_t)p : 0;
    snprintf(binary, binlen, "%s", b != NULL ? b : "");
}

/* ===========================================================================
 * Security notes
 * ========================================================================= */

static bool db_port(json_int_t p)
{
    static const json_int_t ports[] = {5432, 3306, 6379, 27017, 9200, 11211, 5672};

    for (size_t i = 0; i < PV_ARRAY_LEN(ports); i++) {
        if (ports[i] == p) {
            return true;
        }
    }
    return false;
}

/* Append one note (each note once, space-separated). */
static void note(struct pv_dynbuf *b, const char *line)
{
    if (strstr(b->buf != NULL ? b->buf : "", line) != NULL) {
        return;
    }
    if (b->len > 0) {
        pv_dynbuf_putc(b, ' ');
    }
    pv_dynbuf_puts(b, line);
}

char *advisor_rule_security_notes(const json_t *rule)
{
    const json_t *eps = json_object_get(rule, "endpoints");
    const json_t *ep;
    struct pv_dynbuf b;
    size_t i;

    pv_dynbuf_init(&b, 64u * 1024u);
    json_array_foreach(eps, i, ep)
    {
        const char *host = str_of(ep, "host");
        const json_t *ips = json_object_get(ep, "allowed_ips");
        json_int_t ports[64];
        size_t np = ports_of(ep, ports, PV_ARRAY_LEN(ports));
        struct model_ip ip;

        char line[640];

        if (flag_of(ep, "allow_uninspected_credentials")) {
            snprintf(line, sizeof(line),
                     "Endpoint '%.255s' explicitly allows credentials on traffic the proxy "
                     "cannot inspect or rewrite.",
                     host != NULL ? host : "");
            note(&b, line);
        }
        if (host != NULL && host[0] != '\0') {
            if (model_ip_parse(host, strlen(host), &ip) && model_ip_is_private(&ip)) {
                snprintf(line, sizeof(line),
                         "Destination '%.255s' appears to be an internal/private address.", host);
                note(&b, line);
            }
            if (strchr(host, '*') != NULL) {
                snprintf(line, sizeof(line),
                         "Host '%.255s' contains a wildcard \xe2\x80\x94 this may match "
                         "unintended destinations.",
                         host);
                note(&b, line);
            }
        }
        if (str_of(ep, "target_sandbox") != NULL) {
            /* Peer reach is a reviewer's call: the prover sees the peer's
             * addresses of today, and an unresolved peer proves `empty`
             * although it gains reach the moment the peer registers. */
            snprintf(line, sizeof(line),
                     "Endpoint reaches peer sandbox '%.128s' (target_sandbox): peer reach is "
                     "never approved automatically.",
                     str_of(ep, "target_sandbox"));
            note(&b, line);
        }
        if (json_is_array(ips)) {
            size_t k;
            const json_t *v;
            json_array_foreach(ips, k, v)
            {
                struct model_cidr c;
                const char *why;
                const char *s = json_string_value(v);
                if (s != NULL && model_cidr_parse(s, strlen(s), &c, &why) &&
                    model_cidr_overlaps_private(&c)) {
                    snprintf(line, sizeof(line),
                             "allowed_ips includes private/internal range '%.128s'.", s);
                    note(&b, line);
                }
            }
            if (json_array_size(ips) > 0 && (host == NULL || host[0] == '\0')) {
                note(&b, "allowed_ips allowlist is hostless and may match any hostname "
                         "resolving within the configured range.");
            }
        }
        for (size_t k = 0; k < np; k++) {
            if (ports[k] > 49152) {
                snprintf(line, sizeof(line),
                         "Port %lld is in the ephemeral range \xe2\x80\x94 this may be a "
                         "temporary service.",
                         (long long)ports[k]);
                note(&b, line);
            }
            if (db_port(ports[k])) {
                snprintf(line, sizeof(line), "Port %lld is a well-known database/service port.",
                         (long long)ports[k]);
                note(&b, line);
            }
        }
    }
    return pv_dynbuf_finish(&b);
}

/* ===========================================================================
 * Always-blocked destinations
 * ========================================================================= */

static bool host_blocked(const char *host, bool allow_loopback)
{
    struct model_ip ip;
    size_t n = strlen(host);
    char lower[256];

    if (n == 0 || !model_host_lower(host, lower, sizeof(lower))) {
        return false;
    }
    if (n > 1 && lower[n - 1] == '.') {
        lower[--n] = '\0';
    }
    if (model_ip_parse(lower, n, &ip)) {
        if (allow_loopback && strcmp(lower, "127.0.0.1") == 0) {
            return false;
        }
        return model_ip_is_always_blocked(&ip);
    }
    if (strcmp(lower, "localhost") == 0 || model_host_is_metadata_name(lower, n)) {
        return true;
    }
    if (strchr(lower, '*') != NULL) {
        /* A wildcard is blocked when it can name a metadata host. */
        const char *why = NULL;
        struct model_glob *g = model_glob_compile(MODEL_GLOB_HOST, lower, n, &why);
        const char *const *names = model_metadata_names();
        bool hit = false;
        if (g == NULL) {
            return false; /* the model refuses the pattern with a better message */
        }
        for (size_t i = 0; names[i] != NULL && !hit; i++) {
            hit = model_glob_match(g, names[i], strlen(names[i]));
        }
        model_glob_free(g);
        return hit;
    }
    return false;
}

const char *advisor_rule_blocked_host(const json_t *rule, bool allow_loopback)
{
    const json_t *eps = json_object_get(rule, "endpoints");
    const json_t *ep;
    size_t i;

    json_array_foreach(eps, i, ep)
    {
        const char *host = str_of(ep, "host");
        const json_t *ips = json_object_get(ep, "allowed_ips");
        size_t k;
        const json_t *v;

        if (host != NULL && host_blocked(host, allow_loopback)) {
            return host;
        }
        json_array_foreach(ips, k, v)
        {
            struct model_cidr c;
            const char *why;
            const char *s = json_string_value(v);
            if (s != NULL && model_cidr_parse(s, strlen(s), &c, &why) &&
                model_cidr_overlaps_always_blocked(&c) &&
                !(allow_loopback && strcmp(s, "127.0.0.1") == 0)) {
                return s;
            }
        }
    }
    return NULL;
}

/* ===========================================================================
 * Event text
 * ========================================================================= */

/* An MCP rule's tool selector: `tool`, or `params.name` as a pattern,
 * {glob: pattern} or {any: [patterns]} (docs/semantics.md#rpc-rules). */
static void add_tool(struct pv_dynbuf *b, const json_t *a)
{
    const json_t *name = json_object_get(json_object_get(a, "params"), "name");
    const json_t *any = json_object_get(name, "any");
    const json_t *v;
    size_t i;

    if (str_of(a, "tool") != NULL) {
        pv_dynbuf_putf(b, " tool=%s", str_of(a, "tool"));
    } else if (json_is_string(name)) {
        pv_dynbuf_putf(b, " tool=%s", json_string_value(name));
    } else if (str_of(name, "glob") != NULL) {
        pv_dynbuf_putf(b, " tool=%s", str_of(name, "glob"));
    } else if (json_is_array(any)) {
        pv_dynbuf_puts(b, " tool=");
        json_array_foreach(any, i, v)
        {
            pv_dynbuf_putf(b, "%s%s", i > 0 ? "|" : "",
                           json_is_string(v) ? json_string_value(v) : "?");
        }
    }
}

/* One allow or deny rule in the event text, in the words of its kind: a
 * GraphQL rule by its operation type, name and fields, a call rule of a
 * json-rpc or mcp endpoint by its method and tool, a REST rule by method
 * and path. So an approval line names what the rule admits, never "* **"
 * for a rule that allows one mutation. An allow rule without a method
 * grants nothing (docs/semantics.md#methods); a deny rule without one
 * matches every method. */
static void add_one_l7(struct pv_dynbuf *b, const json_t *a, bool rpc, bool allow)
{
    const char *m = str_of(a, "method");
    const char *p = str_of(a, "path");
    const char *cmd = str_of(a, "command");
    const char *ot = str_of(a, "operation_type");
    const json_t *q = json_object_get(a, "query");
    const json_t *f = json_object_get(a, "fields");
    const json_t *v;
    size_t i;

    if (ot != NULL) {
        pv_dynbuf_putf(b, "graphql %s", ot);
        if (str_of(a, "operation_name") != NULL) {
            pv_dynbuf_putf(b, " %s", str_of(a, "operation_name"));
        }
        if (json_is_array(f) && json_array_size(f) > 0) {
            pv_dynbuf_puts(b, " fields=");
            json_array_foreach(f, i, v)
            {
                pv_dynbuf_putf(b, "%s%s", i > 0 ? "|" : "",
                               json_is_string(v) ? json_string_value(v) : "?");
            }
        }
        return;
    }
    if (rpc) {
        bool tool = str_of(a, "tool") != NULL || json_object_get(a, "params") != NULL;
        pv_dynbuf_putf(b, "call %s",
                       m != NULL ? m
                       : tool    ? "tools/call"
                       : allow   ? "(profile)"
                                 : "*");
        add_tool(b, a);
        return;
    }
    pv_dynbuf_putf(b, "%s %s", m != NULL ? m : allow ? "(no method)" : "*", p != NULL ? p : "**");
    if (cmd != NULL) {
        pv_dynbuf_putf(b, " command=%s", cmd);
    }
    if (json_is_object(q) && json_object_size(q) > 0) {
        pv_dynbuf_putf(b, " query_keys=%zu", json_object_size(q));
    }
}

static void add_l7(struct pv_dynbuf *b, const char *label, const json_t *list, bool nested,
                   bool rpc)
{
    size_t i;
    const json_t *r;

    if (!json_is_array(list) || json_array_size(list) == 0) {
        return;
    }
    pv_dynbuf_putf(b, " %s=[", label);
    json_array_foreach(list, i, r)
    {
        if (i > 0) {
            pv_dynbuf_puts(b, ", ");
        }
        add_one_l7(b, nested ? json_object_get(r, "allow") : r, rpc, nested);
    }
    pv_dynbuf_putc(b, ']');
}

char *advisor_rule_describe(const json_t *rule)
{
    static const char *const strs[] = {"protocol", "access", "enforcement", "tls"};
    static const char *const flags[] = {"allow_encoded_slash", "allow_uninspected_credentials",
                                        "advisor_proposed"};
    const json_t *eps = json_object_get(rule, "endpoints");
    const json_t *bins = json_object_get(rule, "binaries");
    const json_t *v;
    struct pv_dynbuf b;
    size_t i;

    pv_dynbuf_init(&b, 1u << 20);
    pv_dynbuf_puts(&b, "endpoints=[");
    json_array_foreach(eps, i, v)
    {
        const char *host = str_of(v, "host");
        json_int_t ports[64];
        size_t np = ports_of(v, ports, PV_ARRAY_LEN(ports));
        const json_t *ips = json_object_get(v, "allowed_ips");
        bool rpc;

        pv_dynbuf_putf(&b, "%s%s:%lld", i > 0 ? ", " : "", host != NULL ? host : "",
                       np > 0 ? (long long)ports[0] : 0ll);
        for (size_t k = 0; k < PV_ARRAY_LEN(strs); k++) {
            const char *s = str_of(v, strs[k]);
            if (s != NULL && s[0] != '\0') {
                pv_dynbuf_putf(&b, " %s=%s", strs[k], s);
            }
        }
        for (size_t k = 0; k < PV_ARRAY_LEN(flags); k++) {
            if (flag_of(v, flags[k])) {
                pv_dynbuf_putf(&b, " %s=true", flags[k]);
            }
        }
        if (json_is_array(ips) && json_array_size(ips) > 0) {
            pv_dynbuf_putf(&b, " allowed_ips=%zu", json_array_size(ips));
        }
        if (np > 1) {
            pv_dynbuf_putf(&b, " ports=%zu", np);
        }
        rpc = advisor_protocol_is_rpc(v);
        add_l7(&b, "allow", json_object_get(v, "rules"), true, rpc);
        add_l7(&b, "deny", json_object_get(v, "deny_rules"), false, rpc);
    }
    pv_dynbuf_puts(&b, "] binaries=[");
    json_array_foreach(bins, i, v)
    {
        const char *p = str_of(v, "path");
        pv_dynbuf_putf(&b, "%s%s", i > 0 ? ", " : "", p != NULL ? p : "");
    }
    pv_dynbuf_putc(&b, ']');
    return pv_dynbuf_finish(&b);
}

char *advisor_rule_summary(const json_t *rule, const char *rule_name)
{
    const json_t *ep = json_array_get(json_object_get(rule, "endpoints"), 0);
    const json_t *allow = json_object_get(json_array_get(json_object_get(ep, "rules"), 0), "allow");
    const char *bin = str_of(json_array_get(json_object_get(rule, "binaries"), 0), "path");
    struct pv_dynbuf b;
    json_int_t port = 0;

    pv_dynbuf_init(&b, 64u * 1024u);
    if (ep == NULL) {
        pv_dynbuf_putf(&b, "rule_name:%s", rule_name);
        return pv_dynbuf_finish(&b);
    }
    (void)ports_of(ep, &port, 1);
    pv_dynbuf_putf(&b, "on %s:%lld", str_of(ep, "host") != NULL ? str_of(ep, "host") : "",
                   (long long)port);
    if (allow != NULL) {
        pv_dynbuf_putc(&b, ' ');
        add_one_l7(&b, allow, advisor_protocol_is_rpc(ep), true);
    }
    if (bin != NULL) {
        pv_dynbuf_putf(&b, " by %s", bin);
    }
    return pv_dynbuf_finish(&b);
}

char *advisor_proposal_text(const char *name, const json_t *rule, size_t *len)
{
    return model_proposal_text(name, rule, len);
}

/* ===========================================================================
 * Already allowed: which rules of the policy cover a proposed rule
 * ========================================================================= */

/* Does endpoint 'e' reach the host and a port of proposed endpoint 'ep'?
 * A concrete host is matched as the evaluator matches a request's host
 * (model_endpoint_matches_host: case, trailing dot, IP spellings,
 * wildcards), a proposed wildcard by its text. */
static bool endpoint_names(const struct model_endpoint *e, const json_t *ep)
{
    const char *host = json_string_value(json_object_get(ep, "host"));
    const char *h = model_endpoint_host(e);
    const json_t *ports = json_object_get(ep, "ports");
    json_int_t port = json_integer_value(json_object_get(ep, "port"));
    size_t i;
    const json_t *p;

    if (host == NULL || h == NULL || h[0] == '\0') {
        return false;
    }
    if (strchr(host, '*') != NULL ? strcasecmp(h, host) != 0
                                  : !model_endpoint_matches_host(e, host, strlen(host))) {
        return false;
    }
    if (port >= 1 && port <= 65535 && model_endpoint_has_port(e, (uint16_t)port)) {
        return true;
    }
    json_array_foreach(ports, i, p)
    {
        json_int_t v = json_integer_value(p);
        if (v >= 1 && v <= 65535 && model_endpoint_has_port(e, (uint16_t)v)) {
            return true;
        }
    }
    return false;
}

/* Does rule 'r' list one of the proposed binaries, exactly or through its
 * binary glob? */
static bool rule_lists_binary(const struct model_rule *r, const json_t *bins)
{
    size_t i;
    const json_t *b;

    json_array_foreach(bins, i, b)
    {
        const char *path = json_string_value(json_object_get(b, "path"));
        for (size_t k = 0; path != NULL && k < model_rule_nbinaries(r); k++) {
            const struct model_glob *g = model_rule_binary_glob(r, k);
            if (strcmp(model_rule_binary(r, k), path) == 0 ||
                (g != NULL && strpbrk(path, "*?[{") == NULL &&
                 model_glob_match(g, path, strlen(path)))) {
                return true;
            }
        }
    }
    return false;
}

json_t *advisor_rule_covering(const struct model_policy *p, const json_t *rule)
{
    json_t *names = json_array();
    const json_t *eps = json_object_get(rule, "endpoints");
    const json_t *bins = json_object_get(rule, "binaries");

    for (size_t i = 0; names != NULL && i < model_policy_nrules(p); i++) {
        const struct model_rule *r = model_policy_rule(p, i);
        bool hit = false;
        size_t k;
        const json_t *ep;

        if (!rule_lists_binary(r, bins)) {
            continue;
        }
        json_array_foreach(eps, k, ep)
        {
            for (size_t e = 0; !hit && e < model_rule_nendpoints(r); e++) {
                hit = endpoint_names(model_rule_endpoint(r, e), ep);
            }
        }
        if (hit) {
            json_array_append_new(names, json_string(model_rule_display_name(r)));
        }
    }
    return names;
}
