/* SPDX-License-Identifier: Apache-2.0 */
/* store_common.c - what both back ends and the dispatcher share
 *
 * The records' clear functions (both back ends fill the same records of
 * store.h), the clock that stamps them, and which back end a location
 * names. Calls nothing else of the store, so no back end has to call the
 * dispatcher (store.c) or the other back end for them.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "advisor/store/store.h"
#include "advisor/store/store_int.h"

void store_chunk_clear(struct store_chunk *c)
{
    char **strs[] = {&c->id,
                     &c->status,
                     &c->rule_name,
                     &c->proposed_rule,
                     &c->rationale,
                     &c->security_notes,
                     &c->host,
                     &c->binary,
                     &c->validation_result,
                     &c->rejection_reason,
                     &c->application_error,
                     &c->review_token,
                     &c->current_hash,
                     &c->candidate_hash,
                     &c->analysis_mode,
                     &c->dedup_key,
                     &c->stage,
                     &c->evidence,
                     &c->decided_by,
                     &c->approved_evidence,
                     &c->suspension_reason};

    for (size_t i = 0; i < PV_ARRAY_LEN(strs); i++) {
        free(*strs[i]);
    }
    memset(c, 0, sizeof(*c));
}

void store_event_clear(struct store_event *e)
{
    free(e->sandbox);
    free(e->kind);
    free(e->line);
    free(e->json);
    free(e->record);
    free(e->seal);
    memset(e, 0, sizeof(*e));
}

void store_revision_clear(struct store_revision *r)
{
    free(r->blob);
    free(r->hash);
    free(r->cause);
    memset(r, 0, sizeof(*r));
}

void store_sandbox_clear(struct store_sandbox *sb)
{
    free(sb->name);
    free(sb->token_sha256);
    free(sb->credentials);
    free(sb->boundary);
    free(sb->addresses);
    memset(sb, 0, sizeof(*sb));
}

void store_server_clear(struct store_server *sv)
{
    free(sv->name);
    free(sv->base_url);
    free(sv->openapi_blob);
    memset(sv, 0, sizeof(*sv));
}

int64_t store_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

bool store_pg_location(const char *loc)
{
    return strncmp(loc, "postgresql://", 13) == 0 || strncmp(loc, "postgres://", 11) == 0;
}
