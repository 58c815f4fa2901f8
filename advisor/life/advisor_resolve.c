/* SPDX-License-Identifier: Apache-2.0 */
/* advisor_resolve.c - a policy's target_sandbox endpoints from the peers'
 * registered addresses
 *
 * Composition writes each `target_sandbox: NAME` endpoint's `resolved_ips`
 * from NAME's registered addresses (model_policy_resolve_peers), read here
 * from the store. Evaluation, re-proof and the widening proof resolve
 * through this file; registering addresses and pushing the dependents
 * (advisor_peers.c) sit above it (docs/advisor.md#peers).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advisor/life/life.h"
#include "advisor/store/store.h"
#include "model/model.h"

/* ===========================================================================
 * The lookup composition uses
 * ========================================================================= */

struct peer {
    char *name;
    char **addrs; /* NULL-terminated; NULL: none */
};

struct peer_table {
    struct store *st;
    struct peer *v;
    size_t n;
    bool failed; /* the store failed (not: the peer does not exist) */
};

void advisor_addrs_free(char **a)
{
    for (size_t i = 0; a != NULL && a[i] != NULL; i++) {
        free(a[i]);
    }
    free(a);
}

/* The JSON array of address strings 'text' as a NULL-terminated array. */
char **advisor_addrs_parse(const char *text)
{
    json_t *j = json_loads(text != NULL ? text : "[]", 0, NULL);
    size_t n = json_is_array(j) ? json_array_size(j) : 0;
    char **out = pv_calloc(n + 1, sizeof(*out));
    size_t k = 0;

    for (size_t i = 0; out != NULL && i < n; i++) {
        const char *s = json_string_value(json_array_get(j, i));
        if (s != NULL && (out[k] = pv_strdup(s)) != NULL) {
            k++;
        }
    }
    json_decref(j);
    return out;
}

/* The JSON list 'text' as a new reference (an empty list when it does not
 * parse). */
json_t *advisor_addrs_json(const char *text)
{
    json_t *j = json_loads(text != NULL ? text : "[]", 0, NULL);

    if (!json_is_array(j)) {
        json_decref(j);
        j = json_array();
    }
    return j;
}

static const char *const *peer_lookup(void *arg, const char *name)
{
    struct peer_table *t = arg;
    struct store_sandbox sb;
    struct peer *nv;
    pv_result r;

    for (size_t i = 0; i < t->n; i++) {
        if (strcmp(t->v[i].name, name) == 0) {
            return (const char *const *)t->v[i].addrs;
        }
    }
    nv = pv_realloc(t->v, (t->n + 1) * sizeof(*nv));
    if (nv == NULL) {
        t->failed = true;
        return NULL;
    }
    t->v = nv;
    nv[t->n].name = pv_strdup(name);
    nv[t->n].addrs = NULL;
    r = store_sandbox_get(t->st, name, &sb);
    if (pv_ok(r)) {
        nv[t->n].addrs = advisor_addrs_parse(sb.addresses);
        t->failed |= nv[t->n].addrs == NULL;
        store_sandbox_clear(&sb);
    } else if (r.err != PV_ERR_NOTFOUND) {
        t->failed = true;
    }
    if (nv[t->n].name == NULL) {
        t->failed = true;
        advisor_addrs_free(nv[t->n].addrs);
        return NULL;
    }
    return (const char *const *)nv[t->n++].addrs;
}

pv_result advisor_resolve_peers(struct advisor_worker *w, struct model_policy *p, char *err,
                                size_t errlen)
{
    struct peer_table t = {w->st, NULL, 0, false};
    struct model_diags *d = model_diags_new();
    pv_result r = d != NULL ? model_policy_resolve_peers(p, peer_lookup, &t, d)
                            : pv_fail(PV_ERR_NOMEM, __func__);

    if (pv_ok(r) && t.failed) {
        r = pv_fail(PV_ERR_IO, __func__);
    }
    if (!pv_ok(r)) {
        snprintf(err, errlen, "cannot resolve target_sandbox peers: %s",
                 t.failed                                ? "the store failed"
                 : d != NULL && model_diags_count(d) > 0 ? model_diags_line(d, 0)
                                                         : "out of memory");
    }
    for (size_t i = 0; i < t.n; i++) {
        free(t.v[i].name);
        advisor_addrs_free(t.v[i].addrs);
    }
    free(t.v);
    model_diags_free(d);
    return r;
}
