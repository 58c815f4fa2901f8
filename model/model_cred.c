/* SPDX-License-Identifier: Apache-2.0 */
/* model_cred.c - credential sets and host-pattern overlap
 *
 * A credentials file is YAML or JSON: `credentials: [{name, type, scopes,
 * injected_via, target_hosts}]`, or the bare list. It is read into a node
 * tree (model_yaml.c / model_json.c) and walked here; unknown keys and wrong
 * types are errors at their file:line:col (the reference ignores unknown
 * keys; proviso does not, so a misspelt `target_host` cannot silently leave a
 * credential without targets). Every field but `name` is optional.
 *
 * The same file is the proxy's credentials store: `env` names the
 * placeholder key and `value` or `value_file` holds the secret
 * (docs/proxy.md#credentials-store). This loader accepts them but never
 * keeps or prints a secret: it checks their shape, hands them to the
 * caller's sink (the proxy's store) if there is one, and wipes them from
 * the node tree before freeing it.
 *
 * Target hosts are normalised at load (trim, one trailing dot stripped,
 * lower-case, IP literals in canonical text) and compiled as host globs
 * (docs/semantics.md#credentials). model_host_patterns_overlap() is the
 * reference's label-wise overlap test (docs/reference-compat.md#prover), kept exactly
 * for compatibility vectors; the prover decides overlap on automata.
 */
#include "config.h"

#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/pv_dynbuf.h"
#include "common/pv_file.h"
#include "model/model_int.h"

#define MAX_CRED_BYTES (1024u * 1024u)
#define MAX_TARGET_LEN 253
#define MAX_LABELS 256

struct cred_target {
    struct model_glob *glob; /* compiled, text is the normalised pattern */
    bool is_ip;              /* an exact IP literal: compared as an address */
    struct model_ip ip;
};

struct cred {
    char *name;
    char *type;
    char *injected_via;
    char *env; /* the placeholder key (openshell:resolve:env:KEY), not secret */
    /* The secret's nodes while the file is walked (borrowed from the node
     * tree, never copied here): handed to the loader's sink, then wiped. */
    const struct model_node *value;
    const struct model_node *value_file;
    struct model_strlist scopes;
    struct cred_target *targets;
    size_t ntargets;
    struct model_mark mark;
};

struct model_credset {
    struct cred *v;
    size_t n;
};

/* ===========================================================================
 * Helpers
 * ========================================================================= */

static void trim(const char **s, size_t *n)
{
    while (*n > 0 && ((*s)[0] == ' ' || (*s)[0] == '\t' || (*s)[0] == '\r' || (*s)[0] == '\n')) {
        (*s)++;
        (*n)--;
    }
    while (*n > 0 && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t' || (*s)[*n - 1] == '\r' ||
                      (*s)[*n - 1] == '\n')) {
        (*n)--;
    }
}

/* ===========================================================================
 * Loading
 * ========================================================================= */

static void cred_clear(struct cred *cr)
{
    free(cr->name);
    free(cr->type);
    free(cr->injected_via);
    free(cr->env);
    model_strlist_clear(&cr->scopes);
    for (size_t i = 0; i < cr->ntargets; i++) {
        model_glob_free(cr->targets[i].glob);
    }
    free(cr->targets);
    memset(cr, 0, sizeof(*cr));
}

void model_credset_free(struct model_credset *c)
{
    if (c == NULL) {
        return;
    }
    for (size_t i = 0; i < c->n; i++) {
        cred_clear(&c->v[i]);
    }
    free(c->v);
    free(c);
}

struct model_credset *model_credset_new_empty(void)
{
    return pv_calloc(1, sizeof(struct model_credset));
}

/*= docs/semantics.md#credentials
 *# A credential's `target_hosts` are host patterns (same syntax as endpoint
 *# hosts). */
