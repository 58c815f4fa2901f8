/* SPDX-License-Identifier: Apache-2.0 */
/* advisor_prover.c - the prover client: POST JSON to proviso-prover (hclient)
 *
 * One client (hclient/hclient.h) per worker thread, so its connection to the prover stays
 * open between proofs (HTTP keep-alive); the client is rebuilt when the
 * prover's address changes (the child restarted on another port with a new
 * token). The token goes in a header built per request and is never logged.
 * Answers are capped in size; a transport failure is an error the caller
 * turns into application_error (never an approval).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "advisor/advisor.h"
#include "common/pv_dynbuf.h"
#include "hclient/hclient.h"

#define ANSWER_MAX (64u * 1024u * 1024u)

struct advisor_prover {
    struct advisor *a;
    struct hclient *client;
    uint64_t generation;
    char url[256];
    char token[HTTPD_TOKEN_MAX + 1]; /* secret */
};

struct advisor_prover *advisor_prover_new(struct advisor *a)
{
    struct advisor_prover *pc = pv_calloc(1, sizeof(*pc));

    if (pc != NULL) {
        pc->a = a;
        pc->generation = UINT64_MAX;
    }
    return pc;
}

void advisor_prover_free(struct advisor_prover *pc)
{
    if (pc == NULL) {
        return;
    }
    hclient_free(pc->client);
    OPENSSL_cleanse(pc->token, sizeof(pc->token));
    free(pc);
}

/* Take the current address; a new connection when it changed. */
static bool refresh(struct advisor_prover *pc)
{
    struct advisor *a = pc->a;
    bool changed;

    pthread_mutex_lock(&a->prover_mu);
    changed = a->prover.generation != pc->generation;
    if (changed) {
        pc->generation = a->prover.generation;
        snprintf(pc->url, sizeof(pc->url), "%s", a->prover.url);
        snprintf(pc->token, sizeof(pc->token), "%s", a->prover.token);
    }
    pthread_mutex_unlock(&a->prover_mu);
    if (changed) {
        hclient_free(pc->client);
        pc->client = NULL;
    }
    if (pc->client == NULL) {
        pc->client = hclient_new();
    }
    return pc->client != NULL && pc->url[0] != '\0';
}

pv_result advisor_prover_post(struct advisor_prover *pc, const char *path, const char *body,
                              size_t len, long *status, json_t **answer, char *err, size_t errlen)
{
    char url[512];
    struct hclient_res res;
    struct hclient_req req = {
        .url = url,
        .method = "POST",
        .bearer = pc->token,
        .body = body,
        .body_len = len,
        .content_type = "application/json",
        .protocols = "http,https",
        .max_answer = ANSWER_MAX,
        .connect_timeout_ms = 2000L,
        .timeout_ms = (long)pc->a->cfg.prover_timeout_ms,
        .no_expect = true,
    };

    *status = 0;
    *answer = NULL;
    if (!refresh(pc)) {
        snprintf(err, errlen, "no prover is configured or running");
        PV_BAIL(PV_ERR_IO);
    }
    snprintf(url, sizeof(url), "%s%s", pc->url, path);
    if (!hclient_perform(pc->client, &req, &res)) {
        /* hclient drops a broken connection; it is not reused */
        snprintf(err, errlen, "prover unreachable: %s", res.error);
        PV_BAIL(PV_ERR_IO);
    }
    *status = res.status;
    if (res.len > 0) {
        *answer = json_loadb(res.body, res.len, 0, NULL);
    }
    hclient_res_clear(&res);
    return PV_RESULT_OK;
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
