/* SPDX-License-Identifier: Apache-2.0 */
/* check_model_registry.c - embedded registry, overrides, lookups, descriptor errors
 *
 * The embedded set must hold the eleven shipped descriptors with their
 * classes (git, ssh and nc bypass L7; aliases carry the flags), the source
 * directory must load to the same set, API lookups must name the action and
 * risk of realistic GitHub requests (and nothing for other hosts, ports or
 * methods), and malformed descriptors must fail at their file:line:col.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/model.h"

static void dump_diags(struct model_diags *d)
{
    for (size_t i = 0; i < model_diags_count(d); i++) {
        fprintf(stderr, "  diag: %s\n", model_diags_line(d, i));
    }
}

static bool diags_have(struct model_diags *d, const char *want)
{
    for (size_t i = 0; i < model_diags_count(d); i++) {
        if (strstr(model_diags_line(d, i), want) != NULL) {
            return true;
        }
    }
    return false;
}

static struct model_registry *embedded(void)
{
    struct model_diags *d = model_diags_new();
    struct model_registry *r = model_registry_embedded(d);

    if (r == NULL) {
        dump_diags(d);
    }
    ck_assert_ptr_nonnull(r);
    ck_assert_uint_eq(model_diags_count(d), 0);
    model_diags_free(d);
    return r;
}

/* ===========================================================================
 * Embedded binaries
 * ========================================================================= */

START_TEST(test_embedded_descriptors)
{
    static const char *const names[] = {"claude", "curl", "gh",      "git", "nc",  "node",
                                        "npm",    "pip",  "python3", "ssh", "wget"};
    struct model_registry *r = embedded();
    size_t n = model_registry_nbinaries(r);

    for (size_t k = 0; k < PV_ARRAY_LEN(names); k++) {
        bool found = false;
        for (size_t i = 0; i < n; i++) {
            const char *name = model_registry_binary_name(r, i);
            if (strcmp(name, names[k]) == 0) {
                found = true;
                ck_assert_ptr_nonnull(model_registry_binary_glob(r, i));
                ck_assert_ptr_nonnull(model_registry_binary_description(r, i));
                ck_assert(model_registry_binary_can_exfiltrate(r, i));
            }
        }
        ck_assert_msg(found, "descriptor %s missing", names[k]);
    }
    /* Every entry comes from one of the eleven. */
    for (size_t i = 0; i < n; i++) {
        bool known = false;
        for (size_t k = 0; k < PV_ARRAY_LEN(names); k++) {
            known = known || strcmp(model_registry_binary_name(r, i), names[k]) == 0;
        }
        ck_assert(known);
    }
    ck_assert_ptr_null(model_registry_binary_glob(r, n));
    ck_assert_ptr_null(model_registry_binary_name(r, n));
    ck_assert(!model_registry_binary_bypasses_l7(r, n));
    model_registry_free(r);
    model_registry_free(NULL);
}
END_TEST

struct class_case {
    const char *path;
    const char *name; /* NULL: not in the registry */
    bool bypass;
    bool http;
};

static const struct class_case class_cases[] = {
    {"/usr/bin/git", "git", true, false},
    {"/usr/local/bin/git", "git", true, false},
    {"/usr/lib/git-core/git-remote-https", "git", true, false},
    {"/usr/bin/ssh", "ssh", true, false},
    {"/usr/local/bin/ssh", "ssh", true, false},
    {"/usr/bin/nc", "nc", true, false},
    {"/usr/bin/nc.openbsd", "nc", true, false},
    {"/usr/bin/ncat", "nc", true, false},
    {"/usr/bin/curl", "curl", false, true},
    {"/usr/local/bin/curl", "curl", false, true},
    {"/usr/bin/wget", "wget", false, true},
    {"/usr/bin/gh", "gh", false, true},
    {"/usr/local/bin/node", "node", false, true},
    {"/usr/bin/python3", "python3", false, true},
    {"/usr/bin/python3.11", "python3", false, true},
    {"/usr/local/bin/python3.13", "python3", false, true},
    {"/usr/local/bin/claude", "claude", false, true},
    {"/usr/local/bin/npm", "npm", false, true},
    {"/usr/bin/pip3", "pip", false, true},
    /* Not described: unknown binaries, other directories, path tricks. */
    {"/usr/bin/gitk", NULL, false, false},
    {"/usr/bin/python2", NULL, false, false},
    {"/tmp/usr/bin/git", NULL, false, false},
    {"/usr/bin/git/x", NULL, false, false},
    {"/usr/lib/git-core/sub/git", NULL, false, false},
    {"git", NULL, false, false},
};