static void add_target(struct model_walk *w, const struct model_node *v, struct cred *cr)
{
    char shown[96];
    char low[MAX_TARGET_LEN + 2];
    char canon[MAX_TARGET_LEN + 2];
    const char *s = v->scalar;
    size_t n = v->scalar_len;
    size_t outl = 0;
    const char *why = NULL;
    struct cred_target *t = &cr->targets[cr->ntargets];

    if (!model_node_is_string(v)) {
        model_walk_err(w, v->mark, "credential target host must be a string");
        return;
    }
    trim(&s, &n);
    model_node_printable(shown, sizeof(shown), s, n);
    if (n > 0 && s[n - 1] == '.') {
        n--;
    }
    if (n == 0) {
        model_walk_err(w, v->mark, "credential target host must not be empty");
        return;
    }
    if (n > MAX_TARGET_LEN) {
        model_walk_err(w, v->mark, "credential target host '%s' is longer than %u bytes", shown,
                       (unsigned)MAX_TARGET_LEN);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        low[i] = (ch >= 'A' && ch <= 'Z') ? (char)(ch - 'A' + 'a') : ch;
    }
    low[n] = '\0';
    if (memchr(low, '*', n) == NULL) {
        if (!model_host_normalize(low, n, canon, sizeof(canon), &outl, &t->is_ip, &t->ip)) {
            model_walk_err(w, v->mark, "invalid credential target host '%s'", shown);
            return;
        }
    } else {
        memcpy(canon, low, n + 1);
        outl = n;
        t->is_ip = false;
    }
    t->glob = model_glob_compile(MODEL_GLOB_HOST, canon, outl, &why);
    if (t->glob == NULL) {
        model_walk_err(w, v->mark, "invalid credential target host '%s': %s", shown,
                       why != NULL ? why : pv_strerror(pv_errno));
        return;
    }
    cr->ntargets++;
}

/* target_hosts: a list of host patterns. */
static void f_targets(struct model_walk *w, const struct model_field *f,
                      const struct model_node *key, const struct model_node *v, void *obj)
{
    struct cred *cr = obj;
    size_t n;
    struct cred_target *t = model_walk_items(w, f, v, sizeof(*t), cr->targets != NULL, &n);

    (void)key;
    if (t == NULL) {
        return;
    }
    cr->targets = t; /* add_target counts the targets it keeps */
    for (size_t i = 0; i < n; i++) {
        add_target(w, v->items[i], cr);
    }
}

/*= docs/proxy.md#credentials-store
 *# `env` names the placeholder key: `[A-Za-z_][A-Za-z0-9_]*`, at most 128
 *# bytes. */
bool model_cred_key_valid(const char *k, size_t n)
{
    if (k == NULL || n == 0 || n > MODEL_CRED_KEY_MAX) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        char ch = k[i];
        bool alpha = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || ch == '_';
        if (!alpha && !(i > 0 && ch >= '0' && ch <= '9')) {
            return false;
        }
    }
    return true;
}

static void f_env(struct model_walk *w, const struct model_field *f, const struct model_node *key,
                  const struct model_node *v, void *obj)
{
    struct cred *cr = obj;

    model_field_cstr(w, f, key, v, obj);
    if (cr->env != NULL && !model_cred_key_valid(cr->env, strlen(cr->env))) {
        char shown[96];
        model_node_printable(shown, sizeof(shown), cr->env, strlen(cr->env));
        model_walk_err(w, v->mark,
                       "credential env '%s' must match [A-Za-z_][A-Za-z0-9_]* (at most %u bytes)",
                       shown, (unsigned)MODEL_CRED_KEY_MAX);
    }
}

/* value / value_file: checked for shape only, never copied, never printed
 * (a diagnostic names the field, not its text). */
static void f_secret(struct model_walk *w, const struct model_field *f,
                     const struct model_node *key, const struct model_node *v, void *obj)
{
    struct cred *cr = obj;

    (void)key;
    if (!model_node_is_string(v) || v->scalar_len == 0 ||
        memchr(v->scalar, '\0', v->scalar_len) != NULL) {
        model_walk_err(w, v->mark, "credential %s must be a non-empty string without NUL", f->key);
        return;
    }
    if (strcmp(f->key, "value") == 0) {
        cr->value = v;
    } else {
        cr->value_file = v;
    }
}

