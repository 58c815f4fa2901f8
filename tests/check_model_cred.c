/* SPDX-License-Identifier: Apache-2.0 */
/* check_model_cred.c - credential files, host coverage and reference overlap
 *
 * The overlap rows are the compat unit vectors 030-035
 * (the reference's credential tests, docs/reference-compat.md) embedded as
 * a table and checked in both argument orders, plus negative rows of our
 * own. Coverage rows check normalisation (case, trailing dot, IP spellings)
 * and that wildcards never match IP hosts. File rows check the strict
 * schema: every error has its file:line:col.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/model.h"

static bool diags_have(struct model_diags *d, const char *want)
{
    for (size_t i = 0; i < model_diags_count(d); i++) {
        if (strstr(model_diags_line(d, i), want) != NULL) {
            return true;
        }
    }
    return false;
}

static void dump_diags(struct model_diags *d)
{
    for (size_t i = 0; i < model_diags_count(d); i++) {
        fprintf(stderr, "  diag: %s\n", model_diags_line(d, i));
    }
}

/* ===========================================================================
 * model_host_patterns_overlap: compat units 030-035
 * ========================================================================= */

struct overlap_case {
    const char *unit;
    const char *left;
    const char *right;
    bool overlap;
};

static const struct overlap_case overlap_cases[] = {
    {"030", "API.GITHUB.COM.", "api.github.com", true},
    {"030", "api.github.com", "uploads.github.com", false},
    {"031", "*.github.com", "api.github.com", true},
    {"031", "*.github.com", "github.com", false},
    {"031", "*.github.com", "deep.api.github.com", false},
    {"032", "api-*.github.com", "api-v3.github.com", true},
    {"032", "api-*.github.com", "uploads.github.com", false},
    {"033", "api.*.github.com", "api.v3.github.com", true},
    {"033", "*.s3.*.amazonaws.com", "bucket.s3.us-east-1.amazonaws.com", true},
    {"033", "s3.*.amazonaws.com", "s3.eu-west-1.amazonaws.com", true},
    {"033", "s3.*.amazonaws.com", "s3.amazonaws.com", false},
    {"033", "*.s3.*.amazonaws.com", "bucket.s3.dualstack.us-east-1.amazonaws.com", false},
    {"033", "api.*.github.com", "api.v3.gitlab.com", false},
    {"034", "**.github.com", "api.github.com", true},
    {"034", "**.github.com", "deep.api.github.com", true},
    {"034", "**.github.com", "github.com", false},
    {"035", "*.github.com", "api.github.com", true},
    /* Ours: normalisation, empty sides, label rules. */
    {"own", "  api.github.com  ", "api.github.com..", true},
    {"own", "", "api.github.com", false},
    {"own", "   ", "   ", false},
    {"own", ".", "api.github.com", false},
    {"own", "*.github.com", "*.github.com", true},
    {"own", "*.github.com", "**.github.com", true},
    {"own", "*-api.googleapis.com", "storage-api.googleapis.com", true},
    {"own", "*-api.googleapis.com", "storage.googleapis.com", false},
    {"own", "a*b*c.example.com", "aXXbYYc.example.com", true},
    {"own", "a*b*c.example.com", "aXXcYYb.example.com", false},
    {"own", "**.a.example.com", "b.example.com", false},
    {"own", "api.github.com", "api.github.co", false},
};

START_TEST(test_overlap)
{
    const struct overlap_case *c = &overlap_cases[_i];

    ck_assert_msg(model_host_patterns_overlap(c->left, c->right) == c->overlap,
                  "unit %s: '%s' vs '%s'", c->unit, c->left, c->right);
    ck_assert_msg(model_host_patterns_overlap(c->right, c->left) == c->overlap,
                  "unit %s (swapped): '%s' vs '%s'", c->unit, c->right, c->left);
}
END_TEST

START_TEST(test_overlap_null)
{
    ck_assert(!model_host_patterns_overlap(NULL, "a.com"));
    ck_assert(!model_host_patterns_overlap("a.com", NULL));
}
END_TEST

/* Compat 035: credentials_for_host('*.github.com') finds the credential
 * whose concrete target it overlaps. */
