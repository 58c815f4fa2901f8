/* SPDX-License-Identifier: Apache-2.0 */
/* cli_recompute.c - `proviso audit verify`: every effective revision again
 *
 * A record that writes an effective revision (audit_record_writes_revision)
 * carries the revision's "version" and "hash" and, since the chain binds
 * the state, "base_blob" (the base policy the composition starts from) and
 * "chunks" (the approved chunks composed, in order). The composition is
 * done again from the export alone: the base blob, each chunk's rule from
 * its CONFIG:APPROVED record (data.inputs.rule_name, data.inputs.rule),
 * merged with the model's merge exactly as the advisor composes
 * (model_policy_merge_rule), the target_sandbox peers resolved from the
 * chain's CONFIG:REGISTERED records as they stood at that record; its
 * model_policy_sha256 must be the recorded hash (docs/audit.md#state).
 *
 * Each sandbox keeps its last composition before peers were resolved, so
 * an approval that adds one chunk to the previous list costs one merge.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/audit.h"
#include "cli/cli.h"
#include "cli/cli_replay.h"
#include "model/model.h"

/* One sandbox's last composition (before peers are resolved). */
struct comp {
    char *sandbox;
    char *base_blob;
    json_t *chunks; /* the ids composed, in order */
    struct model_policy *p;
};

struct ctx {
    const json_t *blobs;
    bool partial;   /* an export from since > 0: earlier records are absent */
    json_t *peers;  /* sandbox name -> array of registered addresses */
    json_t *rules;  /* "<sandbox>\n<chunk>" -> {"name", "rule"} of its approval */
    struct comp *c; /* per sandbox */
    size_t nc;
    /* peer lookup during one resolution */
    char **tmp[64];
    size_t ntmp;
    bool unknown_peer;
};

