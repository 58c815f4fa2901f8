/* SPDX-License-Identifier: Apache-2.0 */
/* model_validate_endpoint.c - normalise and check one network endpoint
 *
 * The endpoint half of model_policy_validate() (model_validate.c, whose
 * header comment lists every message): ports folded and sorted, the host
 * lower-cased and checked against its protocol, credential signing, the L7
 * fields (protocol, tls, enforcement, access, rules, deny_rules, GraphQL
 * fields), allowed_ips parsed into cidrs[] and target_sandbox. Hostile
 * input yields diagnostics, never an abort.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model_validate.h"

/* ===========================================================================
 * Endpoint normalisation
 * ========================================================================= */

static int cmp_port(const void *a, const void *b)
{
    uint16_t x = *(const uint16_t *)a;
    uint16_t y = *(const uint16_t *)b;
    return (x > y) - (x < y);
}

/* Fold port/ports. `ports` takes precedence over `port` (the reference's
 * to_proto; its canonical output writes both, `port` = ports[0], and the
 * compat corpus has such policies), so both together are accepted when
 * `port` is one of `ports`, and the reader keeps the `ports` list. Port 0 written as `port` means "no port"
 * (the reference's u16 default); in a `ports` list it is an error. */
static void normalise_ports(struct vctx *c, struct model_endpoint *e)
{
    struct model_mark m = mark_or(e->port_mark, e->mark);
    size_t n = 0;

    /* Both spellings are accepted only when they agree, as the reference's
     * own output writes them (port = one of ports); a `port` outside the
     * `ports` list is a contradiction, not something to resolve silently. */
    if (e->port_given && e->ports_given && e->port_written != 0) {
        bool found = false;
        for (size_t i = 0; i < e->nports; i++) {
            found = found || e->ports[i] == e->port_written;
        }
        if (!found) {
            model_vd_report(
                c, mark_or(e->port_written_mark, m),
                "network policy '%s': endpoint '%s' sets port %u, which is not in ports; "
                "write the port in the ports list or drop one of the two fields",
                c->name, c->host, (unsigned)e->port_written);
        }
    }
    for (size_t i = 0; i < e->nports; i++) {
        if (e->ports[i] == 0) {
            if (e->ports_given) {
                model_vd_report(c, m,
                                "network policy '%s': endpoint '%s' has invalid port %u; "
                                "expected 1..=65535",
                                c->name, c->host, 0u);
            }
            continue;
        }
        e->ports[n++] = e->ports[i];
    }
    if (n > 1) {
        size_t u = 1;
        qsort(e->ports, n, sizeof(e->ports[0]), cmp_port);
        for (size_t i = 1; i < n; i++) {
            if (e->ports[i] != e->ports[u - 1]) {
                e->ports[u++] = e->ports[i];
            }
        }
        n = u;
    }
    e->nports = n;
    if (n == 0) {
        model_vd_report(c, m, "network policy '%s': endpoint '%s' must declare at least one port",
                        c->name, c->host);
    }
}

static bool parse_protocol(const char *s, enum model_protocol *out)
{
    static const struct {
        const char *name;
        enum model_protocol proto;
    } table[] = {
        {"tcp", MODEL_PROTO_TCP},
        {"rest", MODEL_PROTO_REST},
        {"websocket", MODEL_PROTO_WEBSOCKET},
        {"graphql", MODEL_PROTO_GRAPHQL},
        {"sql", MODEL_PROTO_SQL},
        {"json-rpc", MODEL_PROTO_JSONRPC},
        {"mcp", MODEL_PROTO_MCP},
    };
    *out = MODEL_PROTO_NONE;
    if (str_empty(s)) {
        return true;
    }
    for (size_t i = 0; i < PV_ARRAY_LEN(table); i++) {
        if (ascii_ieq(s, table[i].name)) {
            *out = table[i].proto;
            return true;
        }
    }
    return false;
}

static bool parse_access(const char *s, enum model_access *out)
{
    *out = MODEL_ACCESS_NONE;
    if (str_empty(s)) {
        return true;
    }
    if (strcmp(s, "read-only") == 0) {
        *out = MODEL_ACCESS_READ_ONLY;
    } else if (strcmp(s, "read-write") == 0) {
        *out = MODEL_ACCESS_READ_WRITE;
    } else if (strcmp(s, "full") == 0) {
        *out = MODEL_ACCESS_FULL;
    } else {
        return false;
    }
    return true;
}

/* ===========================================================================
 * Hosts
 * ========================================================================= */

/* The reference's host_wildcard_shape_invalid(). */
static bool host_wildcard_shape_invalid(const char *host)
{
    const char *label = host;
    bool first = true;

    if (strcmp(host, "*") == 0 || strcmp(host, "**") == 0) {
        return true;
    }
    if (strchr(host, '*') == NULL) {
        return false;
    }
    for (;;) {
        const char *end = strchr(label, '.');
        size_t len = end == NULL ? strlen(label) : (size_t)(end - label);
        const char *star = memchr(label, '*', len);
        bool has_dstar = false;
        for (size_t i = 0; i + 1 < len; i++) {
            if (label[i] == '*' && label[i + 1] == '*') {
                has_dstar = true;
            }
        }
        if (first) {
            if (has_dstar && len != 2) {
                return true;
            }
        } else if (has_dstar || (star != NULL && len != 1)) {
            return true;
        }
        if (end == NULL) {
            return false;
        }
        first = false;
        label = end + 1;
    }
}

