/* SPDX-License-Identifier: Apache-2.0 */
/* check_prover_report.c - reference strings and the JSON schema of prover results
 *
 * The shorthand rows are compat/units/020-023 verbatim; validation_result
 * follows the reference's wording (N counts categories, "finding" for one); the JSON
 * rows check the schema other tools read (docs/internals/prover.md).
 */
#include "config.h"

#include <jansson.h>

#include "tests/check_prover_util.h"

static struct prover_path mkpath(enum prover_category cat, const char *bin, const char *host,
                                 uint16_t port, const char *method)
{
    struct prover_path p;

    memset(&p, 0, sizeof(p));
    p.cat = cat;
    p.binary = strdup(bin);
    p.host = strdup(host);
    p.port = port;
    p.method = method != NULL ? strdup(method) : NULL;
    p.rule = strdup("rule");
    p.route = MODEL_ROUTE_INSPECTED;
    p.w.binary = strdup(bin);
    p.w.host = strdup(host[0] == '*' ? "a.github.com" : host);
    p.w.port = port;
    p.w.method = strdup(method != NULL ? method : "GET");
    p.w.path = strdup("/");
    p.w.query = strdup("");
    p.w.ip = strdup("93.184.216.34");
    return p;
}

static struct prover_result *mkresult(enum prover_verdict v, const struct prover_path *paths,
                                      size_t n, enum prover_unknown why)
{
    struct prover_result *r = calloc(1, sizeof(*r));

    ck_assert_ptr_nonnull(r);
    r->verdict = v;
    r->unknown = why;
    r->paths = calloc(n + 1, sizeof(*r->paths));
    ck_assert_ptr_nonnull(r->paths);
    if (n > 0) {
        memcpy(r->paths, paths, n * sizeof(*paths));
    }
    r->npaths = n;
    memset(r->inputs_sha256, 'a', 64);
    return r;
}

/* ---------------------------------------------------------------------------
 * Shorthand (compat units 020-023) and negative rows
 * ------------------------------------------------------------------------- */

static const struct {
    enum prover_category cat;
    const char *bin, *host;
    uint16_t port;
    const char *method;
    const char *want;
    bool equal; /* false: 'want' must NOT be the output */
} shorthand_rows[] = {
    {PROVER_CAT_CAPABILITY, "/usr/bin/curl", "api.github.com", 443, "PUT",
     "capability_expansion: PUT on api.github.com:443 via /usr/bin/curl", true},
    {PROVER_CAT_CRED_REACH, "/usr/bin/curl", "uploads.github.com", 443, NULL,
     "credential_reach_expansion: uploads.github.com:443 via /usr/bin/curl", true},
    {PROVER_CAT_LINK_LOCAL, "/usr/bin/curl", "169.254.169.254", 80, NULL,
     "link_local_reach: 169.254.169.254:80 via /usr/bin/curl", true},
    {PROVER_CAT_L7_BYPASS, "/usr/bin/curl", "github.com", 443, NULL,
     "l7_bypass_credentialed: github.com:443 via /usr/bin/curl", true},
    {PROVER_CAT_PRIVATE_REACH, "/usr/bin/curl", "*.corp.example.com", 8443, NULL,
     "private_reach_expansion: *.corp.example.com:8443 via /usr/bin/curl", true},
    /* the host is the pattern as written, never the witness host */
    {PROVER_CAT_CRED_REACH, "/usr/bin/curl", "*.github.com", 443, NULL,
     "credential_reach_expansion: a.github.com:443 via /usr/bin/curl", false},
    /* only capability paths name a method */
    {PROVER_CAT_CRED_REACH, "/usr/bin/curl", "api.github.com", 443, "PUT",
     "credential_reach_expansion: PUT on api.github.com:443 via /usr/bin/curl", false},
};

START_TEST(test_shorthand)
{
    struct prover_path p =
        mkpath(shorthand_rows[_i].cat, shorthand_rows[_i].bin, shorthand_rows[_i].host,
               shorthand_rows[_i].port, shorthand_rows[_i].method);
    struct prover_result *r = mkresult(PROVER_VERDICT_FINDINGS, &p, 1, PROVER_UNKNOWN_NONE);
    char *s = prover_path_shorthand(&r->paths[0]);

    ck_assert_ptr_nonnull(s);
    if (shorthand_rows[_i].equal) {
        ck_assert_str_eq(s, shorthand_rows[_i].want);
    } else {
        ck_assert_str_ne(s, shorthand_rows[_i].want);
    }
    free(s);
    prover_result_free(r);
}
END_TEST

