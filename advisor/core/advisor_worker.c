/* SPDX-License-Identifier: Apache-2.0 */
/* advisor_worker.c - a worker thread's state: a store handle, a prover
 * client, a policy cache
 *
 * Above both the helpers (advisor_util.c) and the prover client
 * (advisor_prover.c), which calls the helpers: the worker is what puts them
 * together, so neither calls the other back.
 */
#include "config.h"

#include <stdlib.h>

#include "advisor/core/core.h"
#include "advisor/store/store.h"
#include "common/pv_log.h"
#include "model/model.h"

const char *advisor_store_location(const struct advisor *a)
{
    return a->cfg.store[0] != '\0' ? a->cfg.store : a->cfg.data_dir;
}

struct advisor_worker *advisor_worker_new(struct advisor *a)
{
    struct advisor_worker *w = pv_calloc(1, sizeof(*w));
    char err[512];

    if (w == NULL) {
        return NULL;
    }
    w->a = a;
    /* Whole or NULL: a worker without its store or its prover client would
     * answer every job of its life with the failure of one moment (or, for
     * the client, crash the first proof); NULL has the pool (and the
     * mapper's flusher) make it again before the next job. */
    if (!pv_ok(store_open(advisor_store_location(a), &w->st, err, sizeof(err)))) {
        pv_log_errorx("worker: %s", err);
        advisor_worker_free(w);
        return NULL;
    }
    w->pc = advisor_prover_new(a);
    if (w->pc == NULL) {
        pv_log_errorx("worker: the prover client: %s", pv_strerror(PV_ERR_NOMEM));
        advisor_worker_free(w);
        return NULL;
    }
    return w;
}

void advisor_worker_free(struct advisor_worker *w)
{
    if (w == NULL) {
        return;
    }
    store_close(w->st);
    advisor_prover_free(w->pc);
    model_policy_free(w->pol_cache);
    free(w->pol_json);
    free(w);
}
