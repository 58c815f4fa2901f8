/* SPDX-License-Identifier: Apache-2.0 */
/* model_proposal.c - policy.local proposals: parse and validate
 *
 * model_proposal_load() parses the body an agent POSTs to policy.local (JSON,
 * one or more addRule operations) with the reference's validation messages.
 * Every rule is walked by the shared schema walker (model_schema.c) and
 * validated on its own, so problems carry the proposal's file:line:col.
 * Endpoint keys an agent may not set are refused with their own message.
 * model_merge.c applies a loaded proposal to a policy.
 *
 * Invariants: a proposal rule is validated (ports folded and sorted, hosts
 * normalised, methods upper-cased) and its key is the resolved rule name.
 */
#include "config.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/pv_file.h"
#include "common/pv_text.h"
#include "model/model_int.h"

static const struct model_mark no_mark = {0, 0};

static bool str_empty(const char *s)
{
    return s == NULL || s[0] == '\0';
}

static bool str_eq(const char *a, const char *b)
{
    return strcmp(a != NULL ? a : "", b != NULL ? b : "") == 0;
}

/* "unknown field 'k' in <where>", the wording every reader uses. */
static void unknown_key(struct model_diags *d, const char *file, const struct model_node *k,
                        const char *where)
{
    const struct model_node_ctx c = {file, d};
    model_node_unknown_key(&c, k, where);
}

/* Endpoint keys that the policy schema knows but an agent may not set: they
 * widen credential handling, carry protocol contracts the merge does not
 * reconcile (GraphQL, JSON-RPC, MCP), or are set by the merge or by
 * composition (resolved_ips: a proposal names target_sandbox instead). The
 * reference forces them off; proviso refuses them so the agent learns why. */
static const char *const refused_endpoint_keys[] = {
    "advisor_proposed",
    "allow_uninspected_credentials",
    "websocket_credential_rewrite",
    "request_body_credential_rewrite",
    "credential_signing",
    "signing_service",
    "signing_region",
    "credential_binding",
    "resolved_ips",
    "persisted_queries",
    "graphql_persisted_queries",
    "graphql_max_body_bytes",
    "json_rpc",
    "mcp",
    NULL,
};

static size_t refuse_endpoint_keys(struct model_diags *d, const char *file,
                                   const struct model_node *rule)
{
    const struct model_node *eps = model_node_member(rule, "endpoints");
    size_t bad = 0;

    if (eps == NULL || eps->kind != MODEL_NODE_SEQ) {
        return 0;
    }
    for (size_t i = 0; i < eps->nitems; i++) {
        const struct model_node *ep = eps->items[i];
        if (ep->kind != MODEL_NODE_MAP) {
            continue;
        }
        for (size_t k = 0; k + 1 < ep->nitems; k += 2) {
            for (size_t j = 0; refused_endpoint_keys[j] != NULL; j++) {
                if (model_node_key_is(ep->items[k], refused_endpoint_keys[j])) {
                    model_node_diag(d, file, ep->items[k]->mark,
                                    "endpoint.%s is not accepted in proposals",
                                    refused_endpoint_keys[j]);
                    bad++;
                }
            }
        }
    }
    return bad;
}

/* Trimmed copy of a string node, NULL on NOMEM; "" when blank. */
static char *trimmed(const char *s, size_t n)
{
    while (n > 0 && (s[0] == ' ' || s[0] == '\t' || s[0] == '\r' || s[0] == '\n')) {
        s++;
        n--;
    }
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n')) {
        n--;
    }
    return pv_strndup(s, n);
}

static bool has_control(const char *s)
{
    for (; *s != '\0'; s++) {
        if ((unsigned char)*s < 0x20 || *s == 0x7f) {
            return true;
        }
    }
    return false;
}

/* Every string of a proposal is text a reviewer reads: rule names, the
 * intent summary, hosts, paths, binaries, methods and keys. A Unicode format
 * character (General Category Cf: bidi overrides and isolates, zero-width
 * characters, ...) shows nothing itself but can reorder or hide what is shown
 * beside it - U+202E in a rule name shows the endpoint next to it reversed -
 * so one anywhere, or text that is not strict UTF-8, refuses the proposal
 * with the field's path and the code point. 'path' is the field's path so
 * far; returns the number of diagnostics added. */