/* ---------------------------------------------------------------------------
 * validation_result
 * ------------------------------------------------------------------------- */

START_TEST(test_validation_none)
{
    struct prover_result *r = mkresult(PROVER_VERDICT_EMPTY, NULL, 0, PROVER_UNKNOWN_NONE);
    char *s = prover_validation_result(r);

    ck_assert_str_eq(s, "prover: no new findings");
    free(s);
    prover_result_free(r);
}
END_TEST

START_TEST(test_validation_one)
{
    struct prover_path p =
        mkpath(PROVER_CAT_CRED_REACH, "/usr/bin/curl", "api.github.com", 443, NULL);
    struct prover_result *r = mkresult(PROVER_VERDICT_FINDINGS, &p, 1, PROVER_UNKNOWN_NONE);
    char *s = prover_validation_result(r);

    /* advisor.md V3 */
    ck_assert_str_eq(s, "prover: 1 new finding\n  credential_reach_expansion: "
                        "api.github.com:443 via /usr/bin/curl");
    free(s);
    prover_result_free(r);
}
END_TEST

START_TEST(test_validation_counts_categories)
{
    struct prover_path p[3] = {
        mkpath(PROVER_CAT_LINK_LOCAL, "/usr/bin/curl", "169.254.169.254", 80, NULL),
        mkpath(PROVER_CAT_CAPABILITY, "/usr/bin/curl", "api.github.com", 443, "DELETE"),
        mkpath(PROVER_CAT_CAPABILITY, "/usr/bin/curl", "api.github.com", 443, "PUT"),
    };
    struct prover_result *r = mkresult(PROVER_VERDICT_FINDINGS, p, 3, PROVER_UNKNOWN_NONE);
    char *s = prover_validation_result(r);

    /* N counts categories (2), not paths (3); plural "findings". */
    ck_assert_str_eq(s, "prover: 2 new findings\n"
                        "  link_local_reach: 169.254.169.254:80 via /usr/bin/curl\n"
                        "  capability_expansion: DELETE on api.github.com:443 via /usr/bin/curl\n"
                        "  capability_expansion: PUT on api.github.com:443 via /usr/bin/curl");
    ck_assert_ptr_null(strstr(s, "3 new"));
    ck_assert_uint_eq(prover_result_ncategories(r), 2);
    free(s);
    prover_result_free(r);
}
END_TEST

START_TEST(test_validation_unknown)
{
    struct prover_path p =
        mkpath(PROVER_CAT_CRED_REACH, "/usr/bin/curl", "api.github.com", 443, NULL);
    struct prover_result *r = mkresult(PROVER_VERDICT_UNKNOWN, &p, 1, PROVER_UNKNOWN_TIMEOUT);
    char *s = prover_validation_result(r);

    /* unknown never reads as "no new findings", even with partial evidence */
    ck_assert_str_eq(s, "prover: unknown (timeout)");
    free(s);
    prover_result_free(r);
}
END_TEST

START_TEST(test_validation_check)
{
    struct prover_path p = mkpath(PROVER_CAT_BOUNDARY, "/usr/bin/curl", "a.example.com", 443, NULL);
    struct prover_result *r = mkresult(PROVER_VERDICT_EXCEEDS, &p, 1, PROVER_UNKNOWN_NONE);
    struct prover_result *w = mkresult(PROVER_VERDICT_WITHIN, NULL, 0, PROVER_UNKNOWN_NONE);
    char *s = prover_validation_result(r);
    char *t = prover_validation_result(w);

    ck_assert_str_eq(s, "check: exceeds boundary\n  boundary_exceeded: a.example.com:443 via "
                        "/usr/bin/curl");
    ck_assert_str_eq(t, "check: within boundary");
    free(s);
    free(t);
    prover_result_free(r);
    prover_result_free(w);
}
END_TEST

/* ---------------------------------------------------------------------------
 * JSON
 * ------------------------------------------------------------------------- */

