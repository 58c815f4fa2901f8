/* SPDX-License-Identifier: Apache-2.0 */
/* model_policy.c - policy lifecycle: load coordinator, diagnostics, free, accessors
 *
 * model_policy_load() is the coordinator of the load pipeline: pick the
 * format, read the document into a node tree (model_yaml.c / model_json.c),
 * walk the tree into a policy (model_schema.c), validate (model_validate.c)
 * and compile (model_compile.c). Every step reports problems as diagnostics
 * with file:line:col; the first step that adds one ends the pipeline and the
 * load returns NULL, except that unknown fields alone still let validation
 * report, so one run shows every error it can. The clear functions release
 * everything a struct owns, including fields filled by compile, and leave
 * the struct zeroed so that a second clear is harmless.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/pv_dynbuf.h"
#include "common/pv_file.h"
#include "model/model_int.h"

/* A policy with thousands of problems is reported by its first ones. */
#define MAX_DIAGS 1000

/* ---------------------------------------------------------------------------
 * Diagnostics
 * ------------------------------------------------------------------------- */

struct model_diags *model_diags_new(void)
{
    return pv_calloc(1, sizeof(struct model_diags));
}

void model_diags_free(struct model_diags *d)
{
    if (d == NULL) {
        return;
    }
    for (size_t i = 0; i < d->n; i++) {
        free(d->v[i].file);
        free(d->v[i].msg);
        free(d->v[i].line);
    }
    free(d->v);
    free(d);
}

bool model_diags_nomem(const struct model_diags *d)
{
    const char *oom = pv_strerror(PV_ERR_NOMEM);
    size_t ol = strlen(oom);

    for (size_t i = 0; d != NULL && i < d->n; i++) {
        const char *m = d->v[i].msg;
        size_t ml = m != NULL ? strlen(m) : 0;

        /* the message, or its end ("cannot compile policy: out of memory") */
        if (ml >= ol && strcmp(m + ml - ol, oom) == 0 && (ml == ol || m[ml - ol - 1] == ' ')) {
            return true;
        }
    }
    return false;
}

size_t model_diags_count(const struct model_diags *d)
{
    return d == NULL ? 0 : d->n;
}

static pv_result diag_push(struct model_diags *d, const char *file, struct model_mark mark,
                           char *msg /* steals */)
{
    struct model_diag *slot;

    PV_ENSURE(msg != NULL, PV_ERR_NOMEM);
    /* One diagnostic is one line, whatever text (jansson's "near '...'",
     * an echoed host) it quotes from the input. */
    for (char *c = msg; *c != '\0'; c++) {
        if ((unsigned char)*c < 0x20 || *c == 0x7F) {
            *c = '?';
        }
    }
    /* Capacity doubles at every power of two, so no separate cap field. */
    if (d->n == 0 || (d->n & (d->n - 1)) == 0) {
        size_t ncap = d->n == 0 ? 4 : d->n * 2;
        struct model_diag *nv = pv_realloc(d->v, ncap * sizeof(*nv));
        if (nv == NULL) {
            free(msg);
            PV_BAIL(PV_ERR_NOMEM);
        }
        d->v = nv;
    }
    slot = &d->v[d->n];
    slot->file = pv_strdup(file != NULL ? file : "<input>");
    if (slot->file == NULL) {
        free(msg);
        PV_BAIL(PV_ERR_NOMEM);
    }
    slot->mark = mark;
    slot->msg = msg;
    slot->line = NULL;
    d->n++;
    return PV_RESULT_OK;
}