static size_t refuse_invisible(struct model_diags *d, const char *file, const struct model_node *n,
                               char *path, size_t cap)
{
    size_t used = strlen(path);
    size_t bad = 0;

    if (n->kind == MODEL_NODE_SCALAR) {
        uint32_t cp = 0;
        size_t off = 0;
        switch (pv_text_check((const unsigned char *)n->scalar, n->scalar_len, &cp, &off)) {
        case PV_TEXT_OK:
            return 0;
        case PV_TEXT_BAD_UTF8:
            model_node_diag(d, file, n->mark, "%s is not valid UTF-8 (byte %zu)",
                            path[0] != '\0' ? path : "proposal", off);
            return 1;
        case PV_TEXT_FORMAT_CHAR:
            model_node_diag(d, file, n->mark, "%s contains U+%04X (a Unicode format character)",
                            path[0] != '\0' ? path : "proposal", (unsigned)cp);
            return 1;
        }
        return 1;
    }
    for (size_t i = 0; i < n->nitems; i++) {
        const struct model_node *item = n->items[i];
        if (n->kind == MODEL_NODE_MAP && i % 2 == 0) {
            char key[64];
            /* a key is checked as the text of its map, then names the value */
            bad += refuse_invisible(d, file, item, path, cap);
            model_node_printable(key, sizeof(key), item->scalar != NULL ? item->scalar : "",
                                 item->scalar != NULL ? item->scalar_len : 0);
            snprintf(path + used, cap - used, "%s%s", used > 0 ? "." : "", key);
            continue;
        }
        if (n->kind == MODEL_NODE_SEQ) {
            snprintf(path + used, cap - used, "[%zu]", i);
        }
        bad += refuse_invisible(d, file, item, path, cap);
        path[used] = '\0';
    }
    path[used] = '\0';
    return bad;
}

static void proposal_free_ops(struct model_proposal *pr)
{
    for (size_t i = 0; i < pr->nops; i++) {
        free(pr->ops[i].rule_name);
        model_rule_clear(&pr->ops[i].rule);
    }
    free(pr->ops);
    pr->ops = NULL;
    pr->nops = 0;
}

void model_proposal_free(struct model_proposal *pr)
{
    if (pr == NULL) {
        return;
    }
    proposal_free_ops(pr);
    free(pr->file);
    free(pr->intent_summary);
    free(pr);
}

/* Dedupe a rule's lists the way the reference normalises an AddRule:
 * binaries by path, allow and deny rules, allowed_ips. */
static void rule_dedupe(struct model_rule *r)
{
    size_t u = 0;
    for (size_t i = 0; i < r->nbinaries; i++) {
        size_t j = 0;
        while (j < u && !str_eq(r->binaries[j].path.s, r->binaries[i].path.s)) {
            j++;
        }
        if (j < u) {
            r->binaries[j].harness = r->binaries[j].harness && r->binaries[i].harness;
            model_sval_clear(&r->binaries[i].path);
            model_glob_free(r->binaries[i].glob);
            r->binaries[i].glob = NULL;
            continue;
        }
        if (u != i) {
            r->binaries[u] = r->binaries[i];
            memset(&r->binaries[i], 0, sizeof(r->binaries[i]));
        }
        u++;
    }
    r->nbinaries = u;
    for (size_t e = 0; e < r->nendpoints; e++) {
        struct model_endpoint *ep = &r->endpoints[e];
        struct {
            struct model_l7rule *v;
            size_t *n;
        } lists[2] = {{ep->rules, &ep->nrules}, {ep->deny_rules, &ep->ndeny}};
        for (size_t l = 0; l < 2; l++) {
            u = 0;
            for (size_t i = 0; i < *lists[l].n; i++) {
                if (model_l7rules_contain(lists[l].v, u, &lists[l].v[i])) {
                    model_l7rule_clear(&lists[l].v[i]);
                    continue;
                }
                if (u != i) {
                    lists[l].v[u] = lists[l].v[i];
                    memset(&lists[l].v[i], 0, sizeof(lists[l].v[i]));
                }
                u++;
            }
            *lists[l].n = u;
        }
        u = 0;
        for (size_t i = 0; i < ep->allowed_ips.n; i++) {
            bool dup = false;
            for (size_t j = 0; j < u && !dup; j++) {
                dup = str_eq(ep->allowed_ips.v[j].s, ep->allowed_ips.v[i].s);
            }
            if (dup) {
                model_sval_clear(&ep->allowed_ips.v[i]);
                continue;
            }
            if (u != i) {
                ep->allowed_ips.v[u] = ep->allowed_ips.v[i];
                memset(&ep->allowed_ips.v[i], 0, sizeof(ep->allowed_ips.v[i]));
            }
            u++;
        }
        ep->allowed_ips.n = u;
    }
}

