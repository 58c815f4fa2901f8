/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_policy.h - the body shared by the YAML and JSON policy-loader targets
 *
 * Any input must load or fail with one-line diagnostics, never crash. A
 * policy that loads must emit canonical YAML and JSON that load again to a
 * policy with the same hash (the canonical form is a fixed point). A broken
 * property aborts, so that libFuzzer keeps the input. Included by exactly one
 * translation unit per target, hence the static functions.
 */
#ifndef FUZZ_POLICY_H
#define FUZZ_POLICY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"

static void fuzz_fail(const char *what, const char *text, struct model_diags *d)
{
    fprintf(stderr, "fuzz_policy: %s\n", what);
    for (size_t i = 0; d != NULL && i < model_diags_count(d); i++) {
        fprintf(stderr, "  %s\n", model_diags_line(d, i));
    }
    if (text != NULL) {
        fprintf(stderr, "--- canonical text ---\n%s\n", text);
    }
    abort();
}

/* Emit 'p' in one format, reload it, compare hashes. */
static void fuzz_reload(const struct model_policy *p, const char *hash, bool yaml)
{
    struct model_diags *d = model_diags_new();
    struct model_policy *q;
    char h2[65];
    size_t len = 0;
    char *text;

    if (d == NULL) {
        return;
    }
    text = yaml ? model_policy_to_yaml(p, &len) : model_policy_to_json(p, &len);
    if (text == NULL) {
        fuzz_fail(yaml ? "to_yaml failed" : "to_json failed", NULL, NULL);
    }
    q = model_policy_load("canonical", text, len, yaml ? MODEL_FMT_YAML : MODEL_FMT_JSON, d);
    if (q == NULL) {
        fuzz_fail("canonical form does not reload", text, d);
    }
    if (!pv_ok(model_policy_sha256(q, h2)) || strcmp(hash, h2) != 0) {
        fuzz_fail("canonical form reloads to a different hash", text, d);
    }
    model_policy_free(q);
    model_diags_free(d);
    free(text);
}

static void fuzz_policy_one(const uint8_t *data, size_t size, enum model_format fmt)
{
    struct model_diags *d = model_diags_new();
    struct model_policy *p;
    char hash[65];

    if (d == NULL) {
        return;
    }
    p = model_policy_load("fuzz", (const char *)data, size, fmt, d);
    if (p == NULL && model_diags_count(d) == 0) {
        fuzz_fail("load failed without a diagnostic", NULL, NULL);
    }
    for (size_t i = 0; i < model_diags_count(d); i++) {
        const char *line = model_diags_line(d, i);
        if (line == NULL || strchr(line, '\n') != NULL) {
            fuzz_fail("diagnostic line is missing or spans lines", NULL, d);
        }
    }
    if (p != NULL) {
        if (!pv_ok(model_policy_sha256(p, hash))) {
            fuzz_fail("hash failed", NULL, NULL);
        }
        fuzz_reload(p, hash, true);
        fuzz_reload(p, hash, false);
    }
    model_policy_free(p);
    model_diags_free(d);
}

#endif