static const struct model_field cred_fields[] = {
    {"name", model_field_cstr, offsetof(struct cred, name)},
    {"type", model_field_cstr, offsetof(struct cred, type)},
    {"scopes", model_field_strlist, offsetof(struct cred, scopes)},
    {"injected_via", model_field_cstr, offsetof(struct cred, injected_via)},
    {"target_hosts", f_targets, 0},
    {"env", f_env, offsetof(struct cred, env)},
    {"value", f_secret, 0},
    {"value_file", f_secret, 0},
};

static void walk_cred(struct model_walk *w, const struct model_node *n, struct cred *cr)
{
    cr->mark = n->mark;
    if (n->kind != MODEL_NODE_MAP) {
        model_walk_err(w, n->mark, "credential must be a mapping");
        return;
    }
    (void)model_walk_map(w, n, "credential", cred_fields, PV_ARRAY_LEN(cred_fields), cr);
    if (cr->name == NULL || cr->name[0] == '\0') {
        model_walk_err(w, n->mark, "credential name is required");
    }
    if (cr->value != NULL && cr->value_file != NULL) {
        model_walk_err(w, n->mark, "credential has both value and value_file");
    }
    if ((cr->value != NULL || cr->value_file != NULL) && cr->env == NULL) {
        model_walk_err(w, n->mark, "credential with a value needs env (its placeholder key)");
    }
}

/* The file's root: {credentials: [...]} or the list itself. */
static void f_credentials(struct model_walk *w, const struct model_field *f,
                          const struct model_node *key, const struct model_node *v, void *obj)
{
    (void)f;
    (void)key;
    if (v->kind != MODEL_NODE_SEQ && v->kind != MODEL_NODE_NULL) {
        model_walk_err(w, v->mark, "credentials must be a list");
        return;
    }
    *(const struct model_node **)obj = v;
}

static const struct model_field file_fields[] = {
    {"credentials", f_credentials, 0},
};

static const struct model_node *cred_list(struct model_walk *w, const struct model_node *root)
{
    const struct model_node *list = NULL;

    if (root->kind == MODEL_NODE_SEQ) {
        return root;
    }
    if (root->kind != MODEL_NODE_MAP) {
        model_walk_err(w, root->mark,
                       "credentials file must be a mapping with `credentials` or a list");
        return NULL;
    }
    (void)model_walk_map(w, root, "credentials file", file_fields, PV_ARRAY_LEN(file_fields),
                         (void *)&list);
    return list;
}

static bool blank(const char *buf, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (buf[i] != ' ' && buf[i] != '\t' && buf[i] != '\r' && buf[i] != '\n') {
            return false;
        }
    }
    return true;
}

static bool starts_json(const char *buf, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (buf[i] != ' ' && buf[i] != '\t' && buf[i] != '\r' && buf[i] != '\n') {
            return buf[i] == '{';
        }
    }
    return false;
}

/* Wipe the secrets' text in the node tree before it is freed. */
static void wipe_secrets(struct model_credset *cs)
{
    for (size_t i = 0; cs != NULL && i < cs->n; i++) {
        const struct model_node *v[2] = {cs->v[i].value, cs->v[i].value_file};
        for (size_t k = 0; k < 2; k++) {
            if (v[k] != NULL && v[k]->scalar != NULL) {
                explicit_bzero(v[k]->scalar, v[k]->scalar_len);
            }
        }
        cs->v[i].value = NULL;
        cs->v[i].value_file = NULL;
    }
}

/* Keys name placeholders: two credentials may not share one. */
static void check_env_unique(struct model_walk *w, struct model_credset *cs, size_t i)
{
    for (size_t j = 0; j < i && cs->v[i].env != NULL; j++) {
        if (cs->v[j].env != NULL && strcmp(cs->v[j].env, cs->v[i].env) == 0) {
            model_walk_err(w, cs->v[i].mark, "duplicate credential env '%s'", cs->v[i].env);
            return;
        }
    }
}

/* Hand each credential's secret to 'sink' (when the file is otherwise
 * valid); a refusal becomes a diagnostic at the credential. */