START_TEST(test_binary_classes)
{
    const struct class_case *c = &class_cases[_i];
    struct model_registry *r = embedded();
    size_t i = model_registry_find_binary(r, c->path);

    if (c->name == NULL) {
        ck_assert_msg(i == SIZE_MAX, "%s should be unknown", c->path);
    } else {
        ck_assert_msg(i != SIZE_MAX, "%s should be known", c->path);
        ck_assert_str_eq(model_registry_binary_name(r, i), c->name);
        ck_assert_msg(model_registry_binary_bypasses_l7(r, i) == c->bypass, "%s bypass", c->path);
        ck_assert(model_registry_binary_can_construct_http(r, i) == c->http);
        /* The entry's glob is what the prover sees. */
        ck_assert(model_glob_match(model_registry_binary_glob(r, i), c->path, strlen(c->path)));
    }
    model_registry_free(r);
}
END_TEST

/* ===========================================================================
 * API actions
 * ========================================================================= */

struct api_case {
    const char *host;
    uint16_t port;
    const char *method;
    const char *path;
    const char *action; /* NULL: no action */
    const char *risk;
};

static const struct api_case api_cases[] = {
    {"api.github.com", 443, "PUT", "/repos/o/r/contents/x", "write_file", "high"},
    {"api.github.com", 443, "PUT", "/repos/o/r/contents/docs/a/b.md", "write_file", "high"},
    {"api.github.com", 443, "GET", "/repos/o/r/contents/x", "read_file", "low"},
    {"api.github.com", 443, "HEAD", "/repos/o/r/contents/x", "read_file", "low"},
    {"api.github.com", 443, "DELETE", "/repos/o/r/contents/x", "delete_file", "high"},
    {"API.GitHub.COM.", 443, "put", "/repos/o/r/contents/x?ref=main", "write_file", "high"},
    {"api.github.com", 443, "GET", "/repos/o/r", "get_repo", "low"},
    {"api.github.com", 443, "DELETE", "/repos/o/r", "delete_repo", "critical"},
    {"api.github.com", 443, "PUT", "/repos/o/r/pulls/7/merge", "merge_pull", "high"},
    {"api.github.com", 443, "POST", "/repos/o/r/merges", "merge_branch", "high"},
    {"api.github.com", 443, "PUT", "/repos/o/r/actions/secrets/TOKEN", "write_secret", "critical"},
    {"api.github.com", 443, "POST", "/repos/o/r/hooks", "create_hook", "critical"},
    {"api.github.com", 443, "PUT", "/repos/o/r/collaborators/eve", "add_collaborator", "critical"},
    {"api.github.com", 443, "PUT", "/repos/o/r/branches/main/protection", "set_protection",
     "critical"},
    {"api.github.com", 443, "POST", "/repos/o/r/releases", "create_release", "high"},
    {"api.github.com", 443, "POST", "/repos/o/r/issues", "create_issue", "medium"},
    {"api.github.com", 443, "GET", "/repos/o/r/issues/1/comments", "read_repo_data", "low"},
    {"api.github.com", 443, "POST", "/gists", "create_gist", "high"},
    {"api.github.com", 443, "GET", "/user", "get_user", "low"},
    {"api.github.com", 443, "PUT", "/orgs/acme/memberships/eve", "set_membership", "critical"},
    {"api.github.com", 443, "POST", "/graphql", "graphql", "high"},
    /* Nothing: other port, host, method, or unknown path. */
    {"api.github.com", 80, "PUT", "/repos/o/r/contents/x", NULL, NULL},
    {"uploads.github.com", 443, "PUT", "/repos/o/r/contents/x", NULL, NULL},
    {"github.com", 443, "GET", "/repos/o/r", NULL, NULL},
    {"api.github.com", 443, "OPTIONS", "/repos/o/r", NULL, NULL},
    {"api.github.com", 443, "PUT", "/repos/o/r/contents", NULL, NULL},
    {"api.github.com", 443, "PATCH", "/nothing/here", NULL, NULL},
    {"api.github.com", 443, "GET", "/", NULL, NULL},
    {"bad host", 443, "GET", "/user", NULL, NULL},
    {"api.github.com", 443, "AVERYLONGMETHODNAMEOVERTHIRTYTWOCHARS", "/user", NULL, NULL},
};