/* Validate one proposal rule on its own, in a "version: 1" policy named after
 * the proposal file, so that every problem has the proposal's location. On
 * success the rule comes back normalised. */
static bool rule_validate_alone(const char *file, struct model_rule *rule,
                                struct model_diags *diags)
{
    struct model_policy *tmp = pv_calloc(1, sizeof(*tmp));
    bool ok;

    if (tmp == NULL) {
        model_node_diag(diags, file, no_mark, "%s", pv_strerror(PV_ERR_NOMEM));
        return false;
    }
    tmp->rules = pv_calloc(1, sizeof(tmp->rules[0]));
    tmp->file = pv_strdup(file);
    if (tmp->rules == NULL || tmp->file == NULL) {
        model_policy_free(tmp);
        model_node_diag(diags, file, no_mark, "%s", pv_strerror(PV_ERR_NOMEM));
        return false;
    }
    tmp->has_version = true;
    tmp->version = 1;
    tmp->rules[0] = *rule;
    tmp->nrules = 1;
    ok = model_policy_validate(tmp, diags);
    *rule = tmp->rules[0];
    memset(&tmp->rules[0], 0, sizeof(tmp->rules[0]));
    tmp->nrules = 0;
    model_policy_free(tmp);
    return ok;
}

/* The policy.local shape checks, reference wording and order. */
static size_t check_rule_shape(struct model_diags *d, const char *file, const struct model_rule *r,
                               struct model_mark rule_mark)
{
    size_t bad = 0;

    if (r->nendpoints == 0) {
        model_node_diag(d, file, rule_mark, "rule.endpoints must contain at least one endpoint");
        return 1;
    }
    for (size_t i = 0; i < r->nendpoints; i++) {
        const struct model_endpoint *e = &r->endpoints[i];
        bool has_port = false;
        struct model_mark em = e->mark.line != 0 ? e->mark : rule_mark;

        /* a peer sandbox stands in for the host (docs/semantics.md#target-sandbox) */
        if (str_empty(e->host.s) && str_empty(e->target_sandbox.s)) {
            model_node_diag(d, file, em, "endpoint.host is required");
            bad++;
        }
        for (size_t j = 0; j < e->nports; j++) {
            has_port = has_port || e->ports[j] != 0;
        }
        if (!has_port) {
            model_node_diag(d, file, em, "endpoint.port or endpoint.ports is required");
            bad++;
        }
        for (size_t j = 0; j < e->nrules; j++) {
            const struct model_l7rule *l = &e->rules[j];
            if (l->path.s != NULL && strchr(l->path.s, '?') != NULL) {
                model_node_diag(d, file, l->path.mark.line != 0 ? l->path.mark : em,
                                "L7 allow paths must not include query strings");
                bad++;
            }
        }
    }
    return bad;
}

/* long: one addRule operation read in schema order (the map, the rule, its name, its checks); each
 * step adds its diagnostic and stops */