START_TEST(test_credentials_for_wildcard_host)
{
    static const char text[] = "credentials:\n"
                               "- name: github-pat\n"
                               "  type: github-pat\n"
                               "  scopes:\n"
                               "  - repo\n"
                               "  injected_via: GITHUB_TOKEN\n"
                               "  target_hosts:\n"
                               "  - api.github.com\n"
                               "- name: other\n"
                               "  target_hosts: [api.gitlab.com]\n";
    struct model_diags *d = model_diags_new();
    struct model_credset *c = model_credset_load("c.yaml", text, strlen(text), d);

    ck_assert_ptr_nonnull(c);
    ck_assert_uint_eq(model_credset_count(c), 2);
    ck_assert(model_cred_overlaps(c, 0, "*.github.com"));
    ck_assert(!model_cred_overlaps(c, 1, "*.github.com"));
    ck_assert(model_cred_overlaps(c, 1, "**.gitlab.com"));
    ck_assert(!model_cred_overlaps(c, 2, "*.github.com"));
    ck_assert(!model_cred_overlaps(c, 0, NULL));
    ck_assert_str_eq(model_cred_name(c, 0), "github-pat");
    ck_assert_str_eq(model_cred_type(c, 0), "github-pat");
    ck_assert_str_eq(model_cred_injected_via(c, 0), "GITHUB_TOKEN");
    ck_assert_uint_eq(model_cred_nscopes(c, 0), 1);
    ck_assert_str_eq(model_cred_scope(c, 0, 0), "repo");
    ck_assert_ptr_null(model_cred_scope(c, 0, 1));
    ck_assert_ptr_null(model_cred_type(c, 1));
    ck_assert_uint_eq(model_cred_nscopes(c, 1), 0);
    ck_assert_ptr_null(model_cred_name(c, 2));
    model_credset_free(c);
    model_diags_free(d);
}
END_TEST

/* ===========================================================================
 * Coverage of concrete hosts
 * ========================================================================= */

static const char cover_creds[] = "credentials:\n"
                                  "  - name: all\n"
                                  "    target_hosts:\n"
                                  "      - api.github.com\n"
                                  "      - '*.example.com'\n"
                                  "      - '**.corp.net'\n"
                                  "      - 10.0.0.5\n"
                                  "      - ' API.Upper.COM. '\n"
                                  "      - '*.0.0.7'\n"
                                  "      - '[2001:DB8::1]'\n";

struct cover_case {
    const char *host;
    bool covered;
};

static const struct cover_case cover_cases[] = {
    {"api.github.com", true},
    {"API.GITHUB.COM.", true},
    {"uploads.github.com", false},
    {"a.example.com", true},
    {"example.com", false},
    {"a.b.example.com", false},
    {"x.corp.net", true},
    {"x.y.corp.net", true},
    {"corp.net", false},
    {"10.0.0.5", true},
    {"012.0.0.5", true}, /* octal spelling of the same address */
    {"167772165", true}, /* one-part inet_aton form */
    {"10.0.0.6", false},
    {"api.upper.com", true},
    {"10.0.0.7", false}, /* wildcards never match IP hosts */
    {"x.0.0.7", false},  /* not a DNS name: the last label starts with a digit */
    {"2001:db8::1", true},
    {"[2001:db8:0::1]", true},
    {"2001:db8::2", false},
    {"bad host", false},
    {"", false},
};

START_TEST(test_covers_host)
{
    const struct cover_case *c = &cover_cases[_i];
    struct model_diags *d = model_diags_new();
    struct model_credset *cs = model_credset_load("c.yaml", cover_creds, strlen(cover_creds), d);

    if (cs == NULL) {
        dump_diags(d);
    }
    ck_assert_ptr_nonnull(cs);
    ck_assert_msg(model_cred_covers_host(cs, 0, c->host, strlen(c->host)) == c->covered,
                  "host '%s'", c->host);
    ck_assert(!model_cred_covers_host(cs, 1, c->host, strlen(c->host)));
    model_credset_free(cs);
    model_diags_free(d);
}
END_TEST

START_TEST(test_targets_normalised)
{
    struct model_diags *d = model_diags_new();
    struct model_credset *cs = model_credset_load("c.yaml", cover_creds, strlen(cover_creds), d);

    ck_assert_ptr_nonnull(cs);
    ck_assert_uint_eq(model_cred_ntargets(cs, 0), 7);
    ck_assert_str_eq(model_glob_text(model_cred_target(cs, 0, 0)), "api.github.com");
    ck_assert_str_eq(model_glob_text(model_cred_target(cs, 0, 4)), "api.upper.com");
    ck_assert_str_eq(model_glob_text(model_cred_target(cs, 0, 6)), "2001:db8::1");
    ck_assert(model_glob_is_literal(model_cred_target(cs, 0, 0)));
    ck_assert(!model_glob_is_literal(model_cred_target(cs, 0, 1)));
    ck_assert_ptr_null(model_cred_target(cs, 0, 7));
    ck_assert_ptr_null(model_cred_target(cs, 1, 0));
    ck_assert_uint_eq(model_cred_ntargets(cs, 1), 0);
    model_credset_free(cs);
    model_diags_free(d);
}
END_TEST