static size_t label_count(const char *host)
{
    size_t n = 1;
    for (; *host != '\0'; host++) {
        n += *host == '.';
    }
    return n;
}

/* The reference's validate_tcp_dns_host_selector(), on the host as written.
 * Returns NULL when valid, else writes the reason into 'buf'. */
static const char *tcp_selector_error(const char *host, char *buf, size_t buflen)
{
    size_t len = strlen(host);
    size_t total = 0;
    const char *label = host;

    if (len > 0 && (is_space(host[0]) || is_space(host[len - 1]))) {
        return "leading or trailing whitespace is not allowed";
    }
    if (len > 0 && host[len - 1] == '.') {
        return "omit the trailing DNS root dot";
    }
    /* Every wildcard stands for a representative label "x"; the result must
     * be a DNS name: non-empty labels of at most 63 bytes, at most 253 bytes. */
    for (;;) {
        const char *end = strchr(label, '.');
        size_t l = end == NULL ? strlen(label) : (size_t)(end - label);
        size_t rl = 0;
        for (size_t i = 0; i < l; i++) {
            char ch = label[i];
            if (ch == '*') {
                if (i + 1 < l && label[i + 1] == '*') {
                    i++;
                }
                rl++;
                continue;
            }
            if (!is_alpha(ch) && !is_digit(ch) && ch != '-' && ch != '_') {
                (void)snprintf(buf, buflen,
                               "selector cannot represent a valid DNS name: invalid character "
                               "0x%02x",
                               (unsigned)(unsigned char)ch);
                return buf;
            }
            rl++;
        }
        if (rl == 0) {
            return "selector cannot represent a valid DNS name: empty label";
        }
        if (rl > MAX_DNS_LABEL) {
            return "selector cannot represent a valid DNS name: label exceeds 63 bytes";
        }
        total += rl + (total > 0);
        if (end == NULL) {
            break;
        }
        label = end + 1;
    }
    if (total > MAX_DNS_NAME) {
        return "selector cannot represent a valid DNS name: name exceeds 253 bytes";
    }
    return NULL;
}

/*= docs/semantics.md#host-dns
 *# Any other host must be a **DNS name**: labels of `[a-z0-9_-]`, separated by
 *# single dots, no empty label, at most 253 bytes, and its last label starts
 *# with a letter
 * A pattern that breaks these rules (with '*' allowed in labels) can match
 * no request host at all, so it is a typo worth reporting. 'host' is
 * lower-case already. */
static const char *host_syntax_error(const char *host, size_t len, char *buf, size_t buflen)
{
    const char *label = host;

    if (len == 0) {
        return "empty host name";
    }
    if (len > MAX_DNS_NAME) {
        return "longer than 253 bytes";
    }
    for (size_t i = 0; i < len; i++) {
        char ch = host[i];
        if (!is_alpha(ch) && !is_digit(ch) && ch != '-' && ch != '_' && ch != '*' && ch != '.') {
            (void)snprintf(buf, buflen,
                           "invalid character 0x%02x (a host is letters, digits, '-', '_', "
                           "'.' and '*')",
                           (unsigned)(unsigned char)ch);
            return buf;
        }
    }
    for (;;) {
        const char *end = strchr(label, '.');
        size_t l = end == NULL ? strlen(label) : (size_t)(end - label);
        if (l == 0) {
            return "empty label";
        }
        if (l > MAX_DNS_LABEL) {
            return "label longer than 63 bytes";
        }
        if (end == NULL) {
            if (is_digit(label[0])) {
                return "the last label of a DNS name must start with a letter";
            }
            return NULL;
        }
        label = end + 1;
    }
}

/* A host written as a URL or with its port ("https://api.x.com/v1",
 * "api.x.com:443"): append to 'why' (in 'buf') what to write instead.
 * Returns 'why' unchanged for any other host. */
static const char *url_hint(const char *host, const char *why, char *buf, size_t buflen)
{
    const char *scheme = strstr(host, "://");
    const char *name = scheme != NULL ? scheme + 3 : host;
    size_t n = strcspn(name, "/:?#");
    const char *port = name[n] == ':' ? name + n + 1 : NULL;
    size_t plen = port != NULL ? strspn(port, "0123456789") : 0;
    char w[160];

    if (port != NULL && (plen == 0 || (port[plen] != '\0' && port[plen] != '/'))) {
        port = NULL; /* not a port: no hint about one */
    }
    if ((scheme == NULL && strchr(host, '/') == NULL && port == NULL) || n == 0) {
        return why;
    }
    (void)snprintf(w, sizeof(w), "%s", why);
    if (port != NULL) {
        (void)snprintf(buf, buflen,
                       "%s; a host is a name, not a URL: write host: %.*s and "
                       "port: %.*s",
                       w, (int)n, name, (int)plen, port);
    } else {
        (void)snprintf(buf, buflen, "%s; a host is a name, not a URL: write host: %.*s", w, (int)n,
                       name);
    }
    return buf;
}