static void load_op(struct model_proposal *pr, struct model_proposal_op *op,
                    const struct model_node *opn, struct model_diags *d)
{
    const char *file = pr->file;
    const struct model_node *add = NULL;
    const struct model_node *name_node = NULL;
    const struct model_node *rule_node = NULL;
    size_t before = d->n;
    char *name = NULL;

    op->mark = opn->mark;
    if (opn->kind == MODEL_NODE_MAP) {
        for (size_t k = 0; k + 1 < opn->nitems; k += 2) {
            if (model_node_key_is(opn->items[k], "addRule") && add == NULL) {
                add = opn->items[k + 1];
            } else {
                add = NULL;
                break;
            }
        }
    }
    if (add == NULL || add->kind != MODEL_NODE_MAP) {
        model_node_diag(
            d, file, opn->mark,
            "this MVP accepts `addRule` operations; submit a full narrow NetworkPolicyRule");
        return;
    }
    op->mark = add->mark;
    for (size_t k = 0; k + 1 < add->nitems; k += 2) {
        const struct model_node *key = add->items[k];
        const struct model_node *val = add->items[k + 1];
        if (model_node_key_is(key, "ruleName")) {
            if (val->kind != MODEL_NODE_NULL && !model_node_is_string(val)) {
                model_node_diag(d, file, val->mark, "addRule.ruleName must be a string");
                continue;
            }
            name_node = val->kind == MODEL_NODE_NULL ? NULL : val;
        } else if (model_node_key_is(key, "rule")) {
            rule_node = val;
        } else {
            unknown_key(d, file, key, "addRule");
        }
    }
    if (rule_node == NULL || rule_node->kind != MODEL_NODE_MAP) {
        model_node_diag(d, file, rule_node != NULL ? rule_node->mark : add->mark,
                        "addRule.rule must be a NetworkPolicyRule object");
        return;
    }
    if (d->n != before || refuse_endpoint_keys(d, file, rule_node) > 0) {
        return;
    }
    if (!pv_ok(model_schema_rule(file, rule_node, &op->rule, d)) || d->n != before) {
        if (d->n == before) {
            model_node_diag(d, file, rule_node->mark, "%s", pv_strerror(pv_errno));
        }
        return;
    }
    if (check_rule_shape(d, file, &op->rule, rule_node->mark) > 0) {
        return;
    }

    /* The rule name: trimmed ruleName, else rule.name. */
    if (name_node != NULL && memchr(name_node->scalar, '\0', name_node->scalar_len) != NULL) {
        model_node_diag(d, file, name_node->mark, "rule name must not contain control characters");
        return;
    }
    if (name_node != NULL) {
        name = trimmed(name_node->scalar, name_node->scalar_len);
        if (name == NULL) {
            model_node_diag(d, file, add->mark, "%s", pv_strerror(PV_ERR_NOMEM));
            return;
        }
        if (name[0] == '\0') {
            PV_SAFE_FREE(name);
        }
    }
    if (name == NULL && op->rule.name.s != NULL) {
        name = trimmed(op->rule.name.s, strlen(op->rule.name.s));
        if (name == NULL) {
            model_node_diag(d, file, add->mark, "%s", pv_strerror(PV_ERR_NOMEM));
            return;
        }
        if (name[0] == '\0') {
            PV_SAFE_FREE(name);
        }
    }
    if (name == NULL) {
        model_node_diag(d, file, add->mark, "addRule.ruleName or rule.name is required");
        return;
    }
    if (has_control(name)) {
        free(name);
        model_node_diag(d, file, name_node != NULL ? name_node->mark : add->mark,
                        "rule name must not contain control characters");
        return;
    }
    if (model_key_is_provider(name)) {
        char buf[96];
        model_node_printable(buf, sizeof(buf), name, strlen(name));
        free(name);
        model_node_diag(d, file, name_node != NULL ? name_node->mark : add->mark,
                        "chunk '%s' uses reserved '_provider_' rule-name prefix", buf);
        return;
    }
    op->rule_name = name;
    op->rule.key = pv_strdup(name);
    if (op->rule.key == NULL) {
        model_node_diag(d, file, add->mark, "%s", pv_strerror(PV_ERR_NOMEM));
        return;
    }
    /* An empty rule.name is filled in from the resolved name. */
    if (str_empty(op->rule.name.s)) {
        free(op->rule.name.s);
        op->rule.name.s = pv_strdup(name);
        if (op->rule.name.s == NULL) {
            model_node_diag(d, file, add->mark, "%s", pv_strerror(PV_ERR_NOMEM));
            return;
        }
    }
    if (!rule_validate_alone(file, &op->rule, d)) {
        if (d->n == before) {
            /* every rejection has its diagnostic: this is an allocation failure */
            model_node_diag(d, file, add->mark, "%s", pv_strerror(PV_ERR_NOMEM));
        }
        return;
    }
    rule_dedupe(&op->rule);
}