START_TEST(test_api_action)
{
    const struct api_case *c = &api_cases[_i];
    struct model_registry *r = embedded();
    const char *api = NULL;
    const char *action = NULL;
    const char *risk = NULL;
    bool hit =
        model_registry_api_action(r, c->host, c->port, c->method, c->path, &api, &action, &risk);

    if (c->action == NULL) {
        ck_assert_msg(!hit, "%s %s:%u%s matched %s", c->method, c->host, c->port, c->path,
                      action != NULL ? action : "?");
    } else {
        ck_assert_msg(hit, "%s %s%s: no action", c->method, c->host, c->path);
        ck_assert_str_eq(api, "github");
        ck_assert_str_eq(action, c->action);
        ck_assert_str_eq(risk, c->risk);
    }
    model_registry_free(r);
}
END_TEST

START_TEST(test_api_descriptor)
{
    struct model_registry *r = embedded();
    size_t n = 0;
    const char *action = NULL;

    ck_assert_uint_eq(model_registry_napis(r), 1);
    ck_assert_str_eq(model_registry_api_name(r, 0), "github");
    ck_assert_str_eq(model_registry_api_host(r, 0), "api.github.com");
    ck_assert_uint_eq(model_registry_api_port(r, 0), 443);
    ck_assert_str_eq(model_registry_api_credential_type(r, 0), "github");
    ck_assert_ptr_null(model_registry_api_name(r, 1));
    ck_assert_uint_eq(model_registry_api_port(r, 1), 0);
    /* Compat 036: api_for_host, exact first, then overlap. */
    ck_assert_uint_eq(model_registry_api_for_host(r, "*.github.com"), 0);
    ck_assert_uint_eq(model_registry_api_for_host(r, "API.github.com."), 0);
    ck_assert_uint_eq(model_registry_api_for_host(r, "**.github.com"), 0);
    ck_assert_uint_eq(model_registry_api_for_host(r, "github.com"), SIZE_MAX);
    ck_assert_uint_eq(model_registry_api_for_host(r, "*.gitlab.com"), SIZE_MAX);
    /* Out-params are optional. */
    ck_assert(
        model_registry_api_action(r, "api.github.com", 443, "GET", "/user", NULL, &action, NULL));
    ck_assert_str_eq(action, "get_user");
    ck_assert(
        !model_registry_api_action(NULL, "api.github.com", 443, "GET", "/user", NULL, NULL, NULL));
    /* At least thirty entries: count distinct write-side actions we rely on. */
    for (size_t i = 0; i < PV_ARRAY_LEN(api_cases); i++) {
        n += api_cases[i].action != NULL;
    }
    ck_assert_uint_ge(n, 20);
    model_registry_free(r);
}
END_TEST

/* ===========================================================================
 * Directory override
 * ========================================================================= */

struct tree_file {
    const char *path; /* relative to the root */
    const char *text;
};

static char *make_tree(const struct tree_file *files, size_t n)
{
    char *root = strdup("/tmp/check_model_registry_XXXXXX");
    char buf[4096];

    ck_assert_ptr_nonnull(root);
    ck_assert_ptr_nonnull(mkdtemp(root));
    snprintf(buf, sizeof(buf), "%s/binaries", root);
    ck_assert_int_eq(mkdir(buf, 0700), 0);
    snprintf(buf, sizeof(buf), "%s/apis", root);
    ck_assert_int_eq(mkdir(buf, 0700), 0);
    for (size_t i = 0; i < n; i++) {
        FILE *f;
        snprintf(buf, sizeof(buf), "%s/%s", root, files[i].path);
        f = fopen(buf, "w");
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(fputs(files[i].text, f) >= 0, 1);
        ck_assert_int_eq(fclose(f), 0);
    }
    return root;
}

static void remove_tree(char *root, const struct tree_file *files, size_t n)
{
    char buf[4096];

    for (size_t i = 0; i < n; i++) {
        snprintf(buf, sizeof(buf), "%s/%s", root, files[i].path);
        unlink(buf);
    }
    snprintf(buf, sizeof(buf), "%s/binaries", root);
    rmdir(buf);
    snprintf(buf, sizeof(buf), "%s/apis", root);
    rmdir(buf);
    rmdir(root);
    free(root);
}