/* Host checks and normalisation (a whitespace-only host becomes ""). */
/* long: the host checks in the reference's message order (hostless, wildcard shape, IP literal,
 * pattern), each adding at most one diagnostic */
static void check_host(struct vctx *c, struct model_endpoint *e)
{
    struct model_mark hm = mark_or(e->host.mark, e->mark);
    bool tcp = e->proto == MODEL_PROTO_TCP;
    bool hostless = e->host.s == NULL || all_space(e->host.s);
    char *host;
    size_t len;
    bool bad_shape = false;
    struct model_ip ip;
    char buf[160];
    char hint[480];
    const char *why = NULL;

    if (hostless && e->host.s != NULL) {
        e->host.s[0] = '\0';
    }
    c->host = str_or_empty(e->host.s);

    if (hostless && tcp) {
        model_vd_report(c, hm,
                        "network policy '%s': protocol tcp requires a DNS hostname; hostless "
                        "allowed_ips endpoints are supported only by the forward proxy",
                        c->name);
    } else if (hostless && e->allowed_ips.n == 0 && e->target_sandbox.s == NULL) {
        model_vd_report(c, hm,
                        "network policy '%s': endpoint host must not be empty unless allowed_ips "
                        "constrains a non-TCP proxy endpoint",
                        c->name);
    } else if (tcp) {
        bool is_ip = model_ip_parse(e->host.s, strlen(e->host.s), &ip);
        if (is_ip) {
            model_vd_report(
                c, hm,
                "network policy '%s': protocol tcp endpoint '%s' must use a DNS "
                "hostname, not an IP literal; direct IP connections bypass policy DNS and "
                "are blocked",
                c->name, e->host.s);
        } else {
            why = tcp_selector_error(e->host.s, buf, sizeof(buf));
        }
        if (why != NULL) {
            why = url_hint(e->host.s, why, hint, sizeof(hint));
        }
        if (why != NULL) {
            model_vd_report(c, hm,
                            "network policy '%s': protocol tcp endpoint has invalid DNS host "
                            "selector '%s': %s",
                            c->name, e->host.s, why);
        }
        /* Already reported: no second message from the pattern checks. */
        bad_shape = is_ip || why != NULL;
    }
    if (hostless) {
        return;
    }

    /*= docs/semantics.md#host-pattern
     *# Host patterns are lower-cased and lose one trailing dot at load time. */
    host = e->host.s;
    ascii_lower(host);
    len = strlen(host);
    if (len > 0 && host[len - 1] == '.') {
        host[--len] = '\0';
    }

    if (strchr(host, '*') != NULL && (starts_with(host, "*.") || starts_with(host, "**.")) &&
        label_count(host) <= 2) {
        model_vd_report(c, hm,
                        "network policy '%s': TLD wildcard '%s' is not allowed; use subdomain "
                        "wildcards like '*.example.com' instead",
                        c->name, host);
        bad_shape = true;
    }
    if (host_wildcard_shape_invalid(host)) {
        model_vd_report(
            c, hm,
            "network policy '%s': invalid host wildcard '%s'; middle DNS label "
            "wildcards must be the entire label '*' and recursive '**' is only allowed as "
            "the entire first label",
            c->name, host);
        bad_shape = true;
    }
    if (bad_shape) {
        return;
    }
    if (len > 2 && host[0] == '[' && host[len - 1] == ']' &&
        model_ip_parse_strict(host + 1, len - 2, &ip)) {
        /* "[2001:db8::1]" is the IPv6 literal without its URI brackets. */
        memmove(host, host + 1, len - 2);
        len -= 2;
        host[len] = '\0';
    }
    if (model_ip_parse(host, len, &ip)) {
        /*= docs/semantics.md#validation
         *# an IP-literal host that is not in canonical form */
        /* 2852039166, 0x7f.1, 010.0.0.1, 2606:4700:0::1111, ::ffff:10.0.0.5:
         * the proxy reads these as addresses; a policy must say which one it
         * means, in the one text model_ip_format writes (the host is
         * lower-cased above, #host-pattern). */
        char canon[64];
        model_ip_format(&ip, canon, sizeof(canon));
        if (strcmp(canon, host) == 0) {
            return;
        }
        model_vd_report(c, hm,
                        "network policy '%s': endpoint host '%s' is a non-canonical IP literal; "
                        "write it as '%s'",
                        c->name, host, canon);
        return;
    }
    why = host_syntax_error(host, len, buf, sizeof(buf));
    if (why != NULL) {
        why = url_hint(host, why, hint, sizeof(hint));
        model_vd_report(c, hm, "network policy '%s': invalid host pattern '%s': %s", c->name, host,
                        why);
        return;
    }
    model_vd_check_glob(c, MODEL_GLOB_HOST, host, hm);
}

/* ===========================================================================
 * Endpoint fields
 * ========================================================================= */

