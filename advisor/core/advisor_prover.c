/* SPDX-License-Identifier: Apache-2.0 */
/* advisor_prover.c - the prover client: POST JSON to a proviso-prover of the pool
 *
 * One client (hclient/hclient.h) per worker thread and pool member, so each
 * connection to a prover stays open between proofs (HTTP keep-alive); a
 * member's client is rebuilt when its address changes (the child restarted
 * on another port with a new token). The member comes from the pool
 * (advisor_pool.c): the least busy one up. A call the prover could not
 * serve - no connection, a 5xx, a refused token, a 200 whose body is not a
 * JSON object (garbage, truncated) - takes that member out and is sent
 * once to each other member up; a timeout takes it out but is not sent
 * again (the proof itself may be what is slow, and every member would pay
 * for it). The token goes in a header built per request and is never
 * logged. Answers are capped in size. Every failure is an error the caller
 * turns into application_error (never an approval).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "advisor/core/core.h"
#include "common/pv_dynbuf.h"
#include "hclient/hclient.h"

#define ANSWER_MAX (64u * 1024u * 1024u)

struct advisor_prover {
    struct advisor *a;
    struct hclient *client[ADVISOR_POOL_MAX];
    uint64_t generation[ADVISOR_POOL_MAX];
};

struct advisor_prover *advisor_prover_new(struct advisor *a)
{
    struct advisor_prover *pc = pv_calloc(1, sizeof(*pc));

    if (pc != NULL) {
        pc->a = a;
        for (size_t i = 0; i < ADVISOR_POOL_MAX; i++) {
            pc->generation[i] = UINT64_MAX;
        }
    }
    return pc;
}

void advisor_prover_free(struct advisor_prover *pc)
{
    if (pc == NULL) {
        return;
    }
    for (size_t i = 0; i < ADVISOR_POOL_MAX; i++) {
        hclient_free(pc->client[i]);
    }
    free(pc);
}

/* The client for the leased member; a new connection when it moved. */
static struct hclient *client_for(struct advisor_prover *pc, const struct advisor_pool_lease *l)
{
    if (pc->generation[l->i] != l->generation) {
        hclient_free(pc->client[l->i]);
        pc->client[l->i] = NULL;
        pc->generation[l->i] = l->generation;
    }
    if (pc->client[l->i] == NULL) {
        pc->client[l->i] = hclient_new();
    }
    return pc->client[l->i];
}

enum outcome {
    OUT_ANSWER,  /* an answer the caller reads (any status of the request's making) */
    OUT_RETRY,   /* the prover could not serve: try another */
    OUT_TIMEOUT, /* no answer in time: do not send it again */
};

/* One call to the leased member; 'why' says what went wrong. */
static enum outcome call(struct advisor_prover *pc, const struct advisor_pool_lease *l,
                         const char *path, const char *body, size_t len, long *status,
                         json_t **answer, char *why, size_t whylen)
{
    char url[ADVISOR_POOL_URL_MAX + 64];
    struct hclient *c = client_for(pc, l);
    struct hclient_res res;
    struct hclient_req req = {
        .url = url,
        .method = "POST",
        .bearer = l->token,
        .body = body,
        .body_len = len,
        .content_type = "application/json",
        .protocols = "http,https",
        .max_answer = ANSWER_MAX,
        .connect_timeout_ms = 2000L,
        .timeout_ms = (long)pc->a->cfg.prover_timeout_ms,
        .no_expect = true,
    };
    int64_t t0 = advisor_now_ms();

    if (c == NULL) {
        snprintf(why, whylen, "out of memory");
        return OUT_RETRY;
    }
    snprintf(url, sizeof(url), "%s%s", l->url, path);
    if (!hclient_perform(c, &req, &res)) {
        /* hclient drops a broken connection; it is not reused. A request
         * that went out and ran out of time is a timeout also when our
         * clock reads a hair under the limit (libcurl's timer and ours
         * round apart); a connect that timed out is an unreachable
         * prover, and the call may go to another. */
        if ((res.timed_out && !res.unsent) ||
            advisor_now_ms() - t0 >= (int64_t)pc->a->cfg.prover_timeout_ms) {
            snprintf(why, whylen, "gave no answer within %u ms (prover_timeout_ms)",
                     pc->a->cfg.prover_timeout_ms);
            return OUT_TIMEOUT;
        }
        snprintf(why, whylen, "unreachable: %s", res.error);
        return OUT_RETRY;
    }
    *status = res.status;
    if (res.len > 0) {
        *answer = json_loadb(res.body, res.len, 0, NULL);
    }
    hclient_res_clear(&res);
    if (res.status >= 500 || res.status == 401 || res.status == 403) {
        snprintf(why, whylen, "answered %ld", res.status);
    } else if (res.status == 200 && !json_is_object(*answer)) {
        snprintf(why, whylen, "answered 200 with a body that is not a JSON object");
    } else {
        return OUT_ANSWER;
    }
    json_decref(*answer);
    *answer = NULL;
    *status = 0;
    return OUT_RETRY;
}

pv_result advisor_prover_post(struct advisor_prover *pc, const char *path, const char *body,
                              size_t len, long *status, json_t **answer, char *err, size_t errlen)
{
    struct advisor_pool_lease l;
    uint32_t tried = 0;
    char last[600] = "";

    *status = 0;
    *answer = NULL;
    for (;;) {
        char why[320];
        enum outcome o;

        if (!advisor_pool_acquire(pc->a->pool, path, tried, &l, why, sizeof(why))) {
            if (last[0] != '\0') {
                snprintf(err, errlen, "%s; %s", last, why);
            } else {
                snprintf(err, errlen, "%s", why);
            }
            PV_BAIL(PV_ERR_IO);
        }
        tried |= 1u << l.i;
        o = call(pc, &l, path, body, len, status, answer, why, sizeof(why));
        advisor_pool_release(pc->a->pool, &l, o == OUT_ANSWER, why);
        OPENSSL_cleanse(l.token, sizeof(l.token));
        if (o == OUT_ANSWER) {
            return PV_RESULT_OK;
        }
        snprintf(last, sizeof(last), "prover %s %s", l.label, why);
        if (o == OUT_TIMEOUT) {
            snprintf(err, errlen, "%s", last);
            PV_BAIL(PV_ERR_IO);
        }
    }
}

bool advisor_prover_healthy(const char *url)
{
    char full[512];
    struct hclient *c = hclient_new();
    struct hclient_res res;
    struct hclient_req req = {.url = full, .max_answer = 4096, .timeout_ms = 1000L};
    bool ok;

    if (c == NULL) {
        return false;
    }
    snprintf(full, sizeof(full), "%s/healthz", url);
    ok = hclient_perform(c, &req, &res) && res.status == 200;
    hclient_res_clear(&res);
    hclient_free(c);
    return ok;
}