START_TEST(test_json_shape)
{
    struct prover_path p[2] = {
        mkpath(PROVER_CAT_CRED_REACH, "/usr/bin/curl", "*.github.com", 443, NULL),
        mkpath(PROVER_CAT_CAPABILITY, "/usr/bin/gh", "api.github.com", 443, "PUT"),
    };
    struct prover_result *r;
    json_t *j;
    json_t *f;
    json_t *path;
    json_t *w;

    p[1].w.api = strdup("github");
    p[1].w.action = strdup("write_file");
    p[1].w.risk = strdup("high");
    p[0].creds = calloc(1, sizeof(char *));
    p[0].creds[0] = strdup("github-pat");
    p[0].ncreds = 1;
    r = mkresult(PROVER_VERDICT_FINDINGS, p, 2, PROVER_UNKNOWN_NONE);
    j = prover_result_to_json(r);
    ck_assert_ptr_nonnull(j);
    ck_assert_str_eq(json_string_value(json_object_get(j, "verdict")), "findings");
    ck_assert_uint_eq(json_array_size(json_object_get(j, "categories")), 2);
    ck_assert_str_eq(json_string_value(json_array_get(json_object_get(j, "categories"), 0)),
                     "credential_reach_expansion");
    ck_assert(json_is_string(json_object_get(j, "validation_result")));
    ck_assert(json_is_string(json_object_get(j, "prover_version")));
    ck_assert_uint_eq(strlen(json_string_value(json_object_get(j, "inputs_sha256"))), 64);
    ck_assert(json_is_integer(json_object_get(j, "elapsed_ms")));
    ck_assert_ptr_null(json_object_get(j, "reason"));
    f = json_array_get(json_object_get(j, "findings"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(f, "category")),
                     "credential_reach_expansion");
    path = json_array_get(json_object_get(f, "paths"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(path, "host")), "*.github.com");
    ck_assert_int_eq(json_integer_value(json_object_get(path, "port")), 443);
    ck_assert_ptr_null(json_object_get(path, "method")); /* only capability paths */
    ck_assert_str_eq(json_string_value(json_object_get(path, "rule")), "rule");
    ck_assert_str_eq(json_string_value(json_object_get(path, "route")), "inspected");
    ck_assert_str_eq(json_string_value(json_array_get(json_object_get(path, "credentials"), 0)),
                     "github-pat");
    w = json_object_get(path, "witness");
    ck_assert_str_eq(json_string_value(json_object_get(w, "host")), "a.github.com");
    ck_assert_str_eq(json_string_value(json_object_get(w, "ip")), "93.184.216.34");
    ck_assert(json_is_null(json_object_get(w, "api")));
    f = json_array_get(json_object_get(j, "findings"), 1);
    path = json_array_get(json_object_get(f, "paths"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(path, "method")), "PUT");
    w = json_object_get(path, "witness");
    ck_assert_str_eq(json_string_value(json_object_get(w, "action")), "write_file");
    ck_assert_str_eq(json_string_value(json_object_get(w, "risk")), "high");
    json_decref(j);
    prover_result_free(r);
}
END_TEST

/* A category of more paths than a reader can use: the JSON lists the first
 * 1,000 with the total and the (binary, port) groups; validation_result and
 * the text report print the groups instead of the paths. */
START_TEST(test_many_paths_grouped)
{
    enum { N = 1203 };
    struct prover_path *p = calloc(N, sizeof(*p));
    struct prover_result *r;
    json_t *j, *f, *g;
    char *vr, *txt;
    size_t sum = 0;

    ck_assert_ptr_nonnull(p);
    for (size_t i = 0; i < N; i++) {
        char host[64];

        /* three binaries; the curl paths on two ports; hosts repeat per port */
        (void)snprintf(host, sizeof(host), "svc%zu.corp.example.com", i / 2);
        p[i] = mkpath(PROVER_CAT_PRIVATE_REACH,
                      i % 3 == 0   ? "/usr/bin/curl"
                      : i % 3 == 1 ? "/usr/bin/git"
                                   : "/usr/bin/gh",
                      host, i % 3 == 0 && i % 2 == 0 ? 8443 : 443, NULL);
    }
    r = mkresult(PROVER_VERDICT_FINDINGS, p, N, PROVER_UNKNOWN_NONE);
    free(p);
    j = prover_result_to_json(r);
    ck_assert_ptr_nonnull(j);
    f = json_array_get(json_object_get(j, "findings"), 0);
    ck_assert_uint_eq(json_array_size(json_object_get(f, "paths")), 1000);
    ck_assert_int_eq(json_integer_value(json_object_get(f, "paths_total")), N);
    g = json_object_get(f, "groups");
    ck_assert_uint_eq(json_array_size(g), 4); /* curl:443, curl:8443, gh:443, git:443 */
    for (size_t i = 0; i < json_array_size(g); i++) {
        json_t *e = json_array_get(g, i);

        sum += (size_t)json_integer_value(json_object_get(e, "paths"));
        ck_assert_uint_le(json_array_size(json_object_get(e, "examples")), 3);
    }
    ck_assert_uint_eq(sum, N);
    g = json_array_get(json_object_get(f, "groups"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(g, "binary")), "/usr/bin/curl");
    ck_assert_int_eq(json_integer_value(json_object_get(g, "port")), 443);
    ck_assert_int_eq(json_integer_value(json_object_get(g, "paths")), 200);
    ck_assert_int_eq(json_integer_value(json_object_get(g, "hosts")), 200);
    vr = prover_validation_result(r);
    ck_assert_ptr_nonnull(vr);
    ck_assert_ptr_nonnull(strstr(vr, "prover: 1 new finding\n  private_reach_expansion: 200 paths "
                                     "via /usr/bin/curl on port 443 (200 hosts: "));
    ck_assert_ptr_null(strstr(vr, "via /usr/bin/curl\n")); /* no path lines */
    txt = prover_result_text(r);
    ck_assert_ptr_nonnull(txt);
    ck_assert_ptr_nonnull(strstr(txt, "1203 paths in 4 groups"));
    ck_assert_ptr_null(strstr(txt, "witness:"));
    free(vr);
    free(txt);
    json_decref(j);
    prover_result_free(r);
}
END_TEST