static void check_signing(struct vctx *c, const struct model_endpoint *e)
{
    static const char *const modes[] = {"sigv4", "sigv4:body", "sigv4:no_body", NULL};
    const char *v = e->credential_signing.s;
    struct model_mark m = mark_or(e->credential_signing.mark, e->mark);

    if (str_empty(v)) {
        return;
    }
    if (!str_in(v, modes)) {
        model_vd_report(c, m,
                        "network policy '%s': endpoint '%s' has unrecognized credential_signing "
                        "value '%s' (expected sigv4, sigv4:body, or sigv4:no_body)",
                        c->name, c->host, v);
    }
    if (str_empty(e->signing_service.s)) {
        model_vd_report(c, m,
                        "network policy '%s': endpoint '%s' has credential_signing set but "
                        "signing_service is empty",
                        c->name, c->host);
    }
    if (e->request_body_credential_rewrite) {
        model_vd_report(c, m,
                        "network policy '%s': endpoint '%s' has both credential_signing and "
                        "request_body_credential_rewrite set; these options are mutually exclusive",
                        c->name, c->host);
    }
}

static bool l7rule_is_empty(const struct model_l7rule *r)
{
    return str_empty(r->method.s) && str_empty(r->path.s) && str_empty(r->command.s) &&
           str_empty(r->operation_type.s) && str_empty(r->operation_name.s) && r->fields.n == 0 &&
           str_empty(r->tool.s) && (r->params == NULL || json_object_size(r->params) == 0);
}

static bool gql_operation_type_valid(const char *s)
{
    static const char *const types[] = {"query", "mutation", "subscription", NULL};
    return !str_empty(s) && str_in(s, types);
}

/* Rule operation types also take "*" (docs/semantics.md#graphql-allow). */
static bool gql_rule_type_valid(const char *s)
{
    return gql_operation_type_valid(s) || (s != NULL && strcmp(s, "*") == 0);
}

static bool rule_has_gql(const struct model_l7rule *r)
{
    return r->operation_type.s != NULL || r->operation_name.s != NULL || r->fields.n > 0 ||
           r->fields.mark.line != 0;
}

static bool rule_has_http(const struct model_l7rule *r)
{
    return r->method.s != NULL || r->path.s != NULL || r->nquery > 0;
}

/* One GraphQL rule (allow: where = "rules[I].allow", deny: "deny_rules[I]"):
 *= docs/semantics.md#graphql-validation
 *# `operation_type` other than `query`, `mutation`, `subscription` or `*` */
static void check_gql_rule(struct vctx *c, const struct model_endpoint *e,
                           const struct model_l7rule *r, const char *where)
{
    bool ws = e->proto == MODEL_PROTO_WEBSOCKET;

    if (e->proto != MODEL_PROTO_GRAPHQL && !ws) {
        if (rule_has_gql(r)) {
            model_vd_report_l7(
                c, mark_or(r->operation_type.mark, r->mark),
                "%s: operation_type, operation_name and fields are GraphQL rule fields; "
                "protocol %s does not match GraphQL operations",
                where, str_or_empty(e->protocol.s));
        }
        return;
    }
    if (ws && !rule_has_gql(r)) {
        return; /* a method rule */
    }
    if (ws && rule_has_http(r)) {
        model_vd_report_l7(
            c, r->mark,
            "%s mixes method, path or query with operation_type, operation_name or "
            "fields; write the WebSocket upgrade and the GraphQL operations as separate "
            "rules",
            where);
    }
    if (!ws && rule_has_http(r)) {
        model_vd_report_l7(
            c, mark_or(r->method.mark, mark_or(r->path.mark, r->mark)),
            "%s: protocol graphql rules match operations; method, path and query are "
            "not allowed (scope the endpoint with its path)",
            where);
    }
    if (!gql_rule_type_valid(r->operation_type.s)) {
        model_vd_report_l7(c, mark_or(r->operation_type.mark, r->mark),
                           "%s.operation_type must be query, mutation, subscription, or *", where);
    }
    if (r->fields.mark.line != 0 && r->fields.n == 0) {
        model_vd_report_l7(c, r->fields.mark,
                           "%s.fields must not be empty; omit it to match every field", where);
    }
}

/* A registry entry's name and fields are GraphQL names, not globs. */
static void check_gql_entry(struct vctx *c, const struct model_endpoint *e,
                            const struct model_gql_persisted *g)
{
    if (!gql_operation_type_valid(g->operation_type.s)) {
        model_vd_report_l7(c, mark_or(g->operation_type.mark, mark_or(g->id.mark, e->mark)),
                           "graphql_persisted_queries[%s].operation_type must be query, "
                           "mutation, or subscription",
                           str_or_empty(g->id.s));
    }
    if (g->operation_name.s != NULL &&
        !model_gql_name_valid(g->operation_name.s, strlen(g->operation_name.s))) {
        model_vd_report_l7(
            c, g->operation_name.mark,
            "graphql_persisted_queries[%s].operation_name '%s' is not a GraphQL name",
            str_or_empty(g->id.s), g->operation_name.s);
    }
    for (size_t k = 0; k < g->fields.n; k++) {
        const char *f = g->fields.v[k].s;
        if (f == NULL || !model_gql_name_valid(f, strlen(f))) {
            model_vd_report_l7(
                c, g->fields.v[k].mark,
                "graphql_persisted_queries[%s].fields[%zu] '%s' is not a GraphQL name",
                str_or_empty(g->id.s), k, str_or_empty(f));
        }
    }
    if (g->id.s == NULL || g->id.s[0] == '\0') {
        model_vd_report_l7(c, mark_or(g->id.mark, e->mark),
                           "graphql_persisted_queries keys must not be empty");
    }
}

