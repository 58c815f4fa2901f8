/* SPDX-License-Identifier: Apache-2.0 */
/* life_int.h - the steps the lifecycle's files share (advisor_chunk.c)
 *
 * The lifecycle is split along its seams: advisor_submit.c (a proposal
 * becomes chunks), advisor_decide.c (a reviewer's decisions, a new base),
 * advisor_view.c (reading). What more than one of them needs - writing an
 * approval, a system rejection, reconciling, the chunk's JSON views - is
 * here, defined in advisor_chunk.c. Not for use outside life/.
 */
#ifndef ADVISOR_LIFE_INT_H
#define ADVISOR_LIFE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "advisor/life/life.h"
#include "common/pv.h"

struct store_chunk;

/* The chunk as an agent (reviewer false) or a reviewer reads it. */
json_t *advisor_chunk_json(struct advisor_worker *w, const struct store_chunk *c, bool reviewer);
/* Copy an evaluation into a chunk record (strings borrowed from 'e'). */
void advisor_apply_eval(struct store_chunk *c, const struct advisor_eval *e, const char *current,
                        char evidence[65]);
/* The OCSF shorthand line of a committed change into the log. */
void advisor_log_line(const char *line);
/* A system decision (reconcile, supersede): reject pending chunk 'id'
 * with 'reason' and record the event. Inside the transaction. */
pv_result advisor_system_reject(struct advisor_worker *w, const char *sandbox_name, int64_t sandbox,
                                const char *id, const char *reason, const char *decided_by,
                                int64_t when) PV_WUR;
/* Reject every other pending chunk the new effective policy already covers. */
pv_result advisor_reconcile(struct advisor_worker *w, const char *sandbox_name, int64_t sandbox,
                            const struct model_policy *p, const char *hash, int64_t rev,
                            const char *except, int64_t now) PV_WUR;
/* Approve 'c' (status 'expect') into a new revision, with the event and
 * reconcile; 'narrowed_from' (may be NULL) is the rule the chunk proposed
 * when its narrowed suggestion is approved instead. Inside the
 * transaction, under the stripe, with 'snap' current. The event's
 * shorthand into 'line'. */
pv_result advisor_approve_in_tx_as(struct advisor_worker *w, const struct advisor_snapshot *snap,
                                   struct store_chunk *c, const struct advisor_eval *e,
                                   const char *expect, bool is_auto, const char *resolved_from,
                                   const char *narrowed_from, char *line, size_t linelen) PV_WUR;
pv_result advisor_approve_in_tx(struct advisor_worker *w, const struct advisor_snapshot *snap,
                                struct store_chunk *c, const struct advisor_eval *e,
                                const char *expect, bool is_auto, const char *resolved_from,
                                char *line, size_t linelen) PV_WUR;

#endif