static void feed_sink(struct model_walk *w, struct model_credset *cs, model_cred_secret_fn sink,
                      void *arg)
{
    for (size_t i = 0; sink != NULL && i < cs->n; i++) {
        const struct cred *cr = &cs->v[i];
        const char *why;
        if (cr->env == NULL) {
            continue;
        }
        why = sink(arg, i, cr->env, cr->value != NULL ? cr->value->scalar : NULL,
                   cr->value != NULL ? cr->value->scalar_len : 0,
                   cr->value_file != NULL ? cr->value_file->scalar : NULL);
        if (why != NULL) {
            model_walk_err(w, cr->mark, "credential '%s': %s", cr->name, why);
        }
    }
}

struct model_credset *model_credset_load_secrets(const char *file, const char *buf, size_t len,
                                                 struct model_diags *diags,
                                                 model_cred_secret_fn sink, void *arg)
{
    struct model_walk w = {file != NULL ? file : "<credentials>", diags, false};
    struct model_node *root;
    const struct model_node *list;
    struct model_credset *cs;
    size_t before;

    if (diags == NULL || (buf == NULL && len > 0)) {
        pv_errno = PV_ERR_NULL;
        return NULL;
    }
    before = diags->n;
    if (len > MAX_CRED_BYTES) {
        model_walk_err(&w, (struct model_mark){0, 0}, "credentials file is larger than %u bytes",
                       MAX_CRED_BYTES);
        pv_errno = PV_ERR_TOOBIG;
        return NULL;
    }
    if (buf == NULL || blank(buf, len)) {
        model_walk_err(&w, (struct model_mark){1, 1}, "empty credentials document");
        pv_errno = PV_ERR_PARSE;
        return NULL;
    }
    root = starts_json(buf, len) ? model_json_read(w.file, buf, len, diags)
                                 : model_yaml_read(w.file, buf, len, diags);
    if (root == NULL) {
        if (diags->n == before) {
            model_walk_err(&w, (struct model_mark){0, 0}, "%s", pv_strerror(PV_ERR_PARSE));
        }
        pv_errno = PV_ERR_PARSE;
        return NULL;
    }
    cs = model_credset_new_empty();
    list = cs != NULL ? cred_list(&w, root) : NULL;
    if (cs == NULL) {
        model_walk_err(&w, root->mark, "%s", pv_strerror(PV_ERR_NOMEM));
    } else if (list != NULL && list->nitems > 0) {
        cs->v = pv_calloc(list->nitems, sizeof(cs->v[0]));
        if (cs->v == NULL) {
            model_walk_err(&w, list->mark, "%s", pv_strerror(PV_ERR_NOMEM));
        } else {
            cs->n = list->nitems;
            for (size_t i = 0; i < list->nitems; i++) {
                walk_cred(&w, list->items[i], &cs->v[i]);
                for (size_t j = 0; j < i && cs->v[i].name != NULL; j++) {
                    if (cs->v[j].name != NULL && strcmp(cs->v[j].name, cs->v[i].name) == 0) {
                        char shown[96];
                        model_node_printable(shown, sizeof(shown), cs->v[i].name,
                                             strlen(cs->v[i].name));
                        model_walk_err(&w, cs->v[i].mark, "duplicate credential name '%s'", shown);
                        break;
                    }
                }
                check_env_unique(&w, cs, i);
            }
        }
    }
    if (cs != NULL && !w.nomem && diags->n == before) {
        feed_sink(&w, cs, sink, arg);
    }
    wipe_secrets(cs);
    model_node_free(root);
    if (w.nomem || diags->n != before) {
        model_credset_free(cs);
        pv_errno = w.nomem ? PV_ERR_NOMEM : PV_ERR_POLICY;
        return NULL;
    }
    return cs;
}

struct model_credset *model_credset_load(const char *file, const char *buf, size_t len,
                                         struct model_diags *diags)
{
    return model_credset_load_secrets(file, buf, len, diags, NULL, NULL);
}

