/* SPDX-License-Identifier: Apache-2.0 */
/* model_access.c - read-only views of compiled endpoints for the prover
 *
 * The prover (prover/) may not include model_int.h, yet it must reason about
 * every field the evaluator reads. This file exposes those fields as small
 * view structs of borrowed pointers, a semantic fingerprint of an endpoint
 * (equal fingerprints = equal authority, rule keys and names excluded) and a
 * SHA-256 helper. Nothing here allocates except the fingerprint.
 */
#include "config.h"

#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#include "common/pv_dynbuf.h"
#include "model/model_int.h"
#include "model/model_rpc.h"

void model_endpoint_view(const struct model_endpoint *e, struct model_endpoint_view *out)
{
    enum model_peer_state peer;

    memset(out, 0, sizeof(*out));
    out->host = (e->host.s != NULL && e->host.s[0] != '\0') ? e->host.s : NULL;
    out->host_glob = out->host != NULL ? e->host_glob : NULL;
    out->host_is_ip = out->host != NULL && e->host_is_ip;
    out->host_ip = e->host_ip;
    out->ports = e->ports;
    out->nports = e->nports;
    out->path_scope = e->path_glob;
    out->proto = e->proto;
    out->tls_skip = e->tls_skip;
    out->enforce = e->enforce;
    out->allow_encoded_slash = e->allow_encoded_slash;
    out->advisor_proposed = e->advisor_proposed;
    out->target_sandbox = (e->target_sandbox.s != NULL && e->target_sandbox.s[0] != '\0')
                              ? e->target_sandbox.s
                              : NULL;
    out->cidrs = e->cidrs;
    out->ncidrs = e->ncidrs;
    peer = model_endpoint_peer_state(e);
    /* the prover never assumes the test switch: loopback-only admits nothing */
    out->unresolved = peer == MODEL_PEER_UNRESOLVED || peer == MODEL_PEER_LOOPBACK;
    out->fp = e->fp;
    out->fplen = e->fplen;
    out->fphash = e->fphash;
    out->nallow = e->neff_rules;
    out->ndeny = e->ndeny;
    out->mcp_profile = e->proto == MODEL_PROTO_MCP && e->mcp_allow_all_known_methods;
    out->rpc_tool_narrowed = e->rpc_tool_narrowed;
}

void model_endpoint_view_host(const struct model_endpoint *e, struct model_endpoint_view *out)
{
    memset(out, 0, sizeof(*out));
    out->host = (e->host.s != NULL && e->host.s[0] != '\0') ? e->host.s : NULL;
    out->host_is_ip = out->host != NULL && e->host_is_ip;
    out->host_ip = e->host_ip;
    out->ports = e->ports;
    out->nports = e->nports;
    out->fphash = e->fphash;
}

static void rule_view(const struct model_l7rule *r, struct model_l7rule_view *out)
{
    memset(out, 0, sizeof(*out));
    out->method = r->method.s;
    out->path = r->path_glob;
    out->nquery = r->nquery;
    out->has_other = r->command.s != NULL || r->operation_type.s != NULL ||
                     r->operation_name.s != NULL || r->fields.n > 0 || r->tool.s != NULL ||
                     r->params != NULL;
    out->gql_types = r->gql_types;
    out->gql_name = r->operation_name.s != NULL ? r->name_glob : NULL;
    out->gql_nfields = r->field_globs != NULL ? r->fields.n : 0;
    out->gql_fields = (const struct model_glob *const *)r->field_globs;
    if (r->gql_types != 0 && r->operation_name.s != NULL && r->name_glob == NULL) {
        out->gql_types = 0x80; /* not compiled: matches nothing */
    }
    out->rpc_method_glob = r->rpc_method_glob;
    out->rpc_ntools = model_l7rule_ntools(r);
    out->rpc_tools = (const struct model_glob *const *)r->tool_globs;
}