/* Join the names of L7-only fields set on an explicit tcp endpoint. */
static void tcp_l7_fields(const struct model_endpoint *e, char *buf, size_t buflen)
{
    const char *names[10];
    size_t n = 0;
    size_t used = 0;

    if (!str_empty(e->enforcement.s)) {
        names[n++] = "enforcement";
    }
    if (!str_empty(e->path.s)) {
        names[n++] = "path";
    }
    if (e->allow_encoded_slash) {
        names[n++] = "allow_encoded_slash";
    }
    if (e->websocket_credential_rewrite) {
        names[n++] = "websocket_credential_rewrite";
    }
    if (e->request_body_credential_rewrite) {
        names[n++] = "request_body_credential_rewrite";
    }
    if (!str_empty(e->persisted_queries.s)) {
        names[n++] = "persisted_queries";
    }
    if (e->ngql_persisted > 0) {
        names[n++] = "graphql_persisted_queries";
    }
    if (e->graphql_max_body_bytes > 0) {
        names[n++] = "graphql_max_body_bytes";
    }
    if (e->json_rpc_max_body_bytes > 0) {
        names[n++] = "json_rpc_max_body_bytes";
    }
    if (e->has_mcp) {
        names[n++] = "mcp";
    }
    buf[0] = '\0';
    for (size_t i = 0; i < n && used < buflen; i++) {
        int k = snprintf(buf + used, buflen - used, "%s%s", i > 0 ? ", " : "", names[i]);
        if (k < 0) {
            break;
        }
        used += (size_t)k;
    }
}

static void check_query_shapes(struct vctx *c, const struct model_l7rule *r, size_t ri, bool deny)
{
    for (size_t q = 0; q < r->nquery; q++) {
        const struct model_query *mq = &r->query[q];
        if (mq->form == MODEL_QFORM_ANY && mq->globs.n == 0) {
            model_vd_report_l7(c, mark_or(mq->globs.mark, mark_or(mq->key.mark, r->mark)),
                               "%s[%zu]%s.query.%s.any: list must not be empty",
                               deny ? "deny_rules" : "rules", ri, deny ? "" : ".allow",
                               str_or_empty(mq->key.s));
        }
    }
}

/*= docs/semantics.md#validation
 *# endpoint or rule paths not starting with `/` (or `**`)
 * A request path always starts with '/' (#canonical-path), so a rule path
 * that does not matches nothing: a dead allow rule, or a deny rule that
 * silently denies nothing. */
static void check_rule_path(struct vctx *c, const struct model_l7rule *r, size_t ri, bool deny)
{
    const char *s = r->path.s;

    if (str_empty(s) || s[0] == '/' || starts_with(s, "**")) {
        return;
    }
    model_vd_report_l7(c, mark_or(r->path.mark, r->mark),
                       "%s[%zu]%s.path '%s' must start with '/' or '**': a request path always "
                       "starts with '/', so it would match nothing",
                       deny ? "deny_rules" : "rules", ri, deny ? "" : ".allow", s);
}

/* Unknown values of tls, enforcement, access and protocol. */
static void check_l7_values(struct vctx *c, const struct model_endpoint *e, bool proto_known,
                            bool tls_known, bool access_known)
{
    const char *proto_s = str_or_empty(e->protocol.s);
    struct model_mark pm = mark_or(e->protocol.mark, e->mark);
    struct model_mark am = mark_or(e->access.mark, e->mark);

    if (!tls_known) {
        model_vd_report_l7(c, mark_or(e->tls.mark, e->mark),
                           "unknown tls value '%s' (expected skip, terminate, or passthrough)",
                           e->tls.s);
    }
    if (!str_empty(e->enforcement.s) && strcmp(e->enforcement.s, "enforce") != 0 &&
        strcmp(e->enforcement.s, "audit") != 0) {
        model_vd_report_l7(c, mark_or(e->enforcement.mark, e->mark),
                           "unknown enforcement value '%s' (expected enforce or audit)",
                           e->enforcement.s);
    }
    if (!access_known) {
        model_vd_report_l7(c, am,
                           "unknown access value '%s' (expected read-only, read-write, or full)",
                           e->access.s);
    }
    if (!proto_known) {
        model_vd_report_l7(
            c, pm,
            "unknown protocol '%s' (expected tcp, rest, websocket, graphql, sql, json-rpc, "
            "or mcp)",
            proto_s);
    }
}

