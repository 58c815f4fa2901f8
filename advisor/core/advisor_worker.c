/* SPDX-License-Identifier: Apache-2.0 */
/* advisor_worker.c - a worker thread's state: a store connection, a prover
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

struct advisor_worker *advisor_worker_new(struct advisor *a)
{
    struct advisor_worker *w = pv_calloc(1, sizeof(*w));
    char err[512];

    if (w == NULL) {
        return NULL;
    }
    w->a = a;
    if (!pv_ok(store_open(a->cfg.store[0] != '\0' ? a->cfg.store : a->cfg.data_dir, &w->st, err,
                          sizeof(err)))) {
        pv_log_errorx("worker: %s", err);
    }
    w->pc = advisor_prover_new(a);
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