void model_endpoint_allow_rule(const struct model_endpoint *e, size_t i,
                               struct model_l7rule_view *out)
{
    rule_view(&e->eff_rules[i], out);
}

void model_endpoint_deny_rule(const struct model_endpoint *e, size_t i,
                              struct model_l7rule_view *out)
{
    rule_view(&e->deny_rules[i], out);
}

void model_endpoint_rule_query(const struct model_endpoint *e, bool deny, size_t i, size_t j,
                               struct model_query_view *out)
{
    const struct model_l7rule *r = deny ? &e->deny_rules[i] : &e->eff_rules[i];
    const struct model_query *q = &r->query[j];

    out->key = q->key.s != NULL ? q->key.s : "";
    out->nglobs = q->globs.n;
    out->globs = (const struct model_glob *const *)q->compiled;
}

const struct model_glob *model_rule_binary_glob(const struct model_rule *r, size_t i)
{
    return r->binaries[i].glob;
}

const char *model_rule_fp(const struct model_rule *r, size_t *len, uint64_t *hash)
{
    *len = r->fplen;
    *hash = r->fphash;
    return r->fp;
}

/* ---------------------------------------------------------------------------
 * Fingerprint: a length-prefixed field dump, so no value can forge a
 * separator. Built with plain appends (no printf): the prover fingerprints
 * every endpoint of both policies on each proof.
 * ------------------------------------------------------------------------- */

static pv_result fp_num(struct pv_dynbuf *b, char tag, uint64_t v) PV_WUR;
static pv_result fp_num(struct pv_dynbuf *b, char tag, uint64_t v)
{
    char tmp[24];
    size_t n = sizeof(tmp);

    tmp[--n] = ';';
    do {
        tmp[--n] = (char)('0' + v % 10);
        v /= 10;
    } while (v > 0);
    tmp[--n] = tag;
    return pv_dynbuf_add(b, tmp + n, sizeof(tmp) - n);
}

static pv_result fp_str(struct pv_dynbuf *b, char tag, const char *s) PV_WUR;
static pv_result fp_str(struct pv_dynbuf *b, char tag, const char *s)
{
    size_t len;

    if (s == NULL) {
        char t[2] = {tag, '-'};

        return pv_dynbuf_add(b, t, 2);
    }
    len = strlen(s);
    PV_GUARD(fp_num(b, tag, len));
    return pv_dynbuf_add(b, s, len);
}

static pv_result fp_list(struct pv_dynbuf *b, char tag, const struct model_strlist *l) PV_WUR;
static pv_result fp_list(struct pv_dynbuf *b, char tag, const struct model_strlist *l)
{
    PV_GUARD(fp_num(b, tag, l->n));
    for (size_t i = 0; i < l->n; i++) {
        PV_GUARD(fp_str(b, 's', l->v[i].s));
    }
    return PV_RESULT_OK;
}

static pv_result fp_rule(struct pv_dynbuf *b, const struct model_l7rule *r) PV_WUR;
static pv_result fp_rule(struct pv_dynbuf *b, const struct model_l7rule *r)
{
    PV_GUARD(fp_str(b, 'm', r->method.s));
    PV_GUARD(fp_str(b, 'p', r->path.s));
    if (r->command.s != NULL || r->operation_type.s != NULL || r->operation_name.s != NULL ||
        r->fields.n > 0 || r->tool.s != NULL) {
        PV_GUARD(fp_str(b, 'c', r->command.s));
        PV_GUARD(fp_str(b, 'o', r->operation_type.s));
        PV_GUARD(fp_str(b, 'n', r->operation_name.s));
        PV_GUARD(fp_list(b, 'f', &r->fields));
        PV_GUARD(fp_str(b, 't', r->tool.s));
    }
    if (r->params != NULL) {
        char *js = json_dumps(r->params, JSON_SORT_KEYS | JSON_COMPACT);
        pv_result res;

        PV_ENSURE(js != NULL, PV_ERR_NOMEM);
        res = fp_str(b, 'a', js);
        free(js);
        PV_GUARD(res);
    }
    PV_GUARD(fp_num(b, 'q', r->nquery));
    for (size_t i = 0; i < r->nquery; i++) {
        PV_GUARD(fp_str(b, 'k', r->query[i].key.s));
        PV_GUARD(fp_num(b, 'F', (uint64_t)r->query[i].form));
        PV_GUARD(fp_list(b, 'g', &r->query[i].globs));
    }
    return pv_dynbuf_addc(b, '}');
}

