/* SPDX-License-Identifier: Apache-2.0 */
/* advisor_integrity.c - what the store serves against what it recorded
 *
 * An effective revision is a row (version, hash, blob) and a blob. The
 * audit chain binds the hash; nothing but this file binds the blob to it.
 * Someone who can write the store but has no audit key could point the
 * latest row at a wider policy and leave its hash alone: the start check
 * (which compares hashes) and the proxy's loaded report would both still
 * name the recorded hash. So every path that serves or builds on a
 * revision's text reads it through advisor_rev_text, which parses the blob
 * and hashes the policy it holds (model_policy_sha256, the same hash the
 * revision records) and refuses a revision whose text hashes elsewhere
 * (docs/advisor.md#integrity). Refusals are logged loudly and counted for
 * GET /metrics.
 *
 * The same holds for the inputs of decisions (settings, credentials,
 * boundaries, addresses, tool servers, the token digest): every record
 * that changes one carries advisor_inputs_json of its scope, and
 * advisor_inputs_backed (advisor_events.c, beside the fold of the chain it
 * reads) holds the store's inputs against the chain's before anything is
 * decided on them (docs/audit.md#inputs). This file calls no other of the
 * advisor's files but the helpers: the record (advisor_events.c) calls it.
 */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advisor/core/core.h"
#include "advisor/store/store.h"
#include "common/pv_log.h"
#include "common/pv_settings.h"
#include "model/model.h"

static _Atomic uint64_t unbacked_total;

uint64_t advisor_unbacked_total(void)
{
    return atomic_load(&unbacked_total);
}

pv_result advisor_rev_content_hash(const char *yaml, size_t len, char out[65])
{
    struct model_diags *d = model_diags_new();
    struct model_policy *p =
        d != NULL ? model_policy_load("effective", yaml, len, MODEL_FMT_YAML, d) : NULL;
    pv_result r = p != NULL ? model_policy_sha256(p, out) : pv_fail(PV_ERR_POLICY, __func__);

    model_policy_free(p);
    model_diags_free(d);
    if (!pv_ok(r)) {
        out[0] = '\0';
    }
    return r;
}

char *advisor_rev_text(struct store *st, const char *sandbox, const struct store_revision *rev,
                       size_t *len)
{
    size_t n = 0;
    char *yaml = store_blob_get(st, rev->blob, &n);
    char content[65] = "";

    if (yaml == NULL) {
        pv_errno = PV_ERR_IO;
        return NULL;
    }
    if (pv_ok(advisor_rev_content_hash(yaml, n, content)) && strcmp(content, rev->hash) == 0) {
        if (len != NULL) {
            *len = n;
        }
        return yaml;
    }
    free(yaml);
    atomic_fetch_add(&unbacked_total, 1);
    pv_log_warnx("INTEGRITY: sandbox %s revision v%lld: its policy (blob %.16s...) hashes to %s, "
                 "the revision records %s: the store was changed without the advisor; the "
                 "revision is not served and proxies keep the revision they enforce "
                 "(docs/advisor.md#integrity)",
                 sandbox, (long long)rev->rev, rev->blob,
                 content[0] != '\0' ? content
                                    : "nothing "
                                      "(it does not load)",
                 rev->hash);
    pv_errno = PV_ERR_CONFLICT;
    return NULL;
}

/* ===========================================================================
 * The inputs of a decision, bound to the chain (docs/audit.md#inputs)
 * ========================================================================= */

/* 'key' -> the SHA-256 of 'text' in 'o'; nothing for an absent or empty
 * text (an unset input). */
static void put_digest(json_t *o, const char *key, const char *text, size_t len)
{
    char digest[65];

    if (text == NULL || len == 0) {
        return;
    }
    advisor_sha256_hex(text, len, digest);
    json_object_set_new(o, key, json_string(digest));
}

static pv_result put_settings(struct store *st, const char *scope, json_t *o)
{
    char key[96];

    for (int i = 0; i <= PV_SET__COUNT; i++) {
        const char *k =
            i < PV_SET__COUNT ? pv_setting_key((enum pv_setting)i) : ADVISOR_BOUNDARY_KEY;
        char *v = NULL;
        PV_GUARD(store_setting_read(st, scope, k, &v));
        snprintf(key, sizeof(key), "setting:%s", k);
        put_digest(o, key, v, v != NULL ? strlen(v) : 0);
        free(v);
    }
    return PV_RESULT_OK;
}

static void put_server(void *arg, const struct store_server *sv)
{
    char key[160];
    size_t n = strlen(sv->base_url) + strlen(sv->openapi_blob) + 2;
    char *both = pv_calloc(n, 1);

    snprintf(key, sizeof(key), "server:%s", sv->name);
    if (both != NULL) {
        snprintf(both, n, "%s\n%s", sv->base_url, sv->openapi_blob);
    } else {
        json_object_set_new(arg, key, json_string("(out of memory)"));
        return;
    }
    put_digest(arg, key, both, strlen(both));
    free(both);
}

static pv_result put_sandbox(struct store *st, const char *name, json_t *o)
{
    struct store_sandbox sb;
    pv_result r;

    PV_GUARD(store_sandbox_get(st, name, &sb));
    /* who may act as the sandbox (propose, register, report) */
    put_digest(o, "token", sb.token_sha256, strlen(sb.token_sha256));
    put_digest(o, "credentials", sb.credentials, strlen(sb.credentials));
    put_digest(o, "boundary", sb.boundary, strlen(sb.boundary));
    if (strcmp(sb.addresses, "[]") != 0) {
        put_digest(o, "addresses", sb.addresses, strlen(sb.addresses));
    }
    r = store_server_each(st, sb.id, put_server, o);
    store_sandbox_clear(&sb);
    return r;
}

pv_result advisor_inputs_json(struct store *st, const char *scope, json_t **out)
{
    json_t *o = json_object();
    pv_result r = o != NULL ? put_settings(st, scope, o) : pv_fail(PV_ERR_NOMEM, __func__);

    if (pv_ok(r) && scope[0] != '\0') {
        r = put_sandbox(st, scope, o);
    }
    if (!pv_ok(r)) {
        json_decref(o);
        *out = NULL;
        return r;
    }
    *out = o;
    return PV_RESULT_OK;
}

bool advisor_inputs_kind(const char *kind)
{
    static const char *const kinds[] = {"CONFIG:CREATED", "CONFIG:SETTING", "CONFIG:REGISTERED",
                                        "CONFIG:SERVER", "CONFIG:INPUTS"};

    for (size_t i = 0; i < PV_ARRAY_LEN(kinds); i++) {
        if (strcmp(kind, kinds[i]) == 0) {
            return true;
        }
    }
    return false;
}
