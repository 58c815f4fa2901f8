/* SPDX-License-Identifier: Apache-2.0 */
/* model_load.c - the load coordinator: bytes to a compiled policy
 *
 * model_policy_load() is the coordinator of the load pipeline: pick the
 * format, read the document into a node tree (model_yaml.c / model_json.c),
 * walk the tree into a policy (model_schema.c), validate (model_validate.c)
 * and compile (model_compile.c). Every step reports problems as diagnostics
 * with file:line:col; the first step that adds one ends the pipeline and the
 * load returns NULL, except that unknown fields alone still let validation
 * report, so one run shows every error it can. This is the top of model/'s
 * loading: the types (model_policy.c) and diagnostics (model_diag.c) below
 * it call nothing back.
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

/* A whole policy: serialised and loaded again, so the copy is validated and
 * compiled exactly as a loaded policy is. */
struct model_policy *model_policy_copy(const struct model_policy *p)
{
    struct model_diags *d;
    struct model_policy *c;
    size_t len = 0;
    char *json;

    if (p == NULL) {
        pv_errno = PV_ERR_NULL;
        return NULL;
    }
    json = model_policy_to_json(p, &len);
    if (json == NULL) {
        return NULL;
    }
    d = model_diags_new();
    if (d == NULL) {
        free(json);
        return NULL;
    }
    c = model_policy_load(p->file != NULL ? p->file : "<copy>", json, len, MODEL_FMT_JSON, d);
    model_diags_free(d);
    free(json);
    return c;
}