pv_result model_diag_add(struct model_diags *d, const char *file, struct model_mark mark,
                         const char *fmt, ...)
{
    struct pv_dynbuf b;
    va_list ap;
    pv_result r;

    PV_ENSURE_REF(d);
    if (d->n > MAX_DIAGS) {
        return PV_RESULT_OK;
    }
    if (d->n == MAX_DIAGS) {
        pv_dynbuf_init(&b, 64);
        PV_GUARD(pv_dynbuf_addstr(&b, "too many errors; the rest are not reported"));
        return diag_push(d, file, (struct model_mark){0, 0}, pv_dynbuf_take(&b, NULL));
    }
    pv_dynbuf_init(&b, 4096);
    va_start(ap, fmt);
    r = pv_dynbuf_vprintf(&b, fmt, ap);
    va_end(ap);
    if (r.err == PV_ERR_TOOBIG) {
        /* Over-long message (a huge key echoed back): keep what fits. */
        pv_dynbuf_free(&b);
        pv_dynbuf_init(&b, 4096);
        PV_GUARD(pv_dynbuf_addstr(&b, "(message too long)"));
    } else if (!pv_ok(r)) {
        pv_dynbuf_free(&b);
        return r;
    }
    return diag_push(d, file, mark, pv_dynbuf_take(&b, NULL));
}

/* For paths where a failure to record the message leaves nothing better to
 * do: the caller still fails. */
static void diag(struct model_diags *d, const char *file, struct model_mark mark, const char *fmt,
                 ...) __attribute__((format(printf, 4, 5)));

static void diag(struct model_diags *d, const char *file, struct model_mark mark, const char *fmt,
                 ...)
{
    char buf[1024];
    va_list ap;

    va_start(ap, fmt);
    (void)vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (!pv_ok(model_diag_add(d, file, mark, "%s", buf))) {
        pv_errno = PV_ERR_NOMEM;
    }
}

const char *model_diags_line(struct model_diags *d, size_t i)
{
    struct model_diag *g;
    struct pv_dynbuf b;
    pv_result r;

    if (d == NULL || i >= d->n) {
        return NULL;
    }
    g = &d->v[i];
    if (g->line != NULL) {
        return g->line;
    }
    pv_dynbuf_init(&b, SIZE_MAX / 2);
    if (g->mark.line == 0) {
        r = pv_dynbuf_printf(&b, "%s: %s", g->file, g->msg);
    } else {
        r = pv_dynbuf_printf(&b, "%s:%u:%u: %s", g->file, (unsigned)g->mark.line,
                             (unsigned)g->mark.col, g->msg);
    }
    if (!pv_ok(r)) {
        pv_dynbuf_free(&b);
        return g->msg;
    }
    g->line = pv_dynbuf_take(&b, NULL);
    return g->line;
}

const char *model_diags_msg(const struct model_diags *d, size_t i)
{
    if (d == NULL || i >= d->n) {
        return NULL;
    }
    return d->v[i].msg;
}

/* ---------------------------------------------------------------------------
 * Node trees
 * ------------------------------------------------------------------------- */

void model_node_free(struct model_node *n)
{
    if (n == NULL) {
        return;
    }
    for (size_t i = 0; i < n->nitems; i++) {
        model_node_free(n->items[i]);
    }
    free(n->items);
    free(n->scalar);
    free(n);
}

/* ---------------------------------------------------------------------------
 * Clear functions
 * ------------------------------------------------------------------------- */

void model_sval_clear(struct model_sval *v)
{
    if (v == NULL) {
        return;
    }
    free(v->s);
    memset(v, 0, sizeof(*v));
}

void model_strlist_clear(struct model_strlist *l)
{
    if (l == NULL) {
        return;
    }
    for (size_t i = 0; i < l->n; i++) {
        model_sval_clear(&l->v[i]);
    }
    free(l->v);
    memset(l, 0, sizeof(*l));
}

static void query_clear(struct model_query *q)
{
    if (q->compiled != NULL) {
        for (size_t i = 0; i < q->globs.n; i++) {
            model_glob_free(q->compiled[i]);
        }
        free(q->compiled);
    }
    model_sval_clear(&q->key);
    model_strlist_clear(&q->globs);
    memset(q, 0, sizeof(*q));
}