struct model_credset *model_credset_load_file(const char *path, struct model_diags *diags)
{
    struct model_credset *cs;
    char err[PATH_MAX + 64];
    size_t len = 0;
    char *buf = NULL;
    pv_result r;

    if (path == NULL || diags == NULL) {
        pv_errno = PV_ERR_NULL;
        return NULL;
    }
    /* The common reader: "FILE: reason" as for every other file. */
    r = pv_file_read(path, MAX_CRED_BYTES, false, &buf, &len, err, sizeof(err));
    if (!pv_ok(r)) {
        if (!pv_ok(model_diag_add(diags, path, (struct model_mark){0, 0}, "%s",
                                  pv_file_reason(path, err)))) {
            r.err = PV_ERR_NOMEM;
        }
        pv_errno = r.err;
        return NULL;
    }
    cs = model_credset_load(path, buf, len, diags);
    explicit_bzero(buf, len); /* the file may hold secrets (value:) */
    free(buf);
    return cs;
}

/* ===========================================================================
 * Accessors and matching
 * ========================================================================= */

size_t model_credset_count(const struct model_credset *c)
{
    return c == NULL ? 0 : c->n;
}

const char *model_cred_name(const struct model_credset *c, size_t i)
{
    return (c == NULL || i >= c->n) ? NULL : c->v[i].name;
}

const char *model_cred_type(const struct model_credset *c, size_t i)
{
    return (c == NULL || i >= c->n) ? NULL : c->v[i].type;
}

const char *model_cred_env(const struct model_credset *c, size_t i)
{
    return (c == NULL || i >= c->n) ? NULL : c->v[i].env;
}

const char *model_cred_injected_via(const struct model_credset *c, size_t i)
{
    return (c == NULL || i >= c->n) ? NULL : c->v[i].injected_via;
}

size_t model_cred_nscopes(const struct model_credset *c, size_t i)
{
    return (c == NULL || i >= c->n) ? 0 : c->v[i].scopes.n;
}

const char *model_cred_scope(const struct model_credset *c, size_t i, size_t j)
{
    if (c == NULL || i >= c->n || j >= c->v[i].scopes.n) {
        return NULL;
    }
    return c->v[i].scopes.v[j].s;
}

size_t model_cred_ntargets(const struct model_credset *c, size_t i)
{
    return (c == NULL || i >= c->n) ? 0 : c->v[i].ntargets;
}

const struct model_glob *model_cred_target(const struct model_credset *c, size_t i, size_t j)
{
    if (c == NULL || i >= c->n || j >= c->v[i].ntargets) {
        return NULL;
    }
    return c->v[i].targets[j].glob;
}

/*= docs/semantics.md#credentials
 *# A request host *h* is **credentialed** when it matches some target of
 *# some credential. */
bool model_cred_covers_host(const struct model_credset *c, size_t i, const char *host, size_t len)
{
    char norm[MAX_TARGET_LEN + 2];
    size_t nl = 0;
    bool is_ip = false;
    struct model_ip ip;

    if (c == NULL || i >= c->n || host == NULL) {
        return false;
    }
    if (!model_host_normalize(host, len, norm, sizeof(norm), &nl, &is_ip, &ip)) {
        return false;
    }
    for (size_t j = 0; j < c->v[i].ntargets; j++) {
        const struct cred_target *t = &c->v[i].targets[j];
        if (t->is_ip) {
            if (is_ip && memcmp(t->ip.b, ip.b, sizeof(ip.b)) == 0) {
                return true;
            }
            continue;
        }
        /*= docs/semantics.md#host-pattern
         *# **Wildcard patterns match DNS names only, never IP hosts.** */
        if (is_ip && !model_glob_is_literal(t->glob)) {
            continue;
        }
        if (model_glob_match(t->glob, norm, nl)) {
            return true;
        }
    }
    return false;
}

/* ---------------------------------------------------------------------------
 * The reference's host_patterns_overlap (credentials.rs)
 * ------------------------------------------------------------------------- */

struct label {
    const char *s;
    size_t n;
};

/* Trim, strip trailing dots, lower-case into 'out'. Returns the length, or
 * SIZE_MAX when it does not fit. */