START_TEST(test_dir_override)
{
    static const struct tree_file files[] = {
        {"binaries/b.yaml", "binary: /opt/b\nprotocols:\n  - {name: raw, bypasses_l7: true}\n"},
        {"binaries/a.yaml", "binary: /opt/a\naliases: ['/opt/a-*']\ncan_construct_http: true\n"},
        {"binaries/notes.txt", "ignored: [\n"},
        {"apis/svc.yaml",
         "api: svc\nhost: '*.svc.example.com'\nport: 8443\n"
         "actions:\n  - {method: post, path: /v1/**, action: call, risk: medium}\n"},
    };
    char *root = make_tree(files, PV_ARRAY_LEN(files));
    struct model_diags *d = model_diags_new();
    struct model_registry *r = model_registry_load_dir(root, d);
    const char *action = NULL;
    const char *risk = NULL;

    if (r == NULL) {
        dump_diags(d);
    }
    ck_assert_ptr_nonnull(r);
    /* Replaces the embedded set; files in name order, then path order. */
    ck_assert_uint_eq(model_registry_nbinaries(r), 3);
    ck_assert_str_eq(model_glob_text(model_registry_binary_glob(r, 0)), "/opt/a");
    ck_assert_str_eq(model_glob_text(model_registry_binary_glob(r, 1)), "/opt/a-*");
    ck_assert_str_eq(model_glob_text(model_registry_binary_glob(r, 2)), "/opt/b");
    ck_assert(!model_registry_binary_bypasses_l7(r, 1));
    ck_assert(model_registry_binary_can_construct_http(r, 1));
    ck_assert(model_registry_binary_bypasses_l7(r, 2));
    ck_assert_uint_eq(model_registry_find_binary(r, "/usr/bin/git"), SIZE_MAX);
    ck_assert_uint_eq(model_registry_find_binary(r, "/opt/a-2"), 1);
    ck_assert(model_registry_api_action(r, "x.svc.example.com", 8443, "POST", "/v1/a/b", NULL,
                                        &action, &risk));
    ck_assert_str_eq(action, "call");
    ck_assert_str_eq(risk, "medium");
    /* Host wildcards match DNS names only. */
    ck_assert(
        !model_registry_api_action(r, "svc.example.com", 8443, "POST", "/v1/a", NULL, NULL, NULL));
    ck_assert(
        !model_registry_api_action(r, "api.github.com", 443, "GET", "/user", NULL, NULL, NULL));
    model_registry_free(r);
    model_diags_free(d);
    remove_tree(root, files, PV_ARRAY_LEN(files));
}
END_TEST

/* The source tree's registry is the embedded one. */
START_TEST(test_source_dir_matches_embedded)
{
    const char *src = getenv("PV_SRCDIR");
    char dir[4096];
    struct model_diags *d = model_diags_new();
    struct model_registry *a;
    struct model_registry *b = embedded();

    snprintf(dir, sizeof(dir), "%s/model/registry", src != NULL ? src : PV_SRCDIR);
    a = model_registry_load_dir(dir, d);
    if (a == NULL) {
        dump_diags(d);
    }
    ck_assert_ptr_nonnull(a);
    ck_assert_uint_eq(model_registry_nbinaries(a), model_registry_nbinaries(b));
    for (size_t i = 0; i < model_registry_nbinaries(a); i++) {
        ck_assert_str_eq(model_glob_text(model_registry_binary_glob(a, i)),
                         model_glob_text(model_registry_binary_glob(b, i)));
        ck_assert(model_registry_binary_bypasses_l7(a, i) ==
                  model_registry_binary_bypasses_l7(b, i));
    }
    ck_assert_uint_eq(model_registry_napis(a), model_registry_napis(b));
    model_registry_free(a);
    model_registry_free(b);
    model_diags_free(d);
}
END_TEST

START_TEST(test_dir_errors)
{
    static const struct tree_file none[] = {{"apis/.keep.yaml", "x: [\n"}};
    struct model_diags *d = model_diags_new();
    struct model_registry *r;
    char *root;

    ck_assert_ptr_null(model_registry_load_dir("/nonexistent/proviso/registry", d));
    ck_assert(diags_have(d, "/nonexistent/proviso/registry: cannot open registry directory"));
    ck_assert_ptr_null(model_registry_load_dir(NULL, d));
    ck_assert_ptr_null(model_registry_embedded(NULL));
    /* Empty subdirectories (hidden files skipped) give an empty registry. */
    root = make_tree(none, PV_ARRAY_LEN(none));
    r = model_registry_load_dir(root, d);
    ck_assert_ptr_nonnull(r);
    ck_assert_uint_eq(model_registry_nbinaries(r), 0);
    ck_assert_uint_eq(model_registry_napis(r), 0);
    model_registry_free(r);
    remove_tree(root, none, PV_ARRAY_LEN(none));
    model_diags_free(d);
}
END_TEST