/* At the bound every path is still listed, one line each. */
START_TEST(test_paths_listed_up_to_bound)
{
    enum { N = 1000 };
    struct prover_path *p = calloc(N, sizeof(*p));
    struct prover_result *r;
    json_t *j, *f;
    char *vr;
    size_t lines = 0;

    ck_assert_ptr_nonnull(p);
    for (size_t i = 0; i < N; i++) {
        char host[64];

        (void)snprintf(host, sizeof(host), "svc%04zu.corp.example.com", i);
        p[i] = mkpath(PROVER_CAT_PRIVATE_REACH, "/usr/bin/curl", host, 443, NULL);
    }
    r = mkresult(PROVER_VERDICT_FINDINGS, p, N, PROVER_UNKNOWN_NONE);
    free(p);
    j = prover_result_to_json(r);
    f = json_array_get(json_object_get(j, "findings"), 0);
    ck_assert_uint_eq(json_array_size(json_object_get(f, "paths")), N);
    ck_assert_int_eq(json_integer_value(json_object_get(f, "paths_total")), N);
    vr = prover_validation_result(r);
    for (const char *c = vr; (c = strstr(c, "\n  private_reach_expansion: svc")) != NULL; c++) {
        lines++;
    }
    ck_assert_uint_eq(lines, N);
    free(vr);
    json_decref(j);
    prover_result_free(r);
}
END_TEST

START_TEST(test_json_unknown_and_invalid)
{
    struct prover_result *r = mkresult(PROVER_VERDICT_UNKNOWN, NULL, 0, PROVER_UNKNOWN_TIMEOUT);
    json_t *j = prover_result_to_json(r);
    json_t *inv = prover_invalid_json("invalid_policy", "p.yaml:3:5: bad");

    ck_assert_str_eq(json_string_value(json_object_get(j, "verdict")), "unknown");
    ck_assert_str_eq(json_string_value(json_object_get(j, "reason")), "timeout");
    ck_assert_uint_eq(json_array_size(json_object_get(j, "findings")), 0);
    ck_assert_str_eq(json_string_value(json_object_get(inv, "verdict")), "invalid");
    ck_assert_str_eq(json_string_value(json_object_get(inv, "error")), "invalid_policy");
    ck_assert_str_eq(json_string_value(json_object_get(inv, "detail")), "p.yaml:3:5: bad");
    json_decref(j);
    json_decref(inv);
    prover_result_free(r);
}
END_TEST

START_TEST(test_text_has_evidence)
{
    struct prover_path p =
        mkpath(PROVER_CAT_CAPABILITY, "/usr/bin/curl", "api.github.com", 443, "DELETE");
    struct prover_result *r = mkresult(PROVER_VERDICT_FINDINGS, &p, 1, PROVER_UNKNOWN_NONE);
    char *t = prover_result_text(r);

    ck_assert_ptr_nonnull(strstr(t, "verdict: findings"));
    ck_assert_ptr_nonnull(strstr(t, "capability_expansion: DELETE on api.github.com:443"));
    ck_assert_ptr_nonnull(strstr(t, "witness: DELETE api.github.com:443 /"));
    ck_assert_ptr_null(strstr(t, "no new findings"));
    free(t);
    prover_result_free(r);
}
END_TEST