/* One rule list in a canonical order, each distinct rule once: allow rules
 * are a union and deny rules are a union, so neither order nor a repeat
 * changes what an endpoint grants (docs/semantics.md#grants-once). */
struct fp_span {
    size_t off;
    size_t len;
    const char *base;
};

static int fp_span_cmp(const void *pa, const void *pb)
{
    const struct fp_span *a = pa;
    const struct fp_span *b = pb;

    if (a->len != b->len) {
        return a->len < b->len ? -1 : 1;
    }
    return memcmp(a->base + a->off, b->base + b->off, a->len);
}

static pv_result fp_rules(struct pv_dynbuf *b, char tag, const struct model_l7rule *rules,
                          size_t n) PV_WUR;
static pv_result fp_rules(struct pv_dynbuf *b, char tag, const struct model_l7rule *rules, size_t n)
{
    PV_DEFER(struct fp_span * sp, pv_free_p) = NULL;
    struct pv_dynbuf tmp;
    size_t nuniq = 0;
    pv_result r = PV_RESULT_OK;

    if (n < 2) {
        PV_GUARD(fp_num(b, tag, n));
        return n == 1 ? fp_rule(b, &rules[0]) : PV_RESULT_OK;
    }
    sp = pv_calloc(n, sizeof(*sp));
    PV_GUARD_PTR(sp);
    pv_dynbuf_init(&tmp, 16u * 1024u * 1024u);
    for (size_t i = 0; pv_ok(r) && i < n; i++) {
        sp[i].off = tmp.len;
        r = fp_rule(&tmp, &rules[i]);
        sp[i].len = tmp.len - sp[i].off;
    }
    for (size_t i = 0; i < n; i++) {
        sp[i].base = tmp.buf;
    }
    if (pv_ok(r)) {
        qsort(sp, n, sizeof(*sp), fp_span_cmp);
        for (size_t i = 0; i < n; i++) {
            nuniq += i == 0 || fp_span_cmp(&sp[i - 1], &sp[i]) != 0;
        }
        r = fp_num(b, tag, nuniq);
    }
    for (size_t i = 0; pv_ok(r) && i < n; i++) {
        if (i == 0 || fp_span_cmp(&sp[i - 1], &sp[i]) != 0) {
            r = pv_dynbuf_add(b, tmp.buf + sp[i].off, sp[i].len);
        }
    }
    pv_dynbuf_free(&tmp);
    return r;
}