/* ===========================================================================
 * Malformed descriptors
 * ========================================================================= */

struct bad_case {
    const char *name;
    const char *file; /* relative path */
    const char *text;
    const char *want; /* substring after the root prefix, e.g. "binaries/x.yaml:2:1: ..." */
};

static const struct bad_case bad_cases[] = {
    {"unknown_key", "binaries/x.yaml", "binary: /opt/x\nbinray: /opt/y\n",
     "binaries/x.yaml:2:1: unknown field 'binray' in binary descriptor"},
    {"missing_binary", "binaries/x.yaml", "description: nothing\n",
     "binaries/x.yaml:1:1: binary is required"},
    {"binary_null", "binaries/x.yaml", "description: x\nbinary: ~\n",
     "binaries/x.yaml:2:9: binary is required"},
    {"relative_binary", "binaries/x.yaml", "binary: bin/x\n",
     "binaries/x.yaml:1:9: binary path 'bin/x' must be absolute"},
    {"bad_alias_glob", "binaries/x.yaml", "binary: /opt/x\naliases: ['/opt/[x']\n",
     "binaries/x.yaml:2:11: invalid binary pattern '/opt/[x'"},
    {"alias_not_list", "binaries/x.yaml", "binary: /opt/x\naliases: /opt/y\n",
     "binaries/x.yaml:2:10: field 'aliases' must be a list"},
    {"spawn_not_string", "binaries/x.yaml", "binary: /opt/x\nspawns: [git, [x]]\n",
     "binaries/x.yaml:2:15: field 'spawns' must be a list of strings"},
    {"alias_nul_refused", "binaries/x.yaml", "binary: /opt/x\naliases: [\"/opt/\\0y\"]\n",
     "binaries/x.yaml:2:11: string contains a NUL byte"},
    {"bypass_not_bool", "binaries/x.yaml",
     "binary: /opt/x\nprotocols:\n  - name: p\n    bypasses_l7: 1\n",
     "binaries/x.yaml:4:18: field 'bypasses_l7' must be a boolean (true or false)"},
    {"bad_bool", "binaries/x.yaml", "binary: /opt/x\ncan_exfiltrate: yes\n",
     "binaries/x.yaml:2:17: field 'can_exfiltrate' must be a boolean (true or false)"},
    {"quoted_bool", "binaries/x.yaml", "binary: /opt/x\ncan_exfiltrate: 'true'\n",
     "binaries/x.yaml:2:17: field 'can_exfiltrate' must be a boolean (true or false)"},
    {"bad_action_type", "binaries/x.yaml",
     "binary: /opt/x\nprotocols:\n  - name: p\n    actions:\n      - {name: a, type: admin}\n",
     "binaries/x.yaml:5:25: field 'type' must be read, write or destructive"},
    {"protocol_unknown_key", "binaries/x.yaml",
     "binary: /opt/x\nprotocols:\n  - name: p\n    bypass: true\n",
     "binaries/x.yaml:4:5: unknown field 'bypass' in protocol"},
    {"protocol_near_key", "binaries/x.yaml",
     "binary: /opt/x\nprotocols:\n  - name: p\n    bypasses_l8: true\n",
     "binaries/x.yaml:4:5: unknown field 'bypasses_l8' in protocol (did you mean 'bypasses_l7'?)"},
    {"protocol_no_name", "binaries/x.yaml", "binary: /opt/x\nprotocols:\n  - {transport: tcp}\n",
     "binaries/x.yaml:3:5: protocol name is required"},
    {"action_no_name", "binaries/x.yaml",
     "binary: /opt/x\nprotocols:\n  - name: p\n    actions: [{type: read}]\n",
     "binaries/x.yaml:4:15: action name is required"},
    {"duplicate_binary", "binaries/y.yaml", "binary: /usr/bin/x\n",
     "binaries/y.yaml:1:9: binary path '/usr/bin/x' is already described"},
    {"bad_yaml", "binaries/x.yaml", "binary: [\n", "binaries/x.yaml:"},
    {"api_unknown_key", "apis/x.yaml", "api: x\nhost: x.example.com\nport: 443\nrisk: high\n",
     "apis/x.yaml:4:1: unknown field 'risk' in API descriptor"},
    {"api_missing_port", "apis/x.yaml", "api: x\nhost: x.example.com\n",
     "apis/x.yaml:1:1: port is required"},
    {"api_bad_port", "apis/x.yaml", "api: x\nhost: x.example.com\nport: 70000\n",
     "apis/x.yaml:3:7: field 'port' must be an integer in 1..65535"},
    {"api_quoted_port", "apis/x.yaml", "api: x\nhost: x.example.com\nport: '443'\n",
     "apis/x.yaml:3:7: field 'port' must be an integer in 1..65535"},
    {"api_bad_host", "apis/x.yaml", "api: x\nhost: 'a..b'\nport: 443\n",
     "apis/x.yaml:2:7: invalid API host"},
    {"api_bad_risk", "apis/x.yaml",
     "api: x\nhost: x.example.com\nport: 443\nactions:\n"
     "  - {method: GET, path: /a, action: a, risk: severe}\n",
     "apis/x.yaml:5:46: risk must be low, medium, high or critical"},
    {"api_relative_path", "apis/x.yaml",
     "api: x\nhost: x.example.com\nport: 443\nactions:\n"
     "  - {method: GET, path: a/b, action: a, risk: low}\n",
     "apis/x.yaml:5:25: API action path must start with '/'"},
    {"api_bad_method", "apis/x.yaml",
     "api: x\nhost: x.example.com\nport: 443\nactions:\n"
     "  - {method: 'G T', path: /a, action: a, risk: low}\n",
     "apis/x.yaml:5:14: invalid method"},
    {"api_incomplete_action", "apis/x.yaml",
     "api: x\nhost: x.example.com\nport: 443\nactions:\n  - {method: GET, path: /a}\n",
     "apis/x.yaml:5:5: API action requires method, path, action and risk"},
    {"api_null_action", "apis/x.yaml",
     "api: x\nhost: x.example.com\nport: 443\nactions:\n"
     "  - {method: GET, path: /a, action: ~, risk: low}\n",
     "apis/x.yaml:5:5: API action method, path, action and risk must not be empty"},
    {"api_null_host", "apis/x.yaml", "api: x\nhost: ~\nport: 443\n",
     "apis/x.yaml:2:7: host is required"},
    {"api_duplicate", "apis/y.yaml", "api: dup\nhost: y.example.com\nport: 443\n",
     "apis/y.yaml:1:1: duplicate API 'dup'"},
};

