/* SPDX-License-Identifier: Apache-2.0 */
/* check_advisor_diff.c - the policy diff of an evaluation's evidence
 * (advisor_policy_diff, advisor/life/advisor_diff.c)
 *
 * On canonical YAML made by the model from a policy and a proposal, as
 * evaluation makes it: a line that did not change is context, never a
 * '-' and '+' pair; a unit whose rule set grows shows its old rules as
 * context and only the new rule as '+'; each hunk is headed by the keys
 * that enclose its first change. Then the hunks themselves (3 lines of
 * context, nearby changes in one hunk) and the bound past which the
 * changed lines are given whole.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advisor/proc/proc.h"
#include "common/pv_dynbuf.h"
#include "model/model.h"

/* The canonical YAML of 'policy', and of it with 'proposal' merged as the
 * advisor merges a rule (marked advisor_proposed) into *after. */
static char *canon(const char *policy, const char *proposal, char **after)
{
    struct model_diags *d = model_diags_new();
    struct model_policy *p =
        model_policy_load("policy.yaml", policy, strlen(policy), MODEL_FMT_AUTO, d);
    struct model_proposal *pr;
    struct model_policy *c;
    char *yaml;

    ck_assert_msg(p != NULL, "policy: %s", model_diags_count(d) > 0 ? model_diags_msg(d, 0) : "");
    pr = model_proposal_load("proposal.json", proposal, strlen(proposal), d);
    ck_assert_ptr_nonnull(pr);
    c = model_policy_merge(p, pr, true, d);
    ck_assert_msg(c != NULL, "merge: %s", model_diags_count(d) > 0 ? model_diags_msg(d, 0) : "");
    yaml = model_policy_to_yaml(p, NULL);
    *after = model_policy_to_yaml(c, NULL);
    ck_assert(yaml != NULL && *after != NULL);
    model_policy_free(c);
    model_policy_free(p);
    model_proposal_free(pr);
    model_diags_free(d);
    return yaml;
}

static void diff_is(const char *policy, const char *proposal, const char *want)
{
    char *after;
    char *before = canon(policy, proposal, &after);
    char *got = advisor_policy_diff(before, after);

    ck_assert_ptr_nonnull(got);
    ck_assert_str_eq(got, want);
    free(got);
    free(before);
    free(after);
}

/* An endpoint whose access preset becomes rules (another rule merged into
 * it) and a later endpoint left alone: 'port: 443' did not change, so it
 * is context, in the hunk and after it. */
START_TEST(test_port_is_context)
{
    diff_is("version: 1\n"
            "network_policies:\n"
            "  github_api:\n"
            "    name: github-api\n"
            "    endpoints:\n"
            "      - {host: api.github.com, port: 443, protocol: rest, enforcement: enforce,\n"
            "         access: read-only}\n"
            "    binaries: [{path: /usr/bin/curl}]\n"
            "  github_git:\n"
            "    name: github-git\n"
            "    endpoints: [{host: github.com, port: 443}]\n"
            "    binaries: [{path: /usr/bin/git}]\n",
            "{\"operations\":[{\"addRule\":{\"ruleName\":\"github_api\",\"rule\":{"
            "\"name\":\"github-api\",\"endpoints\":[{\"host\":\"api.github.com\",\"port\":443,"
            "\"protocol\":\"rest\",\"enforcement\":\"enforce\",\"rules\":[{\"allow\":{"
            "\"method\":\"POST\",\"path\":\"/repos/o/r/issues\"}}]}],"
            "\"binaries\":[{\"path\":\"/usr/bin/curl\"}]}}}]}",
            "@@ network_policies > github_api > endpoints[api.github.com] @@\n"
            "     - host: api.github.com\n"
            "       protocol: rest\n"
            "       enforcement: enforce\n"
            "-      access: read-only\n"
            "       port: 443\n"
            "+      rules:\n"
            "+      - allow:\n"
            "+          method: GET\n"
            "+          path: '**'\n"
            "+      - allow:\n"
            "+          method: HEAD\n"
            "+          path: '**'\n"
            "+      - allow:\n"
            "+          method: OPTIONS\n"
            "+          path: '**'\n"
            "+      - allow:\n"
            "+          method: POST\n"
            "+          path: /repos/o/r/issues\n"
            "     binaries:\n"
            "     - path: /usr/bin/curl\n"
            "   github_git:\n");
}
END_TEST