static size_t overlap_norm(const char *s, char *out, size_t outlen)
{
    size_t n = strlen(s);

    trim(&s, &n);
    while (n > 0 && s[n - 1] == '.') {
        n--;
    }
    if (n >= outlen) {
        return SIZE_MAX;
    }
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        out[i] = (ch >= 'A' && ch <= 'Z') ? (char)(ch - 'A' + 'a') : ch;
    }
    out[n] = '\0';
    return n;
}

static size_t split_labels(const char *s, size_t n, struct label *v, size_t max)
{
    size_t count = 0;
    size_t start = 0;

    for (size_t i = 0; i <= n; i++) {
        if (i == n || s[i] == '.') {
            if (count == max) {
                return SIZE_MAX;
            }
            v[count].s = s + start;
            v[count].n = i - start;
            count++;
            start = i + 1;
        }
    }
    return count;
}

/* One label: `*` alone matches any non-empty label; otherwise each `*`
 * matches any run of characters within the label. */
static bool overlap_label_match(struct label p, struct label h)
{
    size_t pi = 0;
    size_t hi = 0;
    size_t star = SIZE_MAX;
    size_t mark = 0;

    if (p.n == 1 && p.s[0] == '*') {
        return h.n > 0;
    }
    if (memchr(p.s, '*', p.n) == NULL) {
        return p.n == h.n && memcmp(p.s, h.s, p.n) == 0;
    }
    while (hi < h.n) {
        if (pi < p.n && p.s[pi] == '*') {
            star = pi++;
            mark = hi;
        } else if (pi < p.n && p.s[pi] == h.s[hi]) {
            pi++;
            hi++;
        } else if (star != SIZE_MAX) {
            pi = star + 1;
            hi = ++mark;
        } else {
            return false;
        }
    }
    while (pi < p.n && p.s[pi] == '*') {
        pi++;
    }
    return pi == p.n;
}

static bool overlap_covers(const struct label *p, size_t np, const struct label *h, size_t nh)
{
    size_t off;

    if (np > 0 && p[0].n == 2 && p[0].s[0] == '*' && p[0].s[1] == '*') {
        /* `**` as the first label: one or more leading host labels. */
        if (nh < np) {
            return false;
        }
        off = nh - (np - 1);
        for (size_t i = 1; i < np; i++) {
            if (!overlap_label_match(p[i], h[off + i - 1])) {
                return false;
            }
        }
        return true;
    }
    if (np != nh) {
        return false;
    }
    for (size_t i = 0; i < np; i++) {
        if (!overlap_label_match(p[i], h[i])) {
            return false;
        }
    }
    return true;
}

bool model_host_patterns_overlap(const char *a, const char *b)
{
    char na[1024];
    char nb[1024];
    struct label la[MAX_LABELS];
    struct label lb[MAX_LABELS];
    size_t la_n;
    size_t lb_n;
    size_t ca;
    size_t cb;

    if (a == NULL || b == NULL) {
        return false;
    }
    la_n = overlap_norm(a, na, sizeof(na));
    lb_n = overlap_norm(b, nb, sizeof(nb));
    if (la_n == SIZE_MAX || lb_n == SIZE_MAX || la_n == 0 || lb_n == 0) {
        return false;
    }
    if (la_n == lb_n && memcmp(na, nb, la_n) == 0) {
        return true;
    }
    ca = split_labels(na, la_n, la, MAX_LABELS);
    cb = split_labels(nb, lb_n, lb, MAX_LABELS);
    if (ca == SIZE_MAX || cb == SIZE_MAX) {
        return false;
    }
    return overlap_covers(la, ca, lb, cb) || overlap_covers(lb, cb, la, ca);
}

bool model_cred_overlaps(const struct model_credset *c, size_t i, const char *pattern)
{
    if (c == NULL || i >= c->n || pattern == NULL) {
        return false;
    }
    for (size_t j = 0; j < c->v[i].ntargets; j++) {
        if (model_host_patterns_overlap(pattern, model_glob_text(c->v[i].targets[j].glob))) {
            return true;
        }
    }
    return false;
}
