/* SPDX-License-Identifier: Apache-2.0 */
/* advisor_prover.c - the prover client: POST JSON to proviso-prover (libcurl)
 *
 * One easy handle per worker thread, so its connection to the prover stays
 * open between proofs (HTTP keep-alive); the handle is rebuilt when the
 * prover's address changes (the child restarted on another port with a new
 * token). The token goes in a header built per request and is never logged.
 * Answers are capped in size; a transport failure is an error the caller
 * turns into application_error (never an approval).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <openssl/crypto.h>

#include "advisor/advisor.h"
#include "common/pv_dynbuf.h"

#define ANSWER_MAX (64u * 1024u * 1024u)

struct advisor_prover {
    struct advisor *a;
    CURL *curl;
    uint64_t generation;
    char url[256];
    char auth[HTTPD_TOKEN_MAX + 32];
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
    if (pc->curl != NULL) {
        curl_easy_cleanup(pc->curl);
    }
    OPENSSL_cleanse(pc->auth, sizeof(pc->auth));
    free(pc);
}

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *arg)
{
    struct pv_dynbuf *b = arg;
    size_t n = size * nmemb;

    return pv_ok(pv_dynbuf_add(b, ptr, n)) ? n : 0;
}

/* Take the current address; rebuild the handle when it changed. */
static bool refresh(struct advisor_prover *pc)
{
    struct advisor *a = pc->a;
    bool changed;

    pthread_mutex_lock(&a->prover_mu);
    changed = a->prover.generation != pc->generation;
    if (changed) {
        pc->generation = a->prover.generation;
        snprintf(pc->url, sizeof(pc->url), "%s", a->prover.url);
        snprintf(pc->auth, sizeof(pc->auth), "Authorization: Bearer %s", a->prover.token);
    }
    pthread_mutex_unlock(&a->prover_mu);
    if (changed && pc->curl != NULL) {
        curl_easy_cleanup(pc->curl);
        pc->curl = NULL;
    }
    if (pc->curl == NULL) {
        pc->curl = curl_easy_init();
    }
    return pc->curl != NULL && pc->url[0] != '\0';
}

pv_result advisor_prover_post(struct advisor_prover *pc, const char *path, const char *body,
                              size_t len, long *status, json_t **answer, char *err, size_t errlen)
{
    char url[512];
    struct curl_slist *hdrs = NULL;
    struct pv_dynbuf b;
    CURLcode rc;

    *status = 0;
    *answer = NULL;
    if (!refresh(pc)) {
        snprintf(err, errlen, "no prover is configured or running");
        PV_BAIL(PV_ERR_IO);
    }
    snprintf(url, sizeof(url), "%s%s", pc->url, path);
    pv_dynbuf_init(&b, ANSWER_MAX);
    hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
    hdrs = hdrs != NULL ? curl_slist_append(hdrs, pc->auth) : NULL;
    hdrs = hdrs != NULL ? curl_slist_append(hdrs, "Expect:") : NULL;
    if (hdrs == NULL) {
        snprintf(err, errlen, "out of memory");
        PV_BAIL(PV_ERR_NOMEM);
    }
    curl_easy_setopt(pc->curl, CURLOPT_URL, url);
    curl_easy_setopt(pc->curl, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(pc->curl, CURLOPT_POST, 1L);
    curl_easy_setopt(pc->curl, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(pc->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    curl_easy_setopt(pc->curl, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(pc->curl, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(pc->curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(pc->curl, CURLOPT_TIMEOUT_MS, (long)pc->a->cfg.prover_timeout_ms);
    curl_easy_setopt(pc->curl, CURLOPT_CONNECTTIMEOUT_MS, 2000L);
    curl_easy_setopt(pc->curl, CURLOPT_PROTOCOLS_STR, "http,https");
    rc = curl_easy_perform(pc->curl);
    curl_slist_free_all(hdrs);
    if (rc != CURLE_OK) {
        snprintf(err, errlen, "prover unreachable: %s", curl_easy_strerror(rc));
        pv_dynbuf_free(&b);
        /* A broken connection is not reused. */
        curl_easy_cleanup(pc->curl);
        pc->curl = NULL;
        PV_BAIL(PV_ERR_IO);
    }
    curl_easy_getinfo(pc->curl, CURLINFO_RESPONSE_CODE, status);
    if (b.len > 0) {
        *answer = json_loadb(b.buf, b.len, 0, NULL);
    }
    pv_dynbuf_free(&b);
    return PV_RESULT_OK;
}

bool advisor_prover_healthy(const char *url)
{
    char full[512];
    CURL *c = curl_easy_init();
    long status = 0;
    CURLcode rc;
    struct pv_dynbuf b;

    if (c == NULL) {
        return false;
    }
    pv_dynbuf_init(&b, 4096);
    snprintf(full, sizeof(full), "%s/healthz", url);
    curl_easy_setopt(c, CURLOPT_URL, full);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 1000L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
    rc = curl_easy_perform(c);
    if (rc == CURLE_OK) {
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    }
    curl_easy_cleanup(c);
    pv_dynbuf_free(&b);
    return rc == CURLE_OK && status == 200;
}