/* A unit whose rule set grows: the rules it had are context, the new rule
 * alone is '+'; a new policy further on is a hunk of its own, headed by
 * network_policies. */
START_TEST(test_rules_grow)
{
    diff_is("version: 1\n"
            "network_policies:\n"
            "  github:\n"
            "    name: github\n"
            "    endpoints:\n"
            "      - host: api.github.com\n"
            "        port: 443\n"
            "        protocol: rest\n"
            "        enforcement: enforce\n"
            "        rules:\n"
            "          - allow: {method: GET, path: \"/repos/**\"}\n"
            "          - allow: {method: PUT, path: \"/user/**\"}\n"
            "      - {host: uploads.github.com, port: 443}\n"
            "      - {host: codeload.github.com, port: 443}\n"
            "      - {host: objects.githubusercontent.com, port: 443}\n"
            "    binaries: [{path: /usr/bin/curl}]\n"
            "  pypi:\n"
            "    name: pypi\n"
            "    endpoints: [{host: pypi.org, port: 443}]\n"
            "    binaries: [{path: /usr/bin/pip}]\n",
            "{\"operations\":[{\"addRule\":{\"ruleName\":\"github\",\"rule\":{"
            "\"name\":\"github\",\"endpoints\":[{\"host\":\"api.github.com\",\"port\":443,"
            "\"protocol\":\"rest\",\"enforcement\":\"enforce\",\"rules\":[{\"allow\":{"
            "\"method\":\"POST\",\"path\":\"/repos/o/r/issues\"}}]}],"
            "\"binaries\":[{\"path\":\"/usr/bin/curl\"}]}}},"
            "{\"addRule\":{\"ruleName\":\"npm\",\"rule\":{\"name\":\"npm\",\"endpoints\":"
            "[{\"host\":\"registry.npmjs.org\",\"port\":443}],"
            "\"binaries\":[{\"path\":\"/usr/bin/node\"}]}}}]}",
            "@@ network_policies > github > endpoints[api.github.com] > rules @@\n"
            "       - allow:\n"
            "           method: PUT\n"
            "           path: /user/**\n"
            "+      - allow:\n"
            "+          method: POST\n"
            "+          path: /repos/o/r/issues\n"
            "     - host: uploads.github.com\n"
            "       port: 443\n"
            "     - host: codeload.github.com\n"
            "@@ network_policies @@\n"
            "       port: 443\n"
            "     binaries:\n"
            "     - path: /usr/bin/curl\n"
            "+  npm:\n"
            "+    name: npm\n"
            "+    endpoints:\n"
            "+    - host: registry.npmjs.org\n"
            "+      advisor_proposed: true\n"
            "+      port: 443\n"
            "+    binaries:\n"
            "+    - path: /usr/bin/node\n"
            "   pypi:\n"
            "     name: pypi\n"
            "     endpoints:\n");
}
END_TEST

static char *lines(const char *pre, const char *post, int from, int to)
{
    struct pv_dynbuf b;

    pv_dynbuf_init(&b, 1u << 24);
    for (int i = from; i < to; i++) {
        pv_dynbuf_putf(&b, "%s%d%s\n", pre, i, post);
    }
    return pv_dynbuf_finish(&b);
}

/* How often 'what' occurs in 's', in one pass of plain compares: ASan's
 * strstr reads the whole rest of the haystack on each call
 * (strict_string_checks), so a strstr loop made test_bound's 60,000 counts
 * quadratic there (over Check's timeout in .ci/run's ASan step). */