START_TEST(test_bad_descriptor)
{
    const struct bad_case *c = &bad_cases[_i];
    struct tree_file files[2];
    size_t n = 0;
    char want[4096];
    char *root;
    struct model_diags *d = model_diags_new();
    struct model_registry *r;

    /* The duplicate rows need a first file that loads. */
    if (strcmp(c->name, "duplicate_binary") == 0) {
        files[n++] = (struct tree_file){"binaries/a.yaml", "binary: /usr/bin/x\n"};
    } else if (strcmp(c->name, "api_duplicate") == 0) {
        files[n++] = (struct tree_file){"apis/a.yaml", "api: dup\nhost: a.example.com\nport: 1\n"};
    }
    files[n++] = (struct tree_file){c->file, c->text};
    root = make_tree(files, n);
    r = model_registry_load_dir(root, d);
    snprintf(want, sizeof(want), "%s/%s", root, c->want);
    if (!diags_have(d, want)) {
        dump_diags(d);
    }
    ck_assert_msg(r == NULL, "%s: expected failure", c->name);
    ck_assert_msg(diags_have(d, want), "%s: want '%s'", c->name, want);
    model_registry_free(r);
    model_diags_free(d);
    remove_tree(root, files, n);
}
END_TEST

static Suite *registry_suite(void)
{
    Suite *s = suite_create("model_registry");
    TCase *tc = tcase_create("binaries");

    tcase_add_test(tc, test_embedded_descriptors);
    tcase_add_loop_test(tc, test_binary_classes, 0, (int)PV_ARRAY_LEN(class_cases));
    suite_add_tcase(s, tc);
    tc = tcase_create("apis");
    tcase_add_loop_test(tc, test_api_action, 0, (int)PV_ARRAY_LEN(api_cases));
    tcase_add_test(tc, test_api_descriptor);
    suite_add_tcase(s, tc);
    tc = tcase_create("dirs");
    tcase_add_test(tc, test_dir_override);
    tcase_add_test(tc, test_source_dir_matches_embedded);
    tcase_add_test(tc, test_dir_errors);
    tcase_add_loop_test(tc, test_bad_descriptor, 0, (int)PV_ARRAY_LEN(bad_cases));
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(registry_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