static const char *str_of(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

static void comp_reset(struct comp *c)
{
    free(c->base_blob);
    json_decref(c->chunks);
    model_policy_free(c->p);
    c->base_blob = NULL;
    c->chunks = NULL;
    c->p = NULL;
}

static struct comp *comp_of(struct ctx *x, const char *sandbox)
{
    struct comp *v;

    for (size_t i = 0; i < x->nc; i++) {
        if (strcmp(x->c[i].sandbox, sandbox) == 0) {
            return &x->c[i];
        }
    }
    v = pv_realloc(x->c, (x->nc + 1) * sizeof(*v));
    if (v == NULL) {
        return NULL;
    }
    x->c = v;
    memset(&v[x->nc], 0, sizeof(v[x->nc]));
    v[x->nc].sandbox = pv_strdup(sandbox);
    if (v[x->nc].sandbox == NULL) {
        return NULL;
    }
    return &v[x->nc++];
}

/* A sandbox name used again (CREATED, DELETED) starts with no chunks. */
static void forget_sandbox(struct ctx *x, const char *sandbox)
{
    size_t n = strlen(sandbox);
    const char *key;
    json_t *v;
    void *tmp;
    struct comp *c = comp_of(x, sandbox);

    json_object_foreach_safe(x->rules, tmp, key, v)
    {
        if (strncmp(key, sandbox, n) == 0 && key[n] == '\n') {
            json_object_del(x->rules, key);
        }
    }
    if (c != NULL) {
        comp_reset(c);
    }
    json_object_set_new(x->peers, sandbox, json_array());
}

static const char *const *peer_lookup(void *arg, const char *name)
{
    struct ctx *x = arg;
    const json_t *addrs = json_object_get(x->peers, name);
    char **out;
    size_t n = json_array_size(addrs);

    if (addrs == NULL) {
        /* Not named by any record of this export: with the whole chain the
         * peer has no addresses; with a partial one it is unknown. */
        x->unknown_peer |= x->partial;
        return NULL;
    }
    if (x->ntmp == sizeof(x->tmp) / sizeof(x->tmp[0])) {
        x->unknown_peer = true;
        return NULL;
    }
    out = pv_calloc(n + 1, sizeof(*out));
    if (out == NULL) {
        x->unknown_peer = true;
        return NULL;
    }
    x->tmp[x->ntmp++] = out;
    for (size_t i = 0; i < n; i++) {
        out[i] = PV_UNCONST(json_string_value(json_array_get(addrs, i)));
        if (out[i] == NULL) {
            out[i] = PV_UNCONST("");
        }
    }
    return (const char *const *)out;
}

static void set_bad(struct cli_recompute *out, const json_t *rec, size_t line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void set_bad(struct cli_recompute *out, const json_t *rec, size_t line, const char *fmt, ...)
{
    va_list ap;

    if (out->bad) {
        return;
    }
    out->bad = true;
    out->bad_seq = (int64_t)json_integer_value(json_object_get(rec, "seq"));
    out->bad_line = line;
    va_start(ap, fmt);
    vsnprintf(out->reason, sizeof(out->reason), fmt, ap);
    va_end(ap);
}

/* 'prefix' is a prefix of 'all' (arrays of strings). */
static bool is_prefix(const json_t *prefix, const json_t *all)
{
    size_t n = json_array_size(prefix);

    if (prefix == NULL || n > json_array_size(all)) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (!json_equal(json_array_get(prefix, i), json_array_get(all, i))) {
            return false;
        }
    }
    return true;
}

static char *diag_first(struct model_diags *d)
{
    return pv_strdup(d != NULL && model_diags_count(d) > 0 ? model_diags_line(d, 0)
                                                           : "out of memory");
}

/* The composition of 'rec' (unresolved) into c->p, from the cache when the
 * record extends it. 0 done, 1 not recomputable, -1 failed (out->bad). */
static int compose(struct ctx *x, struct comp *c, const json_t *rec, size_t line,
                   struct cli_recompute *out)
{
    const json_t *data = json_object_get(rec, "data");
    const char *sandbox = str_of(rec, "sandbox");
    const char *base_blob = str_of(data, "base_blob");
    const json_t *chunks = json_object_get(data, "chunks");
    struct model_diags *d = model_diags_new();
    size_t from = 0;
    int rc = -1;

    if (d == NULL) {
        set_bad(out, rec, line, "out of memory");
        return -1;
    }
    if (c->p != NULL && c->base_blob != NULL && strcmp(c->base_blob, base_blob) == 0 &&
        is_prefix(c->chunks, chunks)) {
        from = json_array_size(c->chunks);
    } else {
        const char *text = str_of(x->blobs, base_blob);
        comp_reset(c);
        if (text == NULL) {
            set_bad(out, rec, line, "sandbox %s: base blob %s is missing from the export", sandbox,
                    base_blob);
            goto out;
        }
        c->p = model_policy_load("base", text, strlen(text), MODEL_FMT_AUTO, d);
        c->base_blob = pv_strdup(base_blob);
        c->chunks = json_array();
        if (c->p == NULL || c->base_blob == NULL || c->chunks == NULL) {
            char *why = diag_first(d);
            set_bad(out, rec, line, "sandbox %s: the base policy (blob %s) does not load: %s",
                    sandbox, base_blob, why != NULL ? why : "out of memory");
            free(why);
            comp_reset(c);
            goto out;
        }
    }
    for (size_t i = from; i < json_array_size(chunks); i++) {
        const char *id = json_string_value(json_array_get(chunks, i));
        char key[512];
        const json_t *r;
        struct model_policy *next;

        snprintf(key, sizeof(key), "%s\n%s", sandbox, id != NULL ? id : "");
        r = id != NULL ? json_object_get(x->rules, key) : NULL;
        if (r == NULL && x->partial) {
            comp_reset(c);
            rc = 1; /* its approval precedes the export */
            goto out;
        }
        if (r == NULL) {
            set_bad(out, rec, line,
                    "sandbox %s revision v%lld: chunk %s is composed, but no CONFIG:APPROVED "
                    "record of it precedes this record",
                    sandbox, (long long)json_integer_value(json_object_get(data, "version")),
                    id != NULL ? id : "(not a string)");
            comp_reset(c);
            goto out;
        }
        next = model_policy_merge_rule(c->p, str_of(r, "name"), json_object_get(r, "rule"), d);
        if (next == NULL) {
            char *why = diag_first(d);
            set_bad(out, rec, line, "sandbox %s: chunk %s's recorded rule does not merge: %s",
                    sandbox, id, why != NULL ? why : "out of memory");
            free(why);
            comp_reset(c);
            goto out;
        }
        model_policy_free(c->p);
        c->p = next;
        json_array_append(c->chunks, json_array_get(chunks, i));
    }
    rc = 0;
out:
    model_diags_free(d);
    return rc;
}

/* One revision-writing record with base_blob and chunks. */
static void recompute_one(struct ctx *x, const json_t *rec, size_t line, struct cli_recompute *out)
{
    const json_t *data = json_object_get(rec, "data");
    const char *sandbox = str_of(rec, "sandbox");
    const char *want = str_of(data, "hash");
    struct comp *c = comp_of(x, sandbox);
    struct model_policy *p = NULL;
    struct model_diags *d = NULL;
    char got[65] = "";
    char *list = NULL;
    int rc;

    if (c == NULL) {
        set_bad(out, rec, line, "out of memory");
        return;
    }
    rc = compose(x, c, rec, line, out);
    if (rc != 0) {
        out->legacy += rc > 0;
        return;
    }
    p = model_policy_copy(c->p);
    d = model_diags_new();
    x->unknown_peer = false;
    if (p == NULL || d == NULL || !pv_ok(model_policy_resolve_peers(p, peer_lookup, x, d)) ||
        !pv_ok(model_policy_sha256(p, got))) {
        char *why = diag_first(d);
        set_bad(out, rec, line, "sandbox %s: the composition does not resolve its peers: %s",
                sandbox, why != NULL ? why : "out of memory");
        free(why);
    } else if (x->unknown_peer) {
        out->legacy++; /* a peer registered before the export */
    } else if (strcmp(got, want) != 0) {
        list = json_dumps(json_object_get(data, "chunks"), JSON_COMPACT);
        set_bad(out, rec, line,
                "sandbox %s revision v%lld: the record says hash %s, its base (blob %.12s...) "
                "and chunks %s compose to %s",
                sandbox, (long long)json_integer_value(json_object_get(data, "version")), want,
                str_of(data, "base_blob"), list != NULL ? list : "", got);
    } else {
        out->recomputed++;
    }
    for (size_t i = 0; i < x->ntmp; i++) {
        free(x->tmp[i]);
    }
    x->ntmp = 0;
    free(list);
    model_diags_free(d);
    model_policy_free(p);
}

static bool recomputable(const json_t *rec)
{
    const json_t *data = json_object_get(rec, "data");
    const char *b = str_of(data, "base_blob");

    return b != NULL && b[0] != '\0' && json_is_array(json_object_get(data, "chunks"));
}

void cli_recompute(const json_t *records, const json_t *blobs, bool partial,
                   struct cli_recompute *out)
{
    struct ctx x;
    const json_t *rec;
    size_t i;

    memset(out, 0, sizeof(*out));
    memset(&x, 0, sizeof(x));
    x.blobs = blobs;
    x.partial = partial;
    x.peers = json_object();
    x.rules = json_object();
    json_array_foreach(records, i, rec)
    {
        const char *kind = str_of(rec, "kind");
        const char *sandbox = str_of(rec, "sandbox");
        const json_t *data = json_object_get(rec, "data");
        size_t line = i + 2; /* the header is line 1, records come first */

        if (x.peers == NULL || x.rules == NULL) {
            set_bad(out, rec, line, "out of memory");
            break;
        }
        if (kind == NULL || sandbox == NULL) {
            continue;
        }
        if (strcmp(kind, "CONFIG:CREATED") == 0 || strcmp(kind, "CONFIG:DELETED") == 0) {
            forget_sandbox(&x, sandbox);
        } else if (strcmp(kind, "CONFIG:REGISTERED") == 0 &&
                   json_is_array(json_object_get(data, "addresses"))) {
            json_object_set(x.peers, sandbox, json_object_get(data, "addresses"));
        } else if (strcmp(kind, "CONFIG:APPROVED") == 0 && str_of(data, "chunk_id") != NULL) {
            const json_t *inputs = json_object_get(data, "inputs");
            char key[512];
            snprintf(key, sizeof(key), "%s\n%s", sandbox, str_of(data, "chunk_id"));
            json_object_set_new(x.rules, key,
                                json_pack("{s:s?,s:O?}", "name", str_of(inputs, "rule_name"),
                                          "rule", json_object_get(inputs, "rule")));
        }
        if (!audit_record_writes_revision(rec)) {
            continue;
        }
        if (!recomputable(rec)) {
            out->legacy++;
            continue;
        }
        recompute_one(&x, rec, line, out);
        if (out->bad) {
            break;
        }
    }
    for (i = 0; i < x.nc; i++) {
        comp_reset(&x.c[i]);
        free(x.c[i].sandbox);
    }
    free(x.c);
    json_decref(x.peers);
    json_decref(x.rules);
}
