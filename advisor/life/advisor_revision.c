/* SPDX-License-Identifier: Apache-2.0 */
/* advisor_revision.c - writing an effective revision and an evaluation's
 * evidence
 *
 * The two writes re-proof (advisor_reprove.c) and the lifecycle's shared
 * steps (advisor_chunk.c) both make, below both, so that re-proof never
 * calls the steps that call it.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "advisor/life/life.h"
#include "advisor/store/store.h"
#include "model/model.h"

pv_result advisor_revision_write(struct advisor_worker *w, int64_t sandbox,
                                 const struct model_policy *p, const char *yaml_or_null,
                                 const char *cause, int64_t *rev, char hash[65])
{
    struct store_revision r;
    struct store_revision base;
    char *yaml = yaml_or_null != NULL ? NULL : model_policy_to_yaml_sha256(p, NULL, hash);
    const char *text = yaml_or_null != NULL ? yaml_or_null : yaml;
    char blob[65];
    pv_result res;

    PV_ENSURE(text != NULL, PV_ERR_NOMEM);
    res = yaml_or_null != NULL ? model_policy_sha256(p, hash) : PV_RESULT_OK;
    if (pv_ok(res)) {
        res = store_blob_put(w->st, text, strlen(text), blob);
    }
    free(yaml);
    PV_GUARD(res);
    PV_GUARD(store_base_latest(w->st, sandbox, &base));
    memset(&r, 0, sizeof(r));
    r.base_rev = base.rev;
    store_revision_clear(&base);
    r.blob = blob;
    r.hash = hash;
    r.cause = PV_UNCONST(cause);
    PV_GUARD(store_rev_put(w->st, sandbox, &r));
    *rev = r.rev;
    return PV_RESULT_OK;
}

pv_result advisor_evidence_put(struct advisor_worker *w, const struct advisor_eval *e, char out[65])
{
    char *text;
    pv_result r;

    out[0] = '\0';
    if (e->evidence == NULL || json_object_size(e->evidence) == 0) {
        return PV_RESULT_OK;
    }
    text = json_dumps(e->evidence, JSON_COMPACT | JSON_SORT_KEYS);
    PV_ENSURE(text != NULL, PV_ERR_NOMEM);
    r = store_blob_put(w->st, text, strlen(text), out);
    free(text);
    return r;
}