static size_t count(const char *s, const char *what)
{
    size_t n = 0;
    size_t ls = strlen(s);
    size_t lw = strlen(what);

    for (size_t i = 0; lw > 0 && i + lw <= ls; i++) {
        size_t k = 0;
        while (k < lw && s[i + k] == what[k]) {
            k++;
        }
        n += k == lw;
    }
    return n;
}

/* Hunks: equal texts give ""; two changes more than 6 lines apart are two
 * hunks with 3 lines of context each side, 6 apart one; a deletion is
 * headed in the old text; a change at the top is "top level". */
START_TEST(test_hunks)
{
    char *a = lines("k", ": v", 0, 40);
    char *b = pv_strdup(a);
    char *d;

    d = advisor_policy_diff(a, b);
    ck_assert_str_eq(d, "");
    free(d);
    b[strlen("k0: v\nk1: v\nk2: v\nk3: ")] = 'x'; /* line 3 */
    b[strlen(a) - strlen("v\nk39: v\n")] = 'x';   /* line 38 */
    d = advisor_policy_diff(a, b);
    ck_assert_str_eq(d, "@@ top level @@\n k0: v\n k1: v\n k2: v\n-k3: v\n+k3: x\n k4: v\n k5: v\n"
                        " k6: v\n@@ top level @@\n k35: v\n k36: v\n k37: v\n-k38: v\n+k38: x\n"
                        " k39: v\n");
    free(d);
    b[strlen(a) - strlen("v\nk39: v\n")] = 'v';
    b[strlen("k0: v\nk1: v\nk2: v\nk3: v\nk4: v\nk5: v\nk6: v\nk7: v\nk8: v\nk9: v\nk10: ")] = 'x';
    d = advisor_policy_diff(a, b); /* lines 3 and 10: 6 apart */
    ck_assert_uint_eq(count(d, "@@"), 2);
    ck_assert_uint_eq(count(d, "\n "), 12);
    free(d);
    d = advisor_policy_diff("a:\n  b:\n    c: 1\n    d: 2\n", "a:\n  b:\n    d: 2\n");
    ck_assert_str_eq(d, "@@ a > b @@\n a:\n   b:\n-    c: 1\n     d: 2\n");
    free(d);
    free(a);
    free(b);
}
END_TEST

/* Past 1000 edits the changed lines are given whole, '-' then '+', in one
 * hunk with its context: no memory in the square of the texts' sizes. */
START_TEST(test_bound)
{
    char *a = lines("- a", "", 0, 30000);
    char *b = lines("- b", "", 0, 30000);
    char *ha = malloc(strlen(a) + 64);
    char *hb = malloc(strlen(b) + 64);
    char *d;

    ck_assert(ha != NULL && hb != NULL);
    snprintf(ha, strlen(a) + 64, "x: 1\nlist:\n%sy: 2\n", a);
    snprintf(hb, strlen(b) + 64, "x: 1\nlist:\n%sy: 2\n", b);
    d = advisor_policy_diff(ha, hb);
    ck_assert_ptr_nonnull(d);
    ck_assert_uint_eq(count(d, "@@ list @@\n x: 1\n list:\n-- a0\n"), 1);
    ck_assert_uint_eq(count(d, "\n-- a"), 30000);
    ck_assert_uint_eq(count(d, "\n+- b"), 30000);
    ck_assert_ptr_nonnull(strstr(d, "\n-- a29999\n+- b0\n"));
    ck_assert_ptr_nonnull(strstr(d, "\n+- b29999\n y: 2\n"));
    free(d);
    free(ha);
    free(hb);
    free(a);
    free(b);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("advisor_diff");
    TCase *t = tcase_create("diff");

    tcase_add_test(t, test_port_is_context);
    tcase_add_test(t, test_rules_grow);
    tcase_add_test(t, test_hunks);
    tcase_add_test(t, test_bound);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    SRunner *r = srunner_create(suite());
    int failed;

    srunner_run_all(r, CK_NORMAL);
    failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