START_TEST(test_names)
{
    ck_assert_str_eq(prover_category_name(PROVER_CAT_LINK_LOCAL), "link_local_reach");
    ck_assert_str_eq(prover_category_name(PROVER_CAT_L7_BYPASS), "l7_bypass_credentialed");
    ck_assert_str_eq(prover_category_name(PROVER_CAT_CRED_REACH), "credential_reach_expansion");
    ck_assert_str_eq(prover_category_name(PROVER_CAT_CAPABILITY), "capability_expansion");
    ck_assert_str_eq(prover_category_name(PROVER_CAT_PRIVATE_REACH), "private_reach_expansion");
    ck_assert_str_eq(prover_category_name((enum prover_category)99), "unknown");
    ck_assert_str_eq(prover_verdict_name(PROVER_VERDICT_EMPTY), "empty");
    ck_assert_str_eq(prover_verdict_name(PROVER_VERDICT_EXCEEDS), "exceeds");
}
END_TEST

/* The category table: every row has a distinct snake_case name and a
 * summary, the CHECK-mode row is reported only by CHECK, and the rows that
 * need credentials are the three credentialed-host categories. */
START_TEST(test_category_table)
{
    ck_assert_int_eq(PROVER_CAT__COUNT, 6);
    for (int c = 0; c < PROVER_CAT__COUNT; c++) {
        const char *n = prover_category_name((enum prover_category)c);

        ck_assert_str_ne(n, "unknown");
        ck_assert_uint_eq(strspn(n, "abcdefghijklmnopqrstuvwxyz0123456789_"), strlen(n));
        ck_assert_uint_gt(strlen(prover_category_summary((enum prover_category)c)), 10);
        for (int d = 0; d < c; d++) {
            ck_assert_str_ne(n, prover_category_name((enum prover_category)d));
        }
        ck_assert(prover_category_in_mode((enum prover_category)c, PROVER_DELTA) ==
                  prover_category_in_mode((enum prover_category)c, PROVER_AUDIT));
        ck_assert(prover_category_in_mode((enum prover_category)c, PROVER_DELTA) !=
                  prover_category_in_mode((enum prover_category)c, PROVER_CHECK));
    }
    ck_assert(prover_category_in_mode(PROVER_CAT_BOUNDARY, PROVER_CHECK));
    ck_assert(!prover_category_in_mode(PROVER_CAT_BOUNDARY, PROVER_DELTA));
    ck_assert(prover_category_in_mode(PROVER_CAT_LINK_LOCAL, PROVER_DELTA));
    ck_assert(prover_category_needs_creds(PROVER_CAT_L7_BYPASS));
    ck_assert(prover_category_needs_creds(PROVER_CAT_CRED_REACH));
    ck_assert(prover_category_needs_creds(PROVER_CAT_CAPABILITY));
    ck_assert(!prover_category_needs_creds(PROVER_CAT_LINK_LOCAL));
    ck_assert(!prover_category_needs_creds(PROVER_CAT_PRIVATE_REACH));
    ck_assert(!prover_category_needs_creds(PROVER_CAT_BOUNDARY));
    /* out of range: the fail-closed answers */
    ck_assert_str_eq(prover_category_summary((enum prover_category)PROVER_CAT__COUNT), "unknown");
    ck_assert(!prover_category_in_mode((enum prover_category) - 1, PROVER_DELTA));
    ck_assert(!prover_category_needs_creds((enum prover_category)PROVER_CAT__COUNT));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("prover_report");
    TCase *tc = tcase_create("report");
    SRunner *sr;
    int failed;

    tcase_add_loop_test(tc, test_shorthand, 0, (int)PV_ARRAY_LEN(shorthand_rows));
    tcase_add_test(tc, test_category_table);
    tcase_add_test(tc, test_validation_none);
    tcase_add_test(tc, test_validation_one);
    tcase_add_test(tc, test_validation_counts_categories);
    tcase_add_test(tc, test_validation_unknown);
    tcase_add_test(tc, test_validation_check);
    tcase_add_test(tc, test_json_shape);
    tcase_add_test(tc, test_json_unknown_and_invalid);
    tcase_add_test(tc, test_many_paths_grouped);
    tcase_add_test(tc, test_paths_listed_up_to_bound);
    tcase_add_test(tc, test_text_has_evidence);
    tcase_add_test(tc, test_names);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