static bool load_top(struct model_proposal *pr, const struct model_node *root,
                     const struct model_node **ops, struct model_diags *d)
{
    const char *file = pr->file;
    size_t before = d->n;

    *ops = NULL;
    if (root->kind != MODEL_NODE_MAP) {
        model_node_diag(d, file, root->mark, "proposal must be a JSON object");
        return false;
    }
    for (size_t k = 0; k + 1 < root->nitems; k += 2) {
        const struct model_node *key = root->items[k];
        const struct model_node *val = root->items[k + 1];
        if (model_node_key_is(key, "intent_summary")) {
            if (val->kind == MODEL_NODE_NULL) {
                continue;
            }
            if (!model_node_is_string(val)) {
                model_node_diag(d, file, val->mark, "intent_summary must be a string");
                continue;
            }
            pr->intent_summary = pv_strndup(val->scalar, val->scalar_len);
            if (pr->intent_summary == NULL) {
                model_node_diag(d, file, val->mark, "%s", pv_strerror(PV_ERR_NOMEM));
            }
        } else if (model_node_key_is(key, "operations")) {
            if (val->kind != MODEL_NODE_SEQ && val->kind != MODEL_NODE_NULL) {
                model_node_diag(d, file, val->mark, "operations must be a list");
                continue;
            }
            *ops = val;
        } else {
            unknown_key(d, file, key, "proposal");
        }
    }
    if (d->n != before) {
        return false;
    }
    if (*ops == NULL || (*ops)->nitems == 0) {
        model_node_diag(d, file, *ops != NULL ? (*ops)->mark : root->mark,
                        "proposal requires at least one operation");
        return false;
    }
    if ((*ops)->nitems > MODEL_PROPOSAL_MAX_OPERATIONS) {
        model_node_diag(d, file, (*ops)->mark,
                        "proposal has %zu operations; at most %u are accepted", (*ops)->nitems,
                        (unsigned)MODEL_PROPOSAL_MAX_OPERATIONS);
        return false;
    }
    return true;
}

/* A proposal from its document tree: NULL with diagnostics on failure. */
static struct model_proposal *proposal_from_tree(const char *file, const struct model_node *root,
                                                 struct model_diags *diags, size_t before)
{
    struct model_proposal *pr;
    const struct model_node *ops = NULL;

    pr = pv_calloc(1, sizeof(*pr));
    if (pr == NULL || (pr->file = pv_strdup(file)) == NULL) {
        free(pr);
        model_node_diag(diags, file, no_mark, "%s", pv_strerror(PV_ERR_NOMEM));
        pv_errno = PV_ERR_NOMEM;
        return NULL;
    }
    {
        char path[256] = "";
        if (refuse_invisible(diags, file, root, path, sizeof(path)) > 0) {
            model_proposal_free(pr);
            pv_errno = PV_ERR_POLICY;
            return NULL;
        }
    }
    if (load_top(pr, root, &ops, diags)) {
        pr->ops = pv_calloc(ops->nitems, sizeof(pr->ops[0]));
        if (pr->ops == NULL) {
            model_node_diag(diags, file, no_mark, "%s", pv_strerror(PV_ERR_NOMEM));
        } else {
            pr->nops = ops->nitems;
            for (size_t i = 0; i < ops->nitems; i++) {
                load_op(pr, &pr->ops[i], ops->items[i], diags);
            }
        }
    }
    if (diags->n != before) {
        model_proposal_free(pr);
        pv_errno = PV_ERR_POLICY;
        return NULL;
    }
    return pr;
}

/* Read a bounded JSON document: NULL + diagnostic. */
static struct model_node *proposal_read(const char *file, const char *buf, size_t len,
                                        struct model_diags *diags)
{
    struct model_node *root;
    size_t before = diags->n;

