/* SPDX-License-Identifier: Apache-2.0 */
/* check_prover_util.h - helpers shared by the prover's Check tests
 *
 * Header-only (static functions) so each test program stays one file plus
 * this header: load policies and credentials from strings, run a proof, and
 * render the category set as a comma-separated string in report order.
 */
#ifndef CHECK_PROVER_UTIL_H
#define CHECK_PROVER_UTIL_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "prover/prover.h"

__attribute__((unused)) static struct model_policy *tp_policy(const char *name, const char *text)
{
    struct model_diags *d = model_diags_new();
    struct model_policy *p;

    ck_assert_ptr_nonnull(d);
    p = model_policy_load(name, text, strlen(text), MODEL_FMT_AUTO, d);
    if (p == NULL) {
        for (size_t i = 0; i < model_diags_count(d); i++) {
            fprintf(stderr, "%s\n", model_diags_line(d, i));
        }
    }
    model_diags_free(d);
    ck_assert_msg(p != NULL, "policy %s does not load", name);
    return p;
}

__attribute__((unused)) static struct model_credset *tp_creds(const char *text)
{
    struct model_diags *d = model_diags_new();
    struct model_credset *c;

    ck_assert_ptr_nonnull(d);
    if (text == NULL) {
        model_diags_free(d);
        return model_credset_new_empty();
    }
    c = model_credset_load("creds", text, strlen(text), d);
    if (c == NULL) {
        for (size_t i = 0; i < model_diags_count(d); i++) {
            fprintf(stderr, "%s\n", model_diags_line(d, i));
        }
    }
    model_diags_free(d);
    ck_assert_msg(c != NULL, "credentials do not load");
    return c;
}

__attribute__((unused)) static struct model_registry *tp_registry(void)
{
    struct model_diags *d = model_diags_new();
    struct model_registry *r = model_registry_embedded(d);

    model_diags_free(d);
    ck_assert_ptr_nonnull(r);
    return r;
}

/* "cat1,cat2" in report order (new string). */
__attribute__((unused)) static char *tp_categories(const struct prover_result *r)
{
    char *out = calloc(1, 512);
    bool seen[PROVER_CAT__COUNT] = {false};
    size_t len = 0;

    ck_assert_ptr_nonnull(out);
    for (size_t i = 0; i < r->npaths; i++) {
        seen[r->paths[i].cat] = true;
    }
    for (int c = 0; c < PROVER_CAT__COUNT; c++) {
        if (seen[c]) {
            int n = snprintf(out + len, 512 - len, "%s%s", len ? "," : "",
                             prover_category_name((enum prover_category)c));

            ck_assert(n > 0 && (size_t)n < 512 - len);
            len += (size_t)n;
        }
    }
    return out;
}

#endif