void model_l7rule_clear(struct model_l7rule *r)
{
    if (r == NULL) {
        return;
    }
    model_sval_clear(&r->method);
    model_sval_clear(&r->path);
    model_sval_clear(&r->command);
    for (size_t i = 0; i < r->nquery; i++) {
        query_clear(&r->query[i]);
    }
    free(r->query);
    model_glob_free(r->name_glob);
    if (r->field_globs != NULL) {
        for (size_t i = 0; i < r->fields.n; i++) {
            model_glob_free(r->field_globs[i]);
        }
        free(r->field_globs);
    }
    model_sval_clear(&r->operation_type);
    model_sval_clear(&r->operation_name);
    model_strlist_clear(&r->fields);
    model_sval_clear(&r->tool);
    json_decref(r->params);
    model_glob_free(r->path_glob);
    memset(r, 0, sizeof(*r));
}

static void l7rules_free(struct model_l7rule *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        model_l7rule_clear(&v[i]);
    }
    free(v);
}

void model_endpoint_clear(struct model_endpoint *e)
{
    if (e == NULL) {
        return;
    }
    model_sval_clear(&e->host);
    free(e->ports);
    model_sval_clear(&e->path);
    model_sval_clear(&e->protocol);
    model_sval_clear(&e->tls);
    model_sval_clear(&e->enforcement);
    model_sval_clear(&e->access);
    l7rules_free(e->rules, e->nrules);
    l7rules_free(e->deny_rules, e->ndeny);
    model_strlist_clear(&e->allowed_ips);
    model_strlist_clear(&e->resolved_ips);
    free(e->cidrs);
    model_sval_clear(&e->persisted_queries);
    for (size_t i = 0; i < e->ngql_persisted; i++) {
        struct model_gql_persisted *g = &e->gql_persisted[i];
        model_sval_clear(&g->id);
        model_sval_clear(&g->operation_type);
        model_sval_clear(&g->operation_name);
        model_strlist_clear(&g->fields);
        free(g->op.fields);
    }
    free(e->gql_persisted);
    model_sval_clear(&e->credential_signing);
    model_sval_clear(&e->signing_service);
    model_sval_clear(&e->signing_region);
    model_sval_clear(&e->credential_binding_provider);
    model_sval_clear(&e->target_sandbox);
    model_glob_free(e->host_glob);
    model_glob_free(e->path_glob);
    free(e->fp);
    l7rules_free(e->eff_rules, e->neff_rules);
    memset(e, 0, sizeof(*e));
}

void model_rule_clear(struct model_rule *r)
{
    if (r == NULL) {
        return;
    }
    free(r->key);
    model_sval_clear(&r->name);
    for (size_t i = 0; i < r->nendpoints; i++) {
        model_endpoint_clear(&r->endpoints[i]);
    }
    free(r->endpoints);
    for (size_t i = 0; i < r->nbinaries; i++) {
        model_sval_clear(&r->binaries[i].path);
        model_glob_free(r->binaries[i].glob);
    }
    free(r->binaries);
    free(r->fp);
    memset(r, 0, sizeof(*r));
}

void model_policy_free(struct model_policy *p)
{
    if (p == NULL) {
        return;
    }
    free(p->file);
    model_strlist_clear(&p->fs_read_only);
    model_strlist_clear(&p->fs_read_write);
    model_sval_clear(&p->landlock_compat);
    model_sval_clear(&p->run_as_user);
    model_sval_clear(&p->run_as_group);
    for (size_t i = 0; i < p->nrules; i++) {
        model_rule_clear(&p->rules[i]);
    }
    free(p->rules);
    json_decref(p->middlewares);
    model_index_free(p->index);
    free(p);
}

/* ---------------------------------------------------------------------------
 * Loading
 * ------------------------------------------------------------------------- */

static enum model_format sniff_format(const char *buf, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        char c = buf[i];
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
            continue;
        }
        return c == '{' ? MODEL_FMT_JSON : MODEL_FMT_YAML;
    }
    return MODEL_FMT_YAML;
}