/* ===========================================================================
 * File forms and errors
 * ========================================================================= */

struct file_case {
    const char *name;
    const char *text;
    size_t count;     /* credentials when it loads */
    const char *want; /* NULL: loads; else substring of a diagnostic line */
};

static const struct file_case file_cases[] = {
    {"map_form", "credentials:\n  - name: a\n    target_hosts: [a.com]\n", 1, NULL},
    {"bare_list", "- name: a\n- name: b\n  type: t\n", 2, NULL},
    {"json_form",
     "{\"credentials\": [{\"name\": \"a\", \"scopes\": [\"repo\"],"
     " \"target_hosts\": [\"a.com\"]}]}",
     1, NULL},
    {"null_list", "credentials:\n", 0, NULL},
    {"empty_list", "credentials: []\n", 0, NULL},
    {"only_name", "credentials: [{name: x}]\n", 1, NULL},
    {"unknown_top_key", "credentials: []\nextra: 1\n", 0,
     "c.yaml:2:1: unknown field 'extra' in credentials file"},
    {"unknown_cred_key", "credentials:\n  - name: a\n    target_host: [a.com]\n", 0,
     "c.yaml:3:5: unknown field 'target_host' in credential (did you mean 'target_hosts'?)"},
    {"unknown_top_key_near", "credential: []\n", 0,
     "c.yaml:1:1: unknown field 'credential' in credentials file (did you mean 'credentials'?)"},
    {"missing_name", "credentials:\n  - type: github\n", 0,
     "c.yaml:2:5: credential name is required"},
    {"empty_name", "credentials:\n  - name: ''\n", 0, "credential name is required"},
    {"null_name", "credentials:\n  - name: ~\n", 0, "credential name is required"},
    {"scopes_not_list", "credentials:\n  - name: a\n    scopes: repo\n", 0,
     "c.yaml:3:13: field 'scopes' must be a list"},
    {"scope_not_string", "credentials:\n  - name: a\n    scopes: [[x]]\n", 0,
     "field 'scopes' must be a list of strings"},
    {"scope_null_item", "credentials:\n  - name: a\n    scopes: [repo, ~]\n", 0,
     "c.yaml:3:20: field 'scopes' must be a list of strings"},
    {"scope_json_number", "{\"credentials\": [{\"name\": \"a\", \"scopes\": [1]}]}", 0,
     "field 'scopes' must be a list of strings"},
    {"scope_nul_refused", "credentials:\n  - name: a\n    scopes: [\"a\\0b\"]\n", 0,
     "c.yaml:3:14: string contains a NUL byte"},
    {"empty_scopes", "credentials:\n  - name: a\n    scopes: []\n", 1, NULL},
    {"unknown_key_shown", "credentials: []\n\"bad\\tkey\": 1\n", 0,
     "c.yaml:2:1: unknown field 'bad?key' in credentials file"},
    {"targets_not_list", "credentials:\n  - name: a\n    target_hosts: a.com\n", 0,
     "field 'target_hosts' must be a list"},
    {"target_not_string", "credentials:\n  - name: a\n    target_hosts: [{h: 1}]\n", 0,
     "c.yaml:3:20: credential target host must be a string"},
    {"empty_target", "credentials:\n  - name: a\n    target_hosts: ['.']\n", 0,
     "credential target host must not be empty"},
    {"invalid_target", "credentials:\n  - name: a\n    target_hosts: ['a..b']\n", 0,
     "c.yaml:3:20: invalid credential target host 'a..b'"},
    {"json_number_name", "{\"credentials\": [{\"name\": 5}]}", 0, "field 'name' must be a string"},
    {"cred_not_map", "credentials: [a]\n", 0, "credential must be a mapping"},
    {"credentials_not_list", "credentials: {a: 1}\n", 0, "credentials must be a list"},
    {"scalar_root", "hello\n", 0, "credentials file must be a mapping"},
    {"duplicate_name", "- name: a\n- name: a\n", 0, "c.yaml:2:3: duplicate credential name 'a'"},
    {"bad_yaml", "credentials: [\n", 0, "c.yaml:"},
    {"bad_json", "{\"credentials\": [}", 0, "c.yaml:1:"},
    {"blank", "  \n\n", 0, "empty credentials document"},
    /* the proxy's store: env, value, value_file accepted, never printed */
    {"store_value", "- {name: a, env: K_1, value: SECRETX, target_hosts: [a.com]}\n", 1, NULL},
    {"store_value_file", "- {name: a, env: K, value_file: /x/y}\n", 1, NULL},
    {"store_env_only", "- {name: a, env: K}\n", 1, NULL},
    {"store_value_no_env", "- {name: a, value: SECRETX}\n", 0,
     "c.yaml:1:3: credential with a value needs env (its placeholder key)"},
    {"store_both", "- {name: a, env: K, value: SECRETX, value_file: f}\n", 0,
     "credential has both value and value_file"},
    {"store_bad_env", "- {name: a, env: 9K, value: SECRETX}\n", 0,
     "c.yaml:1:18: credential env '9K' must match [A-Za-z_][A-Za-z0-9_]*"},
    {"store_dup_env", "- {name: a, env: K}\n- {name: b, env: K}\n", 0,
     "c.yaml:2:3: duplicate credential env 'K'"},
    {"store_value_list", "- {name: a, env: K, value: [SECRETX]}\n", 0,
     "c.yaml:1:28: credential value must be a non-empty string without NUL"},
    {"store_value_nul", "- {name: a, env: K, value: \"SECRET\\0X\"}\n", 0,
     "c.yaml:1:28: string contains a NUL byte"},
};