/* How protocol, access, rules and deny_rules combine. */
static void check_l7_modes(struct vctx *c, const struct model_endpoint *e, bool proto_known)
{
    const char *proto_s = str_or_empty(e->protocol.s);
    struct model_mark pm = mark_or(e->protocol.mark, e->mark);
    struct model_mark am = mark_or(e->access.mark, e->mark);
    bool l7 = proto_known && e->proto != MODEL_PROTO_NONE && e->proto != MODEL_PROTO_TCP;
    bool tcp = e->proto == MODEL_PROTO_TCP;
    bool mcp = e->proto == MODEL_PROTO_MCP;
    bool jsonrpc = e->proto == MODEL_PROTO_JSONRPC;
    bool has_access = !str_empty(e->access.s);
    bool has_rules = e->nrules > 0;
    bool has_deny = e->ndeny > 0;
    bool deny_all = has_rules;

    for (size_t i = 0; i < e->nrules; i++) {
        deny_all = deny_all && l7rule_is_empty(&e->rules[i]);
    }

    if (tcp && (has_access || has_rules || has_deny)) {
        model_vd_report_l7(c, pm,
                           "protocol tcp does not support access, rules, or deny_rules; remove "
                           "those L7 fields");
    }
    if (has_rules && has_access) {
        model_vd_report_l7(c, am, "rules and access are mutually exclusive");
    }
    if ((mcp || jsonrpc) && has_access) {
        if (mcp) {
            model_vd_report_l7(
                c, am,
                "protocol %s does not support access presets; use rules/deny_rules "
                "or set mcp.allow_all_known_mcp_methods: true for an allow-all MCP policy",
                proto_s);
        } else {
            model_vd_report_l7(c, am,
                               "protocol %s does not support access presets; use explicit rules "
                               "with allow.method such as \"*\"",
                               proto_s);
        }
    }
    if (jsonrpc && !has_rules && !has_access) {
        model_vd_report_l7(c, pm, "protocol %s requires explicit rules with allow.method", proto_s);
    }
    if (l7 && !mcp && !jsonrpc && !has_rules && !has_access) {
        model_vd_report_l7(c, pm, "protocol requires rules or access to define allowed traffic");
    }
    if (mcp && !has_rules && !has_access && !e->mcp_allow_all_known_methods) {
        model_vd_report_l7(c, pm,
                           "protocol mcp requires rules when mcp.allow_all_known_mcp_methods is "
                           "false");
    }
    if (deny_all && !(mcp && e->mcp_allow_all_known_methods)) {
        model_vd_report_l7(
            c, mark_or(e->rules[0].mark, e->mark),
            "rules would deny all traffic (no allow clause found). Use `access: full` or "
            "add allow clauses to rules.");
    }
    if (has_deny && !l7) {
        model_vd_report_l7(c, mark_or(e->deny_rules[0].mark, e->mark),
                           "deny_rules require protocol (L7 inspection must be enabled)");
    }
    if (has_deny && !mcp && !has_rules && !has_access) {
        model_vd_report_l7(c, mark_or(e->deny_rules[0].mark, e->mark),
                           "deny_rules require rules or access to define the base allow set");
    }
    /* As the reference's supervisor: an explicitly empty list is an error (supervisor). */
    if (e->rules_given && e->nrules == 0) {
        model_vd_report_l7(c, e->mark,
                           "rules list cannot be empty (would deny all traffic). Use "
                           "`access: full` or remove rules.");
    }
    if (e->deny_given && e->ndeny == 0) {
        model_vd_report_l7(c, e->mark,
                           "deny_rules list cannot be empty (would have no effect). Remove "
                           "it if no denials are needed.");
    }
}

/* Fields valid only for some protocols, then the rules' GraphQL fields,
 * persisted queries and query shapes. */