static struct model_node *read_document(const char *file, const char *buf, size_t len,
                                        enum model_format fmt, struct model_diags *diags)
{
    if (fmt == MODEL_FMT_AUTO) {
        fmt = sniff_format(buf, len);
    }
    switch (fmt) {
    case MODEL_FMT_JSON:
        return model_json_read(file, buf, len, diags);
    case MODEL_FMT_YAML:
    case MODEL_FMT_AUTO:
        return model_yaml_read(file, buf, len, diags);
    }
    return NULL;
}

/* Schema, validation and compilation of a document tree: NULL with at least
 * one diagnostic added after 'before' on failure. */
static struct model_policy *policy_from_tree(const char *file, const struct model_node *root,
                                             struct model_diags *diags, size_t before)
{
    struct model_policy *p = model_schema_policy_partial(file, root, diags);

    if (p == NULL || diags->n != before) {
        if (p != NULL && diags->n != before) {
            /* one run reports the typos and what validation finds too
             * ("access: readonly" beside "enforcment"); the load still fails */
            (void)model_policy_validate(p, diags);
        }
        model_policy_free(p);
        if (diags->n == before) {
            diag(diags, file, (struct model_mark){0, 0}, "%s", pv_strerror(PV_ERR_NOMEM));
        }
        pv_errno = PV_ERR_POLICY;
        return NULL;
    }
    if (!model_policy_validate(p, diags) || diags->n != before) {
        if (diags->n == before) {
            /* the validator reports every rejection: failing without a
             * diagnostic means an allocation failed */
            diag(diags, file, (struct model_mark){0, 0}, "%s", pv_strerror(PV_ERR_NOMEM));
        }
        model_policy_free(p);
        pv_errno = PV_ERR_POLICY;
        return NULL;
    }
    if (!pv_ok(model_policy_compile(p))) {
        int err = pv_errno ? pv_errno : PV_ERR_INTERNAL;
        diag(diags, file, (struct model_mark){0, 0}, "cannot compile policy: %s", pv_strerror(err));
        model_policy_free(p);
        pv_errno = err;
        return NULL;
    }
    return p;
}

/* Read a bounded document into a tree: NULL with a diagnostic on failure. */
static struct model_node *read_bounded(const char *file, const char *buf, size_t len,
                                       enum model_format fmt, struct model_diags *diags)
{
    struct model_node *root;
    size_t before = diags->n;

    if (len > MODEL_MAX_POLICY_BYTES) {
        diag(diags, file, (struct model_mark){0, 0}, "policy is larger than %u bytes",
             MODEL_MAX_POLICY_BYTES);
        pv_errno = PV_ERR_TOOBIG;
        return NULL;
    }
    root = read_document(file, buf != NULL ? buf : "", len, fmt, diags);
    if (root == NULL && diags->n == before) {
        diag(diags, file, (struct model_mark){0, 0}, "%s",
             pv_strerror(pv_errno ? pv_errno : PV_ERR_NOMEM));
    }
    return root;
}

struct model_policy *model_policy_load(const char *file, const char *buf, size_t len,
                                       enum model_format fmt, struct model_diags *diags)
{
    struct model_node *root;
    struct model_policy *p;
    size_t before;

    if (diags == NULL || (buf == NULL && len > 0)) {
        pv_errno = PV_ERR_NULL;
        return NULL;
    }
    if (file == NULL) {
        file = "<input>";
    }
    before = diags->n;
    root = read_bounded(file, buf, len, fmt, diags);
    if (root == NULL) {
        return NULL;
    }
    p = policy_from_tree(file, root, diags, before);
    model_node_free(root);
    return p;
}

struct model_node *model_read_member(const char *file, const char *buf, size_t len, const char *key,
                                     struct model_diags *diags, const struct model_node **part)
{
    struct model_node *root = read_bounded(file, buf, len, MODEL_FMT_AUTO, diags);

    if (root == NULL) {
        return NULL;
    }
    *part = model_node_member(root, key);
    if (*part == NULL) {
        diag(diags, file, root->mark, "document has no mapping key '%s'", key);
        model_node_free(root);
        pv_errno = PV_ERR_POLICY;
        return NULL;
    }
    return root;
}

