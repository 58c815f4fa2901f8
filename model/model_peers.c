/* SPDX-License-Identifier: Apache-2.0 */
/* model_peers.c - composing target_sandbox endpoints with their peers' addresses
 *
 * A `target_sandbox: NAME` endpoint reaches a peer sandbox wherever it runs
 * now. The advisor knows each sandbox's registered addresses; at
 * composition it writes them into the endpoint's `resolved_ips`, and the
 * validator parses those into the endpoint's destination ranges, so the
 * evaluator, the prover and the canonical form all see the resolved policy
 * (docs/semantics.md#target-sandbox). A peer without addresses leaves the
 * endpoint unresolved, which admits nothing.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "model/model_int.h"

enum model_peer_state model_endpoint_peer_state(const struct model_endpoint *e)
{
    if (e->target_sandbox.s == NULL || e->target_sandbox.s[0] == '\0') {
        return MODEL_PEER_NONE;
    }
    if (e->ncidrs == 0) {
        return MODEL_PEER_UNRESOLVED;
    }
    for (size_t i = 0; i < e->ncidrs; i++) {
        if (!model_cidr_overlaps_always_blocked(&e->cidrs[i])) {
            return MODEL_PEER_RESOLVED;
        }
    }
    return MODEL_PEER_LOOPBACK; /* the validator admits no other blocked address */
}

const char *model_rule_peer(const struct model_rule *r)
{
    for (size_t i = 0; r != NULL && i < r->nendpoints; i++) {
        if (model_endpoint_peer_state(&r->endpoints[i]) != MODEL_PEER_NONE) {
            return r->endpoints[i].target_sandbox.s;
        }
    }
    return NULL;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Replace e's resolved_ips with the sorted, unique 'addrs'. */
static pv_result set_resolved(struct model_endpoint *e, const char *const *addrs)
{
    size_t n = 0;
    const char **sorted;

    model_strlist_clear(&e->resolved_ips);
    while (addrs != NULL && addrs[n] != NULL) {
        n++;
    }
    if (n == 0) {
        return PV_RESULT_OK;
    }
    sorted = pv_calloc(n, sizeof(*sorted));
    e->resolved_ips.v = pv_calloc(n, sizeof(e->resolved_ips.v[0]));
    if (sorted == NULL || e->resolved_ips.v == NULL) {
        free(sorted);
        PV_BAIL(PV_ERR_NOMEM);
    }
    memcpy(sorted, addrs, n * sizeof(*sorted));
    qsort(sorted, n, sizeof(*sorted), cmp_str);
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && strcmp(sorted[i - 1], sorted[i]) == 0) {
            continue;
        }
        e->resolved_ips.v[e->resolved_ips.n].s = pv_strdup(sorted[i]);
        if (e->resolved_ips.v[e->resolved_ips.n].s == NULL) {
            free(sorted);
            PV_BAIL(PV_ERR_NOMEM);
        }
        e->resolved_ips.n++;
    }
    free(sorted);
    return PV_RESULT_OK;
}

pv_result model_policy_resolve_peers(struct model_policy *p, model_peer_fn fn, void *arg,
                                     struct model_diags *diags)
{
    bool any = false;

    PV_ENSURE_REF(p);
    PV_ENSURE_REF(fn);
    for (size_t r = 0; r < p->nrules; r++) {
        for (size_t i = 0; i < p->rules[r].nendpoints; i++) {
            struct model_endpoint *e = &p->rules[r].endpoints[i];

            if (e->target_sandbox.s == NULL || e->target_sandbox.s[0] == '\0') {
                continue;
            }
            any = true;
            PV_GUARD(set_resolved(e, fn(arg, e->target_sandbox.s)));
        }
    }
    if (!any) {
        return PV_RESULT_OK;
    }
    if (!model_policy_validate(p, diags)) {
        PV_BAIL(pv_errno == PV_ERR_NOMEM ? PV_ERR_NOMEM : PV_ERR_POLICY);
    }
    return model_policy_compile(p);
}