static pv_result fp_endpoint(struct pv_dynbuf *b, const struct model_endpoint *e) PV_WUR;
static pv_result fp_endpoint(struct pv_dynbuf *b, const struct model_endpoint *e)
{
    /* No protocol and `tcp` are one L4 route: TLS handling and enforcement
     * decide nothing there (docs/semantics.md#tls-skip, #grant). */
    bool l4 = !model_protocol_is_l7(e->proto);
    uint64_t flags = (uint64_t)(e->tls_skip && !l4) | (uint64_t)(e->enforce && !l4) << 1 |
                     (uint64_t)e->allow_encoded_slash << 2 | (uint64_t)e->advisor_proposed << 3 |
                     (uint64_t)e->websocket_credential_rewrite << 4 |
                     (uint64_t)e->request_body_credential_rewrite << 5 |
                     (uint64_t)e->allow_uninspected_credentials << 6 |
                     (uint64_t)model_endpoint_rpc_strict_tools(e) << 7 |
                     (uint64_t)e->mcp_allow_all_known_methods << 8;
    /* A scope of `**` holds every canonical path: no scope (#path-glob). */
    const char *scope = e->path.s;

    if (scope != NULL && (scope[0] == '\0' || strcmp(scope, "**") == 0)) {
        scope = NULL;
    }
    PV_GUARD(fp_str(b, 'h', (e->host.s != NULL && e->host.s[0] != '\0') ? e->host.s : NULL));
    PV_GUARD(fp_num(b, 'P', e->nports));
    for (size_t i = 0; i < e->nports; i++) {
        PV_GUARD(fp_num(b, ',', e->ports[i]));
    }
    PV_GUARD(fp_str(b, 's', scope));
    PV_GUARD(fp_num(b, 'r', (uint64_t)(l4 ? MODEL_PROTO_NONE : e->proto)));
    PV_GUARD(fp_num(b, 'b', flags));
    PV_GUARD(fp_str(b, 'T', e->target_sandbox.s));
    PV_GUARD(fp_num(b, 'i', e->ncidrs));
    for (size_t i = 0; i < e->ncidrs; i++) {
        static const char hex[] = "0123456789abcdef";
        char h[32];

        for (size_t k = 0; k < 16; k++) {
            h[2 * k] = hex[e->cidrs[i].net.b[k] >> 4];
            h[2 * k + 1] = hex[e->cidrs[i].net.b[k] & 15];
        }
        PV_GUARD(pv_dynbuf_add(b, h, sizeof(h)));
        PV_GUARD(fp_num(b, '/', e->cidrs[i].prefix));
    }
    PV_GUARD(fp_rules(b, 'A', e->eff_rules, e->neff_rules));
    PV_GUARD(fp_rules(b, 'D', e->deny_rules, e->ndeny));
    /* A registry under allow_registered decides hash-only operations
     * (docs/semantics.md#graphql-persisted); under deny it decides nothing,
     * and body limits never change a decision: both are left out then. */
    if (e->persisted_queries.s != NULL && strcmp(e->persisted_queries.s, "allow_registered") == 0) {
        PV_GUARD(fp_num(b, 'Q', e->ngql_persisted));
        for (size_t i = 0; i < e->ngql_persisted; i++) {
            const struct model_gql_persisted *g = &e->gql_persisted[i];

            PV_GUARD(fp_str(b, 'k', g->id.s));
            PV_GUARD(fp_str(b, 'o', g->operation_type.s));
            PV_GUARD(fp_str(b, 'n', g->operation_name.s));
            PV_GUARD(fp_list(b, 'f', &g->fields));
        }
    }
    return PV_RESULT_OK;
}

pv_result model_endpoint_fingerprint_append(const struct model_endpoint *e, struct pv_dynbuf *b)
{
    return fp_endpoint(b, e);
}

char *model_endpoint_fingerprint(const struct model_endpoint *e, size_t *len)
{
    struct pv_dynbuf b;

    pv_dynbuf_init(&b, 16u * 1024u * 1024u);
    if (!pv_ok(fp_endpoint(&b, e))) {
        pv_dynbuf_free(&b);
        return NULL;
    }
    return pv_dynbuf_take(&b, len);
}

pv_result model_sha256_hex(const void *buf, size_t len, char out[65])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    static const char hex[] = "0123456789abcdef";

    PV_GUARD_OSSL(EVP_Digest(buf, len, md, &mdlen, EVP_sha256(), NULL), PV_ERR_INTERNAL);
    PV_ENSURE(mdlen == 32, PV_ERR_INTERNAL);
    for (unsigned int i = 0; i < mdlen; i++) {
        out[2 * i] = hex[md[i] >> 4];
        out[2 * i + 1] = hex[md[i] & 15];
    }
    out[64] = '\0';
    return PV_RESULT_OK;
}