struct model_policy *model_policy_load_member(const char *file, const char *buf, size_t len,
                                              const char *key, struct model_diags *diags)
{
    struct model_node *root;
    const struct model_node *part;
    struct model_policy *p;
    size_t before;

    if (diags == NULL || key == NULL || (buf == NULL && len > 0)) {
        pv_errno = PV_ERR_NULL;
        return NULL;
    }
    if (file == NULL) {
        file = "<input>";
    }
    before = diags->n;
    root = model_read_member(file, buf, len, key, diags, &part);
    if (root == NULL) {
        return NULL;
    }
    p = policy_from_tree(file, part, diags, before);
    model_node_free(root);
    return p;
}

struct model_policy *model_policy_load_file(const char *path, enum model_format fmt,
                                            struct model_diags *diags)
{
    struct model_policy *p;
    char err[PATH_MAX + 64];
    size_t len = 0;
    char *buf = NULL;
    pv_result r;

    if (path == NULL || diags == NULL) {
        pv_errno = PV_ERR_NULL;
        return NULL;
    }
    /* The one reader of user-named files (common/pv_file.h): the same
     * "FILE: reason" in every command and server. */
    r = pv_file_read(path, MODEL_MAX_POLICY_BYTES, false, &buf, &len, err, sizeof(err));
    if (!pv_ok(r)) {
        diag(diags, path, (struct model_mark){0, 0}, "%s", pv_file_reason(path, err));
        pv_errno = r.err;
        return NULL;
    }
    p = model_policy_load(path, buf, len, fmt, diags);
    free(buf);
    return p;
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
        diag(diags, path, (struct model_mark){0, 0}, "%s", pv_file_reason(path, err));
        pv_errno = r.err;
        return NULL;
    }
    pr = model_proposal_load(path, buf, len, diags);
    free(buf);
    return pr;
}

struct model_policy *model_policy_new_empty(void)
{
    static const char doc[] = "{\"version\": 1}";
    struct model_diags *d = model_diags_new();
    struct model_policy *p;

    if (d == NULL) {
        return NULL;
    }
    p = model_policy_load("<empty>", doc, sizeof(doc) - 1, MODEL_FMT_JSON, d);
    model_diags_free(d);
    return p;
}

/* ---------------------------------------------------------------------------
 * Accessors
 * ------------------------------------------------------------------------- */

size_t model_policy_nrules(const struct model_policy *p)
{
    return p == NULL ? 0 : p->nrules;
}

const struct model_rule *model_policy_rule(const struct model_policy *p, size_t i)
{
    if (p == NULL || i >= p->nrules) {
        return NULL;
    }
    return &p->rules[i];
}

const struct model_rule *model_policy_find_rule(const struct model_policy *p, const char *key)
{
    if (p == NULL || key == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < p->nrules; i++) {
        if (p->rules[i].key != NULL && strcmp(p->rules[i].key, key) == 0) {
            return &p->rules[i];
        }
    }
    return NULL;
}

const char *model_rule_key(const struct model_rule *r)
{
    return r == NULL ? NULL : r->key;
}

const char *model_rule_display_name(const struct model_rule *r)
{
    if (r == NULL) {
        return NULL;
    }
    if (r->name.s != NULL && r->name.s[0] != '\0') {
        return r->name.s;
    }
    return r->key;
}

size_t model_rule_nendpoints(const struct model_rule *r)
{
    return r == NULL ? 0 : r->nendpoints;
}

const struct model_endpoint *model_rule_endpoint(const struct model_rule *r, size_t i)
{
    if (r == NULL || i >= r->nendpoints) {
        return NULL;
    }
    return &r->endpoints[i];
}

size_t model_rule_nbinaries(const struct model_rule *r)
{
    return r == NULL ? 0 : r->nbinaries;
}

const char *model_rule_binary(const struct model_rule *r, size_t i)
{
    if (r == NULL || i >= r->nbinaries) {
        return NULL;
    }
    return r->binaries[i].path.s;
}