static void check_l7_fields(struct vctx *c, const struct model_endpoint *e)
{
    static const char *const pq_modes[] = {"deny", "allow_registered", NULL};
    struct model_mark pm = mark_or(e->protocol.mark, e->mark);
    bool tcp = e->proto == MODEL_PROTO_TCP;
    bool mcp = e->proto == MODEL_PROTO_MCP;

    if (tcp) {
        char list[512];
        tcp_l7_fields(e, list, sizeof(list));
        if (list[0] != '\0') {
            model_vd_report_l7(c, pm,
                               "protocol tcp does not support L7-only fields: %s; remove those "
                               "fields",
                               list);
        }
    }
    if (!str_empty(e->path.s) && e->path.s[0] != '/' && strcmp(e->path.s, "**") != 0) {
        model_vd_report_l7(c, mark_or(e->path.mark, e->mark),
                           "path must start with '/' or be '**'");
    }
    for (size_t i = 0; i < e->nrules; i++) {
        check_rule_path(c, &e->rules[i], i, false);
    }
    for (size_t i = 0; i < e->ndeny; i++) {
        check_rule_path(c, &e->deny_rules[i], i, true);
    }
    if (!str_empty(e->persisted_queries.s) && !str_in(e->persisted_queries.s, pq_modes)) {
        model_vd_report_l7(c, mark_or(e->persisted_queries.mark, e->mark),
                           "persisted_queries must be 'deny' or 'allow_registered', got '%s'",
                           e->persisted_queries.s);
    }
    if (e->proto == MODEL_PROTO_SQL && e->enforce) {
        model_vd_report_l7(c, mark_or(e->enforcement.mark, e->mark),
                           "SQL enforcement requires full SQL parsing; use enforcement: audit");
    }
    /*= docs/semantics.md#validation
     *# an endpoint with an L7 `protocol`, `tls: skip` and `enforcement: enforce` */
    if (e->tls_skip && e->enforce && e->proto != MODEL_PROTO_NONE && e->proto != MODEL_PROTO_TCP) {
        model_vd_report_l7(
            c, mark_or(e->tls.mark, e->mark),
            "tls: skip cannot be enforced (the proxy does not inspect skipped TLS, so the "
            "rules would never apply); use enforcement: audit or remove tls: skip");
    }
    if (e->has_mcp && !mcp) {
        model_vd_report_l7(c, e->mark, "mcp options are only valid for protocol mcp");
    }
    if (e->has_json_rpc && mcp) {
        model_vd_report_l7(c, e->mark,
                           "json_rpc options are not valid for protocol mcp; use "
                           "mcp.max_body_bytes");
    }
    if (e->proto != MODEL_PROTO_SQL && e->proto != MODEL_PROTO_JSONRPC &&
        e->proto != MODEL_PROTO_MCP) {
        char where[64];

        for (size_t i = 0; i < e->nrules; i++) {
            (void)snprintf(where, sizeof(where), "rules[%zu].allow", i);
            check_gql_rule(c, e, &e->rules[i], where);
        }
        for (size_t i = 0; i < e->ndeny; i++) {
            (void)snprintf(where, sizeof(where), "deny_rules[%zu]", i);
            check_gql_rule(c, e, &e->deny_rules[i], where);
        }
    }
    if (e->proto == MODEL_PROTO_GRAPHQL || e->proto == MODEL_PROTO_WEBSOCKET) {
        for (size_t i = 0; i < e->ngql_persisted; i++) {
            check_gql_entry(c, e, &e->gql_persisted[i]);
        }
    }
    for (size_t i = 0; i < e->nrules; i++) {
        check_query_shapes(c, &e->rules[i], i, false);
    }
    for (size_t i = 0; i < e->ndeny; i++) {
        check_query_shapes(c, &e->deny_rules[i], i, true);
    }
}

/* The reference's validate_endpoint_modes, validate_l7_endpoint_semantics
 * and the L7 checks of validate_sandbox_policy, in its order. */
static void check_l7(struct vctx *c, const struct model_endpoint *e, bool proto_known,
                     bool tls_known, bool access_known)
{
    check_l7_values(c, e, proto_known, tls_known, access_known);
    check_l7_modes(c, e, proto_known);
    check_l7_fields(c, e);
}

/* Parse allowed_ips, or a target_sandbox's resolved_ips, into cidrs[]
 * (replacing any earlier result). resolved_ips are the peer's addresses as
 * composition wrote them: single addresses, never a range, and never
 * always-blocked except loopback, which only the test switch admits
 * (docs/semantics.md#test-loopback). */
static void check_allowed_ips(struct vctx *c, struct model_endpoint *e)
{
    bool resolved = e->allowed_ips.n == 0;
    const struct model_strlist *l = resolved ? &e->resolved_ips : &e->allowed_ips;
    const char *field = resolved ? "resolved_ips" : "allowed_ips";

    free(e->cidrs);
    e->cidrs = NULL;
    e->ncidrs = 0;
    if (l->n == 0) {
        return;
    }
    e->cidrs = pv_calloc(l->n, sizeof(e->cidrs[0]));
    if (e->cidrs == NULL) {
        c->nomem = true;
        c->nerr++;
        return;
    }
    for (size_t i = 0; i < l->n; i++) {
        const struct model_sval *v = &l->v[i];
        const char *s = str_or_empty(v->s);
        struct model_mark m = mark_or(v->mark, mark_or(l->mark, e->mark));
        const char *why = NULL;
        struct model_cidr cidr;

        memset(&cidr, 0, sizeof(cidr));
        if (!model_cidr_parse(s, strlen(s), &cidr, &why)) {
            model_vd_report(c, m,
                            "network policy '%s': endpoint '%s' has invalid %s entry '%s': %s",
                            c->name, c->host, field, s, why != NULL ? why : "malformed address");
            continue;
        }
        if (resolved) {
            /*= docs/semantics.md#target-sandbox
             *# Each `resolved_ips` entry is one address (no prefix length);
             *# an always-blocked address other than loopback is a load error. */
            if (cidr.prefix != 128 || strchr(s, '/') != NULL) {
                model_vd_report(c, m,
                                "network policy '%s': endpoint '%s' has invalid resolved_ips entry "
                                "'%s': expected a single address",
                                c->name, c->host, s);
                continue;
            }
            if (model_ip_is_always_blocked(&cidr.net) && !model_ip_is_loopback(&cidr.net)) {
                model_vd_report(
                    c, m,
                    "network policy '%s': resolved_ips entry %s is always blocked; a peer "
                    "sandbox is never reached at such an address",
                    c->name, s);
                continue;
            }
            e->cidrs[e->ncidrs++] = cidr;
            continue;
        }
        /*= docs/semantics.md#destinations
         *# `allowed_ips` entries that overlap always-blocked ranges are load errors. */
        if (model_cidr_overlaps_always_blocked(&cidr)) {
            model_vd_report(
                c, m,
                "network policy '%s': allowed_ips entry %s falls within "
                "always-blocked range (loopback/link-local/unspecified); remove this entry "
                "\xe2\x80\x94 SSRF hardening prevents traffic to these destinations "
                "regardless of policy",
                c->name, s);
            continue;
        }
        e->cidrs[e->ncidrs++] = cidr;
    }
}