    if (len > MODEL_MAX_POLICY_BYTES) {
        model_node_diag(diags, file, no_mark, "proposal is larger than %u bytes",
                        MODEL_MAX_POLICY_BYTES);
        pv_errno = PV_ERR_TOOBIG;
        return NULL;
    }
    root = model_json_read(file, buf != NULL ? buf : "", len, diags);
    if (root == NULL) {
        if (diags->n == before) {
            model_node_diag(diags, file, no_mark, "%s",
                            pv_strerror(pv_errno ? pv_errno : PV_ERR_PARSE));
        }
        pv_errno = PV_ERR_PARSE;
    }
    return root;
}

struct model_proposal *model_proposal_load(const char *file, const char *buf, size_t len,
                                           struct model_diags *diags)
{
    struct model_node *root;
    struct model_proposal *pr;
    size_t before;

    if (diags == NULL || (buf == NULL && len > 0)) {
        pv_errno = PV_ERR_NULL;
        return NULL;
    }
    if (file == NULL) {
        file = "<proposal>";
    }
    before = diags->n;
    root = proposal_read(file, buf, len, diags);
    if (root == NULL) {
        return NULL;
    }
    pr = proposal_from_tree(file, root, diags, before);
    model_node_free(root);
    return pr;
}

struct model_proposal *model_proposal_load_member(const char *file, const char *buf, size_t len,
                                                  const char *key, struct model_diags *diags)
{
    struct model_node *root;
    const struct model_node *part;
    struct model_proposal *pr;
    size_t before;

    if (diags == NULL || key == NULL || (buf == NULL && len > 0)) {
        pv_errno = PV_ERR_NULL;
        return NULL;
    }
    if (file == NULL) {
        file = "<proposal>";
    }
    before = diags->n;
    root = model_read_member(file, buf, len, key, diags, &part);
    if (root == NULL) {
        return NULL;
    }
    pr = proposal_from_tree(file, part, diags, before);
    model_node_free(root);
    return pr;
}

const char *model_proposal_intent(const struct model_proposal *pr)
{
    return pr == NULL ? NULL : pr->intent_summary;
}

size_t model_proposal_nops(const struct model_proposal *pr)
{
    return pr == NULL ? 0 : pr->nops;
}

const char *model_proposal_rule_name(const struct model_proposal *pr, size_t i)
{
    return (pr == NULL || i >= pr->nops) ? NULL : pr->ops[i].rule_name;
}

const struct model_rule *model_proposal_rule(const struct model_proposal *pr, size_t i)
{
    return (pr == NULL || i >= pr->nops) ? NULL : &pr->ops[i].rule;
}

/* ===========================================================================
 * One rule as a proposal, and one composition step
 * ========================================================================= */

char *model_proposal_text(const char *name, const json_t *rule, size_t *len)
{
    json_t *doc =
        json_pack("{s:[{s:{s:s,s:O}}]}", "operations", "addRule", "ruleName", name, "rule", rule);
    char *text;

    if (doc == NULL) {
        return NULL;
    }
    text = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(doc);
    if (text != NULL && len != NULL) {
        *len = strlen(text);
    }
    return text;
}

struct model_policy *model_policy_merge_rule(const struct model_policy *base, const char *name,
                                             const json_t *rule, struct model_diags *diags)
{
    size_t len = 0;
    char *text = model_proposal_text(name, rule, &len);
    struct model_proposal *pr =
        text != NULL ? model_proposal_load("proposal", text, len, diags) : NULL;
    struct model_policy *out = pr != NULL ? model_policy_merge(base, pr, true, diags) : NULL;

    model_proposal_free(pr);
    free(text);
    return out;
}

struct model_proposal *model_proposal_load_file(const char *path, struct model_diags *diags)
{
    struct model_proposal *pr;
    char err[PATH_MAX + 64];
    size_t len = 0;
    char *buf = NULL;
    pv_result r;

    if (path == NULL || diags == NULL) {
        pv_errno = PV_ERR_NULL;
        return NULL;
    }
    r = pv_file_read(path, MODEL_MAX_POLICY_BYTES, false, &buf, &len, err, sizeof(err));
    if (!pv_ok(r)) {
        model_node_diag(diags, path, (struct model_mark){0, 0}, "%s", pv_file_reason(path, err));
        pv_errno = r.err;
        return NULL;
    }
    pr = model_proposal_load(path, buf, len, diags);
    free(buf);
    return pr;
}