START_TEST(test_file)
{
    const struct file_case *c = &file_cases[_i];
    struct model_diags *d = model_diags_new();
    struct model_credset *cs = model_credset_load("c.yaml", c->text, strlen(c->text), d);

    if (c->want == NULL) {
        if (cs == NULL) {
            dump_diags(d);
        }
        ck_assert_msg(cs != NULL, "%s", c->name);
        ck_assert_uint_eq(model_credset_count(cs), c->count);
        ck_assert_uint_eq(model_diags_count(d), 0);
    } else {
        if (!diags_have(d, c->want)) {
            dump_diags(d);
        }
        ck_assert_msg(cs == NULL, "%s: expected failure", c->name);
        ck_assert_msg(diags_have(d, c->want), "%s: want '%s'", c->name, c->want);
        /* a secret is never quoted by a diagnostic */
        ck_assert_msg(!diags_have(d, "SECRET"), "%s: a diagnostic quotes the value", c->name);
    }
    model_credset_free(cs);
    model_diags_free(d);
}
END_TEST

START_TEST(test_load_file)
{
    char path[] = "/tmp/check_model_cred_XXXXXX";
    static const char text[] = "credentials:\n  - name: gh\n    target_hosts: [api.github.com]\n";
    int fd = mkstemp(path);
    struct model_diags *d = model_diags_new();
    struct model_credset *cs;

    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, text, sizeof(text) - 1), (int)(sizeof(text) - 1));
    close(fd);
    cs = model_credset_load_file(path, d);
    ck_assert_ptr_nonnull(cs);
    ck_assert(model_cred_covers_host(cs, 0, "api.github.com", 14));
    model_credset_free(cs);
    unlink(path);
    /* Now missing. */
    ck_assert_ptr_null(model_credset_load_file(path, d));
    ck_assert(diags_have(d, "No such file or directory"));
    /* A directory is refused with the common message, not read as empty. */
    ck_assert_ptr_null(model_credset_load_file("/", d));
    ck_assert(diags_have(d, "Is a directory"));
    ck_assert_ptr_null(model_credset_load_file(NULL, d));
    ck_assert_ptr_null(model_credset_load("c", NULL, 4, d));
    model_diags_free(d);

    cs = model_credset_new_empty();
    ck_assert_ptr_nonnull(cs);
    ck_assert_uint_eq(model_credset_count(cs), 0);
    ck_assert(!model_cred_covers_host(cs, 0, "a.com", 5));
    model_credset_free(cs);
    model_credset_free(NULL);
    ck_assert_uint_eq(model_credset_count(NULL), 0);
}
END_TEST

static Suite *cred_suite(void)
{
    Suite *s = suite_create("model_cred");
    TCase *tc = tcase_create("overlap");

    tcase_add_loop_test(tc, test_overlap, 0, (int)PV_ARRAY_LEN(overlap_cases));
    tcase_add_test(tc, test_overlap_null);
    tcase_add_test(tc, test_credentials_for_wildcard_host);
    suite_add_tcase(s, tc);
    tc = tcase_create("covers");
    tcase_add_loop_test(tc, test_covers_host, 0, (int)PV_ARRAY_LEN(cover_cases));
    tcase_add_test(tc, test_targets_normalised);
    suite_add_tcase(s, tc);
    tc = tcase_create("file");
    tcase_add_loop_test(tc, test_file, 0, (int)PV_ARRAY_LEN(file_cases));
    tcase_add_test(tc, test_load_file);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(cred_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