static void check_target_sandbox(struct vctx *c, const struct model_endpoint *e)
{
    const char *v = e->target_sandbox.s;
    struct model_mark m = mark_or(e->target_sandbox.mark, e->mark);
    bool ok;

    if (v == NULL) {
        if (e->resolved_ips.n > 0) {
            model_vd_report(
                c, mark_or(e->resolved_ips.mark, e->mark),
                "network policy '%s': endpoint '%s': resolved_ips requires target_sandbox", c->name,
                c->host);
        }
        return;
    }
    ok = v[0] != '\0';
    for (const char *q = v; *q != '\0'; q++) {
        if (!is_alpha(*q) && !is_digit(*q) && *q != '.' && *q != '_' && *q != '-') {
            ok = false;
        }
    }
    if (!ok) {
        model_vd_report(c, m,
                        "network policy '%s': endpoint '%s' has invalid target_sandbox '%s'; "
                        "expected a non-empty name of [A-Za-z0-9._-]",
                        c->name, c->host, v);
    }
    if (e->allowed_ips.n > 0) {
        model_vd_report(c, m,
                        "network policy '%s': endpoint '%s': target_sandbox and allowed_ips are "
                        "mutually exclusive",
                        c->name, c->host);
    }
}

/* Methods, rule paths and query globs of one allow or deny rule. */
static void check_l7rule_patterns(struct vctx *c, const struct model_endpoint *e,
                                  struct model_l7rule *r)
{
    bool http = e->proto != MODEL_PROTO_JSONRPC && e->proto != MODEL_PROTO_MCP;

    if (http && r->method.s != NULL) {
        /*= docs/semantics.md#methods
         *# Methods compare case-insensitively (both sides upper-cased). */
        if (strcmp(r->method.s, "*") != 0 && !method_token(r->method.s)) {
            model_vd_report(c, mark_or(r->method.mark, r->mark),
                            "network policy '%s': invalid method "
                            "'%s'",
                            c->name, r->method.s);
        }
        ascii_upper(r->method.s);
    }
    if (!str_empty(r->path.s)) {
        model_vd_check_glob(c, MODEL_GLOB_PATH, r->path.s, mark_or(r->path.mark, r->mark));
    }
    for (size_t q = 0; q < r->nquery; q++) {
        const struct model_query *mq = &r->query[q];
        for (size_t g = 0; g < mq->globs.n; g++) {
            const struct model_sval *v = &mq->globs.v[g];
            model_vd_check_glob(c, MODEL_GLOB_VALUE, str_or_empty(v->s),
                                mark_or(v->mark, mark_or(mq->key.mark, r->mark)));
        }
    }
    /*= docs/semantics.md#graphql-glob
     *# **Globs** in `operation_name` and `fields` use the query-glob dialect */
    if (r->operation_name.s != NULL) {
        model_vd_check_glob_as(c, MODEL_GLOB_VALUE, "GraphQL operation_name", r->operation_name.s,
                               mark_or(r->operation_name.mark, r->mark));
    }
    for (size_t f = 0; f < r->fields.n; f++) {
        const struct model_sval *v = &r->fields.v[f];
        model_vd_check_glob_as(c, MODEL_GLOB_VALUE, "GraphQL fields", str_or_empty(v->s),
                               mark_or(v->mark, mark_or(r->fields.mark, r->mark)));
    }
}

void model_vd_check_endpoint(struct vctx *c, struct model_endpoint *e)
{
    bool proto_known = parse_protocol(e->protocol.s, &e->proto);
    bool tls_known = true;
    bool access_known = parse_access(e->access.s, &e->access_preset);

    if (!str_empty(e->tls.s)) {
        static const char *const modes[] = {"skip", "terminate", "passthrough", NULL};
        tls_known = str_in(e->tls.s, modes);
    }
    e->tls_skip = e->tls.s != NULL && strcmp(e->tls.s, "skip") == 0;
    /*= docs/semantics.md#audit
     *# `enforcement` is anything but `enforce`, including absent — (**audit mode**) */
    e->enforce = e->enforcement.s != NULL && strcmp(e->enforcement.s, "enforce") == 0;

    check_host(c, e);
    normalise_ports(c, e);
    check_signing(c, e);
    check_l7(c, e, proto_known, tls_known, access_known);
    model_vd_check_rpc(c, e);
    check_allowed_ips(c, e);
    check_target_sandbox(c, e);
    if (!str_empty(e->path.s) && (e->path.s[0] == '/' || strcmp(e->path.s, "**") == 0)) {
        model_vd_check_glob(c, MODEL_GLOB_PATH, e->path.s, mark_or(e->path.mark, e->mark));
    }
    for (size_t i = 0; i < e->nrules; i++) {
        check_l7rule_patterns(c, e, &e->rules[i]);
    }
    for (size_t i = 0; i < e->ndeny; i++) {
        check_l7rule_patterns(c, e, &e->deny_rules[i]);
    }
}
